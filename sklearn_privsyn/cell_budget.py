"""A default workload that fits: k-way marginals chosen under a cell budget.

Enumerating every k-way marginal of a wide table with many-valued columns
gives workloads of billions of cells. :func:`budgeted_marginals` bounds both
each marginal (``max_cells``, by default the number of rows, the paper's
rule) and the whole workload (``cell_budget``): marginals above
``max_cells`` are dropped, and while the remaining ones exceed the budget,
a random subset (seeded, so ``fit`` and ``evaluate`` agree) is kept. When
no k-way marginal has at most ``max_cells`` cells, ``k`` is lowered until
one has. Only the domain sizes and the row count are read, never the rows:
the choice costs no privacy when the domain is public (and the row count is
public under the replace-one neighbouring relation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

# numpy and scikit-learn are imported where used: the command line imports
# this module for its default and must start fast.

__all__ = ["DEFAULT_CELL_BUDGET", "MarginalChoice", "budgeted_marginals"]

#: Default total cells of a workload chosen by :func:`budgeted_marginals`
#: (about 100 MB of FEM's per-cell arrays at ~110 bytes a cell).
DEFAULT_CELL_BUDGET = 1_000_000


@dataclass(frozen=True)
class MarginalChoice:
    """The marginals chosen and how.

    Attributes
    ----------
    marginals : tuple of tuples
        Chosen marginals (column names), in enumeration order.
    k : int
        Their arity (lower than requested when no k-way marginal fitted).
    n_cells : int
        Total cells of the chosen marginals.
    n_eligible : int
        k-way marginals with at most ``max_cells`` cells.
    n_too_big : int
        k-way marginals dropped for having more than ``max_cells`` cells.
    max_cells : int
        The per-marginal limit applied.
    cell_budget : int
        The total budget applied.
    """

    marginals: tuple
    k: int
    n_cells: int
    n_eligible: int
    n_too_big: int
    max_cells: int
    cell_budget: int

    def describe(self):
        """One sentence saying what was chosen, for the command line's stderr."""
        text = (
            f"{len(self.marginals)} of {self.n_eligible} eligible {self.k}-way marginals "
            f"({self.n_cells:,} cells; at most {self.max_cells:,} cells each, "
            f"{self.cell_budget:,} in all)"
        )
        if self.n_too_big:
            text += f"; {self.n_too_big} larger marginals dropped"
        return text


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}.")
    return int(value)


def budgeted_marginals(domain_sizes, *, k=3, max_cells=None, cell_budget=DEFAULT_CELL_BUDGET,
                       n_rows=None, random_state=None):
    """Choose k-way marginals whose total size fits a cell budget.

    The eligible marginals are those of the paper's protocol
    (:func:`~sklearn_privsyn.marginals.choose_marginals`); this adds the
    lowering of ``k`` and the total budget.

    Parameters
    ----------
    domain_sizes : dict
        Column -> number of codes, in the order marginals are enumerated
        (a fitted workload's ``domain_sizes_``).
    k : int, default=3
        Requested arity; lowered while no k-way marginal fits ``max_cells``.
    max_cells : int or "n_rows", default=None
        Largest marginal kept; None or ``"n_rows"`` means ``n_rows`` (the
        paper's rule), or ``cell_budget`` when ``n_rows`` is None too.
    cell_budget : int, default=1_000_000
        Largest total number of cells.
    n_rows : int, default=None
        Rows of the table (for ``max_cells="n_rows"``).
    random_state : int, RandomState instance or None, default=None
        Seed of the subset kept when the eligible marginals exceed the budget.

    Returns
    -------
    choice : MarginalChoice

    Raises
    ------
    ValueError
        If even a single column has more codes than both limits allow; the
        message names the column and its size.

    Examples
    --------
    >>> sizes = {"a": 2, "b": 3, "c": 50, "d": 4}
    >>> choice = budgeted_marginals(sizes, k=2, max_cells=20, cell_budget=1000)
    >>> choice.marginals
    (('a', 'b'), ('a', 'd'), ('b', 'd'))
    >>> choice.describe()
    '3 of 3 eligible 2-way marginals (26 cells; at most 20 cells each, 1,000 in all); 3 larger marginals dropped'
    """
    import numpy as np
    from sklearn.utils import check_random_state

    from .marginals import choose_marginals

    k = _count("k", k)
    cell_budget = _count("cell_budget", cell_budget)
    if max_cells is None or max_cells == "n_rows":
        limit = cell_budget if n_rows is None else _count("n_rows", n_rows)
    else:
        limit = _count("max_cells", max_cells)
    limit = min(limit, cell_budget)
    columns = list(domain_sizes)
    if not columns:
        raise ValueError("domain_sizes is empty; a workload needs at least one column.")
    sizes = [_count(f"the size of column {c!r}", domain_sizes[c]) for c in columns]
    if min(sizes) > limit:
        smallest = int(np.argmin(sizes))
        raise ValueError(
            f"Every column has more than {limit:,} codes (the smallest, {columns[smallest]!r}, "
            f"has {sizes[smallest]:,}); use fewer bins or values, or raise max_cells and "
            "cell_budget (--max-cells and --cell-budget on the command line)."
        )
    # the smallest a-way marginal is that of the a smallest columns
    smallest_first = sorted(sizes)
    arity = max(a for a in range(1, min(k, len(columns)) + 1)
                if math.prod(smallest_first[:a]) <= limit)
    eligible, _ = choose_marginals(sizes, arity, max_cells=limit)
    n_too_big = math.comb(len(columns), arity) - len(eligible)
    cells = np.array([math.prod(sizes[a] for a in m) for m in eligible], dtype=float)
    keep = np.ones(len(eligible), dtype=bool)
    if cells.sum() > cell_budget:
        keep[:] = False
        total = 0.0
        for j in check_random_state(random_state).permutation(len(eligible)):
            if total + cells[j] <= cell_budget:
                keep[j] = True
                total += cells[j]
    chosen = [m for m, kept in zip(eligible, keep, strict=True) if kept]
    return MarginalChoice(
        marginals=tuple(tuple(columns[a] for a in m) for m in chosen),
        k=arity,
        n_cells=int(cells[keep].sum()),
        n_eligible=len(eligible),
        n_too_big=n_too_big,
        max_cells=int(limit),
        cell_budget=cell_budget,
    )
