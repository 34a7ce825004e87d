"""Choose FEM's default rules on generated data, never on the data sets we report.

    python benchmarks/tune_fem.py --eps 0.1 --rounds-scale 0.5 1 2 --keep 0.5 1
    python benchmarks/tune_fem.py --algorithm sepfem --eps 0.1 --noise 0.04 0.08 0.16 0.32

The table is drawn from a latent-class model with ADULT's public schema
(``datagen.py``), with the same workload protocol as the paper (3-way, 64
marginals, seed 0). Each line is one fit; the chosen defaults are recorded in
``benchmarks/RESULTS.md``.
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_fem import SHARED  # noqa: E402
from datagen import latent_class_table, load_domain  # noqa: E402

from sklearn_privsyn import FEM, QueryWorkload, SepFEM  # noqa: E402
from sklearn_privsyn.fem import default_rounds  # noqa: E402
from sklearn_privsyn.privacy import epsilon_to_rho  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithm", choices=["fem", "sepfem"], default="fem")
    parser.add_argument("--eps", type=float, nargs="+", default=[0.1])
    parser.add_argument("--rounds-scale", type=float, nargs="+", default=[1.0])
    parser.add_argument("--keep", type=float, nargs="+", default=[0.5])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.16])
    parser.add_argument("--samples", type=int, nargs="+", default=[50])
    parser.add_argument("--measure", type=float, nargs="+", default=[0.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args(argv)

    domain = load_domain(SHARED / "adult-domain.json")
    for seed in args.seeds:
        X = latent_class_table(domain, 48842, random_state=1000 + seed)
        n = len(X)
        workload = QueryWorkload(domain=domain, k=3, n_marginals=64, max_cells=n, random_state=0).fit(X)
        true = workload.answer(X)
        for eps, scale, keep, noise, samples, measure in itertools.product(
            args.eps, args.rounds_scale, args.keep, args.noise, args.samples, args.measure
        ):
            rho = epsilon_to_rho(eps, 1 / n**2) * (1 - measure)
            rounds = default_rounds(n, rho, 2 * workload.n_queries_, scale=scale)
            cls = SepFEM if args.algorithm == "sepfem" else FEM
            est = cls(epsilon=eps, workload=workload, rounds=rounds, keep=keep,
                      noise_scale=noise * np.sqrt(rounds), samples_per_round=samples,
                      measure_share=measure,
                      n_jobs=args.n_jobs, random_state=seed)
            start = time.perf_counter()
            est.fit(X)
            err = np.abs(true - est.workload_.answer_codes(est.records_, est.weights_))
            print(f"{args.algorithm} seed={seed} eps={eps} scale={scale} rounds={rounds} keep={keep} noise={noise} "
                  f"s={samples} measure={measure} max={err.max():.4f} mean={err.mean():.6f} "
                  f"time={time.perf_counter() - start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
