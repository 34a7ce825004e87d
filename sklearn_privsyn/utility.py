"""Train on synthetic, test on real: moved to :mod:`sklearn_privsyn.metrics`.

This module keeps the old import path working.
"""

from .metrics import MODELS, train_synthetic_test_real

__all__ = ["MODELS", "train_synthetic_test_real"]
