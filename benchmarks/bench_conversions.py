"""How much more zCDP budget the CKS conversion allows than the classic one.

Prints, for delta = 1 / 48842**2 (ADULT's n = 48,842, delta = 1/n^2 as in the
paper) and eps in {0.1, 0.5, 1}, the largest rho meeting (eps, delta) under the
classic Bun-Steinke conversion (the paper's) and under the exact
Canonne-Kamath-Steinke conversion, their ratio, and what that means in rounds
of the exponential mechanism at the authors' per-round parameter
eps0 = 0.008 * sqrt(eps) (paper: eps0**2 / 2 per round and classic;
this package: eps0**2 / 8 per round and CKS). Also times the conversions.

Run: python benchmarks/bench_conversions.py
"""

import math
import time

from sklearn_privsyn.privacy import (
    cks_delta,
    epsilon_to_rho,
    exponential_mechanism_rho,
    rho_to_epsilon,
)

N_ADULT = 48842
DELTA = 1 / N_ADULT**2
EPSILONS = (0.1, 0.5, 1.0)


def _per_call_ms(func, *args, repeat=50, **kwargs):
    start = time.perf_counter()
    for _ in range(repeat):
        func(*args, **kwargs)
    return 1e3 * (time.perf_counter() - start) / repeat


def main():
    print(f"delta = 1/{N_ADULT}^2 = {DELTA:.6e}\n")
    print(f"{'eps':>5} {'rho classic':>13} {'rho CKS':>13} {'CKS/classic':>12} "
          f"{'CKS delta at rho CKS':>21} {'rounds paper':>13} {'rounds ours':>12}")
    for eps in EPSILONS:
        classic = epsilon_to_rho(eps, DELTA, method="classic")
        cks = epsilon_to_rho(eps, DELTA, method="cks")
        eps0 = 0.008 * math.sqrt(eps)
        rounds_paper = math.floor(classic / (eps0**2 / 2))
        rounds_ours = math.floor(cks / exponential_mechanism_rho(eps0))
        print(f"{eps:>5g} {classic:>13.6e} {cks:>13.6e} {cks / classic:>12.4f} "
              f"{cks_delta(cks, eps):>21.6e} {rounds_paper:>13d} {rounds_ours:>12d}")
    print()
    print("time per call (ms):")
    for eps in EPSILONS:
        rho = epsilon_to_rho(eps, DELTA)
        print(f"  eps={eps:g}: epsilon_to_rho cks {_per_call_ms(epsilon_to_rho, eps, DELTA):.3f}, "
              f"rho_to_epsilon cks {_per_call_ms(rho_to_epsilon, rho, DELTA):.3f}, "
              f"cks_delta {_per_call_ms(cks_delta, rho, eps, repeat=500):.4f}")


if __name__ == "__main__":
    main()
