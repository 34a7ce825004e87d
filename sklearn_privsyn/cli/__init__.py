"""The ``privsyn`` command: fit a synthesizer on a CSV, evaluate synthetic data, run the demo.

Run ``privsyn --help`` (or ``python -m sklearn_privsyn --help``) for usage.
Exit status: 0 on success, 1 for a data or validation error (a missing file,
an unknown column, a value outside the domain, an unavailable algorithm), 2
for a usage error (an unknown option, a bad number such as ``--epsilon -1``),
130 when interrupted. Errors are one line on stderr, without a traceback.
Synthetic rows go to ``-o`` (stdout by default); everything else (progress,
privacy spent, warnings) goes to stderr.
"""

import sys

from ..table_files import read_table
from ._errors import EXIT_DATA, EXIT_USAGE, CLIError, UsageError
from ._parser import ALGORITHMS, SOLVERS, build_parser

__all__ = [
    "ALGORITHMS",
    "EXIT_DATA",
    "EXIT_USAGE",
    "SOLVERS",
    "CLIError",
    "UsageError",
    "build_parser",
    "main",
    "read_table",
]


def main(argv=None):
    """Run the ``privsyn`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; ``None`` reads ``sys.argv``.

    Returns
    -------
    status : int
        0 on success, 1 (``EXIT_DATA``) for a data or validation error, 2
        (``EXIT_USAGE``) for a usage error, 130 when interrupted.

    Examples
    --------
    >>> main(["fit", "no-such-file.csv", "--domain", "no-such-domain.json"])
    1
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except UsageError as exc:
        args.subparser.print_usage(sys.stderr)
        print(f"privsyn {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CLIError, ValueError) as exc:
        print(f"privsyn {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_DATA
    except KeyboardInterrupt:
        print("privsyn: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
