"""Numbers as users see them: one private fine measurement of every binned column.

A binned number (:class:`~sklearn_privsyn._coders.BinnedCoder`) enters the
workload as a few codes: its bins and, when declared, exact values of its own
(point masses such as a capital gain of 0). Before the synthesizer measures
the workload, :func:`measure_numbers` spends a share of the budget on one
Gaussian mechanism that measures, for every binned column at once,

* a **tree histogram** on a public fine grid inside the column's bounds:
  every value of its step grid when there are at most ``2**LEVELS_MAX`` of
  them (each leaf then holds one exact value), else ``2**L`` equal-width
  cells with ``L`` derived from the noise; every level of the tree, root
  included, is measured;
* for a grid of cells, the **exact-value counts** of a public list of
  candidates: the declared points, the bounds, 0 and round numbers.

Everything else is post-processing of that one noisy vector
(:func:`refine_coder`): values whose estimated share clears a threshold
derived from the noise become point masses with codes of their own, the
remaining codes become bins holding similar estimated mass (edges at
private quantiles on the grid), and each bin keeps the estimated shape of
the values inside it, which :meth:`BinnedCoder.decode
<sklearn_privsyn._coders.ColumnCoder.decode>` draws from (an
:class:`InBinSampler`) instead of drawing uniformly. The number of codes of
a column (its domain size, which plans the workload) never grows: private
points take the place of bins.

Privacy: under replace-one neighbours a changed row moves one unit between
two nodes of every level of a column's tree, and between two candidates (or
adds one to a node of every level, the root included, and to at most one
candidate, when a missing value becomes present), so the vector of all
columns' counts, as fractions of ``n``, has L2 sensitivity
``sqrt(sum_j 2 (L_j + c_j)) / n`` with ``c_j = 1`` for a column with
candidates (:func:`numbers_sensitivity`). The mechanism,
:func:`~sklearn_privsyn.privacy.number_histogram`, is charged to the ledger as
``"number_histogram"``. The derivation of the defaults is in
``docs/numbers.rst``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from .counts import is_dask_frame
from .privacy import gaussian_mechanism_rho, gaussian_sigma, number_histogram

__all__ = [
    "InBinSampler",
    "NumberGrid",
    "NumberPlan",
    "default_number_share",
    "measure_numbers",
    "number_counts",
    "numbers_sensitivity",
    "plan_numbers",
    "refine_coder",
]

#: Deepest tree: at most 2**LEVELS_MAX leaves a column.
LEVELS_MAX = 10
#: Shallowest tree of a grid of cells.
LEVELS_MIN = 3
#: A value is a point mass only with at least this estimated share of the rows.
POINT_MIN_SHARE = 0.01
#: Chance that any candidate of a column with no point mass clears the threshold.
POINT_ALPHA = 0.01
#: A tree node's estimate counts as zero below this many noise sd.
PRUNE_SD = 1.0
#: A node's mass is split unevenly only when its children differ by this many sd.
SPLIT_SD = 2.0
#: A value of a grid of values is a point only with this many times each neighbour's share.
SPIKE_RATIO = 2.0
#: Bounds of the default share of the budget.
SHARE_MIN, SHARE_MAX = 0.05, 0.25
#: The default measures nothing when its noise sd (a fraction of the rows) would exceed
#: this: the largest per-cell noise at which AdaptiveProjection measures marginals at all.
NOISE_MAX = 0.03

# Planned charges sit this fraction below their share, so that rounding in
# sigma -> rho can never push the ledger over the budget.
_BUDGET_MARGIN = 1e-9


def _round(values):
    """Grid values without binary noise (``0.1 * 3`` is ``0.3``)."""
    return np.round(values, 12)


def _round_numbers(lo, hi, step):
    """0, the bounds, and numbers ``d * 10**k`` (``d`` up to 99) of the top three decades."""
    found = {float(lo), float(hi)}
    if lo <= 0 <= hi:
        found.add(0.0)
    span = max(abs(lo), abs(hi))
    if span > 0:
        top = int(math.floor(math.log10(span)))
        for k in range(top - 2, top + 1):
            base = 10.0**k
            if step is not None and base < step:
                continue
            d = np.arange(-99, 100) * base
            found.update(float(v) for v in _round(d[(d >= lo) & (d <= hi)]))
    values = np.array(sorted(found))
    if step is not None:
        on_grid = np.abs(values / step - np.round(values / step)) < 1e-9
        values = values[on_grid | (values == lo) | (values == hi)]
    return values


@dataclass(frozen=True)
class NumberGrid:
    """The public fine grid of one binned column: a tree's leaves and exact candidates.

    Parameters
    ----------
    name : object
        The column.
    lo, hi : float
        Its bounds (values outside are clipped to them, as the coder does).
    step : float or None
        Values are multiples of ``step`` (1 for integer columns), or any number.
    levels : int
        Depth ``L`` of the tree: ``2**L`` leaves, the first ``n_leaves`` real.
    n_leaves : int
        Leaves that hold values (a step grid pads to a power of two with
        leaves that hold none).
    exact : bool
        Whether each leaf is one value of the step grid (``lo_value + i * step``).
    candidates : ndarray
        Exact values counted on their own (grids of cells only; empty otherwise).
    """

    name: object
    lo: float
    hi: float
    step: float | None
    levels: int
    n_leaves: int
    exact: bool
    candidates: np.ndarray

    @classmethod
    def of(cls, name, lo, hi, step, levels, points=()):
        """The grid of a column: its step grid value by value when small enough, else cells."""
        if step is not None:
            first = math.ceil(lo / step - 1e-9) * step
            count = int(math.floor((hi - first) / step + 1e-9)) + 1
            if count <= 2**LEVELS_MAX:
                depth = max(1, math.ceil(math.log2(count))) if count > 1 else 1
                return cls(name, float(first), float(hi), float(step), depth, count, True,
                           np.zeros(0))
        candidates = np.union1d(_round_numbers(lo, hi, step),
                                np.asarray(points, dtype=float))
        return cls(name, float(lo), float(hi), step, int(levels), 2**int(levels), False,
                   candidates)

    @property
    def n_partitions(self):
        """Partitions of the rows measured: the levels below the root, and the candidates."""
        return self.levels + (0 if self.exact else 1)

    @property
    def size(self):
        """Length of this column's part of the measured vector."""
        return 2 ** (self.levels + 1) - 1 + len(self.candidates)

    @property
    def width(self):
        """Width of a cell (grids of cells)."""
        return (self.hi - self.lo) / self.n_leaves

    def leaf_values(self):
        """The value of each real leaf (exact grids)."""
        return _round(self.lo + self.step * np.arange(self.n_leaves))

    def leaf_edges(self):
        """``n_leaves + 1`` edges of the cells (grids of cells)."""
        edges = self.lo + self.width * np.arange(self.n_leaves + 1)
        edges[-1] = self.hi
        return edges

    def leaf_of(self, values):
        """Leaf of each value (values already clipped to the bounds)."""
        if self.exact:
            index = np.round((values - self.lo) / self.step)
        else:
            index = np.floor((values - self.lo) / self.width)
        return np.clip(index, 0, self.n_leaves - 1).astype(np.intp)

    def counts(self, values):
        """PRIVATE: every level's node counts then the candidates' counts (exact integers).

        ``values`` are the column's non-missing values, clipped to the bounds.
        """
        leaf = self.leaf_of(values)
        parts = [np.bincount(leaf >> (self.levels - level), minlength=2**level)
                 for level in range(self.levels + 1)]
        if len(self.candidates):
            index = np.searchsorted(self.candidates, values)
            index = np.minimum(index, len(self.candidates) - 1)
            hit = self.candidates[index] == values
            parts.append(np.bincount(index[hit], minlength=len(self.candidates)))
        return np.concatenate(parts).astype(np.int64)

    def split(self, vector):
        """(levels, candidates) of this column's part of the vector."""
        levels, start = [], 0
        for level in range(self.levels + 1):
            levels.append(vector[start:start + 2**level])
            start += 2**level
        return levels, vector[start:]


def numbers_sensitivity(grids, n):
    """L2 sensitivity of all the grids' counts (fractions of ``n``) under replace-one neighbours.

    A row that changes moves one unit between two nodes of each level below
    the root and between two candidates: ``2 (L + c)`` in squares for a column
    of ``L`` levels and ``c`` (0 or 1) candidate lists. A missing value that
    becomes present adds one to a node of every level, root included, and to
    at most one candidate: ``L + 1 + c``, never more.

    Examples
    --------
    >>> from sklearn_privsyn.numbers import NumberGrid, numbers_sensitivity
    >>> grid = NumberGrid.of("age", 17, 90, 1.0, 10)   # 74 values: 7 levels, exact
    >>> grid.levels, grid.exact
    (7, True)
    >>> round(numbers_sensitivity([grid], 100) ** 2 * 100**2, 9)   # 2 * 7
    14.0
    """
    return math.sqrt(sum(2.0 * g.n_partitions for g in grids)) / n


@dataclass(frozen=True)
class NumberPlan:
    """The public plan of the numbers' measurement: grids, sensitivity, noise and cost."""

    grids: tuple
    share: float
    sensitivity: float
    sigma: float
    rho: float


def default_number_share(n_partitions, n_marginals):
    """Share of the budget the numbers' measurement gets by default.

    Every level of a number's tree (and its candidate list) is a partition of
    the rows, like a marginal of the workload: the default gives each
    partition what a workload marginal gets when everything is measured at
    once, ``T / (T + M)`` for ``T`` partitions and ``M`` marginals, kept
    within ``[SHARE_MIN, SHARE_MAX]`` (see ``docs/numbers.rst``).

    Examples
    --------
    >>> from sklearn_privsyn.numbers import default_number_share
    >>> round(default_number_share(45, 455), 3)
    0.09
    """
    share = n_partitions / (n_partitions + max(n_marginals, 1))
    return float(min(max(share, SHARE_MIN), SHARE_MAX))


def _levels_for_noise(sigma):
    """Deepest useful level of a grid of cells: its average node above one noise sd."""
    return int(min(max(math.floor(math.log2(1.0 / sigma)), LEVELS_MIN), LEVELS_MAX))


def _share(grids, share, n_marginals):
    if share == "auto":
        return default_number_share(sum(g.n_partitions for g in grids), n_marginals)
    return float(share)


def _plan_sigma(grids, n, rho, share, n_marginals):
    s = _share(grids, share, n_marginals)
    return gaussian_sigma(numbers_sensitivity(grids, n), s * rho * (1.0 - _BUDGET_MARGIN))


def plan_numbers(coders, n, rho, share, n_marginals):
    """The grids of the binned columns and the Gaussian noise of their one measurement.

    Only public quantities enter: the coders (bounds, steps, points), ``n``,
    ``rho``, the share and the workload size.

    Parameters
    ----------
    coders : sequence of BinnedCoder
        The binned columns to measure.
    n : int
        Number of rows.
    rho : float
        The whole zCDP budget of the fit.
    share : float or "auto"
        Share of ``rho`` for this measurement; ``"auto"`` uses
        :func:`default_number_share`.
    n_marginals : int
        Workload marginals (for the default share).

    Returns
    -------
    plan : NumberPlan or None
        None when there is nothing to measure: no binned column, a share of 0,
        or (``share="auto"``) a noise sd above ``NOISE_MAX``, where the
        measurement would cost the synthesizer more than it tells.
    """
    if not coders or (share != "auto" and share == 0):
        return None
    grids = [NumberGrid.of(c.name, c.edges[0], c.edges[-1], c.step, LEVELS_MAX, c.points)
             for c in coders]
    if any(g.lo == g.hi for g in grids):
        grids = [g for g in grids if g.lo < g.hi]
        if not grids:
            return None
    # grids of cells: the depth whose average node stays above the noise; a few
    # fixed-point steps (fewer levels, less noise, maybe one level more)
    for _ in range(4):
        sigma = _plan_sigma(grids, n, rho, share, n_marginals)
        depth = _levels_for_noise(sigma)
        if all(g.exact or g.levels == depth for g in grids):
            break
        grids = [g if g.exact else replace(g, levels=depth, n_leaves=2**depth) for g in grids]
    s = _share(grids, share, n_marginals)
    sensitivity = numbers_sensitivity(grids, n)
    sigma = gaussian_sigma(sensitivity, s * rho * (1.0 - _BUDGET_MARGIN))
    if share == "auto" and sigma > NOISE_MAX:
        return None
    return NumberPlan(tuple(grids), s, sensitivity, sigma,
                      gaussian_mechanism_rho(sensitivity, sigma))


def _column_counts(frame, grids):
    """PRIVATE: the integer counts of every grid on a pandas table (one partition)."""
    parts = []
    for g in grids:
        values = frame[g.name].to_numpy(dtype=float, na_value=np.nan)
        parts.append(g.counts(np.clip(values[~np.isnan(values)], g.lo, g.hi)))
    return np.concatenate(parts)


def _add(*parts):
    return np.sum(parts, axis=0)


def number_counts(grids, rows):
    """PRIVATE: the integer counts of every grid, on a pandas table or a Dask DataFrame.

    A Dask frame is counted partition by partition where it lives, and only
    the count vectors are summed (as :class:`~sklearn_privsyn.counts.DaskCounts`
    does), so both give the same exact integers.
    """
    if not is_dask_frame(rows):
        return _column_counts(rows, grids)
    import dask

    frame = rows[[g.name for g in grids]]
    count = dask.delayed(_column_counts, pure=True)
    add = dask.delayed(_add, pure=True)
    layer = [count(part, grids) for part in frame.to_delayed()]
    while len(layer) > 1:
        layer = [add(*layer[i:i + 8]) for i in range(0, len(layer), 8)]
    (total,) = dask.compute(layer[0])
    return total


def measure_numbers(plan, rows, n, ledger, rng):
    """PRIVATE: the one Gaussian measurement of every planned grid, charged to ``ledger``.

    ``rows`` are the private table (pandas, or a Dask DataFrame) of ``n`` rows.
    Returns the noisy vector split per column: ``{column: (levels, candidates)}``.
    """
    # PRIVATE: the true counts, read only by the Gaussian mechanism below
    true = number_counts(plan.grids, rows).astype(float) / n
    ledger.charge("number_histogram", plan.rho)
    noisy = number_histogram(true, plan.sensitivity, plan.sigma, rng)
    out, start = {}, 0
    for g in plan.grids:
        out[g.name] = g.split(noisy[start:start + g.size])
        start += g.size
    return out


# --------------------------------------------------------------------- post-processing


def consistent_levels(levels):
    """Least-squares consistent tree (Hay, Rastogi, Miklau and Suciu 2010), equal noise a node."""
    depth = len(levels) - 1
    z = [None] * (depth + 1)
    z[depth] = np.asarray(levels[depth], float)
    for level in range(depth - 1, -1, -1):
        h = depth - level + 1
        children = z[level + 1][0::2] + z[level + 1][1::2]
        z[level] = ((2**h - 2 ** (h - 1)) * levels[level]
                    + (2 ** (h - 1) - 1) * children) / (2**h - 1)
    x = [z[0]]
    for level in range(1, depth + 1):
        siblings = z[level][0::2] + z[level][1::2]
        x.append(z[level] + np.repeat((x[level - 1] - siblings) / 2.0, 2))
    return x


def leaf_masses(levels, sigma, n_leaves):
    """Non-negative leaf masses (summing to the root's estimate) from noisy tree levels.

    The tree is made consistent, then mass flows from the root down. A node's
    mass is split between its children in proportion to their estimates
    (those below ``PRUNE_SD`` noise sd counting as zero) only where the two
    estimates differ by more than ``SPLIT_SD`` sd of their difference;
    otherwise, and when both count as zero, it is spread evenly over the real
    leaves below (the even split is the null the noise cannot reject). Leaves
    past ``n_leaves`` (padding) get nothing.
    """
    depth = len(levels) - 1
    x = consistent_levels(levels)
    real = np.zeros(2**depth)
    real[:n_leaves] = 1.0
    weight = [real]
    for _ in range(depth):
        weight.insert(0, weight[0][0::2] + weight[0][1::2])
    mass = np.array([min(max(float(x[0][0]), 0.0), 1.0)])
    for level in range(depth):
        raw = np.where(weight[level + 1] > 0, x[level + 1], 0.0)
        y = np.where(raw > PRUNE_SD * sigma, raw, 0.0)
        a, b = y[0::2], y[1::2]
        wa, wb = weight[level + 1][0::2], weight[level + 1][1::2]
        even = wa / np.maximum(wa + wb, 1.0)
        # a padded child is known empty; otherwise the split must be significant
        known = (wa == 0) | (wb == 0)
        differ = np.abs(raw[0::2] - raw[1::2]) > SPLIT_SD * math.sqrt(2.0) * sigma
        trusted = (a + b > 0) & differ & ~known
        left = np.where(trusted, a / np.where(a + b > 0, a + b, 1.0), even)
        new = np.empty(2 ** (level + 1))
        new[0::2], new[1::2] = mass * left, mass * (1.0 - left)
        mass = new
    return mass[:n_leaves]


def point_threshold(sigma, n_candidates):
    """Share a candidate needs to be a point: ``POINT_MIN_SHARE`` or a Bonferroni noise bound.

    With no point mass anywhere, the largest of ``C`` candidates' noises
    stays below ``z sigma``, ``z = Phi^-1(1 - POINT_ALPHA / C)``, with
    probability at least ``1 - POINT_ALPHA``.
    """
    z = NormalDist().inv_cdf(1.0 - POINT_ALPHA / max(n_candidates, 1))
    return max(POINT_MIN_SHARE, z * sigma)


@dataclass(frozen=True)
class InBinSampler:
    """Draws values inside a binned column's bins from an estimated shape.

    The shape is a list of *pieces*, each inside one bin: a single value
    (``lo == hi``) or an interval ``[lo, hi)``, with its probability given
    its bin. A value inside an interval is uniform (on the step grid when
    the column has a step). A bin with no piece is drawn uniformly, as
    without a shape.

    Parameters
    ----------
    bins : ndarray of int
        Bin of each piece (pieces sorted by bin).
    lo, hi : ndarray of float
        Each piece's interval.
    cumulative : ndarray of float
        ``bin + (cumulative probability of the pieces of its bin up to this one)``.
    step : float or None
        The step grid of the column.
    top : float
        The column's upper bound: an interval ending there includes it.
    """

    bins: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cumulative: np.ndarray
    step: float | None
    top: float

    @classmethod
    def from_pieces(cls, bins, lo, hi, mass, step, top):
        """A sampler from pieces and their (unnormalised) masses; massless pieces are dropped."""
        bins, lo, hi, mass = (np.asarray(a) for a in (bins, lo, hi, mass))
        keep = mass > 0
        if step is not None and len(lo):  # an interval must hold a value of the grid
            first = np.ceil(lo / step - 1e-9)
            below = np.where(hi >= top, np.floor(hi / step + 1e-9), np.ceil(hi / step - 1e-9) - 1)
            keep &= (hi == lo) | (below >= first)
        bins, lo, hi, mass = bins[keep], lo[keep], hi[keep], mass[keep].astype(float)
        order = np.lexsort((lo, bins))
        bins, lo, hi, mass = bins[order], lo[order], hi[order], mass[order]
        cumulative = np.empty(len(mass))
        for b in np.unique(bins):
            sel = bins == b
            c = np.cumsum(mass[sel])
            cumulative[sel] = b + c / c[-1]
            cumulative[np.flatnonzero(sel)[-1]] = b + 1.0
        return cls(bins.astype(np.intp), lo.astype(float), hi.astype(float), cumulative, step,
                   float(top))

    def covers(self, n_bins):
        """Whether each of ``n_bins`` bins has a piece."""
        return np.isin(np.arange(n_bins), self.bins)

    def sample(self, codes, u, v):
        """Values of bin codes from two uniform arrays ``u`` (which piece) and ``v`` (where)."""
        piece = np.searchsorted(self.cumulative, codes + u, side="right")
        piece = np.minimum(piece, len(self.bins) - 1)
        lo, hi = self.lo[piece], self.hi[piece]
        if self.step is None:
            return lo + v * (hi - lo)
        first = np.ceil(lo / self.step - 1e-9)
        below = np.where(hi >= self.top, np.floor(hi / self.step + 1e-9),
                         np.ceil(hi / self.step - 1e-9) - 1)
        last = np.maximum(np.where(hi > lo, below, first), first)
        k = np.minimum(first + np.floor(v * (last - first + 1)), last)
        return _round(k * self.step)


def _quantile_edges(grid, mass, n_bins, integer_step):
    """Edges of ``n_bins`` bins of similar estimated mass (fewer when values repeat).

    On a grid of values the edges fall between values; on a grid of cells the
    mass is taken as uniform within a cell and the edges are interpolated
    (then moved up to the next multiple of the step, if any). The first and
    last edges are the bounds.
    """
    total = mass.sum()
    targets = np.arange(1, n_bins) / n_bins
    if grid.exact:
        cumulative = np.cumsum(mass) / total
        cuts = np.searchsorted(cumulative, targets - 1e-12, side="left") + 1
        cuts = np.unique(cuts[(cuts > 0) & (cuts < grid.n_leaves)])
        inner = grid.leaf_values()[cuts]
    else:
        edges = grid.leaf_edges()
        cumulative = np.concatenate([[0.0], np.cumsum(mass) / total])
        inner = np.interp(targets, cumulative, edges)
        if integer_step is not None:
            inner = np.ceil(inner / integer_step - 1e-9) * integer_step
        inner = np.unique(inner[(inner > grid.lo) & (inner < grid.hi)])
    return np.concatenate([[grid.lo], inner, [grid.hi]])


def refine_coder(coder, grid, levels, candidates, sigma, discover=True, reshape_bins=True):
    """Post-processing: a column's coder with points, bins and shape from its noisy measurement.

    Parameters
    ----------
    coder : BinnedCoder
        The column's coder from the public domain.
    grid : NumberGrid
        Its grid.
    levels, candidates : list of ndarray, ndarray
        The noisy tree levels and candidate counts (fractions of the rows).
    sigma : float
        Their noise standard deviation.
    discover : bool, default=True
        Whether values whose share clears :func:`point_threshold` become
        point masses (at most half the bins, each taking a bin's place).
    reshape_bins : bool, default=True
        Whether the bins are re-cut at private quantiles (only for a coder
        whose bins were equal-width from an int ``bins``): as many bins as
        keep about a ``1 / b`` share of the rows each, ``b`` the column's
        planned number of codes (at most the bins left after the points).

    Returns
    -------
    coder : BinnedCoder
        The refined coder: as many codes as before or fewer.
    """
    mass = leaf_masses(levels, sigma, grid.n_leaves)
    public = np.asarray(coder.points, dtype=float)
    if grid.exact:
        values = grid.leaf_values()
        share = consistent_levels(levels)[-1][:grid.n_leaves]
    else:
        values, share = grid.candidates, np.asarray(candidates, float)
    points = list(public)
    n_bins = coder.n_bins
    if discover and coder.equal_width:
        room = n_bins // 2
        threshold = point_threshold(sigma, len(values))
        if grid.exact:  # a point is a spike: twice each neighbouring value's estimate
            padded = np.concatenate([[0.0], np.maximum(share, 0.0), [0.0]])
            spike = share >= SPIKE_RATIO * np.maximum(padded[:-2], padded[2:])
        else:
            spike = np.ones(len(share), bool)
        order = np.argsort(-share, kind="stable")
        for i in order:
            if share[i] < threshold or room == 0:
                break
            if spike[i] and not np.any(public == values[i]):
                points.append(float(values[i]))
                room -= 1
                n_bins -= 1
    points = np.array(sorted(points))
    # the rest: leaf masses without the points
    rest = mass.copy()
    if len(points):
        if grid.exact:
            rest[np.searchsorted(values, points)[np.isin(points, values)]] = 0.0
        else:
            own = dict(zip(values.tolist(), np.maximum(share, 0.0).tolist()))
            leaf = grid.leaf_of(points)
            for p, i in zip(points, leaf):
                rest[i] = max(rest[i] - own.get(float(p), 0.0), 0.0)
    if grid.exact:
        piece_lo = piece_hi = values
    else:
        edges = grid.leaf_edges()
        piece_lo, piece_hi = edges[:-1], edges[1:]
    if reshape_bins and coder.equal_width and rest.sum() > 0:
        # each bin about a 1/b share of the rows, b the column's planned codes: fewer
        # bins where the points leave little (a bin of a tiny share is mostly noise)
        planned = coder.n_bins + len(public)
        n_bins = int(min(n_bins, max(1, round(rest.sum() * planned))))
        edges = _quantile_edges(grid, rest, n_bins, coder.step)
        edges[0], edges[-1] = coder.edges[0], coder.edges[-1]
    elif coder.equal_width:
        edges = np.linspace(coder.edges[0], coder.edges[-1], n_bins + 1)
    else:
        edges = coder.edges
    refined = coder.with_points(points, edges)
    if grid.exact:
        piece_bin = refined.bin_of(values)
        sampler = InBinSampler.from_pieces(piece_bin, values, values, rest, refined.step,
                                           refined.edges[-1])
    else:
        # a cell may straddle bin edges: one piece per (cell, bin) overlap
        bin_edges = refined.edges
        pb, pl, ph, pm = [], [], [], []
        first = np.searchsorted(bin_edges, piece_lo, side="right") - 1
        last = np.searchsorted(bin_edges, piece_hi, side="left") - 1
        first = np.clip(first, 0, refined.n_bins - 1)
        last = np.clip(last, first, refined.n_bins - 1)
        for i in np.flatnonzero(rest > 0):
            for b in range(first[i], last[i] + 1):
                lo = max(piece_lo[i], bin_edges[b])
                hi = min(piece_hi[i], bin_edges[b + 1])
                if hi > lo:
                    pb.append(b), pl.append(lo), ph.append(hi)
                    pm.append(rest[i] * (hi - lo) / (piece_hi[i] - piece_lo[i]))
        sampler = InBinSampler.from_pieces(pb, pl, ph, pm, refined.step, refined.edges[-1])
    if len(sampler.bins) == 0:
        return refined
    return refined.with_sampler(sampler)
