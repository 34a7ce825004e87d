"""AdaptiveProjection on the paper's ADULT workload or on generated tables.

    python benchmarks/bench_adaptive.py --eps 0.1 1 --seeds 0 1 2 3 4
    python benchmarks/bench_adaptive.py --data generated --n-rows 1000 7000 --dominant \\
        --eps 0.1 1 --rounds 1 --noise-level 0.005 0.02 0.05 --with-fem

Errors are those of the rows ``sample(n)`` returns (``n`` the real row count),
against the real table, over every cell of the workload (the paper's 3-way,
64-marginal workload, delta = 1/n^2): max error, mean error and mean
per-marginal TVD from ``sklearn_privsyn.metrics.workload_error``; the fitted
mixture's max error is printed too. ``--zero-test`` compares values of the
final re-weighting's threshold (``none`` switches it off). ``--noise-level``
measures everything at once when ``sigma_all = sqrt(M / rho) / n`` is at most ``x``,
else the 1-way marginals only (the first rounds rule, with ``x`` its
constant, to be chosen on generated data); ``--rounds`` fixes it. Wall-clock
and CPU (user + sys) seconds of ``fit`` are recorded; on a shared machine
both are upper bounds. One CSV line per run is appended to ``--out``.
"""

import argparse
import csv
import itertools
import math
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from datagen import (  # noqa: E402
    bayes_net_table,
    latent_class_table,
    load_domain,
    with_dominant_values,
)

from sklearn_privsyn import FEM, AdaptiveProjection, QueryWorkload  # noqa: E402
from sklearn_privsyn.datasets import load_coded_csv  # noqa: E402
from sklearn_privsyn.metrics import fidelity_report, workload_error  # noqa: E402
from sklearn_privsyn.privacy import epsilon_to_rho  # noqa: E402

SHARED = Path(os.environ.get("PRIVSYN_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets"))


def load(name, n_rows, dominant, seed, generator="latent"):
    if name == "adult":
        return load_coded_csv(SHARED / "adult.csv", SHARED / "adult-domain.json")
    domain = load_domain(SHARED / "adult-domain.json")
    make = latent_class_table if generator == "latent" else bayes_net_table
    X = make(domain, n_rows, random_state=1000 + seed)
    if dominant:
        X = with_dominant_values(X, domain, random_state=2000 + seed)
    return X, domain


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def evaluate(est, X, workload, seed):
    sample = est.sample(len(X), random_state=seed)
    err = workload_error(workload, X, sample)
    if hasattr(est, "fitted_answers"):
        mixture_max = float(np.abs(workload.answer(X) - est.fitted_answers()).max())
    else:
        mixture_max = workload_error(workload, X, est.records_,
                                     synthetic_weights=est.weights_).max_error
    # plausibility: rows holding a pair of values no real row holds, beside one real
    # half against the other (what sampling alone gives)
    plausibility = fidelity_report(X, sample).summary()
    return err, mixture_max, plausibility


def run_one(name, est, X, workload, seed, extra):
    wall, cpu = time.perf_counter(), cpu_seconds()
    est.fit(X)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    err, mixture, plausibility = evaluate(est, X, workload, seed)
    row = dict(extra, algorithm=name, max_error=round(err.max_error, 5),
               mean_error=f"{err.mean_error:.3e}",
               mean_tvd=round(float(np.mean(err.per_marginal_tvd)), 5),
               mean_tvd_2way=round(plausibility["mean_tvd_2way"], 5),
               impossible_pair_rate=round(plausibility["impossible_pair_rate"], 5),
               real_halves_impossible_pair_rate=round(
                   plausibility["reference_impossible_pair_rate"], 5),
               mixture_max_error=round(mixture, 5),
               records=len(getattr(est, "records_", getattr(est, "component_weights_", []))),
               seconds=round(wall, 1), cpu_seconds=round(cpu, 1),
               eps_spent=round(est.epsilon_, 6))
    if isinstance(est, AdaptiveProjection):
        row.update(representation=est.representation_, n_components=est.n_components,
                   zero_test=est.zero_test_, rounds=est.n_rounds_,
                   selection_rounds=getattr(est, "n_selection_rounds_", None), n_iter=est.n_iter_,
                   stop=est.projection_stop_, gap=f"{getattr(est, 'projection_gap_', float('nan')):.3g}",
                   objective=f"{est.projection_objective_:.4g}")
    print(row, flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="adult", choices=["adult", "generated"])
    parser.add_argument("--n-rows", type=int, nargs="+", default=[48842],
                        help="rows of generated tables")
    parser.add_argument("--generator", default="latent", choices=["latent", "bayesnet"],
                        help="generated tables: latent-class (a mixture of products) or a "
                             "random Bayesian network (not one)")
    parser.add_argument("--representation", nargs="+", default=["default"],
                        help="representation values to run ('default': the estimator's)")
    parser.add_argument("--n-components", type=int, nargs="+", default=[None],
                        help="n_components values to run (products only; default: the estimator's)")
    parser.add_argument("--dominant", action="store_true",
                        help="generated tables with a dominant value in some columns")
    parser.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--n-marginals", type=int, default=64)
    parser.add_argument("--rounds", type=int, nargs="+", default=[None])
    parser.add_argument("--noise-level", type=float, nargs="+", default=[],
                        help="rounds from the default rule with this constant (overrides --rounds)")
    parser.add_argument("--max-iter", type=int, default=None, help="default: the estimator's")
    parser.add_argument("--tol", type=float, default=None, help="default: the estimator's")
    parser.add_argument("--zero-test", nargs="+", default=["default"],
                        help="zero_test values to run ('none' disables; default: the estimator's)")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--with-fem", action="store_true", help="also run FEM (package defaults)")
    parser.add_argument("--out", default=str(HERE / "out" / "adaptive_runs.csv"))
    args = parser.parse_args(argv)

    rows = []
    for n_rows in args.n_rows if args.data == "generated" else [None]:
        for seed in args.seeds:
            X, domain = load(args.data, n_rows, args.dominant, seed, args.generator)
            n = len(X)
            workload = QueryWorkload(domain=domain, k=args.k, n_marginals=args.n_marginals,
                                     max_cells=n, random_state=0).fit(X)
            for eps in args.eps:
                data = args.data + ("" if args.data == "adult" else f":{args.generator}")
                base = dict(data=data + ("+dominant" if args.dominant else ""), n=n,
                            k=args.k, n_marginals=args.n_marginals, eps=eps, seed=seed)
                schedules = [(r, None) for r in args.rounds]
                if args.noise_level:
                    rho = epsilon_to_rho(eps, 1.0 / n**2)
                    M = len(workload.marginals_)
                    sigma_all = math.sqrt(M / rho) / n
                    schedules = [(int(sigma_all <= level), level) for level in args.noise_level]
                settings = itertools.product(schedules, args.zero_test, args.representation,
                                             args.n_components)
                for (rounds, level), zero, representation, components in settings:
                    if representation == "records":  # n_components does not apply
                        if components != args.n_components[0]:
                            continue
                        components = None
                    tuning = {k: v for k, v in (("max_iter", args.max_iter), ("tol", args.tol),
                                                ("n_components", components)) if v is not None}
                    if zero != "default":
                        tuning["zero_test"] = None if zero == "none" else float(zero)
                    if representation != "default":
                        tuning["representation"] = representation
                    est = AdaptiveProjection(epsilon=eps, workload=workload, rounds=rounds,
                                             solver=args.solver, random_state=seed, **tuning)
                    rows.append(run_one("adaptive", est, X, workload, seed,
                                        dict(base, noise_level=level)))
                if args.with_fem:
                    est = FEM(epsilon=eps, workload=workload, random_state=seed)
                    rows.append(run_one("fem", est, X, workload, seed, dict(base)))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fields = list(dict.fromkeys(key for row in rows for key in row))
    new = not out.exists()
    with open(out, "a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
