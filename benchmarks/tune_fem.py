"""Choose FEM's default rules on generated data, never on the data sets we report.

    python benchmarks/tune_fem.py --eps 0.1 --rounds-scale 0.5 1 2 --keep 0.5 1
    python benchmarks/tune_fem.py --algorithm sepfem --eps 0.1 --noise 0.04 0.08 0.16 0.32
    python benchmarks/tune_fem.py --algorithm sepfem --eps 0.1 1 --rule-scale 0.5 1 2

The table is drawn from a latent-class model with ADULT's public schema
(``datagen.py``), with the same workload protocol as the paper (3-way, 64
marginals, seed 0). ``--noise c`` sets the noise scale to ``c sqrt(T)``;
``--rule-scale r``: for FEM ``r`` times its default ``0.16 sqrt(T)``, for
sepFEM ``r`` times the regret-optimal ``b*`` (``sepfem_noise_scale(...,
scale=r)``; the default is ``r = 0.25``). Each line is one fit,
measured on the rows ``sample(n)`` returns, then one mean and sd line per
setting; the chosen defaults are recorded in ``benchmarks/notes/fem_defaults.md``.
"""

import argparse
import copy
import itertools
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_fem import SHARED  # noqa: E402
from datagen import latent_class_table, load_domain  # noqa: E402
from protocol import fit_and_measure, paper_workload, sample_error, summary_lines  # noqa: E402

from sklearn_privsyn import FEM, SepFEM  # noqa: E402
from sklearn_privsyn.fem import default_rounds, sepfem_noise_scale  # noqa: E402
from sklearn_privsyn.privacy import epsilon_to_rho  # noqa: E402


def noise_rule(algorithm, rule_scale, rounds, workload):
    """FEM: ``rule_scale * 0.16 sqrt(T)``; sepFEM: ``rule_scale`` times the regret-optimal ``b*``."""
    if algorithm == "sepfem":
        return sepfem_noise_scale(rounds, workload.layout_.block_sizes, scale=rule_scale)
    return rule_scale * FEM._default_noise_multiplier * np.sqrt(rounds)


def kept_tails(est, X, figures, keeps):
    """(keep, figures) for each keep fraction: the fit's own, or the tail of a keep=1 fit.

    The output of ``keep=k`` is the records of the last rounds, the same rule
    as ``FEM._fit_records``; weights are equal, so the tail with equal weights
    is exactly what a fit with ``keep=k`` would hold and sample from.
    """
    if keeps == [est.keep]:
        return [(est.keep, figures)]
    if est.keep != 1.0 or est.measure_share > 0:
        raise SystemExit("--keep-tails needs keep=1 and no measure_share")
    per_round = est.samples_per_round_
    n_rounds = len(est.records_) // per_round
    out = []
    for keep in keeps:
        first = min(n_rounds - 1, int(np.floor((1.0 - keep) * n_rounds)))
        tail = copy.copy(est)
        tail.records_ = est.records_[first * per_round:]
        tail.weights_ = np.full(len(tail.records_), 1.0 / len(tail.records_))
        out.append((keep, {**figures, **sample_error(tail, X)}))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithm", choices=["fem", "sepfem"], default="fem")
    parser.add_argument("--eps", type=float, nargs="+", default=[0.1])
    parser.add_argument("--rounds-scale", type=float, nargs="+", default=[1.0])
    parser.add_argument("--keep", type=float, nargs="+", default=[0.5])
    parser.add_argument("--noise", type=float, nargs="+", default=[None],
                        help="noise scale / sqrt(T); default: the estimator's rule")
    parser.add_argument("--rule-scale", type=float, nargs="+", default=[None],
                        help="FEM: multiples of 0.16 sqrt(T); sepFEM: multiples of b*")
    parser.add_argument("--keep-tails", type=float, nargs="+", default=None,
                        help="fit once with keep=1 and measure each of these keep fractions "
                             "on the tail of its rounds (keep does not change the dynamics, "
                             "so this equals separate fits); overrides --keep")
    parser.add_argument("--samples", type=int, nargs="+", default=[None],
                        help="samples a round (default: the estimator's rule, default_samples)")
    parser.add_argument("--measure", type=float, nargs="+", default=[0.0])
    parser.add_argument("--solver", nargs="+", default=[None],
                        help="oracles to compare (default: the estimator's)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args(argv)

    keeps = [1.0] if args.keep_tails else args.keep
    domain = load_domain(SHARED / "adult-domain.json")
    cls = SepFEM if args.algorithm == "sepfem" else FEM
    rows = []
    for seed in args.seeds:
        X = latent_class_table(domain, 48842, random_state=1000 + seed)
        n = len(X)
        workload = paper_workload(n, domain=domain).fit(X)
        for eps, scale, keep, noise, rule, samples, measure, solver in itertools.product(
            args.eps, args.rounds_scale, keeps, args.noise, args.rule_scale, args.samples,
            args.measure, args.solver
        ):
            rho = epsilon_to_rho(eps, 1 / n**2) * (1 - measure)
            rounds = default_rounds(n, rho, 2 * workload.n_queries_, scale=scale)
            est = cls(epsilon=eps, workload=workload, rounds=rounds, keep=keep,
                      samples_per_round=samples, measure_share=measure,
                      n_jobs=args.n_jobs, random_state=seed)
            if solver is not None:
                est.set_params(solver=solver)
            if noise is not None:
                est.set_params(noise_scale=noise * np.sqrt(rounds))
            elif rule is not None:
                est.set_params(noise_scale=noise_rule(args.algorithm, rule, rounds, workload))
            figures = fit_and_measure(est, X)
            for keep, figures in kept_tails(est, X, figures, args.keep_tails or [keep]):
                row = dict(algorithm=args.algorithm, seed=seed, eps=eps, scale=scale,
                           rounds=rounds, keep=keep, noise=noise, rule=rule,
                           noise_scale=round(est.noise_scale_, 3), s=est.samples_per_round_, measure=measure,
                           solver=est.solver, **figures, improved=est.solver_stats_.n_improved,
                           max_gap=est.solver_stats_.max_gap)
                rows.append(row)
                print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in row.items()), flush=True)
    by = ["algorithm", "eps", "scale", "keep", "noise", "rule", "s", "measure", "solver"]
    for line in summary_lines(rows, by):
        print(line)

if __name__ == "__main__":
    main()
