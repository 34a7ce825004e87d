"""Load test: FEM on 1,000,000 ADULT-like rows, with the paper's workload; time and peak RSS.

    python benchmarks/bench_load.py                       # 1e6 rows, eps 0.1, 20 rounds
    python benchmarks/bench_load.py --rows 3000000 --rounds 5 --solver heuristic
    python benchmarks/bench_load.py --rounds 0            # FEM's default number of rounds

Rows are drawn with replacement from the integer-coded ADULT in
../shared/datasets (or, when it is absent, from the bundled ``load_adult`` with
``adult_public_domain``). The workload is the paper's: 64 random 3-way
marginals with at most 48,842 cells (``random_state=0``).

The private data enters a fit only through the workload's encoding and its
answers (``np.bincount`` over row chunks), so memory should grow with the
table (about 8 bytes per cell for the codes) and not with rows x queries. The
number of rounds does not depend on the data size, except through the default
schedule (``rounds=None`` gives T proportional to n, hundreds of rounds at a
million rows): ``--rounds`` fixes it to keep the run short.

Prints one line of ``key=value`` fields: rows, cells (queries), seconds for
loading and fitting, and peak RSS (``resource.getrusage``, MiB) after loading
the data and after the fit.
"""

import argparse
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("PRIVSYN_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets"))


def peak_rss_mib():
    # ru_maxrss is in KiB on Linux, bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def load_source():
    """(DataFrame, QueryWorkload keywords for its public domain, name of the source)."""
    from sklearn_privsyn.datasets import adult_public_domain, load_adult, load_coded_csv

    if (SHARED / "adult.csv").is_file():
        X, domain = load_coded_csv(SHARED / "adult.csv", SHARED / "adult-domain.json")
        return X, {"domain": domain}, str(SHARED / "adult.csv")
    X = load_adult()
    return X, adult_public_domain(), "bundled load_adult"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--eps", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=20,
                        help="rounds T; 0 uses FEM's default schedule (T grows with n)")
    parser.add_argument("--samples", type=int, default=20, help="samples_per_round")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from sklearn_privsyn import FEM, QueryWorkload

    t0 = time.perf_counter()
    source, public, name = load_source()
    rng = np.random.default_rng(args.seed)
    X = source.iloc[rng.integers(len(source), size=args.rows)].reset_index(drop=True)
    del source
    load_seconds = time.perf_counter() - t0
    rss_data = peak_rss_mib()

    workload = QueryWorkload(**public, k=3, n_marginals=64, max_cells=48842,
                             random_state=0)
    est = FEM(epsilon=args.eps, workload=workload, rounds=args.rounds or None,
              samples_per_round=args.samples, solver=args.solver, random_state=args.seed)
    t1 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X)
    fit_seconds = time.perf_counter() - t1
    rss_fit = peak_rss_mib()
    error = np.abs(est.workload_.answer(X) - est.workload_.answer_codes(est.records_)).max()
    fields = {
        "source": name,
        "rows": len(X),
        "columns": X.shape[1],
        "data_MiB": round(X.memory_usage(index=False, deep=True).sum() / 2**20, 1),
        "cells": est.workload_.n_queries_,
        "eps": args.eps,
        "rounds": est.n_rounds_,
        "samples_per_round": args.samples,
        "solver": args.solver,
        "oracle_calls": est.solver_stats_.calls,
        "oracle_seconds": round(est.solver_stats_.seconds, 1),
        "load_seconds": round(load_seconds, 1),
        "fit_seconds": round(fit_seconds, 1),
        "peak_rss_after_load_MiB": round(rss_data, 0),
        "peak_rss_after_fit_MiB": round(rss_fit, 0),
        "epsilon_spent": round(est.epsilon_, 6),
        "max_error": round(float(error), 4),
        "warnings": len(caught),
    }
    print(" ".join(f"{k}={v}" for k, v in fields.items()))
    return fields


if __name__ == "__main__":
    main()
