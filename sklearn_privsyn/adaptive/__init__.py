"""AdaptiveProjection, how it chooses what to measure, and the representations it fits.

* ``_estimator.py``: :class:`AdaptiveProjection` (parameters, fitted
  attributes, sampling);
* ``_rules.py``: its default rules and their constants, from public
  quantities only (:func:`adaptive_default_rounds`,
  :func:`adaptive_default_representation`, :func:`workload_redundancy`,
  :func:`workload_pairs`);
* ``_schedules.py``: the three measurement schedules (everything at once,
  1-way marginals only, adaptive selection), where the fit reads private data;
* ``_fitting.py``: fitting the chosen representation to the noisy
  measurements, once or after every round of selection (post-processing);
* ``_calibration.py``: where every marginal is measured at once and fitted by
  records, a column's value whose share the records put above what every
  measured marginal sums to (by a Bonferroni bound) is calibrated down to it
  (post-processing; the fit continues against those shares, and against each
  number's missing share from the numbers' measurement):
  :func:`one_way_estimates`, :func:`calibration_targets`, :func:`with_missing_shares`,
  :func:`calibrate_weights`;
* ``_shrinkage.py``: where only the 1-way marginals are measured, each
  column's noisy answers mixed with uniform by Stein's unbiased risk
  estimate (post-processing): :func:`shrink_toward_uniform`;
* ``_selection.py``: adaptive selection (which marginals to measure, with how
  much of the budget): :func:`candidate_marginals`, :func:`measure_adaptively`;
* ``_graphical.py``: the graphical model over the measured marginals
  (junction tree, mirror descent, structural zeros, sampling):
  :class:`GraphicalModel`;
* ``_projection.py``: the records projection (Frank-Wolfe over weighted records
  priced by the oracle): :func:`project`, :class:`Projection`;
* ``_product_mixture.py``: the mixture of product distributions:
  :func:`fit_product_mixture`, :class:`ProductMixture`.

Only the schedules and the selection read private data, through the
mechanisms of :mod:`sklearn_privsyn.privacy`; the three representations are
post-processing of the noisy measurements. ``sklearn_privsyn.projection`` and
``sklearn_privsyn.product_mixture`` re-export their names from here.
"""

from ._calibration import (
    calibrate_weights,
    calibrated_shares,
    calibration_targets,
    one_way_estimates,
    with_missing_shares,
)
from ._estimator import AdaptiveProjection
from ._graphical import GraphicalModel, junction_tree, junction_tree_size
from ._product_mixture import (
    ProductMixture,
    ProductMixtureResult,
    fit_product_mixture,
    sample_product_mixture,
)
from ._projection import (
    MarginalCells,
    Projection,
    ProjectionResult,
    checked_targets,
    project,
    zeroed_targets,
)
from ._rules import (
    ALL_AT_ONCE_NOISE,
    PRODUCTS_COLUMNS,
    adaptive_default_representation,
    adaptive_default_rounds,
    workload_pairs,
    workload_redundancy,
)
from ._selection import Candidates, candidate_marginals, measure_adaptively, round_noise
from ._shrinkage import shrink_one_way, shrink_toward_uniform

__all__ = [
    "ALL_AT_ONCE_NOISE",
    "PRODUCTS_COLUMNS",
    "AdaptiveProjection",
    "Candidates",
    "GraphicalModel",
    "MarginalCells",
    "ProductMixture",
    "ProductMixtureResult",
    "Projection",
    "ProjectionResult",
    "adaptive_default_representation",
    "adaptive_default_rounds",
    "calibrate_weights",
    "calibrated_shares",
    "calibration_targets",
    "with_missing_shares",
    "candidate_marginals",
    "checked_targets",
    "fit_product_mixture",
    "junction_tree",
    "junction_tree_size",
    "measure_adaptively",
    "one_way_estimates",
    "project",
    "round_noise",
    "sample_product_mixture",
    "shrink_one_way",
    "shrink_toward_uniform",
    "workload_pairs",
    "workload_redundancy",
    "zeroed_targets",
]
