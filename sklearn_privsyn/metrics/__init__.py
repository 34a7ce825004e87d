"""How close synthetic data is to the real data: workload errors, distributions, fidelity, utility.

* :func:`workload_error` and :func:`synthesizer_error`: the paper's errors
  on a workload's queries (max and mean absolute error, per-marginal TVD);
* :func:`column_distributions` and :func:`pair_tvd`: shares of every code of
  every column, and the TVD of every pair of columns, in a workload's encoding;
* :func:`fidelity_report` and :func:`impossible_pair_rate`: measures on the
  rows themselves (TVDs with numbers cut at real deciles, the KS distance and
  point mass of every number, the impossible-pair rate);
* :func:`train_synthetic_test_real`: accuracy on real rows of classifiers
  trained on synthetic rows.

Every function here reads the real data: the figures are for the data owner
and are not differentially private.
"""

from ._columns import column_distributions, pair_tvd
from ._fidelity import (
    COMPARED_DIGITS,
    DEFAULT_MAX_CATEGORIES,
    FidelityReport,
    column_kinds,
    compared_values,
    fidelity_report,
    impossible_pair_rate,
    ks_distance,
)
from ._utility import MODELS, train_synthetic_test_real
from ._workload import WorkloadError, synthesizer_error, workload_error

__all__ = [
    "COMPARED_DIGITS",
    "DEFAULT_MAX_CATEGORIES",
    "MODELS",
    "FidelityReport",
    "WorkloadError",
    "column_distributions",
    "column_kinds",
    "compared_values",
    "fidelity_report",
    "impossible_pair_rate",
    "ks_distance",
    "pair_tvd",
    "synthesizer_error",
    "train_synthetic_test_real",
    "workload_error",
]
