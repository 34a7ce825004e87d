"""The demo: FEM on the bundled UCI Adult data, with its error and privacy spent.

Run it with ``python -m sklearn_privsyn.demo`` (or ``privsyn demo``). It fits
FEM at epsilon = 1 on a workload of 3-way marginals over the bundled Adult
data, using a public domain (nothing about the data's categories or ranges
leaks), then prints the workload error of the synthetic data and the privacy
ledger. The error lines compare against the real data, so they are for the
person who owns the data, not for publication.
"""

import argparse
import time

import numpy as np

from .datasets import adult_public_domain, load_adult
from .fem import FEM
from .metrics import workload_error
from .workload import QueryWorkload


def run_demo(*, epsilon=1.0, n_marginals=32, seed=0, rows=5, verbose=1, print_fn=print):
    """Fit FEM on the bundled Adult data and report error and privacy spent.

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
        Show FEM's progress bar.
    print_fn : callable, default=print
        Where the report goes.

    Returns
    -------
    fem : FEM
        The fitted synthesizer.
    """
    X = load_adult()
    workload = QueryWorkload(**adult_public_domain(), k=3, n_marginals=n_marginals, random_state=seed)
    # A quick setting for the demo: 100 rounds of 20 samples (the default rule
    # would run about 500 rounds of 50 here, for a few points less error).
    fem = FEM(epsilon=epsilon, workload=workload, rounds=100, samples_per_round=20,
              random_state=seed, verbose=verbose)
    start = time.perf_counter()
    fem.fit(X)
    seconds = time.perf_counter() - start
    synthetic = fem.sample(len(X), random_state=seed)
    error = workload_error(fem.workload_, X, synthetic)

    print_fn(f"sklearn-privsyn demo: FEM on UCI Adult ({len(X):,} rows, {X.shape[1]} columns)")
    print_fn(
        f"workload: {len(fem.workload_.marginals_)} random 3-way marginals, "
        f"{fem.workload_.n_queries_:,} counting queries (and their negations)"
    )
    print_fn(f"fit: {fem.n_rounds_} rounds, {seconds:.1f} s")
    print_fn("privacy spent (zCDP ledger):")
    for entry in fem.ledger_.entries:
        print_fn(f"  {entry.mechanism}: {entry.count} x rho {entry.rho:.3g}")
    print_fn(
        f"  total rho {fem.ledger_.rho_spent:.5g} of {fem.rho_:.5g}  ->  "
        f"(epsilon={fem.epsilon_:.4f}, delta={fem.delta_:.3g})-DP  (target epsilon {epsilon})"
    )
    print_fn(
        f"workload error of {len(synthetic):,} synthetic rows vs the real data: "
        f"max {error.max_error:.4f}, mean {error.mean_error:.5f} (fractions of rows)"
    )
    print_fn("first synthetic rows:")
    print_fn(synthetic.head(rows).to_string())
    return fem


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m sklearn_privsyn.demo", description=__doc__)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--marginals", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    np.set_printoptions(precision=4)
    run_demo(epsilon=args.epsilon, n_marginals=args.marginals, seed=args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
