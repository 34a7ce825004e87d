"""Speed of QueryWorkload on the paper's ADULT workload (one core).

Targets: fit + all answers on the 48,842-row ADULT table with the paper's 3-way
workload (64 marginals, 458,996 cells) under 1 s; answers on a 1,000-row table
under 0.1 s.

Usage::

    python benchmarks/bench_workload.py [--repeat 5] [--datasets ../shared/datasets]

Uses the integer-coded ``adult.csv`` from the shared datasets folder when it is
there, and always also times the bundled raw Adult table with its public domain.
"""

import os

# one core: pin BLAS/OpenMP threads before numpy is imported
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sklearn_privsyn.datasets import adult_public_domain, load_adult, load_coded_csv  # noqa: E402
from sklearn_privsyn.workload import QueryWorkload  # noqa: E402

_REPO = Path(__file__).resolve().parents[1]


def best_of(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times)), out


def machine_info():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}; {os.cpu_count()} cores visible; Python {platform.python_version()}, "
        f"numpy {np.__version__}, pandas {pd.__version__}"
    )


def bench(name, X, params, repeat):
    print(f"\n== {name}: {X.shape[0]} rows x {X.shape[1]} columns")

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return QueryWorkload(**params).fit(X)

    def fit_answer():
        wl = fit()
        return wl, wl.answer(X)

    t_fit, m_fit, wl = best_of(fit, repeat)
    print(
        f"workload: {len(wl.marginals_)} marginals (of {wl.n_eligible_marginals_} eligible), "
        f"Q = {wl.n_queries_} cells, one-hot width {wl.layout_.n_features}"
    )
    t_all, m_all, _ = best_of(fit_answer, repeat)
    records = wl.encode(X)
    t_enc, _, _ = best_of(lambda: wl.encode(X), repeat)
    t_codes, _, _ = best_of(lambda: wl.answer_codes(records), repeat)
    rng = np.random.default_rng(0)
    small = records[rng.choice(len(records), 1000, replace=False)]
    weights = rng.random(1000)
    t_small, m_small, _ = best_of(lambda: wl.answer_codes(small), max(repeat, 20))
    t_small_w, _, _ = best_of(lambda: wl.answer_codes(small, weights), max(repeat, 20))
    ids = rng.integers(0, 2 * wl.n_queries_, 1000)
    t_lit, _, _ = best_of(lambda: wl.query_literals(ids), max(repeat, 20))
    t_dec, _, _ = best_of(lambda: wl.decode(records, random_state=0), repeat)
    t_tr, _, _ = best_of(lambda: wl.transform(X), repeat)

    rows = [
        ("fit", t_fit, m_fit),
        ("fit + answer(X) [target < 1 s]", t_all, m_all),
        ("encode(X)", t_enc, None),
        ("answer_codes(all records)", t_codes, None),
        ("answer_codes(1,000 records) [target < 0.1 s]", t_small, m_small),
        ("answer_codes(1,000 records, weights)", t_small_w, None),
        ("query_literals(1,000 ids)", t_lit, None),
        ("decode(all records)", t_dec, None),
        ("transform(X) (sparse one-hot)", t_tr, None),
    ]
    for label, best, median in rows:
        extra = f"  (median {median * 1e3:8.1f} ms)" if median is not None else ""
        print(f"  {label:<46s} {best * 1e3:8.1f} ms{extra}")
    return t_all, t_small


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--datasets",
        default=os.environ.get("PRIVSYN_SHARED_DATASETS", _REPO.parent / "shared" / "datasets"),
    )
    args = parser.parse_args()
    print(f"machine: {machine_info()}; BLAS threads pinned to 1")

    ok = True
    shared = Path(args.datasets)
    if (shared / "adult.csv").is_file():
        X, domain = load_coded_csv(shared / "adult.csv", shared / "adult-domain.json")
        params = dict(domain=domain, k=3, n_marginals=64, max_cells=len(X), random_state=0)
        t_all, t_small = bench("ADULT integer-coded, paper 3-way workload", X, params, args.repeat)
        ok &= t_all < 1.0 and t_small < 0.1
    else:
        print(f"(shared datasets not found at {shared}; skipping the integer-coded ADULT)")

    X = load_adult()
    params = dict(**adult_public_domain(), k=3, n_marginals=64, max_cells="n_rows", random_state=0)
    t_all, t_small = bench("bundled raw Adult, public domain, 3-way", X, params, args.repeat)
    ok &= t_all < 1.0 and t_small < 0.1
    print("\ntargets met" if ok else "\nTARGETS MISSED")


if __name__ == "__main__":
    main()
