"""Benchmark DualQuery, DQRS (ADULT) and MWEM (titanic).

Usage::

    python benchmarks/bench_dualquery.py adult  [--eps 0.1 0.2 0.5 1] [--seeds 0 1 2 3 4]
                                                [--orders drawn shuffled] [--order-seed 0]
    python benchmarks/bench_dualquery.py mwem   [--eps 0.1 1]
    python benchmarks/bench_dualquery.py tune   # the generated-data grid behind the defaults
    python benchmarks/bench_dualquery.py tie-break [--eps 0.1 1]   # behind tie_break="history"

``adult``: the paper's workload (3-way, 64 marginals, ``max_cells=n``,
``random_state=0``) as its protocol draws it and/or the same marginals in an
order shuffled by ``--order-seed`` (``protocol.in_order``), ``delta = 1/n**2``.
Every mode prints one row per run, then one mean and sd line per setting, of
the errors of the rows ``sample(n)`` returns (max and mean over all cells, mean
per-marginal TVD) and the fit's wall and CPU time.
Targets: DualQuery max error <= 0.20 at eps = 0.1 (the authors' tuned 0.221),
DQRS <= DualQuery at every eps, fit time <= 2 min at eps = 1.

``mwem``: MWEM (with DualQuery, DQRS and FEM beside it) on titanic without ``Fare`` (the full titanic domain has 2.8e8 points,
above MWEM's ``max_domain_size``; without ``Fare`` it has 2.8e6), all 2-way
marginals.

``tune``: DualQuery's (with ``--algorithm dqrs``, DQRS's) ``samples_per_round``
and learning-rate scale on *generated* data (``--tables``; default the mixture of
product distributions, n = 50,000, 14 attributes with random sizes): the defaults
are chosen there, never on ADULT.

``tie-break``: ``tie_break="uniform"`` against ``"history"`` with decays 0.7 / 0.8 /
0.9, on four generated tables: the mixture above, a latent-class table on ADULT's
public schema (``datagen.latent_class_table``, 48,842 rows) and two latent-class
tables with census-like dominant values (``datagen.with_dominant_values``).

The datasets are read from ``../shared/datasets`` (or ``PRIVSYN_SHARED_DATASETS``).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datagen import latent_class_table, with_dominant_values  # noqa: E402
from protocol import ORDERS, fit_and_measure, in_order, paper_workload, summary_lines  # noqa: E402

from sklearn_privsyn import DQRS, FEM, MWEM, DualQuery, QueryWorkload  # noqa: E402

DATA = Path(os.environ.get(
    "PRIVSYN_SHARED_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets"
))


def _load(name):
    X = pd.read_csv(DATA / f"{name}.csv")
    domain = json.loads((DATA / f"{name}-domain.json").read_text())
    return X[list(domain)], domain


def _run(est, X):
    return {**fit_and_measure(est, X), "rounds": est.n_rounds_, "epsilon_spent": est.epsilon_}


def _report(rows, by):
    for line in summary_lines(rows, by):
        print(line)
    return pd.DataFrame(rows)


def adult(eps_list, seeds, solver, orders=("drawn",), order_seed=0):
    X, domain = _load("adult")
    n = len(X)
    drawn = paper_workload(n, domain=domain)
    rows = []
    for order in orders:
        workload = in_order(drawn, X, order, order_seed)
        for eps in eps_list:
            for seed in seeds:
                for cls in (DualQuery, DQRS):
                    est = cls(epsilon=eps, delta=1 / n**2, workload=workload, solver=solver,
                              random_state=seed)
                    row = {"algorithm": cls.__name__, "epsilon": eps, "order": order,
                           "seed": seed, **_run(est, X)}
                    rows.append(row)
                    print(row, flush=True)
    for line in dqrs_against_dualquery(rows):
        print(line)
    return _report(rows, ["algorithm", "epsilon", "order"])


def dqrs_against_dualquery(rows):
    """Per eps: DQRS's max error minus DualQuery's, paired by seed and order."""
    frame = pd.DataFrame(rows).pivot_table(index=["epsilon", "order", "seed"],
                                           columns="algorithm", values="max_error")
    gap = (frame["DQRS"] - frame["DualQuery"]).dropna().groupby(level="epsilon")
    return [f"DQRS - DualQuery max error, eps={eps}: mean {g.mean():+.4f} (sd {g.std():.4f}), "
            f"DQRS lower or equal in {(g <= 0).sum()} of {len(g)} paired runs"
            for eps, g in gap]


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
    tvd = 0.5 * np.add.reduceat(gap, workload.marginal_offsets_[:-1])
    rows = [{"algorithm": "uniform", "epsilon": 0.0, "seed": 0, "max_error": gap.max(),
             "mean_error": gap.mean(), "mean_tvd": tvd.mean(), "rounds": 0, "seconds": 0.0,
             "epsilon_spent": 0.0}]
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
    return _report(rows, ["algorithm", "epsilon"])


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


def tune(eps_list, seeds, solver, tables=("mixture",), algorithm="dualquery",
         s_list=(1, 3, 10), scales=(2.0, 4.0, 8.0, 16.0)):
    cls = DQRS if algorithm == "dqrs" else DualQuery
    rows = []
    for name, X, domain in generated_tables():
        if name not in tables:
            continue
        workload = paper_workload(len(X), domain=domain)
        for eps in eps_list:
            for s in s_list:
                for scale in scales:
                    for seed in seeds:
                        est = cls(epsilon=eps, workload=workload, samples_per_round=s,
                                  solver=solver, random_state=seed)
                        est._learning_rate_scale = scale
                        row = {"algorithm": cls.__name__, "data": name, "epsilon": eps,
                               "s": s, "scale": scale, "seed": seed, **_run(est, X)}
                        rows.append(row)
                        print(row, flush=True)
    return _report(rows, ["algorithm", "data", "epsilon", "s", "scale"])


def generated_tables():
    """The generated tables behind the tie-break default (schema only from ADULT)."""
    X, domain = generate()
    yield "mixture", X, domain
    domain = json.loads((DATA / "adult-domain.json").read_text())
    latent = latent_class_table(domain, 48842, random_state=1)
    yield "latent-class", latent, domain
    yield "dominant-1", with_dominant_values(latent, domain, random_state=5), domain
    yield "dominant-2", with_dominant_values(latent_class_table(domain, 48842, random_state=7),
                                             domain, random_state=6), domain


def tie_break(eps_list, seeds, solver):
    variants = [("uniform", None), ("history", 0.7), ("history", 0.8), ("history", 0.9)]
    rows = []
    for name, X, domain in generated_tables():
        n = len(X)
        workload = paper_workload(n, domain=domain)
        for eps in eps_list:
            for rule, decay in variants:
                for seed in seeds:
                    est = DualQuery(epsilon=eps, delta=1 / n**2, workload=workload,
                                    tie_break=rule, solver=solver, random_state=seed)
                    if decay is not None:
                        est._history_decay = decay
                    row = {"data": name, "epsilon": eps, "tie_break": rule,
                           "decay": "-" if decay is None else decay,
                           "seed": seed, **_run(est, X)}
                    rows.append(row)
                    print(row, flush=True)
    return _report(rows, ["data", "epsilon", "tie_break", "decay"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["adult", "mwem", "tune", "tie-break"])
    parser.add_argument("--eps", type=float, nargs="+")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--orders", nargs="+", choices=ORDERS, default=["drawn"],
                        help="paper workload orders for adult")
    parser.add_argument("--order-seed", type=int, default=0,
                        help="seed of the shuffled order")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--tables", nargs="+", default=["mixture"],
                        help="generated tables for tune (mixture, latent-class, dominant-1, "
                             "dominant-2)")
    parser.add_argument("--algorithm", choices=["dualquery", "dqrs"], default="dualquery",
                        help="estimator for tune")
    parser.add_argument("--s", type=int, nargs="+", default=[1, 3, 10],
                        help="samples_per_round values for tune")
    parser.add_argument("--scales", type=float, nargs="+", default=[2.0, 4.0, 8.0, 16.0],
                        help="learning-rate scales for tune")
    args = parser.parse_args()
    if args.what == "adult":
        adult(args.eps or [0.1, 0.2, 0.5, 1.0], args.seeds, args.solver, args.orders,
              args.order_seed)
    elif args.what == "mwem":
        mwem(args.eps or [0.1, 1.0], args.seeds)
    elif args.what == "tie-break":
        tie_break(args.eps or [0.1, 1.0], args.seeds, args.solver)
    else:
        tune(args.eps or [0.1, 1.0], args.seeds, args.solver, args.tables, args.algorithm,
             args.s, args.scales)


if __name__ == "__main__":
    main()
