"""The demo: a synthesizer on the bundled UCI Adult data, with its error and privacy spent.

Run it with ``python -m sklearn_privsyn.demo`` (or ``privsyn demo``). It fits
AdaptiveProjection (the most accurate synthesizer here; ``--algorithm`` picks
another) at epsilon = 1 on a workload of 3-way marginals over the bundled Adult
data, using a public domain (nothing about the data's categories or ranges
leaks), then prints the workload error of the synthetic data and the privacy
ledger. The error lines compare against the real data, so they are for the
person who owns the data, not for publication.
"""

import argparse
import time

import numpy as np

from .datasets import adult_public_domain, load_adult
from .metrics import workload_error
from .registry import CLI_ALGORITHMS, get_synthesizer
from .workload import QueryWorkload


def run_demo(*, epsilon=1.0, n_marginals=32, seed=0, rows=5, verbose=1, algorithm="adaptive",
             print_fn=print):
    """Fit a synthesizer on the bundled Adult data and report error and privacy spent.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget (delta is 1 / n**2).
    n_marginals : int, default=32
        Number of random 3-way marginals in the workload.
    seed : int, default=0
        Random state for the workload choice, the fit and the sample.
    rows : int, default=5
        Synthetic rows to print.
    verbose : int, default=1
        Show the synthesizer's progress bar.
    algorithm : {"adaptive", "fem", "sepfem", "dualquery", "dqrs", "mwem"}, default="adaptive"
        Which synthesizer to fit (a command-line name of the registry,
        :mod:`sklearn_privsyn.registry`). It runs with the registry's
        ``demo_params``: FEM and sepFEM get a quick setting (their default rule
        runs about 500 rounds of 50 samples here, minutes, for a few points
        less error).
    print_fn : callable, default=print
        Where the report goes.

    Returns
    -------
    synthesizer : estimator
        The fitted synthesizer.
    """
    if algorithm not in CLI_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(CLI_ALGORITHMS)}; got {algorithm!r}")
    entry = get_synthesizer(algorithm)
    cls, name, params = entry.load(), entry.name, dict(entry.demo_params)
    X = load_adult()
    workload = QueryWorkload(**adult_public_domain(), k=3, n_marginals=n_marginals, random_state=seed)
    synthesizer = cls(epsilon=epsilon, workload=workload, random_state=seed, verbose=verbose,
                      **params)
    start = time.perf_counter()
    synthesizer.fit(X)
    seconds = time.perf_counter() - start
    synthetic = synthesizer.sample(len(X), random_state=seed)
    error = workload_error(synthesizer.workload_, X, synthetic)

    print_fn(f"sklearn-privsyn demo: {name} on UCI Adult ({len(X):,} rows, {X.shape[1]} columns)")
    print_fn(
        f"workload: {len(synthesizer.workload_.marginals_)} random 3-way marginals, "
        f"{synthesizer.workload_.n_queries_:,} counting queries (and their negations)"
    )
    rounds = synthesizer.n_rounds_
    print_fn(f"fit: {rounds} round{'' if rounds == 1 else 's'}, "
             f"{synthesizer._output_description()}, {seconds:.1f} s")
    print_fn("privacy spent (zCDP ledger):")
    for entry in synthesizer.ledger_.entries:
        print_fn(f"  {entry.mechanism}: {entry.count} x rho {entry.rho:.3g}")
    print_fn(
        f"  total rho {synthesizer.ledger_.rho_spent:.5g} of {synthesizer.rho_:.5g}  ->  "
        f"(epsilon={synthesizer.epsilon_:.4f}, delta={synthesizer.delta_:.3g})-DP  "
        f"(target epsilon {epsilon})"
    )
    print_fn(
        f"workload error of {len(synthetic):,} synthetic rows vs the real data: "
        f"max {error.max_error:.4f}, mean {error.mean_error:.5f} (fractions of rows), "
        f"mean per-marginal TVD {error.per_marginal_tvd.mean():.4f}"
    )
    print_fn("first synthetic rows:")
    print_fn(synthetic.head(rows).to_string())
    return synthesizer


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m sklearn_privsyn.demo", description=__doc__)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--marginals", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algorithm", choices=sorted(CLI_ALGORITHMS), default="adaptive")
    args = parser.parse_args(argv)
    np.set_printoptions(precision=4)
    run_demo(epsilon=args.epsilon, n_marginals=args.marginals, seed=args.seed,
             algorithm=args.algorithm)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
