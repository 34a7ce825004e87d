"""Sets of marginals over records: their cells, vectorised answers and query literals.

A :class:`MarginalSet` numbers the cells of some marginals (sets of attributes)
of a one-hot layout: the cells of marginal ``j`` are the positive query ids
``offsets[j] .. offsets[j + 1] - 1``, in C order of the marginal's attributes
(the last varies fastest), and id ``q + Q`` is the negation of id ``q``. It
answers all of them at once from per-marginal counts (``np.bincount`` on a
mixed-radix cell index), never from a dense query matrix, and hands queries to
the optimisation oracles as one-hot literals.

:func:`choose_marginals` is the paper's protocol for picking the marginals.
"""

from __future__ import annotations

import itertools
import math
from functools import cached_property

import numpy as np
from sklearn.utils import check_random_state

from ._layout import OneHotLayout

__all__ = ["MarginalSet", "choose_marginals", "workload_marginals"]

# Rows are processed in chunks so that a chunk's (rows x marginals) index
# matrix stays around this many entries (32 MB of int64).
_CHUNK_ENTRIES = 1 << 22
# Largest number of positive queries (total cells) a workload may have: the
# estimators keep a few float arrays of Q entries (1 GB each at this limit, 2**27
# cells; AdaptiveProjection's fit peaks at about five, docs/algorithms/adaptive.rst).
# Beyond it fit raises instead of exhausting memory.
_MAX_QUERIES = 1 << 27
# Largest number of k-subsets of the columns enumerated by choose_marginals.
_MAX_SUBSETS = 1 << 24


def choose_marginals(block_sizes, k, *, max_cells=None, n_marginals=None, random_state=None):
    """The paper's protocol: eligible k-subsets of the attributes, a random choice of them.

    All ``k``-subsets of the attributes are enumerated in order
    (``itertools.combinations``), those with at most ``max_cells`` cells are
    eligible, and ``check_random_state(random_state).choice(n_eligible,
    n_marginals, replace=False)`` picks ``n_marginals`` of them (all when None),
    kept in enumeration order.

    Returns
    -------
    marginals : list of tuples of int
        The chosen marginals, as attribute indices.
    n_eligible : int
        Number of eligible k-subsets.

    Examples
    --------
    >>> from sklearn_privsyn.marginals import choose_marginals
    >>> choose_marginals((2, 3, 4), 2, max_cells=8)
    ([(0, 1), (0, 2)], 2)
    """
    sizes = np.asarray(block_sizes, dtype=np.intp)
    n_attributes = len(sizes)
    if k > n_attributes:
        raise ValueError(f"k={k} is larger than the number of columns ({n_attributes}).")
    n_subsets = math.comb(n_attributes, k)
    if n_subsets > _MAX_SUBSETS:
        raise ValueError(
            f"k={k} over {n_attributes} columns gives {n_subsets:,} marginals to "
            f"enumerate, more than {_MAX_SUBSETS:,}; lower k or give marginals= explicitly."
        )
    combos = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n_attributes), k)),
        dtype=np.intp,
    ).reshape(-1, k)
    cells = np.prod(sizes[combos].astype(float), axis=1)
    if max_cells is not None:
        combos = combos[cells <= max_cells]
    n_eligible = int(combos.shape[0])
    if n_eligible == 0:
        raise ValueError(
            f"No {k}-way marginal has at most max_cells={max_cells} cells; "
            "raise max_cells or lower k."
        )
    if n_marginals is not None:
        if n_marginals > n_eligible:
            raise ValueError(
                f"n_marginals={n_marginals} is more than the {n_eligible} eligible "
                f"{k}-way marginals."
            )
        pick = check_random_state(random_state).choice(n_eligible, n_marginals, replace=False)
        combos = combos[np.sort(pick)]
    return [tuple(int(a) for a in row) for row in combos], n_eligible


def workload_marginals(block_sizes, columns, *, marginals, k, n_marginals, max_cells, n_rows,
                       random_state):
    """The marginals a :class:`~sklearn_privsyn.QueryWorkload` measures, as attribute tuples.

    The explicit ``marginals`` (column names, or one name for a 1-way
    marginal), checked; or, when ``marginals`` is None, :func:`choose_marginals`
    with ``max_cells="n_rows"`` meaning the row count (public). Returns the
    chosen marginals and the number of eligible ones (None when explicit).

    Examples
    --------
    >>> from sklearn_privsyn.marginals import workload_marginals
    >>> workload_marginals((2, 3, 4), ("a", "b", "c"), marginals=[("c", "a"), "b"], k=2,
    ...                    n_marginals=None, max_cells=None, n_rows=10, random_state=None)
    ([(2, 0), (1,)], None)
    """
    if marginals is None:
        return choose_marginals(block_sizes, k,
                                max_cells=n_rows if max_cells == "n_rows" else max_cells,
                                n_marginals=n_marginals, random_state=random_state)
    if n_marginals is not None or max_cells is not None:
        raise ValueError(
            "n_marginals and max_cells apply only when marginals=None; "
            "got explicit marginals together with "
            + ("n_marginals" if n_marginals is not None else "max_cells")
            + "."
        )
    index = {c: a for a, c in enumerate(columns)}
    chosen, seen = [], {}
    for m in marginals:
        names = (m,) if isinstance(m, str) or not np.iterable(m) else tuple(m)
        if len(names) == 0:
            raise ValueError("marginals contains an empty marginal ().")
        unknown = [c for c in names if c not in index]
        if unknown:
            raise ValueError(f"marginals entry {names!r} names columns not in X: {unknown}.")
        if len(set(names)) != len(names):
            raise ValueError(f"marginals entry {names!r} repeats a column.")
        key = frozenset(names)
        if key in seen:
            raise ValueError(
                f"marginals entries {seen[key]!r} and {names!r} are the same marginal."
            )
        seen[key] = names
        chosen.append(tuple(index[c] for c in names))
    if not chosen:
        raise ValueError("marginals is empty; give at least one marginal.")
    return chosen, None


class MarginalSet:
    """Marginals of a one-hot layout: cell numbering, answers and query literals.

    Parameters
    ----------
    layout : OneHotLayout
        The records' layout (attribute ``a`` has ``layout.block_sizes[a]`` codes).
    marginals : sequence of tuples of int
        Each marginal's attributes, in the order that numbers its cells.
    names : sequence, default=None
        Names of the attributes, used in error messages only.

    Attributes
    ----------
    marginals : tuple of tuples of int
    offsets : ndarray of shape (n_marginals + 1,)
        The cells of marginal ``j`` are query ids ``offsets[j] .. offsets[j + 1] - 1``.
    n_queries : int
        Number ``Q`` of positive queries (cells); ids ``Q .. 2Q - 1`` are negations.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.marginals import MarginalSet
    >>> from sklearn_privsyn.solvers import OneHotLayout
    >>> ms = MarginalSet(OneHotLayout((2, 3)), [(0,), (0, 1)])
    >>> ms.offsets.tolist(), ms.n_queries
    ([0, 2, 8], 8)
    >>> records = np.array([[0, 2], [1, 0], [1, 2]])
    >>> ms.counts(records).tolist()
    [1.0, 2.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    >>> ms.marginal_answers(1, records, weights=[2, 1, 1]).tolist()
    [0.0, 0.0, 0.5, 0.25, 0.0, 0.25]
    >>> ms.cell_index(records, 1).tolist()
    [2, 3, 5]
    >>> ms.query_literals([5, 12])  # cell (1, 0) of marginal 1, and NOT (0, 2)
    (array([[1, 2],
           [0, 4]]), array([False,  True]))
    """

    def __init__(self, layout, marginals, names=None):
        if not isinstance(layout, OneHotLayout):
            raise TypeError(f"layout must be a OneHotLayout, got {type(layout).__name__}.")
        marginals = tuple(tuple(int(a) for a in m) for m in marginals)
        if not marginals:
            raise ValueError("A marginal set needs at least one marginal.")
        sizes = layout.block_sizes
        names = list(range(layout.n_attributes)) if names is None else list(names)
        cells = [math.prod(sizes[a] for a in m) for m in marginals]
        if sum(cells) > _MAX_QUERIES:
            j = int(np.argmax(cells))
            biggest = tuple(names[a] for a in marginals[j])
            sizes_of = {names[a]: sizes[a] for a in marginals[j]}
            raise ValueError(
                f"The workload has {sum(cells):,} queries (cells) in {len(marginals)} marginals, "
                f"more than {_MAX_QUERIES:,}: it would not fit in memory. The largest "
                f"marginal is {biggest!r} with {cells[j]:,} cells (domain sizes {sizes_of}). "
                "Set max_cells (and n_marginals), lower k, or coarsen the columns with "
                "many values."
            )
        n_marg = len(marginals)
        kmax = max(len(m) for m in marginals)
        attrs = np.full((n_marg, kmax), -1, dtype=np.intp)
        mult = np.ones((n_marg, kmax), dtype=np.int64)
        radix = np.ones((n_marg, kmax), dtype=np.int64)
        for j, m in enumerate(marginals):
            msizes = [sizes[a] for a in m]
            if cells[j] >= 2**53:
                raise ValueError(
                    f"Marginal {tuple(names[a] for a in m)!r} has {cells[j]} cells, too many "
                    "to index."
                )
            attrs[j, : len(m)] = m
            radix[j, : len(m)] = msizes
            # C order: the last attribute varies fastest.
            mult[j, : len(m)] = np.concatenate([np.cumprod(msizes[::-1])[::-1][1:], [1]])
        # (n_attributes, n_marginals) multipliers: a record's cell in marginal j
        # is records @ radix_matrix[:, j]; exact in float64 below 2**53.
        matrix = np.zeros((layout.n_attributes, n_marg), dtype=float)
        for j, m in enumerate(marginals):
            matrix[list(m), j] = mult[j, : len(m)]
        self.layout = layout
        self.marginals = marginals
        self.offsets = np.concatenate([[0], np.cumsum(cells)]).astype(np.intp)
        self.n_queries = int(self.offsets[-1])
        self._attrs = attrs
        self._mult = mult
        self._radix = radix
        self._radix_matrix = matrix

    @property
    def n_marginals(self):
        return len(self.marginals)

    @cached_property
    def marginal_of_query(self):
        """Marginal index of each positive query, shape ``(n_queries,)``."""
        return np.repeat(np.arange(self.n_marginals, dtype=np.intp), np.diff(self.offsets))

    @cached_property
    def multipliers(self):
        """Integer ``(n_attributes, n_marginals)`` matrix: ``records @ multipliers`` is
        each record's cell within each marginal (C order, last attribute fastest)."""
        return np.rint(self._radix_matrix).astype(np.int64)

    def cells(self, j):
        """The query ids of marginal ``j``'s cells, as a slice of ``0 .. Q - 1``."""
        return slice(int(self.offsets[j]), int(self.offsets[j + 1]))

    def cell_index(self, records, j=None):
        """Cell of each record within marginal ``j`` (or within each marginal).

        Returns an int array of shape ``(n,)`` for one marginal, or ``(n,
        n_marginals)`` when ``j`` is None; add ``offsets[j]`` for query ids.
        """
        records = self.layout.check_records(records)
        matrix = self._radix_matrix if j is None else self._radix_matrix[:, j]
        return (records.astype(float) @ matrix).astype(np.intp)

    def counts(self, records, weights=None):
        """(Weighted) number of records in every cell, shape ``(n_queries,)``."""
        records, weights, _ = self._weighted(records, weights, empty_ok=True)
        return self._counts(records, weights)

    def answers(self, records, weights=None):
        """Answers of all positive queries: the (weighted) fraction of records in each cell.

        ``weights`` are non-negative row weights, normalised to sum to 1; None
        weights rows equally. Negation answers are ``1 - answers``.
        """
        records, weights, total = self._weighted(records, weights)
        return self._counts(records, weights) / total

    def marginal_answers(self, j, records, weights=None):
        """Answers of marginal ``j``'s cells alone, a vector of its cell count.

        Same normalisation as :meth:`answers`, at the cost of one marginal.
        """
        records, weights, total = self._weighted(records, weights)
        size = int(self.offsets[j + 1] - self.offsets[j])
        flat = (records.astype(float) @ self._radix_matrix[:, j]).astype(np.intp)
        return np.bincount(flat, weights=weights, minlength=size) / total

    def _weighted(self, records, weights, empty_ok=False):
        """Checked records, weights (or None) and their total weight."""
        records = self.layout.check_records(records)
        n = records.shape[0]
        if weights is not None:
            weights = np.asarray(weights, dtype=float)
            if weights.shape != (n,):
                raise ValueError(
                    f"weights must have shape ({n},) (one per record); got {weights.shape}."
                )
            if not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise ValueError("weights must be finite and non-negative.")
        total = float(n) if weights is None else float(weights.sum())
        if total <= 0 and not empty_ok:
            raise ValueError(
                "Cannot answer queries on an empty table (no records or zero total weight)."
            )
        return records, weights, total

    def _counts(self, records, weights):
        """Counts of every cell, a block of marginals at a time.

        Rows are taken in chunks and marginals in blocks so that a block's
        (rows x marginals) cell index stays around ``_CHUNK_ENTRIES`` entries,
        and each block is counted into its own cells only: memory and time
        ``O(n_rows * n_marginals + n_queries)`` (one pass over the cells per
        chunk of ``_CHUNK_ENTRIES`` rows), never a vector of every cell per chunk.
        """
        counts = np.zeros(self.n_queries, dtype=float)
        n_rows, n_marg = records.shape[0], self._radix_matrix.shape[1]
        rows = max(1, min(n_rows, _CHUNK_ENTRIES))
        per_block = max(1, _CHUNK_ENTRIES // rows)
        for start in range(0, n_rows, rows):
            chunk = records[start : start + rows].astype(float)
            w = None if weights is None else weights[start : start + rows]
            for first in range(0, n_marg, per_block):
                last = min(first + per_block, n_marg)
                low, high = self.offsets[first], self.offsets[last]
                flat = (chunk @ self._radix_matrix[:, first:last]).astype(np.intp)
                flat += self.offsets[first:last] - low
                block_w = None if w is None else np.repeat(w, last - first)
                counts[low:high] += np.bincount(flat.ravel(), weights=block_w,
                                                minlength=high - low)
        return counts

    def query_literals(self, query_ids):
        """One-hot literals of queries, for the optimisation oracles.

        Parameters
        ----------
        query_ids : array-like of int, shape (m,)
            Ids in ``0 .. 2 * n_queries - 1``; ``q >= n_queries`` is the
            negation of ``q - n_queries``.

        Returns
        -------
        literals : ndarray of shape (m, kmax), dtype intp
            One-hot column indices of each query's cell, one per attribute of
            its marginal, padded with -1 for marginals of smaller arity.
        negated : ndarray of shape (m,), dtype bool
            Whether each query is a negation (``1 - conjunction``).
        """
        Q = self.n_queries
        ids = np.asarray(query_ids)
        if ids.ndim != 1:
            ids = ids.reshape(-1)
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"query_ids must be integers; got dtype {ids.dtype}.")
        ids = ids.astype(np.intp, copy=False)
        bad = (ids < 0) | (ids >= 2 * Q)
        if bad.any():
            first = ids[np.flatnonzero(bad)[0]].item()
            raise ValueError(
                f"query id {first!r} is outside 0..{2 * Q - 1} "
                f"(Q = {Q} positive queries and their negations)."
            )
        negated = ids >= Q
        base = ids - Q * negated
        j = np.searchsorted(self.offsets, base, side="right") - 1
        cell = (base - self.offsets[j])[:, None]
        attrs = self._attrs[j]
        codes = (cell // self._mult[j]) % self._radix[j]
        starts = self.layout.starts
        literals = np.where(attrs >= 0, starts[np.maximum(attrs, 0)] + codes, -1)
        return literals.astype(np.intp), negated
