"""Moved to :mod:`sklearn_privsyn.adaptive` (the mixture of products serves AdaptiveProjection).

This module re-exports its names so that existing imports keep working.
"""

from .adaptive._product_mixture import *  # noqa: F403
from .adaptive._product_mixture import __all__  # noqa: F401
