"""Many rows on a dask.distributed LocalCluster: the fit equals the pandas fit.

    python benchmarks/dask_rows.py write --rows 20000000 --dir /tmp/rows
    python benchmarks/dask_rows.py fit-dask --dir /tmp/rows --out benchmarks/wide/dask_rows.json
    python benchmarks/dask_rows.py fit-pandas --dir /tmp/rows --out benchmarks/wide/dask_rows.json

``write`` draws a table from one random Bayesian network on ADULT's public
schema (``datagen.bayes_net_table``: the network from seed 0, each partition's
rows from its own seed) and writes it as a Parquet dataset directory, one file
per ``--partition-rows`` rows; nothing is ever held in memory beyond one
partition. ``fit-dask`` starts a ``LocalCluster`` of ``--workers`` worker
processes (one thread each) with ``--memory-limit`` each and fits
AdaptiveProjection (eps 1, delta 1/n^2, seed 0) on ``dd.read_parquet(dir)``
under it, on the ADULT headline workload (64 random 3-way marginals with at
most 48,842 cells, workload seed 0). ``fit-pandas`` fits the same estimator on
the same rows read into pandas. Each records the fit's wall and CPU time
(this process; the workers' CPU is reported by the workers), the peak RSS of
this process and of every worker, and a digest of the ledger, of the fitted
records and weights and of ``sample(100_000, random_state=0)``: equal digests
mean equal outputs. One JSON object per line is appended to ``--out``.
"""

import argparse
import hashlib
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sklearn_privsyn.benchmark.generated import bayes_net_table, load_domain  # noqa: E402

from sklearn_privsyn import AdaptiveProjection, QueryWorkload  # noqa: E402

SHARED = Path(os.environ.get("PRIVSYN_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets"))


def domain():
    return load_domain(SHARED / "adult-domain.json")


def write(args):
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    schema = domain()
    n_parts = -(-args.rows // args.partition_rows)
    for i in range(n_parts):
        rows = min(args.partition_rows, args.rows - i * args.partition_rows)
        part = bayes_net_table(schema, rows, random_state=0, rows_random_state=1000 + i)
        part.to_parquet(out / f"part-{i:05d}.parquet", index=False)
        print(f"wrote partition {i + 1}/{n_parts} ({rows:,} rows)", flush=True)


def estimator():
    workload = QueryWorkload(domain=domain(), k=3, n_marginals=64, max_cells=48842,
                             random_state=0)
    return AdaptiveProjection(epsilon=1.0, workload=workload, random_state=0)


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def outputs(est):
    sample = est.sample(100_000, random_state=0)
    records = getattr(est, "records_", np.zeros(0))
    weights = getattr(est, "weights_", np.zeros(0))
    return {
        "ledger": [(e.mechanism, e.rho, e.count) for e in est.ledger_.entries],
        "epsilon_spent": est.epsilon_,
        "delta": est.delta_,
        "representation": est.representation_,
        "fitted_digest": digest(records, weights,
                                *getattr(est, "component_tables_", []),
                                getattr(est, "component_weights_", np.zeros(0))),
        "sample_digest": digest(*(sample[c].to_numpy() for c in sample.columns)),
    }


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fit_dask(args):
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        frame = dd.read_parquet(args.dir)
        est = estimator()
        wall, cpu = time.perf_counter(), time.process_time()
        est.fit(frame)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        workers = client.run(lambda: {
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "cpu_seconds": time.process_time(),
        })
        n_rows = int(frame.shape[0].compute())
        partitions = frame.npartitions
    row = {"mode": "dask", "rows": n_rows, "partitions": partitions, "workers": args.workers,
           "memory_limit": args.memory_limit, "fit_seconds": wall, "fit_cpu_seconds": cpu,
           "client_peak_rss_mb": peak_rss_mb(),
           "worker_peak_rss_mb": sorted(w["peak_rss_mb"] for w in workers.values()),
           "worker_cpu_seconds": sorted(w["cpu_seconds"] for w in workers.values()),
           **outputs(est)}
    report(args, row)


def fit_pandas(args):
    frame = pd.read_parquet(args.dir)
    est = estimator()
    wall, cpu = time.perf_counter(), time.process_time()
    est.fit(frame)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    row = {"mode": "pandas", "rows": len(frame), "fit_seconds": wall, "fit_cpu_seconds": cpu,
           "peak_rss_mb": peak_rss_mb(), **outputs(est)}
    report(args, row)


def report(args, row):
    row.update(host=platform.node(), command=" ".join(sys.argv))
    print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as handle:
            handle.write(json.dumps(row) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["write", "fit-dask", "fit-pandas"])
    parser.add_argument("--dir", required=True, help="the Parquet dataset directory")
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--partition-rows", type=int, default=500_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--out", default=None, help="JSON lines to append to")
    args = parser.parse_args(argv)
    {"write": write, "fit-dask": fit_dask, "fit-pandas": fit_pandas}[args.command](args)


if __name__ == "__main__":
    main()
