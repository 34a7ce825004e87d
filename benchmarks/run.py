"""The grid runner on the command line of the repository (``privsyn benchmark`` does the same).

The runner itself is part of the package, :mod:`sklearn_privsyn.benchmark`:
a config file or a grid on the command line, one tidy CSV row a run,
resumable by run id, one subprocess a run (peak memory, time-out), errors
recorded per row, mean and sd lines per setting at the end. This script keeps
the flags the repository's notes use; its default data folder is
``../shared/datasets`` beside the checkout (or ``$PRIVSYN_SHARED_DATASETS``).

Usage::

    # a config file (TOML or JSON, see benchmarks/configs/); same as privsyn benchmark CONFIG
    python benchmarks/run.py --config benchmarks/configs/paper.toml
    # or the grid on the command line
    python benchmarks/run.py --out out/runs.csv --algorithms fem hdmm zeros \\
        --datasets titanic --epsilon 0.5 1 --k 2 3 --n-marginals 8 --seeds 0 1 2 \\
        --params fem='{"solver": "heuristic", "rounds": 20}' --n-jobs 2
    # summary tables and plots from the CSV
    python benchmarks/plots.py out/runs.csv --outdir out/

**Algorithms**, **datasets**, the workload and the row's columns: see
``sklearn_privsyn.benchmark`` (``python -c "import sklearn_privsyn.benchmark as b;
help(b)"``) and docs/benchmarks.rst. ``--data-seed seed`` gives generated tables
the run's seed, so that each seed draws both a new table and a new fit.

**Parallelism**: rows run in parallel through joblib (``--n-jobs``; default
1). Any joblib backend works; for a Dask cluster start a client, then use
``--backend dask --scheduler tcp://HOST:8786``; Ray:
``ray.util.joblib.register_ray()`` then ``--backend ray``. Rows spawn a
subprocess each, which works on Dask/Ray workers too; results are written by
this process as rows complete.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from sklearn_privsyn import benchmark as _benchmark
from sklearn_privsyn.benchmark import (  # noqa: F401  (the names the tests and notes use)
    ALGORITHMS,
    COLUMNS,
    QUALITY_COLUMNS,
    SUMMARY_FIGURES,
    append_row,
    canonical_params,
    execute,
    grid_summary,
    load_config,
    read_done,
    run_grid,
    run_id,
    run_isolated,
    run_spec,
)
from sklearn_privsyn.benchmark.protocol import ORDERS
from sklearn_privsyn.benchmark.runner import peak_rss_since_reset_mb, reset_peak_rss

# the names tests/test_benchmarks.py has always used
_peak_rss_since_reset_mb, _reset_peak_rss = peak_rss_since_reset_mb, reset_peak_rss

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = Path(
    os.environ.get("PRIVSYN_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets")
)


def expand_grid(block, defaults=None, extra_params=None):
    """:func:`sklearn_privsyn.benchmark.expand_grid` with this checkout's data folder."""
    return _benchmark.expand_grid(block, defaults, extra_params, data_dir=DEFAULT_DATA_DIR)


def specs_from_config(config):
    """:func:`sklearn_privsyn.benchmark.specs_from_config` with this checkout's data folder."""
    return _benchmark.specs_from_config(config, data_dir=DEFAULT_DATA_DIR)


def load_dataset(name, data_dir=DEFAULT_DATA_DIR, data_seed=0):
    """(DataFrame, workload kwargs) for a dataset name; ``data_seed`` seeds generated tables."""
    return _benchmark.load_dataset(name, data_dir, data_seed)


def _parse_params(items):
    params = {}
    for item in items or []:
        name, _, text = item.partition("=")
        if not text:
            raise SystemExit(f"--params expects NAME='{{json}}', got {item!r}")
        params[name] = json.loads(text)
    return params


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        from sklearn_privsyn.benchmark.worker import main as worker

        return worker(argv[1:3])
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", help="TOML or JSON grid config")
    parser.add_argument("--out", help="results CSV (appended; overrides the config's output)")
    parser.add_argument("--algorithms", nargs="+")
    parser.add_argument("--datasets", nargs="+", default=["adult"])
    parser.add_argument("--epsilon", type=float, nargs="+")
    parser.add_argument("--k", type=int, nargs="+", default=[3])
    parser.add_argument("--n-marginals", nargs="+", default=["64"],
                        help="ints or 'all'")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--orders", nargs="+", choices=ORDERS, default=["drawn"],
                        help="workload orders: the protocol's and/or shuffled")
    parser.add_argument("--order-seed", type=int, default=0, help="seed of the shuffled order")
    parser.add_argument("--delta", type=float, default=None, help="default 1/n^2")
    parser.add_argument("--data-seed", default="0",
                        help="seed of generated tables: an int, or 'seed' (the run's seed)")
    parser.add_argument("--params", nargs="*", metavar="NAME=JSON",
                        help="estimator keyword arguments per algorithm name")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--backend", default=None,
                        help="joblib backend, e.g. 'dask' (needs --scheduler) or 'ray'")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address")
    parser.add_argument("--isolation", choices=["subprocess", "none"], default=None)
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per row (subprocess isolation only)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="rerun rows whose status is not ok")
    parser.add_argument("--only", nargs="+", metavar="ALGORITHM",
                        help="run only the rows of these algorithms (labels) of the grid")
    parser.add_argument("--dry-run", action="store_true", help="list the runs to do")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    data_dir = Path(args.data_dir) if args.data_dir else DEFAULT_DATA_DIR
    config = load_config(args.config) if args.config else {}
    if args.config:
        specs = _benchmark.specs_from_config(config, data_dir=data_dir)
    else:
        if not args.algorithms or not args.epsilon:
            parser.error("give --config, or at least --algorithms and --epsilon")
        block = {"algorithms": args.algorithms, "datasets": args.datasets,
                 "epsilon": args.epsilon, "k": args.k, "n_marginals": args.n_marginals,
                 "seeds": args.seeds, "delta": args.delta, "orders": args.orders,
                 "order_seed": args.order_seed,
                 "data_seed": args.data_seed if args.data_seed == "seed" else int(args.data_seed)}
        specs = _benchmark.expand_grid(block, extra_params=_parse_params(args.params),
                                       data_dir=data_dir)
    if args.only:
        specs = [spec for spec in specs if spec["algorithm"] in args.only]
    out = args.out or _benchmark.config_path(config, "output")
    if not out:
        parser.error("give --out (or 'output' in the config)")
    n_jobs = args.n_jobs if args.n_jobs is not None else config.get("n_jobs", 1)
    if args.backend and args.n_jobs is None:
        n_jobs = -1  # every worker of the cluster
    isolation = args.isolation or config.get("isolation", "subprocess")
    timeout = args.timeout if args.timeout is not None else config.get("timeout")

    if args.dry_run:
        done = read_done(out)
        for spec in specs:
            flag = "done" if spec["run_id"] in done else "todo"
            print(flag, spec["run_id"], spec["algorithm"], spec["dataset"], f"k={spec['k']}",
                  f"m={spec['n_marginals']}", f"eps={spec['epsilon']}", f"seed={spec['seed']}",
                  canonical_params(spec["params"]))
        return 0

    kwargs = {"n_jobs": n_jobs, "isolation": isolation, "timeout": timeout,
              "retry_failed": args.retry_failed, "progress": not args.no_progress}
    if args.backend:
        import joblib

        client = None
        if args.backend == "dask":
            from dask.distributed import Client

            client = Client(args.scheduler) if args.scheduler else Client()
        with joblib.parallel_backend(args.backend):
            rows = run_grid(specs, out, **kwargs)
        if client is not None:
            client.close()
    else:
        rows = run_grid(specs, out, **kwargs)
    failed = sum(r["status"] != "ok" for r in rows)
    print(f"{len(rows)} runs appended to {out} ({failed} not ok)", file=sys.stderr)
    for line in grid_summary(specs, out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
