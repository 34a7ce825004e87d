"""Summary tables and plots from a benchmark CSV (``sklearn_privsyn.benchmark.plots``).

    python benchmarks/plots.py benchmarks/paper/paper_runs.csv --outdir benchmarks/paper

Same as ``privsyn benchmark CONFIG --report-only``, for a CSV without its
config. See :mod:`sklearn_privsyn.benchmark.plots` for what is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sklearn_privsyn.benchmark.plots import (  # noqa: F401
    AUTHORS,
    comparison_markdown,
    fidelity_markdown,
    load_runs,
    make_all,
    plot_by_dataset,
    quality_markdown,
    summarise,
    summary_markdown,
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--outdir", default=None, help="default: the CSV's folder")
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args(argv)
    outdir = args.outdir or Path(args.csv).parent
    for path in make_all(args.csv, outdir, reference=not args.no_reference):
        print(path)


if __name__ == "__main__":
    main()
