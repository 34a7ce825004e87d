"""Differentially private synthetic data as scikit-learn estimators.

The algorithms come from Vietri, Tian, Bun, Steinke and Wu, "New
Oracle-Efficient Algorithms for Private Synthetic Data Release" (ICML 2020).
Public names are imported lazily so that ``import sklearn_privsyn`` stays fast
and does not load the solver libraries until they are used.
"""

import importlib

from .exceptions import (BudgetExceededError, PrivacyLeakWarning, SolverWarning,
                         UncoveredColumnWarning)
from .registry import all_synthesizers

__version__ = "0.1.0.dev0"

#: Public name -> module that defines it; the synthesizers come from the registry.
_LAZY = {
    "QueryWorkload": "sklearn_privsyn.workload",
    "PrivacyLedger": "sklearn_privsyn.privacy",
    **{entry.name: entry.module for entry in all_synthesizers()},
    "SyntheticDataTrainer": "sklearn_privsyn.trainer",
}

__all__ = [
    "BudgetExceededError",
    "PrivacyLeakWarning",
    "SolverWarning",
    "UncoveredColumnWarning",
    "__version__",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
