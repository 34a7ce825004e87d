"""Moved to :mod:`sklearn_privsyn.cell_budget` (the budget is of cells, not of privacy).

This module re-exports its names so that existing imports keep working.
"""

from .cell_budget import DEFAULT_CELL_BUDGET, MarginalChoice, budgeted_marginals

__all__ = ["DEFAULT_CELL_BUDGET", "MarginalChoice", "budgeted_marginals"]
