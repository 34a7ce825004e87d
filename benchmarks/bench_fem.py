"""FEM / sepFEM on the paper's ADULT workload (or generated data): error and time.

    python benchmarks/bench_fem.py --eps 0.1 1 --seeds 0 1 2 3 4 --orders drawn shuffled
    python benchmarks/bench_fem.py --data generated --eps 0.1 --rounds 100

Prints one line per run, appends it to --out (CSV), then one mean and sd line
per (eps, order). ``--orders``: the paper's workload as its protocol draws it
and/or the same marginals in an order shuffled by ``--order-seed``
(``protocol.in_order``). Errors are measured on the rows ``sample(n)`` returns:
max and mean over all workload cells (negations have the same absolute error)
and the mean per-marginal TVD, as fractions of rows.
"""

import argparse
import csv
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from datagen import latent_class_table, load_domain  # noqa: E402
from protocol import ORDERS, fit_and_measure, in_order, paper_workload, summary_lines  # noqa: E402

from sklearn_privsyn import FEM, SepFEM  # noqa: E402
from sklearn_privsyn.datasets import load_coded_csv  # noqa: E402

SHARED = Path(os.environ.get("PRIVSYN_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets"))


def load(name, seed):
    if name == "adult":
        return load_coded_csv(SHARED / "adult.csv", SHARED / "adult-domain.json")
    if name == "generated":
        domain = load_domain(SHARED / "adult-domain.json")
        return latent_class_table(domain, 48842, random_state=1000 + seed), domain
    raise SystemExit(f"unknown dataset {name!r}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="adult", choices=["adult", "generated"])
    parser.add_argument("--algorithm", default="fem", choices=["fem", "sepfem"])
    parser.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--orders", nargs="+", choices=ORDERS, default=["drawn"])
    parser.add_argument("--order-seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--n-marginals", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--round-epsilon", type=float, default=None)
    parser.add_argument("--noise-scale", type=float, default=None)
    parser.add_argument("--samples", type=int, default=None,
                        help="samples a round (default: the estimator's rule)")
    parser.add_argument("--keep", type=float, default=0.5)
    parser.add_argument("--solver", default=None, help="oracle (default: the estimator's)")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--verbose", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "out" / "fem_runs.csv"))
    args = parser.parse_args(argv)

    Estimator = {"fem": FEM, "sepfem": SepFEM}[args.algorithm]
    rows = []
    for seed in args.seeds:
        X, domain = load(args.data, seed)
        drawn = paper_workload(len(X), k=args.k, n_marginals=args.n_marginals,
                               domain=domain)
        for order in args.orders:
            workload = in_order(drawn, X, order, args.order_seed)
            for eps in args.eps:
                est = Estimator(epsilon=eps, workload=workload, rounds=args.rounds,
                                round_epsilon=args.round_epsilon, noise_scale=args.noise_scale,
                                samples_per_round=args.samples, keep=args.keep,
                                n_jobs=args.n_jobs, random_state=seed, verbose=args.verbose)
                if args.solver is not None:
                    est.set_params(solver=args.solver)
                figures = fit_and_measure(est, X)
                stats = est.solver_stats_.as_dict() if est.solver_stats_ is not None else {}
                row = dict(data=args.data, algorithm=args.algorithm, k=args.k,
                           n_marginals=args.n_marginals, order=order,
                           order_seed=args.order_seed if order == "shuffled" else "",
                           queries=est.workload_.n_queries_, eps=eps, seed=seed,
                           rounds=est.n_rounds_, round_epsilon=round(est.round_epsilon_, 6),
                           noise_scale=round(est.noise_scale_, 4), samples=est.samples_per_round_,
                           keep=args.keep, solver=est.solver, n_jobs=args.n_jobs,
                           eps_spent=round(est.epsilon_, 6), rho_spent=est.ledger_.rho_spent,
                           **figures, timeouts=stats.get("n_time_limit"),
                           fallbacks=stats.get("n_fallback"), checked=stats.get("n_checked"),
                           improved=stats.get("n_improved"), max_gap=stats.get("max_gap"))
                print(row, flush=True)
                rows.append(row)
    for line in summary_lines(rows, ["algorithm", "eps", "order"]):
        print(line)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists()
    with open(out, "a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
