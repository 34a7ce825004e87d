"""Speed and optimality gap of the oracle back-ends on ADULT-sized problems.

Each cell of the table is one session solving a sequence of problems that
share a query set (like the solves within one FEM round) and differ in fresh
noise: ``m`` random 3-way queries on the ADULT one-hot layout (588 columns, 14
attributes), each on 3 distinct random attributes with random values, half of
them negated, weights are FEM-like multiplicities (integers >= 1 summing to
2m), linear term = -Exponential(scale) per coordinate. The gap of a back-end
is the exact optimum (HiGHS, mip_gap=0) minus the objective of its record.

Run::

    python benchmarks/bench_oracle.py            # 20 solves per cell
    python benchmarks/bench_oracle.py --quick    # 4 solves per cell

All back-ends run on one thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sklearn_privsyn.solvers import (
    HeuristicOracle,
    HighsOracle,
    OneHotLayout,
    OracleProblem,
    PulpHighsOracle,
)

ADULT_BLOCKS = (85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2)


def make_problems(m, scale, n_solves, seed=0, layout=None):
    """A query set of ``m`` queries and ``n_solves`` problems with fresh noise."""
    layout = OneHotLayout(ADULT_BLOCKS) if layout is None else layout
    rng = np.random.default_rng([seed, m, int(scale * 1000)])
    literals = np.empty((m, 3), dtype=np.intp)
    for i in range(m):
        atts = rng.choice(layout.n_attributes, size=3, replace=False)
        literals[i] = [layout.starts[a] + rng.integers(layout.block_sizes[a]) for a in atts]
    negated = rng.random(m) < 0.5
    # multiplicities: every query chosen once, m more choices spread at random
    weights = 1.0 + rng.multinomial(m, np.full(m, 1.0 / m))
    ids = np.arange(m)
    return layout, [
        OracleProblem(layout, literals, negated, weights,
                      -rng.exponential(scale, layout.n_features), query_ids=ids)
        for _ in range(n_solves)
    ]


def run(oracle, layout, problems, seed=0):
    session = oracle.session(layout, random_state=seed)
    t0 = time.perf_counter()
    results = [session.solve(p) for p in problems]
    seconds = time.perf_counter() - t0
    session.close()
    return results, seconds, session.stats


def backends():
    return {
        "highs": HighsOracle(threads=1),
        "pulp": PulpHighsOracle(threads=1),
        "heuristic": HeuristicOracle(),
        # the paper's aggregated rows (k c <= sum x_j, c binary) instead of c <= x_j
        "highs-aggregated": HighsOracle(threads=1, formulation="aggregated"),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 solves per cell")
    parser.add_argument("--solves", type=int, default=None, help="solves per cell (default 20)")
    parser.add_argument("--m", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--scales", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--backends", nargs="+", default=["highs", "pulp", "heuristic"],
                        choices=list(backends()))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n_solves = args.solves or (4 if args.quick else 20)

    print(f"ADULT layout, {n_solves} solves per cell, one thread\n")
    print("| m | noise scale | back-end | solves/s | mean gap | max gap | optimal/exact | "
          "statuses |")
    print("|---|---|---|---|---|---|---|---|")
    for scale in args.scales:
        for m in args.m:
            layout, problems = make_problems(m, scale, n_solves, args.seed)
            ref, ref_seconds, ref_stats = run(HighsOracle(mip_gap=0, threads=1), layout,
                                              problems, args.seed)
            best = np.array([r.objective for r in ref])
            print(f"| {m} | {scale:g} | highs, mip_gap=0 (reference) | "
                  f"{n_solves / ref_seconds:.1f} | 0 | 0 | {n_solves}/{n_solves} | "
                  f"{_statuses(ref_stats)} |", flush=True)
            for name in args.backends:
                results, seconds, stats = run(backends()[name], layout, problems, args.seed)
                gap = best - np.array([r.objective for r in results])
                # a positive gap of the reference (time-outs) would show as negative here
                hits = int(np.sum(gap <= 1e-6 * np.maximum(1.0, np.abs(best))))
                print(f"| {m} | {scale:g} | {name} | {n_solves / seconds:.1f} | "
                      f"{gap.mean():.4f} | {gap.max():.4f} | {hits}/{n_solves} | "
                      f"{_statuses(stats)} |", flush=True)


def _statuses(stats):
    parts = [f"{k[2:]}={v}" for k, v in stats.as_dict().items() if k.startswith("n_") and v]
    return " ".join(parts) or "-"


if __name__ == "__main__":
    main()
