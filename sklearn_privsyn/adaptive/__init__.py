"""AdaptiveProjection and the two representations it projects onto.

* ``_estimator.py``: :class:`AdaptiveProjection`, its default rules
  (:func:`adaptive_default_rounds`, :func:`adaptive_default_representation`);
* ``_projection.py``: the records projection (Frank-Wolfe over weighted records
  priced by the oracle): :func:`project`, :class:`Projection`;
* ``_product_mixture.py``: the mixture of product distributions:
  :func:`fit_product_mixture`, :class:`ProductMixture`.

Only the estimator reads private data, through the mechanisms of
:mod:`sklearn_privsyn.privacy`; both representations are post-processing of
its noisy measurements. ``sklearn_privsyn.projection`` and
``sklearn_privsyn.product_mixture`` re-export their names from here.
"""

from ._estimator import (
    ALL_AT_ONCE_NOISE,
    AdaptiveProjection,
    adaptive_default_representation,
    adaptive_default_rounds,
)
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

__all__ = [
    "ALL_AT_ONCE_NOISE",
    "AdaptiveProjection",
    "MarginalCells",
    "ProductMixture",
    "ProductMixtureResult",
    "Projection",
    "ProjectionResult",
    "adaptive_default_representation",
    "adaptive_default_rounds",
    "checked_targets",
    "fit_product_mixture",
    "project",
    "sample_product_mixture",
    "zeroed_targets",
]
