"""Numbers as users see them: one private fine measurement of every binned column.

A binned number (:class:`~sklearn_privsyn._coders.BinnedCoder`) enters the
workload as a few codes: its bins and, when declared, exact values of its own
(point masses such as a capital gain of 0). Before the synthesizer measures
the workload, :func:`measure_numbers` spends a share of the budget on one
Gaussian mechanism that measures, for every binned column at once,

* a **tree histogram** on a public fine grid inside the column's bounds:
  every value of its step grid when there are at most ``2**LEVELS_EXACT_MAX`` of
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
two nodes of every level of a column's tree, between two candidates and
between two round levels (or adds one to a node of every level, the root
included, to at most one candidate and to one round level, when a missing
value becomes present); the round levels get ``ROUND_NOISE`` times a tree
node's noise, so the vector of all columns' counts, as fractions of ``n``
and each divided by its noise's scale, has L2 sensitivity
``sqrt(sum_j 2 (L_j + c_j + h_j / ROUND_NOISE**2)) / n`` with ``c_j = 1``
for a column with candidates, ``h_j = 1`` for one with round levels
(:func:`numbers_sensitivity`). The mechanism,
:func:`~sklearn_privsyn.privacy.number_histogram`, is charged to the ledger as
``"number_histogram"``. The derivation of the defaults is in
``docs/numbers.rst``.

The mechanism (grids, plan, measurement) is in
:mod:`sklearn_privsyn.number_measurement`; this module holds the
post-processing (:func:`refine_coder` and the :class:`InBinSampler` that
decodes with it) and re-exports the mechanism's names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import ClassVar

import numpy as np

from ._grid_draft import SPIKE_RATIO  # drafting's rule of a point, measured alike
from ._number_spec import (allocate_bins, cut_edges, draw_between, interval_capacity,
                           step_units)

# the mechanism, re-exported: this module is the public path of all of it
from .number_measurement import (  # noqa: F401
    LEVELS_EXACT_MAX,
    LEVELS_MAX,
    LEVELS_MIN,
    NOISE_MAX,
    PRESENT_FLOOR_SD,
    ROUND_NOISE,
    SHARE_MAX,
    SHARE_MIN,
    NumberGrid,
    NumberPlan,
    default_number_share,
    is_multiple,
    level_of,
    measure_numbers,
    missing_share,
    number_counts,
    numbers_sensitivity,
    plan_numbers,
    present_noise,
    round_grid_values,
    round_levels,
)

__all__ = [
    "InBinSampler",
    "NumberGrid",
    "NumberPlan",
    "default_number_share",
    "measure_numbers",
    "missing_share",
    "number_counts",
    "numbers_sensitivity",
    "plan_numbers",
    "present_noise",
    "refine_coder",
    "round_chances",
    "round_levels",
]

#: A value is a point mass only with at least this estimated share of the rows.
POINT_MIN_SHARE = 0.01
#: Chance that any candidate of a column with no point mass clears the threshold.
POINT_ALPHA = 0.01
#: A tree node's estimate counts as zero below this many noise sd.
PRUNE_SD = 1.0
#: A node's mass is split unevenly only when its children differ by this many sd, at least.
SPLIT_SD = 2.0
#: Chance that any pair of children of one tree level, equal in truth, is split unevenly.
SPLIT_ALPHA = 0.2
#: Draws of a round number before a value that keeps landing on points stays where it is.
ROUND_TRIES = 4


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


def split_sd(pairs):
    """How many sd of their difference two children must differ by to be split unevenly,
    on a tree level of ``pairs`` pairs: ``SPLIT_SD``, or Bonferroni's bound at
    ``SPLIT_ALPHA`` if larger.

    Examples
    --------
    >>> from sklearn_privsyn.numbers import split_sd
    >>> round(split_sd(1), 2), round(split_sd(64), 2), round(split_sd(1024), 2)
    (2.0, 2.96, 3.73)
    """
    return max(SPLIT_SD, NormalDist().inv_cdf(1.0 - SPLIT_ALPHA / (2.0 * max(pairs, 1))))


def leaf_masses(levels, sigma, n_leaves):
    """Non-negative leaf masses (summing to the root's estimate) from noisy tree levels.

    The tree is made consistent, then mass flows from the root down. A node's
    mass is split between its children in proportion to their estimates
    (those below ``PRUNE_SD`` noise sd counting as zero) only where the two
    estimates differ by more than ``z`` sd of their difference; otherwise, and
    when both count as zero, it is spread evenly over the real leaves below
    (the even split is the null the noise cannot reject). ``z`` is
    ``SPLIT_SD`` or, over a level's ``m`` pairs of children, the Bonferroni
    bound ``Phi^-1(1 - SPLIT_ALPHA / (2 m))`` if larger: on a level of
    hundreds of pairs, two sd let noise split a few of them, and a value of a
    smooth column got twice its share while its neighbour, pruned, got none.
    Leaves past ``n_leaves`` (padding) get nothing.
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
        z = split_sd(np.count_nonzero(~known))
        differ = np.abs(raw[0::2] - raw[1::2]) > z * math.sqrt(2.0) * sigma
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
    rounds : tuple
        ``(grid, chance)`` of each grid values are rounded to
        (:func:`round_chances`): a value drawn inside an interval moves, with
        that chance, to the nearest multiple of ``grid`` in its bin
        (:func:`round_number_near`); none there, it stays.
    points : ndarray
        Values never drawn, nor moved to as round numbers (the column's points).
    bin_chances : ndarray
        The chance of each level in each bin that has pieces (bins in order),
        from ``rounds`` by :meth:`with_rounds`.
    """

    bins: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cumulative: np.ndarray
    step: float | None
    top: float
    rounds: tuple = ()
    points: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bin_chances: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    round_tries: ClassVar[int] = ROUND_TRIES

    @classmethod
    def from_pieces(cls, bins, lo, hi, mass, step, top, points=()):
        """A sampler from pieces and their (unnormalised) masses; massless pieces are dropped.

        A value drawn on the step grid is never one of ``points``.
        """
        bins, lo, hi, mass = (np.asarray(a) for a in (bins, lo, hi, mass))
        keep = mass > 0
        if step is not None and len(lo):  # an interval must hold a value of the grid
            first, last = multiples_within(lo, hi, step, top)
            keep &= (hi == lo) | (last >= first)
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
                   float(top), points=np.asarray(points, float))

    def covers(self, n_bins):
        """Whether each of ``n_bins`` bins has a piece."""
        return np.isin(np.arange(n_bins), self.bins)

    def with_rounds(self, rounds, points, bin_mass):
        """A copy that moves values to round numbers (:func:`round_chances`).

        A grid's multiples serve a share of each bin's width (their number
        there, points left out, times the grid; at most all of it): a bin's
        chance of the grid is the grid's chance in proportion to it, over the
        bins' masses ``bin_mass`` (by bin code) the same on the whole.
        """
        points = np.asarray(points, float)
        rounds = tuple(rounds)
        spanned, span_lo, span_hi = self._spans()
        width = np.maximum(span_hi - span_lo, 1e-300)
        mass = np.asarray(bin_mass, float)[spanned]
        chances = np.zeros((len(spanned), len(rounds)))
        for i, (grid, chance) in enumerate(rounds):
            first, last = multiples_within(span_lo, span_hi, grid, self.top)
            mine = np.round(points[is_multiple(points, grid)] / grid)  # points on the grid
            count = last - first + 1 - np.sum((mine >= first[:, None]) & (mine <= last[:, None]),
                                              axis=1)
            served = np.clip(np.maximum(count, 0) * grid / width, 0.0, 1.0)
            total = float(mass @ served)
            if total > 0:
                chances[:, i] = chance * served * mass.sum() / total
        chances /= np.maximum(chances.sum(axis=1, keepdims=True), 1.0)
        return replace(self, rounds=rounds, points=points, bin_chances=chances)

    def _spans(self):
        """The bins that have pieces, and the span of each one's pieces."""
        starts = np.flatnonzero(np.r_[True, self.bins[1:] != self.bins[:-1]])
        return (self.bins[starts], np.minimum.reduceat(self.lo, starts),
                np.maximum.reduceat(self.hi, starts))

    def sample(self, codes, u, v, w=None, x=None):
        """Values of bin codes from uniform arrays ``u`` (which piece) and ``v`` (where),
        and, with ``rounds``, ``w`` (which grid) and ``x`` (``ROUND_TRIES`` rows of
        uniforms: the neighbour tried, in turn, while a value lands on a point)."""
        piece = np.searchsorted(self.cumulative, codes + u, side="right")
        piece = np.minimum(piece, len(self.bins) - 1)
        lo, hi = self.lo[piece], self.hi[piece]
        if self.step is None:
            values = lo + v * (hi - lo)
        else:
            first, below = multiples_within(lo, hi, self.step, self.top)
            last = np.maximum(np.where(hi > lo, below, first), first)
            k = draw_between(first, last, v, step_units(self.points, self.step))
            values = round_grid_values(k * self.step)
        if not self.rounds or w is None:
            return values
        # a round number stays within its value's bin: the span of the bin's pieces
        spanned, span_lo, span_hi = self._spans()
        b = np.searchsorted(spanned, self.bins[piece])
        cumulative = np.cumsum(self.bin_chances, axis=1)[b]
        level = np.sum(w[:, None] >= cumulative, axis=1)  # len(rounds): no round number
        for i, (grid, _) in enumerate(self.rounds):
            at = np.flatnonzero((level == i) & (hi > lo))
            for tried in (None, *x):  # on a point: the multiple below or above it, at random
                moved = round_number_near(values[at], span_lo[b[at]], span_hi[b[at]], grid,
                                          self.top, None if tried is None else tried[at])
                ok = ~np.isnan(moved) & ~np.isin(moved, self.points)
                values[at[ok]] = moved[ok]
                at = at[~ok & ~np.isnan(moved)]
        return values


def round_number_near(values, lo, hi, grid, top, x=None):
    """The nearest multiple of ``grid`` to each value within ``[lo, hi)`` (``hi`` included
    from ``top`` on); with uniforms ``x``, the multiple below it (``x < 0.5``) or above
    it instead (a point's neighbour); NaN where there is none.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.numbers import round_number_near
    >>> value, lo = np.array([61234.5, 63900.0, 61834.5]), np.zeros(3)
    >>> hi = np.array([1e5, 1e5, 62000.0])
    >>> round_number_near(value, lo, hi, 1000.0, 1e6).tolist()   # 62,000 is past the bin
    [61000.0, 64000.0, 61000.0]
    """
    lower, upper = multiples_within(lo, hi, grid, top)
    m = np.round(values / grid) + (0.0 if x is None else np.where(x < 0.5, -1.0, 1.0))
    m = np.clip(m, lower, upper)
    return np.where(lower <= upper, round_grid_values(m * grid), np.nan)


def multiples_within(lo, hi, grid, top):
    """``(first, last)``: the indices ``k`` of the first and last multiples ``k * grid``
    within ``[lo, hi)``, ``hi`` included where it reaches ``top`` (none when ``first >
    last``)."""
    last = np.where(hi >= top, np.floor(hi / grid + 1e-9), np.ceil(hi / grid - 1e-9) - 1)
    return np.ceil(lo / grid - 1e-9), last


def round_chances(heaps, shares, sigma, present):
    """The grids values are rounded to, that stand out from the noise, and the chance of each.

    ``shares`` are the noisy shares of the rows at each level of ``heaps``
    (:func:`round_levels`; a value counts at the coarsest grid it is a
    multiple of), points' own shares taken out; ``present`` is the estimated
    share of the rows they come from. A value rounded to the nearest multiple
    of ``g_j`` from a shape flat over the next grids lands at level
    ``g_l >= g_j`` with chance ``g_j / g_l - g_j / g_(l+1)`` (``g_j / g_l`` at
    the last level), a smooth value at the finest grid ``g_0`` alike. From
    the finest level up, the share of a level beyond what the finer grids
    (and the smooth rest) put there is its own grid's, ``c_l (1 - g_l /
    g_(l+1))``; it is kept when it exceeds :func:`point_threshold` (at the
    noise of the measurement, the chance that any level of a column that has
    no round numbers clears it is at most ``POINT_ALPHA``).

    Returns
    -------
    rounds : tuple of (grid, chance)
        The grids values are rounded to (to their nearest multiple) and the
        share of the values rounded to each.
    """
    if len(heaps) < 2 or present <= 0:
        return ()
    g = np.asarray(heaps, float)
    after = np.r_[g[1:], np.inf]
    shares = np.asarray(shares, float) / present
    threshold = point_threshold(sigma, len(g) - 1)
    chance = np.zeros(len(g))
    for _ in range(2):  # the smooth rest is what the kept grids leave: once more with it
        smooth = max(1.0 - chance[1:].sum(), 0.0)
        chance[1:] = 0.0
        for level in range(1, len(g)):
            lands = g[:level + 1] / g[level] - g[:level + 1] / after[level]
            excess = shares[level] - smooth * lands[0] - chance[1:level] @ lands[1:level]
            if excess * present > threshold:
                chance[level] = excess / lands[level]
    chance[1:] /= max(chance[1:].sum(), 1.0)
    return tuple((float(g[i]), float(chance[i])) for i in np.flatnonzero(chance[1:]) + 1)


def _quantile_edges(grid, mass, n_bins, integer_step, cuts=()):
    """Edges of ``n_bins`` bins of similar estimated mass (fewer when values repeat).

    On a grid of values the edges fall between values; on a grid of cells the
    mass is taken as uniform within a cell and the edges are interpolated
    (then moved up to the next multiple of the step, if any). The first and
    last edges are the bounds. With ``cuts``, every cut is an edge: each
    interval between cuts gets bins in proportion to its estimated mass (at
    least one, :func:`~sklearn_privsyn._number_spec.allocate_bins`) and is cut
    at its own quantiles.
    """
    if len(cuts) == 0:
        return _interval_quantile_edges(grid, mass, n_bins, integer_step)
    bounds = np.concatenate([[grid.lo], np.asarray(cuts, float), [grid.hi]])
    if grid.exact:
        values = grid.leaf_values()
        interval = np.searchsorted(np.asarray(cuts, float), values, side="right")
        masses = np.bincount(interval, weights=mass, minlength=len(bounds) - 1)
    else:
        cell_edges = grid.leaf_edges()
        cumulative = np.concatenate([[0.0], np.cumsum(mass)])
        masses = np.diff(np.interp(bounds, cell_edges, cumulative))
    counts = allocate_bins(n_bins, masses, interval_capacity(bounds, integer_step))
    edges = [bounds[:1]]
    for i, (a, b, k) in enumerate(zip(bounds[:-1], bounds[1:], counts)):
        targets = np.arange(1, k) / k
        if k == 1 or masses[i] <= 0:
            inner = np.linspace(a, b, k + 1)[1:-1]
        elif grid.exact:
            sel = interval == i
            share = np.cumsum(mass[sel]) / masses[i]
            index = np.searchsorted(share, targets - 1e-12, side="left") + 1
            index = np.unique(index[(index > 0) & (index < sel.sum())])
            inner = values[sel][index]
        else:
            start = np.interp(a, cell_edges, cumulative)
            inner = np.interp(start + targets * masses[i], cumulative, cell_edges)
        if integer_step is not None and not grid.exact:
            inner = np.ceil(inner / integer_step - 1e-9) * integer_step
        edges += [np.unique(inner[(inner > a) & (inner < b)]), [b]]
    return np.concatenate(edges)


def _interval_quantile_edges(grid, mass, n_bins, integer_step):
    """:func:`_quantile_edges` of a column without cuts."""
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


def refine_coder(coder, grid, levels, candidates, sigma, discover=True, reshape_bins=True,
                 round_shares=()):
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
    round_shares : ndarray, optional
        The noisy shares of the rows at each level of the grid's round
        numbers (``grid.heaps``, noise sd ``ROUND_NOISE * sigma``): values
        drawn inside bins move to round numbers as often (:func:`round_chances`).

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
        room = min(n_bins // 2, n_bins - len(coder.cuts) - 1)  # a bin between cuts
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
    own_share = {} if grid.exact else dict(zip(values.tolist(),
                                               np.maximum(share, 0.0).tolist()))
    # the rest: leaf masses without the points
    rest = mass.copy()
    if len(points):
        if grid.exact:
            rest[np.searchsorted(values, points)[np.isin(points, values)]] = 0.0
        else:
            leaf = grid.leaf_of(points)
            for p, i in zip(points, leaf):
                rest[i] = max(rest[i] - own_share.get(float(p), 0.0), 0.0)
    if grid.exact:
        piece_lo = piece_hi = values
    else:
        edges = grid.leaf_edges()
        piece_lo, piece_hi = edges[:-1], edges[1:]
    if reshape_bins and coder.equal_width and rest.sum() > 0:
        # each bin about a 1/b share of the rows, b the column's planned codes: fewer
        # bins where the points leave little (a bin of a tiny share is mostly noise)
        planned = coder.n_bins + len(public)
        n_bins = int(min(n_bins, max(len(coder.cuts) + 1, round(rest.sum() * planned))))
        edges = _quantile_edges(grid, rest, n_bins, coder.step, coder.cuts)
        edges[0], edges[-1] = coder.edges[0], coder.edges[-1]
    elif coder.equal_width:
        edges = cut_edges(coder.edges[0], coder.edges[-1], n_bins, coder.cuts, coder.step,
                          coder.log)
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
        sampler = InBinSampler.from_pieces(pb, pl, ph, pm, refined.step, refined.edges[-1],
                                           points)
        if len(round_shares) and len(grid.heaps) and len(sampler.bins):
            shares = np.array(round_shares, float)  # a point is drawn as itself: its share
            np.subtract.at(shares, level_of(points, grid.heaps),  # leaves its level
                           [own_share.get(float(p), 0.0) for p in points])
            rounds = round_chances(grid.heaps, shares, ROUND_NOISE * sigma,
                                   float(rest.sum()))
            sampler = sampler.with_rounds(rounds, points,
                                          np.bincount(pb, weights=pm, minlength=refined.n_bins))
    if len(sampler.bins) == 0:
        return refined
    return refined.with_sampler(sampler)
