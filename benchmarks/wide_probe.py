"""The projection's two representations on one wide table's noisy answers, step by step.

    python benchmarks/wide_probe.py products --schema acs_2010_1yr --marginals 4096 \\
        --components 8 32 --iterations 500
    python benchmarks/wide_probe.py records --schema acs_2010_1yr --marginals 4096 \\
        --iterations 100 --every 5

What ``benchmarks/notes/wide.md`` reports about where the error and the time
go at width, measured below the estimator: a Bayesian-network table
(``bayes_net_table``, 50,000 rows, table seed 0) on a public schema, the paper's
workload (3-way marginals with at most n cells, workload seed 0), every cell
measured once with the Gaussian noise AdaptiveProjection's rounds-1 measurement
adds at ``--epsilon`` (delta 1/n^2; noise seed 0), then a mixture of products
(L-BFGS, as the estimator runs it) or the records' Frank-Wolfe (64 starts, 128
records an iteration, 30 re-weighting steps an iteration and 300 at the end)
projected onto those answers. Errors are those of the fitted answers (no
sampling) against the table's: max, mean, and mean per-marginal TVD; CPU
seconds of the projection alone. ``floor`` is the max error of the noisy
answers themselves.
"""

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from sklearn_privsyn.adaptive import ProductMixture, Projection
from sklearn_privsyn.benchmark.generated import bayes_net_table, load_domain
from sklearn_privsyn.benchmark.protocol import paper_workload
from sklearn_privsyn.privacy import epsilon_to_rho
from sklearn_privsyn.solvers import get_oracle, open_session

HERE = Path(__file__).resolve().parent
DATA = os.environ.get("PRIVSYN_SHARED_DATASETS", str(HERE.parent.parent / "shared" / "datasets"))


def setup(args):
    domain = load_domain(f"{args.data_dir}/{args.schema}-domain.json")
    X = bayes_net_table(domain, args.rows, random_state=0)
    workload = paper_workload(args.rows, n_marginals=args.marginals, random_state=0,
                              domain=domain).fit(X)
    true = workload.answer(X)
    rho = epsilon_to_rho(args.epsilon, 1.0 / args.rows**2)
    sigma = math.sqrt(args.marginals / rho) / args.rows
    noisy = np.random.default_rng(0).normal(0.0, sigma, size=true.shape)
    noisy += true
    print(f"{args.schema}: {len(domain)} columns, {args.marginals} marginals, "
          f"{workload.n_queries_:,} cells, sigma {sigma:.4g}, "
          f"floor {np.abs(noisy - true).max():.4f}", flush=True)
    return workload, true, noisy, sigma


def errors(workload, true, answers):
    error = np.abs(answers - true)
    tvd = 0.5 * np.add.reduceat(error, workload.marginal_offsets_[:-1])
    return f"max={error.max():.4f} mean={error.mean():.3e} tvd={tvd.mean():.4f}"


def products(args, workload, true, noisy, sigma):
    for k in args.components:
        mixture = ProductMixture(workload, noisy, sigma**2, n_components=k, random_state=0)
        cpu = time.process_time()
        done = 0
        while done < args.iterations:
            step = min(args.every, args.iterations - done)
            fit = mixture.run(max_iter=step, tol=1e-12)
            done += step
            answers = ProductMixture.answers_of(workload, fit.weights, fit.tables)
            print(f"products K={k} iterations={done} objective={fit.objective:.6g} "
                  f"{errors(workload, true, answers)} cpu={time.process_time() - cpu:.1f}",
                  flush=True)


def records(args, workload, true, noisy, sigma):
    session = open_session(get_oracle("highs"), workload.layout_, 0)
    projection = Projection(workload, noisy, sigma**2, session=session, n_starts=64,
                            n_add=128, random_state=0)
    cpu = time.process_time()

    def progress(iteration, value, gap):
        if iteration % args.every == 0:
            print(f"records iteration={iteration} records={len(projection.weights)} "
                  f"objective={value:.6g} gap={gap:.3g} "
                  f"{errors(workload, true, projection.answers())} "
                  f"cpu={time.process_time() - cpu:.1f}", flush=True)

    result = projection.run(max_iter=args.iterations, tol=0.005, inner_qp_iter=30,
                            progress=progress)
    print(f"records end ({result.stop_reason}, {result.n_iter} iterations, "
          f"{len(result.weights)} records) {errors(workload, true, projection.answers())} "
          f"cpu={time.process_time() - cpu:.1f}", flush=True)
    for z in args.zero_test:
        projection.refit_to_significant(z)
        print(f"records zero test z={z} {errors(workload, true, projection.answers())} "
              f"cpu={time.process_time() - cpu:.1f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("representation", choices=["products", "records"])
    parser.add_argument("--schema", default="acs_2010_1yr")
    parser.add_argument("--data-dir", default=DATA)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--marginals", type=int, default=4096)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--components", type=int, nargs="+", default=[8])
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--zero-test", type=float, nargs="*", default=[2.0])
    args = parser.parse_args(argv)
    workload, true, noisy, sigma = setup(args)
    (products if args.representation == "products" else records)(args, workload, true,
                                                                 noisy, sigma)


if __name__ == "__main__":
    sys.exit(main())
