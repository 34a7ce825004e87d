"""Benchmark DualQuery, DQRS (ADULT) and MWEM (titanic).

Usage::

    python benchmarks/bench_dualquery.py adult  [--eps 0.1 0.2 0.5 1] [--seeds 0 1 2]
    python benchmarks/bench_dualquery.py mwem   [--eps 0.1 1]
    python benchmarks/bench_dualquery.py tune   # the generated-data grid behind the defaults

``adult``: the paper's workload (3-way, 64 marginals, ``max_cells=n``,
``random_state=0``), ``delta = 1/n**2``, max error over all cells and fit time.
Targets: DualQuery max error <= 0.20 at eps = 0.1 (the authors' tuned 0.221),
DQRS <= DualQuery at every eps, fit time <= 2 min at eps = 1.

``mwem``: MWEM (with DualQuery, DQRS and FEM beside it) on titanic without ``Fare`` (the full titanic domain has 2.8e8 points,
above MWEM's ``max_domain_size``; without ``Fare`` it has 2.8e6), all 2-way
marginals.

``tune``: DualQuery's ``samples_per_round`` and learning-rate scale on
*generated* data (a mixture of product distributions, n = 50,000, 14 attributes
with random sizes): the defaults are chosen there, never on ADULT.

The datasets are read from ``../shared/datasets`` (or ``PRIVSYN_SHARED_DATASETS``).
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn_privsyn import DQRS, FEM, MWEM, DualQuery, QueryWorkload
from sklearn_privsyn.metrics import workload_error

DATA = Path(os.environ.get(
    "PRIVSYN_SHARED_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets"
))


def _load(name):
    X = pd.read_csv(DATA / f"{name}.csv")
    domain = json.loads((DATA / f"{name}-domain.json").read_text())
    return X[list(domain)], domain


def _run(est, X):
    start = time.perf_counter()
    est.fit(X)
    seconds = time.perf_counter() - start
    wl = est.workload_
    err = workload_error(wl, wl.encode(X), est.records_, synthetic_weights=est.weights_)
    return {
        "max_error": err.max_error,
        "mean_error": err.mean_error,
        "rounds": est.n_rounds_,
        "seconds": seconds,
        "epsilon_spent": est.epsilon_,
    }


def adult(eps_list, seeds, solver):
    X, domain = _load("adult")
    n = len(X)
    workload = QueryWorkload(domain=domain, k=3, n_marginals=64, max_cells=n, random_state=0)
    rows = []
    for eps in eps_list:
        for seed in seeds:
            for cls in (DualQuery, DQRS):
                est = cls(epsilon=eps, delta=1 / n**2, workload=workload, solver=solver,
                          random_state=seed)
                row = {"algorithm": cls.__name__, "epsilon": eps, "seed": seed, **_run(est, X)}
                rows.append(row)
                print(row, flush=True)
    frame = pd.DataFrame(rows)
    summary = frame.groupby(["algorithm", "epsilon"]).agg(
        max_error=("max_error", "mean"), max_error_sd=("max_error", "std"),
        mean_error=("mean_error", "mean"), rounds=("rounds", "mean"),
        seconds=("seconds", "mean"),
    )
    print(summary.round(4).to_string())
    return frame


def mwem(eps_list, seeds):
    X, domain = _load("titanic")
    X = X.drop(columns=["Fare"])
    domain.pop("Fare")
    n = len(X)
    workload = QueryWorkload(domain=domain, k=2).fit(X)
    # reference: the uniform distribution over the domain (no data used)
    sizes = np.diff(workload.marginal_offsets_)
    uniform = np.repeat(1.0 / sizes, sizes)
    gap = np.abs(workload.answer(X) - uniform)
    rows = [{"algorithm": "uniform", "epsilon": 0.0, "seed": 0, "max_error": gap.max(),
             "mean_error": gap.mean(), "rounds": 0, "seconds": 0.0, "epsilon_spent": 0.0}]
    print(rows[0], flush=True)
    for eps in eps_list:
        for seed in seeds:
            est = MWEM(epsilon=eps, delta=1 / n**2, workload=workload, random_state=seed)
            row = {"algorithm": "MWEM", "epsilon": eps, "seed": seed, **_run(est, X)}
            rows.append(row)
            print(row, flush=True)
            for cls in (DualQuery, DQRS, FEM):
                est = cls(epsilon=eps, delta=1 / n**2, workload=workload, random_state=seed)
                row = {"algorithm": cls.__name__, "epsilon": eps, "seed": seed, **_run(est, X)}
                rows.append(row)
                print(row, flush=True)
    frame = pd.DataFrame(rows)
    print(frame.groupby(["algorithm", "epsilon"])[["max_error", "mean_error", "rounds",
                                                     "seconds"]].mean().round(4).to_string())
    return frame


def generate(n=50_000, n_attributes=14, n_components=8, seed=0):
    """A mixture of product distributions over random attribute sizes."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice([2, 3, 5, 7, 10, 16, 40, 100], size=n_attributes)
    component = rng.choice(n_components, size=n, p=rng.dirichlet(np.ones(n_components)))
    columns = {}
    for a, m in enumerate(sizes):
        probs = rng.dirichlet(np.full(m, 0.3), size=n_components)
        cdf = np.cumsum(probs[component], axis=1)
        columns[f"c{a}"] = np.minimum((rng.random(n)[:, None] > cdf).sum(axis=1), m - 1)
    return pd.DataFrame(columns), {f"c{a}": int(m) for a, m in enumerate(sizes)}


def tune(eps_list, seeds, solver):
    X, domain = generate()
    workload = QueryWorkload(domain=domain, k=3, n_marginals=64, max_cells=len(X),
                             random_state=0)
    rows = []
    for eps in eps_list:
        for s in (1, 3, 10, 30):
            for scale in (1.0, 2.0, 4.0, 8.0):
                for seed in seeds:
                    est = DualQuery(epsilon=eps, workload=workload, samples_per_round=s,
                                    solver=solver, random_state=seed)
                    est._learning_rate_scale = scale
                    row = {"epsilon": eps, "s": s, "scale": scale, "seed": seed,
                           **_run(est, X)}
                    rows.append(row)
                    print(row, flush=True)
    frame = pd.DataFrame(rows)
    print(frame.groupby(["epsilon", "s", "scale"])[["max_error", "mean_error", "rounds",
                                                     "seconds"]].mean().round(4).to_string())
    return frame


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["adult", "mwem", "tune"])
    parser.add_argument("--eps", type=float, nargs="+")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--solver", default="highs")
    args = parser.parse_args()
    if args.what == "adult":
        adult(args.eps or [0.1, 0.2, 0.5, 1.0], args.seeds, args.solver)
    elif args.what == "mwem":
        mwem(args.eps or [0.1, 1.0], args.seeds)
    else:
        tune(args.eps or [0.1, 1.0], args.seeds, args.solver)


if __name__ == "__main__":
    main()
