"""The ``privsyn`` argument parser: commands, options, their types and help."""

import argparse
import math

from ..domain_draft import DEFAULT_BINS, DEFAULT_MAX_CATEGORIES, DEFAULT_POINT_SHARE
from ..cell_budget import DEFAULT_CELL_BUDGET
from ..registry import CLI_ALGORITHMS
from ..solvers import ORACLE_NAMES
from ._benchmark import add_benchmark_parser
from ._commands import cmd_demo, cmd_domain, cmd_evaluate, cmd_fit, cmd_report

__all__ = ["ALGORITHMS", "SOLVERS", "build_parser"]

#: ``--algorithm`` name -> (module, class), a live view of the registry; imported on use.
ALGORITHMS = CLI_ALGORITHMS

#: ``--solver`` names.
SOLVERS = ORACLE_NAMES

_DESCRIPTION = """\
Differentially private synthetic data from a CSV file (AdaptiveProjection by
default; FEM, sepFEM, DualQuery, DQRS and MWEM of Vietri et al., ICML 2020). The synthetic table approximately
answers a workload of k-way marginal queries (counts of every combination of
values of k columns) and is (epsilon, delta)-differentially private with
respect to the rows of the input: replacing any one row changes the
distribution of the output by at most a factor exp(epsilon), up to delta."""

_EPILOG = """\
examples:
  # the paper's format: a CSV of integer codes and a JSON {column: size}
  privsyn fit adult.csv --domain adult-domain.json --epsilon 1 \\
      --k 3 --marginals 64 --seed 0 -o synthetic.csv

  # the same error measure as the paper, on the same 64 marginals
  privsyn evaluate adult.csv synthetic.csv --domain adult-domain.json \\
      --k 3 --marginals 64 --seed 0 --per-marginal

  # AdaptiveProjection on the bundled UCI Adult data (--algorithm fem: FEM)
  privsyn demo --epsilon 1

domain files (JSON object, one entry per column, in the order marginals are
enumerated):
  {"age": 85, "sex": 2}                  integer codes 0..size-1 (paper format)
  {"colour": ["red", "green", "blue"]}   the column's values, as listed
  {"income": {"bounds": [0, 200000], "bins": 20}}
                                         numbers, binned on public bounds
  {"city": {"values": ["Paris", "Other"], "other": "Other", "missing": true}}
                                         unknown cities become "Other"; the
                                         column may be empty (missing)
The domain must be public knowledge (documentation, standards, round
numbers), never read off the private data: it is not covered by the privacy
guarantee.

exit status: 0 success, 1 data or validation error, 2 usage error,
130 interrupted. Synthetic rows go to -o (stdout by default); progress, the
privacy spent and warnings go to stderr."""



# --------------------------------------------------------------------------- types


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text!r}")
    return value


def _probability(text):
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1); got {text!r}")
    return value


def _number_share(text):
    if text == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be 'auto' or a number in [0, 1); got {text!r}")
    return value


def _share_of_rows(text):
    value = _positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1]; got {text!r}")
    return value


def _whole_number(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}") from None


def _positive_int(text):
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {text!r}")
    return value


def _max_cells(text):
    if text == "n_rows":
        return text
    return _positive_int(text)


def _missing_columns(text):
    if text in ("error", "category"):
        return text
    columns = [c.strip() for c in text.split(",") if c.strip()]
    if not columns:
        raise argparse.ArgumentTypeError(
            f"expected 'error', 'category' or column names; got {text!r}"
        )
    return columns


def _seed(text):
    value = _whole_number(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be in 0..2**32-1; got {text!r}")
    return value



# --------------------------------------------------------------------------- parser


def _add_workload_options(parser, seed_help):
    group = parser.add_argument_group("workload (which marginals are measured)")
    group.add_argument("--domain", metavar="FILE",
                       help="JSON file with the public domain of every column (see below)")
    group.add_argument("--k", type=_positive_int, default=3,
                       help="columns per marginal (default: 3)")
    group.add_argument("--marginals", type=_positive_int, metavar="M",
                       help="number of k-way marginals drawn at random "
                            "(default: all eligible ones)")
    group.add_argument("--max-cells", type=_max_cells, metavar="C",
                       help="keep only marginals with at most C cells; 'n_rows' uses the row "
                            "count, as the paper does (default: no limit with --marginals, "
                            "else n_rows)")
    group.add_argument("--cell-budget", type=_positive_int, metavar="B",
                       default=DEFAULT_CELL_BUDGET,
                       help="without --marginals, at most B cells in all: a random subset "
                            "of the eligible marginals is kept (default: %(default)s)")
    group.add_argument("--seed", type=_seed, default=None, help=seed_help)
    group.add_argument("--handle-missing", type=_missing_columns, default=None,
                       metavar="COLUMNS",
                       help="columns that may hold missing values (empty cells), comma "
                            "separated; each gets a missing code. 'error': none may; "
                            "'category': every column may. Replaces the domain file's "
                            "\"missing\" entries (default: as the domain file says). Part "
                            "of the public domain")
    group.add_argument("--clip", action=argparse.BooleanOptionalAction, default=True,
                       help="put numbers outside their bounds into the first or last bin "
                            "(default); --no-clip stops with an error instead")
    _add_draft_options(parser)


def _add_draft_options(parser):
    group = parser.add_argument_group(
        "drafting a domain from the data (privsyn domain, --infer-domain; NOT private)")
    group.add_argument("--bins", type=_positive_int, default=DEFAULT_BINS, metavar="B",
                       help="codes of a numeric column with many values: its points and "
                            "equal-width bins (default: %(default)s)")
    group.add_argument("--point-share", type=_share_of_rows, default=DEFAULT_POINT_SHARE,
                       metavar="P",
                       help="values of such a column held by at least this share of the rows, "
                            "and twice the share of their neighbours, become points, codes of "
                            "their own (at most B/2; default: %(default)s; 1 drafts none)")
    group.add_argument("--max-categories", type=_positive_int, default=DEFAULT_MAX_CATEGORIES,
                       metavar="M",
                       help="numeric columns with at most M distinct values get a list of "
                            "values (default: %(default)s)")


def build_parser():
    """The ``privsyn`` argument parser.

    Returns
    -------
    parser : argparse.ArgumentParser

    Examples
    --------
    >>> args = build_parser().parse_args(["fit", "data.csv", "--domain", "d.json"])
    >>> args.command, args.algorithm, args.epsilon, args.output
    ('fit', 'adaptive', 1.0, '-')
    """
    from .. import __version__

    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="privsyn", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=formatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    fit = sub.add_parser(
        "fit",
        help="fit a synthesizer on a CSV file and write synthetic rows",
        description="Fit a differentially private synthesizer on INPUT (a CSV file with a\n"
        "header row) and write synthetic rows as CSV.\n\n" + _DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    fit.add_argument("input", metavar="INPUT",
                     help="the private CSV file ('-' for stdin), Parquet file, or Parquet "
                          "dataset directory (counted with Dask, out of core; needs the "
                          "dask extra and --domain)")
    fit.add_argument("-o", "--output", default="-", metavar="FILE",
                     help="where to write the synthetic rows: CSV, or Parquet for a .parquet "
                          "name (default: '-', CSV on stdout)")
    algo = fit.add_argument_group("algorithm and privacy")
    algo.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="adaptive",
                      help="adaptive (default: Gaussian measurements projected onto "
                           "records, the most accurate and fastest here), or the paper's fem, "
                           "sepfem, dualquery, dqrs, mwem (small domains only)")
    algo.add_argument("--epsilon", type=_positive_float, default=1.0,
                      help="privacy budget epsilon > 0 (default: 1); smaller is more private")
    algo.add_argument("--delta", type=_probability, default=None,
                      help="privacy parameter delta in (0, 1) (default: 1/n^2 for n rows)")
    algo.add_argument("--rows", type=_positive_int, metavar="N",
                      help="synthetic rows to write (default: as many as INPUT has)")
    algo.add_argument("--rounds", type=_positive_int, metavar="T",
                      help="number of rounds (default: derived from the budget)")
    algo.add_argument("--samples-per-round", type=_positive_int, metavar="S",
                      help="oracle samples (FEM, sepFEM) or sampled queries (DualQuery, "
                           "DQRS) per round (default: the algorithm's)")
    algo.add_argument("--solver", choices=SOLVERS, default=None,
                      help="optimisation oracle (default: hybrid for fem and sepfem, highs "
                           "for the others); it affects speed and accuracy, never privacy; "
                           "not for mwem")
    algo.add_argument("--time-limit", type=_positive_float, metavar="SECONDS",
                      help="time limit per oracle call (default: none)")
    algo.add_argument("--number-share", type=_number_share, default=None, metavar="S",
                      help="share of the budget that measures the binned numbers finely "
                           "(point masses, bins of similar mass, the shape inside each bin); "
                           "0 keeps equal-width bins drawn uniformly (default: auto, derived "
                           "from the workload and the columns; see docs/numbers.rst)")
    algo.add_argument("--ledger", metavar="FILE",
                      help="also write the privacy spent (the ledger) as JSON, for "
                           "privsyn report")
    algo.add_argument("--infer-domain", action="store_true",
                      help="read the domain from the data instead of --domain (NOT private)")
    algo.add_argument("--scheduler", metavar="ADDRESS",
                      help="count a Parquet dataset directory on the dask.distributed cluster "
                           "at ADDRESS (e.g. tcp://host:8786; default: threads of this "
                           "process)")
    _add_workload_options(fit, "seed for the choice of marginals and for the algorithm "
                               "(default: fresh randomness)")
    noise = fit.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", action="store_true",
                       help="print only errors and warnings")
    noise.add_argument("-v", "--verbose", action="store_const", const=1, default=None,
                       help="show a progress bar (default: when stderr is a terminal)")
    fit.set_defaults(func=cmd_fit, subparser=fit)

    evaluate = sub.add_parser(
        "evaluate",
        help="measure a synthetic CSV against the real one on a workload",
        description="Workload error of SYNTHETIC against REAL: the maximum and mean absolute\n"
        "error over every cell of every marginal (answers as fractions of rows, the\n"
        "paper's measure) and the largest total variation distance of a marginal.\n\n"
        "This reads the real data: its output is NOT differentially private.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    evaluate.add_argument("real", metavar="REAL", help="the real CSV or Parquet file")
    evaluate.add_argument("synthetic", metavar="SYNTHETIC",
                          help="the synthetic CSV or Parquet file")
    _add_workload_options(evaluate, "seed for the choice of marginals; use fit's to "
                                    "measure on the fitted workload (default: fresh)")
    evaluate.add_argument("--per-marginal", action="store_true",
                          help="also print each marginal's total variation distance")
    evaluate.add_argument("--json", action="store_true", help="print the results as JSON")
    evaluate.set_defaults(func=cmd_evaluate, subparser=evaluate)

    domain = sub.add_parser(
        "domain",
        help="draft a domain file from a CSV or Parquet file, for review (NOT private)",
        description="Draft a domain file for INPUT by the rules --infer-domain uses:\n"
        "text and few-valued columns get their values, other numbers their [min, max]\n"
        "and --bins bins. Every entry read from the data is marked\n"
        "\"read_from_data\": true. It is NOT covered by the privacy guarantee: replace\n"
        "each marked entry with public knowledge (documentation, standards, round\n"
        "numbers) and delete the mark before you fit.",
        epilog="example:\n  privsyn domain data.csv -o domain.json\n"
               "  privsyn fit data.csv --domain domain.json --epsilon 1 -o synthetic.csv",
        formatter_class=formatter,
    )
    domain.add_argument("input", metavar="INPUT", help="the CSV ('-' for stdin) or Parquet file")
    domain.add_argument("-o", "--output", default="-", metavar="FILE",
                        help="where to write the domain JSON (default: '-', stdout)")
    _add_draft_options(domain)
    domain.set_defaults(func=cmd_domain, subparser=domain)

    report = sub.add_parser(
        "report",
        help="an HTML page showing how good a synthetic CSV is (NOT private)",
        description="One self-contained HTML page comparing SYNTHETIC with REAL: per-column\n"
        "distributions, a heat map of each pair of columns' total variation distance,\n"
        "the workload's errors and worst marginals, train-on-synthetic test-on-real\n"
        "accuracy for --target, and the privacy spent from --ledger.\n\n"
        "This reads the real data: the page is for the data owner and is NOT\n"
        "differentially private.",
        epilog="example:\n"
               "  privsyn fit real.csv --domain domain.json --seed 0 --ledger ledger.json "
               "-o synthetic.csv\n"
               "  privsyn report real.csv synthetic.csv --domain domain.json --seed 0 \\\n"
               "      --target income --ledger ledger.json -o report.html",
        formatter_class=formatter,
    )
    report.add_argument("real", metavar="REAL", help="the real CSV or Parquet file")
    report.add_argument("synthetic", metavar="SYNTHETIC", help="the synthetic CSV or Parquet file")
    report.add_argument("-o", "--output", default="-", metavar="FILE",
                        help="where to write the HTML page (default: '-', stdout)")
    report.add_argument("--target", metavar="COLUMN",
                        help="column to predict in the train-on-synthetic section")
    report.add_argument("--ledger", metavar="FILE",
                        help="the privacy ledger written by privsyn fit --ledger")
    _add_workload_options(report, "seed for the choice of marginals; use fit's to report "
                                  "on the fitted workload (default: fresh)")
    report.set_defaults(func=cmd_report, subparser=report)

    demo = sub.add_parser(
        "demo",
        help="run a synthesizer (AdaptiveProjection by default) on the bundled UCI Adult data",
        description="Fit a synthesizer (AdaptiveProjection by default) on the bundled UCI\n"
        "Adult data (48,842 rows) with a public domain, then print the workload error\n"
        "and the privacy spent.",
        formatter_class=formatter,
    )
    demo.add_argument("--epsilon", type=_positive_float, default=1.0,
                      help="privacy budget (default: 1)")
    demo.add_argument("--marginals", type=_positive_int, default=32,
                      help="random 3-way marginals in the workload (default: 32)")
    demo.add_argument("--seed", type=_seed, default=0, help="random seed (default: 0)")
    demo.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="adaptive",
                      help="synthesizer to fit (default: adaptive; fem and sepfem run a quick "
                           "100-round setting)")
    demo.add_argument("--rows", type=_positive_int, default=5,
                      help="synthetic rows to print (default: 5)")
    demo.add_argument("-v", "--verbose", action="store_const", const=1, default=None,
                      help="show a progress bar (default: when stderr is a terminal)")
    demo.set_defaults(func=cmd_demo, subparser=demo)
    add_benchmark_parser(sub, formatter)
    return parser
