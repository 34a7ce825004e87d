"""A default workload that fits: k-way marginals chosen under a cell budget.

Enumerating every k-way marginal of a wide table with many-valued columns
gives workloads of billions of cells. :func:`budgeted_marginals` bounds both
each marginal (``max_cells``, by default the number of rows, the paper's
rule) and the whole workload (``cell_budget``): marginals above
``max_cells`` are dropped, and while the remaining ones exceed the budget,
a random subset (seeded, so ``fit`` and ``evaluate`` agree) is kept. When
no k-way marginal has at most ``max_cells`` cells, ``k`` is lowered until
one has. Every column is in a chosen marginal: a column in none of them (its
every k-way marginal too big, or left out of the subset) gets its marginals
of the highest lower arity that fit, while the budget lasts, and at least
its 1-way marginal; a column in no marginal would be drawn uniformly, the
synthesizers knowing nothing of it. Only the domain sizes and the row count
are read, never the rows: the choice costs no privacy when the domain is
public (and the row count is public under the replace-one neighbouring
relation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

# numpy and scikit-learn are imported where used: the command line imports
# this module for its default and must start fast.

__all__ = ["DEFAULT_CELL_BUDGET", "MarginalChoice", "budgeted_marginals", "budgeted_workload"]

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
        Total cells of the chosen marginals (the cover's included: it may
        exceed ``cell_budget`` by the 1-way marginals it adds).
    n_eligible : int
        k-way marginals with at most ``max_cells`` cells.
    n_too_big : int
        k-way marginals dropped for having more than ``max_cells`` cells.
    max_cells : int
        The per-marginal limit applied.
    cell_budget : int
        The total budget applied.
    covered : tuple of str
        Columns in none of the k-way marginals chosen, given lower-order
        ones (last in ``marginals``).
    n_added : int
        Marginals added for them.
    """

    marginals: tuple
    k: int
    n_cells: int
    n_eligible: int
    n_too_big: int
    max_cells: int
    cell_budget: int
    covered: tuple = ()
    n_added: int = 0

    def describe(self):
        """One sentence saying what was chosen, for the command line's stderr."""
        n_k_way = len(self.marginals) - self.n_added
        text = (
            f"{n_k_way} of {self.n_eligible} eligible {self.k}-way marginals "
            f"({self.n_cells:,} cells; at most {self.max_cells:,} cells each, "
            f"{self.cell_budget:,} in all)"
        )
        if self.n_too_big:
            text += f"; {self.n_too_big} larger marginals dropped"
        if self.covered:
            text += (f"; {self.n_added} lower-order marginals added for the "
                     f"columns in none of them: {', '.join(map(repr, self.covered))}")
        return text


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}.")
    return int(value)


def budgeted_workload(params, X, *, k=3, max_cells=None, cell_budget=DEFAULT_CELL_BUDGET,
                      clip=True, random_state=None, n_rows=None):
    """The workload of a table and its domain file, marginals chosen under a cell budget.

    What ``privsyn fit`` and ``privsyn evaluate`` measure without ``--marginals``:
    the domain sizes of every column but the derived ones (computed from their
    sources, never measured), then :func:`budgeted_marginals` of them.

    Parameters
    ----------
    params : dict
        The output of :func:`~sklearn_privsyn.domain_file.read_domain`.
    X : DataFrame or dask.dataframe.DataFrame
        The table (of a Dask table only the schema and the row count are read).
    k, max_cells, cell_budget, random_state
        As in :func:`budgeted_marginals`; ``random_state`` seeds the workload too.
    clip : bool, default=True
        :class:`~sklearn_privsyn.QueryWorkload`'s ``clip``.
    n_rows : int, optional
        ``X``'s rows, when the caller has counted them (a Dask table's count is
        a pass over its files).

    Returns
    -------
    workload : QueryWorkload
        Unfitted, with the chosen marginals.
    choice : MarginalChoice

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.cell_budget import budgeted_workload
    >>> from sklearn_privsyn.domain_file import parse_domain
    >>> params = parse_domain({"a": {"values": [0, 1]}, "b": {"values": ["x", "y"]},
    ...                        "c": {"values": [0, 1, 2]}})
    >>> X = pd.DataFrame({"a": [0, 1, 1], "b": ["x", "y", "x"], "c": [0, 2, 1]})
    >>> workload, choice = budgeted_workload(params, X, k=2, max_cells=10, random_state=0)
    >>> workload.marginals
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    from . import counts
    from .domain_file import workload_kwargs
    from .workload import QueryWorkload

    def workload(**extra):
        return QueryWorkload(**workload_kwargs(params), k=k, clip=clip,
                             random_state=random_state, **extra)

    derived = params.get("derived") or {}
    one_way = [(c,) for c in X.columns if c not in derived]
    sizing = workload(marginals=one_way)
    rows = counts.n_rows(X) if n_rows is None else int(n_rows)
    if counts.is_dask_frame(X):  # the schema only: the rows are not in memory
        sizes = sizing.fit_schema(counts.schema(X), rows).domain_sizes_
    else:
        sizes = sizing.fit(X).domain_sizes_
    choice = budgeted_marginals(sizes, k=k, max_cells=max_cells, cell_budget=cell_budget,
                                n_rows=rows, random_state=random_state)
    return workload(marginals=list(choice.marginals)), choice


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
    >>> choice.marginals  # c has 50 codes: its 1-way marginal alone
    (('a', 'b'), ('a', 'd'), ('b', 'd'), ('c',))
    >>> choice.describe()
    "3 of 3 eligible 2-way marginals (76 cells; at most 20 cells each, 1,000 in all); 3 larger marginals dropped; 1 lower-order marginals added for the columns in none of them: 'c'"
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
    n_chosen = len(chosen)
    chosen, uncovered, n_cells = _cover_every_column(chosen, sizes, arity, limit, cell_budget)
    return MarginalChoice(
        marginals=tuple(tuple(columns[a] for a in m) for m in chosen),
        k=arity,
        n_cells=n_cells,
        n_eligible=len(eligible),
        n_too_big=n_too_big,
        max_cells=int(limit),
        cell_budget=cell_budget,
        covered=tuple(columns[a] for a in uncovered),
        n_added=len(chosen) - n_chosen,
    )


def _cover_every_column(chosen, sizes, arity, limit, cell_budget):
    """``chosen`` with marginals for each column in none of it, those columns, and the
    total cells.

    A column's marginals of the highest arity below ``arity`` with at most
    ``limit`` cells, in enumeration order while the total stays within
    ``cell_budget``; its 1-way marginal when none is added.
    """
    import itertools

    chosen = list(chosen)
    total = sum(math.prod(sizes[a] for a in m) for m in chosen)
    covered = {a for m in chosen for a in m}
    uncovered = [a for a in range(len(sizes)) if a not in covered]
    for column in uncovered:  # each its own marginals (not only another's pair with it)
        added = []  # (arity 1: no lower arity to try)
        for r in range(arity - 1, 0, -1):
            for m in itertools.combinations(range(len(sizes)), r):
                if column not in m or m in chosen:
                    continue
                size = math.prod(sizes[a] for a in m)
                if size <= limit and total + size <= cell_budget:
                    added.append(m)
                    total += size
            if added:
                break
        if not added:
            added = [(column,)]
            total += sizes[column]
        chosen.extend(added)
    return chosen, uncovered, total
