"""Where FEM's time goes on the paper workload, and what the oracle calls cost.

    python benchmarks/profile_fem.py profile --eps 1 --samples 10
    python benchmarks/profile_fem.py oracles --eps 1 --samples 8

``profile`` fits FEM (serially, so that every CPU second is in this process)
under cProfile and prints wall and CPU time with the functions that take most
time. ``oracles`` fits FEM once while keeping the oracle problems of the
rounds in which the number of distinct chosen queries is a multiple of 40,
then solves those same problems with HiGHS (several settings) and with the
heuristic alone: CPU time per call, and how often the heuristic's record is
optimal.
"""

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_fem import load  # noqa: E402
from protocol import paper_workload  # noqa: E402

from sklearn_privsyn import FEM  # noqa: E402
from sklearn_privsyn.solvers import HeuristicOracle, HighsOracle  # noqa: E402

HIGHS_SETTINGS = {
    "highs (default)": {},
    "highs, no LP check": {"lp_check": False},
    "highs, presolve off": {"presolve": False},
    "highs, paper's aggregated rows": {"formulation": "aggregated"},
}


def fitted_workload(seed):
    X, domain = load("adult", seed)
    return X, paper_workload(len(X), domain=domain).fit(X)


def profile(args):
    X, workload = fitted_workload(args.seed)
    est = FEM(epsilon=args.eps, workload=workload, samples_per_round=args.samples,
              random_state=args.seed)
    profiler = cProfile.Profile()
    wall, cpu = time.perf_counter(), time.process_time()
    profiler.enable()
    est.fit(X)
    profiler.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"eps={args.eps} s={args.samples} rounds={est.n_rounds_} wall={wall:.1f}s "
          f"cpu={cpu:.1f}s {est.solver_stats_}")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)


class _Keeping:
    """HiGHS, keeping the problems whose number of queries is a multiple of ``every``."""

    def __init__(self, every):
        self.every = every
        self.problems = []

    def session(self, layout, random_state=None):
        inner = HighsOracle().session(layout, random_state)
        outer = self

        class Session:
            stats = inner.stats

            def solve(self, problem):
                if problem.n_queries % outer.every == 0:
                    outer.problems.append(problem)
                return inner.solve(problem)

            def close(self):
                inner.close()

        return Session()


def oracles(args):
    X, workload = fitted_workload(args.seed)
    keeping = _Keeping(40)
    FEM(epsilon=args.eps, workload=workload, samples_per_round=args.samples, solver=keeping,
        random_state=args.seed).fit(X)
    problems = keeping.problems
    layout = problems[0].layout
    print(f"{len(problems)} problems, distinct queries "
          f"{sorted({p.n_queries for p in problems})}")
    optimum = None
    for name, params in HIGHS_SETTINGS.items():
        session = HighsOracle(**params).session(layout, 0)
        cpu = time.process_time()
        values = np.array([session.solve(p).objective for p in problems])
        cpu = time.process_time() - cpu
        optimum = values if optimum is None else optimum
        print(f"{name}: {1000 * cpu / len(problems):.1f} ms CPU a call, "
              f"{session.stats.n_optimal}/{len(problems)} optimal")
    session = HeuristicOracle().session(layout, 0)
    cpu = time.process_time()
    values = np.array([session.solve(p).objective for p in problems])
    cpu = time.process_time() - cpu
    gap = optimum - values
    print(f"heuristic: {1000 * cpu / len(problems):.1f} ms CPU a call, optimal in "
          f"{int(np.sum(gap <= 1e-6))}/{len(problems)}, gap mean {gap.mean():.3f} "
          f"max {gap.max():.3f} (objective mean {optimum.mean():.1f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["profile", "oracles"])
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    {"profile": profile, "oracles": oracles}[args.what](args)


if __name__ == "__main__":
    main()
