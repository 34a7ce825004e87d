"""Moved to :mod:`sklearn_privsyn.adaptive` (the records projection serves AdaptiveProjection).

This module re-exports its names so that existing imports keep working.
"""

from .adaptive._projection import *  # noqa: F403
from .adaptive._projection import __all__  # noqa: F401
