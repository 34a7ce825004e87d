"""The numbers' mechanism: planning the fine grids of binned columns and measuring them.

What :mod:`sklearn_privsyn.numbers` describes, the private side of it: the
public grid of every binned column (:class:`NumberGrid`), the plan of one
Gaussian measurement of all of them (:func:`plan_numbers`: the share of the
budget, the trees' depths, the L2 sensitivity :func:`numbers_sensitivity`)
and the measurement itself (:func:`measure_numbers`, the mechanism
:func:`~sklearn_privsyn.privacy.number_histogram`, charged to the ledger).
The post-processing of its noisy vector (:func:`~sklearn_privsyn.numbers.refine_coder`)
is in :mod:`sklearn_privsyn.numbers`, which re-exports every name here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ._number_spec import from_log_scale, step_units, to_log_scale
from .clock import check_clock_values
from .counts import is_dask_frame
from .privacy import gaussian_mechanism_rho, gaussian_sigma, number_histogram

__all__ = [
    "LEVELS_EXACT_MAX",
    "LEVELS_MAX",
    "LEVELS_MIN",
    "NOISE_MAX",
    "PRESENT_FLOOR_SD",
    "ROUND_NOISE",
    "SHARE_MAX",
    "SHARE_MIN",
    "NumberGrid",
    "NumberPlan",
    "default_number_share",
    "is_multiple",
    "level_of",
    "measure_numbers",
    "missing_share",
    "number_counts",
    "numbers_sensitivity",
    "plan_numbers",
    "round_levels",
    "present_noise",
    "round_grid_values",
]

#: Deepest tree of a grid of cells: at most 2**LEVELS_MAX cells a column.
LEVELS_MAX = 10
#: Deepest tree of a step grid measured value by value: at most 2**LEVELS_EXACT_MAX
#: values. Its ``L`` levels cost ``L`` partitions where cells at the deepest level cost
#: ``LEVELS_MAX + 1`` (their candidates too), so it costs at most two partitions more, and
#: it keeps every value's own share (a delay of -5 minutes, a distance of one route).
LEVELS_EXACT_MAX = 13
#: Shallowest tree of a grid of cells.
LEVELS_MIN = 3
#: Noise sd of the round levels' counts relative to a tree node's. A level of round
#: numbers matters when it holds a large share of a column (a fifth of the incomes are
#: ten thousands); a tree node splits shares of ``2**-L``: twice the node's noise costs a
#: quarter of a partition.
ROUND_NOISE = 2.0
#: Bounds of the default share of the budget.
SHARE_MIN, SHARE_MAX = 0.05, 0.25
#: The default measures nothing when its noise sd (a fraction of the rows) would exceed
#: this: the largest per-cell noise at which AdaptiveProjection measures marginals at all.
NOISE_MAX = 0.03

#: A missable column's noisy share of present rows counts as at least this many noise sd
#: (of the present counts' measurement) when the numbers' noise is set.
PRESENT_FLOOR_SD = 2.0

# Planned charges sit this fraction below their share, so that rounding in
# sigma -> rho can never push the ledger over the budget.
_BUDGET_MARGIN = 1e-9


def round_grid_values(values):
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
            found.update(float(v) for v in round_grid_values(d[(d >= lo) & (d <= hi)]))
    values = np.array(sorted(found))
    if step is not None:
        on_grid = np.abs(values / step - np.round(values / step)) < 1e-9
        values = values[on_grid | (values == lo) | (values == hi)]
    return values


def round_levels(resolution, lo, hi):
    """The nested grids of round numbers of a column: ``resolution``, then ``1`` and ``5`` times
    powers of ten that are multiples of the one before, up to the largest bound's magnitude.

    Empty when the column has no resolution (a float with neither step nor decimals) or
    no round number above it (a step of 3).

    Examples
    --------
    >>> from sklearn_privsyn.numbers import round_levels
    >>> round_levels(0.01, 0, 120)
    (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 50.0, 100.0)
    >>> round_levels(3.0, 0, 1000)
    ()
    """
    if resolution is None or not resolution > 0:
        return ()
    span = max(abs(lo), abs(hi))
    chain = [float(resolution)]
    k = int(math.floor(math.log10(resolution)))
    while True:
        for m in (1.0, 5.0):
            g = float(round_grid_values(m * 10.0**k))
            if g > span:
                return tuple(chain) if len(chain) > 1 else ()
            ratio = g / chain[-1]
            if g > chain[-1] and abs(ratio - round(ratio)) < 1e-9:
                chain.append(g)
        k += 1


def is_multiple(values, grid):
    """Whether each value is a multiple of ``grid`` (to a millionth of it)."""
    q = np.asarray(values, float) / grid
    return np.abs(q - np.round(q)) < 1e-6


def level_of(values, heaps):
    """Index in ``heaps`` of the coarsest grid each value is a multiple of (0 if none)."""
    level = np.zeros(len(values), dtype=np.intp)
    for i, g in enumerate(heaps[1:], start=1):
        level[is_multiple(values, g)] = i
    return level


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
    clock : bool
        Whether the column holds times of day written HHMM, counted in minutes
        (:mod:`sklearn_privsyn.clock`); the grid is in minutes, as its coder's bins.
    heaps : tuple of float
        The nested grids of round numbers (:func:`round_levels`) whose histogram (each
        value counted at the coarsest one it is a multiple of) is measured, grids of
        cells only; empty for none.
    log : bool
        Whether the cells are of equal width on the column's log scale
        (:func:`~sklearn_privsyn._number_spec.to_log_scale`), grids of cells only.
    """

    name: object
    lo: float
    hi: float
    step: float | None
    levels: int
    n_leaves: int
    exact: bool
    candidates: np.ndarray
    clock: bool = False  # the column holds HHMM times, counted in minutes
    heaps: tuple = ()
    log: bool = False

    @classmethod
    def of(cls, name, lo, hi, step, levels, points=(), resolution=None, log=False):
        """The grid of a column: its step grid value by value when small enough, else cells.

        A grid of cells of a column with a ``resolution`` (its step, or the
        value of its last decimal) also measures how round its values are;
        with ``log``, its cells are equal on the log scale.
        """
        if step is not None:
            first = math.ceil(lo / step - 1e-9) * step
            count = int(math.floor((hi - first) / step + 1e-9)) + 1
            if count <= 2**LEVELS_EXACT_MAX:
                depth = max(1, math.ceil(math.log2(count))) if count > 1 else 1
                return cls(name, float(first), float(hi), float(step), depth, count, True,
                           np.zeros(0))
        candidates = np.union1d(_round_numbers(lo, hi, step),
                                np.asarray(points, dtype=float))
        return cls(name, float(lo), float(hi), step, int(levels), 2**int(levels), False,
                   candidates, heaps=round_levels(step or resolution, lo, hi), log=bool(log))

    @property
    def n_partitions(self):
        """Partitions of the rows measured, each weighted by its noise's inverse variance
        relative to a tree node's: the levels below the root and the candidates (1 each),
        the round levels (``1 / ROUND_NOISE**2``)."""
        return self.levels + (0 if self.exact else 1) + (ROUND_NOISE**-2 if self.heaps else 0)

    def noise_scale(self):
        """Each entry's noise sd relative to a tree node's (1, or ``ROUND_NOISE``)."""
        return np.r_[np.ones(self.size - len(self.heaps)), np.full(len(self.heaps), ROUND_NOISE)]

    @property
    def size(self):
        """Length of this column's part of the measured vector."""
        return 2 ** (self.levels + 1) - 1 + len(self.candidates) + len(self.heaps)

    @property
    def width(self):
        """Width of a cell (grids of cells)."""
        return (self.hi - self.lo) / self.n_leaves

    def leaf_values(self):
        """The value of each real leaf (exact grids)."""
        return round_grid_values(self.lo + self.step * np.arange(self.n_leaves))

    def _scaled(self):
        """The bounds on the cells' scale: ``(lo, hi)``, or their logs (:attr:`log`)."""
        if self.log:
            return tuple(to_log_scale([self.lo, self.hi], self.lo, self.hi, self.step))
        return self.lo, self.hi

    def leaf_edges(self):
        """``n_leaves + 1`` edges of the cells (grids of cells)."""
        lo, hi = self._scaled()
        edges = lo + (hi - lo) / self.n_leaves * np.arange(self.n_leaves + 1)
        if self.log:
            edges = from_log_scale(edges, self.lo, self.hi, self.step)
        edges[0], edges[-1] = self.lo, self.hi
        return edges

    def leaf_of(self, values):
        """Leaf of each value (values already clipped to the bounds)."""
        if self.exact:
            index = np.round((values - self.lo) / self.step)
        elif self.log:  # by the edges themselves: exp and log may round across one
            index = np.searchsorted(self.leaf_edges(), values, side="right") - 1
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
            # compared in steps, if the grid has one: a value's last bit is no other value
            candidates = step_units(self.candidates, self.step)
            found = step_units(values, self.step)
            index = np.searchsorted(candidates, found)
            index = np.minimum(index, len(candidates) - 1)
            hit = candidates[index] == found
            parts.append(np.bincount(index[hit], minlength=len(self.candidates)))
        if self.heaps:
            parts.append(np.bincount(level_of(values, self.heaps), minlength=len(self.heaps)))
        return np.concatenate(parts).astype(np.int64)

    def split(self, vector):
        """(levels, candidates, round levels) of this column's part of the vector."""
        levels, start = [], 0
        for level in range(self.levels + 1):
            levels.append(vector[start:start + 2**level])
            start += 2**level
        end = start + len(self.candidates)
        return levels, vector[start:end], vector[end:]


def numbers_sensitivity(grids, n):
    """L2 sensitivity of all the grids' counts (fractions of ``n``, each divided by its
    :meth:`NumberGrid.noise_scale`) under replace-one neighbours.

    A row that changes moves one unit between two nodes of each level below
    the root, between two candidates and between two round levels (whose
    counts are divided by ``ROUND_NOISE``): ``2 (L + c + h / ROUND_NOISE**2)``
    in squares for a column of ``L`` levels, ``c`` (0 or 1) candidate lists
    and ``h`` (0 or 1) histograms of round levels. A missing value that
    becomes present adds one to a node of every level, root included, to at
    most one candidate and to one round level: ``L + 1 + c + h /
    ROUND_NOISE**2``, never more.

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
    """The public plan of the numbers' measurement: grids, sensitivity, noise and cost.

    ``sigma`` and ``sensitivity`` are those of one Gaussian over every grid
    with equal noise, which is the whole measurement when no column may be
    missing. Otherwise ``present_rho`` of the total ``rho`` first measures the
    present counts of the ``missable`` columns (L2 sensitivity
    ``present_sensitivity``, noise sd ``present_sigma``),
    and the trees get the rest with a noise that grows with each column's
    share of present rows (:func:`present_noise`).
    """

    grids: tuple
    share: float
    sensitivity: float
    sigma: float
    rho: float
    missable: tuple = ()
    present_sigma: float = 0.0
    present_rho: float = 0.0
    present_sensitivity: float = 0.0


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


def plan_numbers(coders, n, rho, share, n_marginals, decimals=None):
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
    decimals : dict, optional
        Declared decimals of columns without a step: the value of their last
        decimal is the finest grid of their round numbers (:func:`round_levels`).

    Returns
    -------
    plan : NumberPlan or None
        None when there is nothing to measure: no binned column, a share of 0,
        or (``share="auto"``) a noise sd above ``NOISE_MAX``, where the
        measurement would cost the synthesizer more than it tells.
    """
    if not coders or (share != "auto" and share == 0):
        return None
    decimals = decimals or {}
    grids = [NumberGrid.of(c.name, c.edges[0], c.edges[-1], c.step, LEVELS_MAX, c.points,
                           _resolution(decimals.get(c.name)), c.log is True)
             for c in coders]
    # a clock's grid is in minutes: its round numbers would not be those of HHMM
    grids = [replace(g, clock=True, heaps=()) if c.clock else g for g, c in zip(grids, coders)]
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
    total = gaussian_mechanism_rho(sensitivity, sigma)
    measured = {g.name for g in grids}  # grids keep their coders' order
    missable = tuple(bool(c.missing) for c in coders if c.name in measured)
    k = sum(missable)
    if not k:
        return NumberPlan(tuple(grids), s, sensitivity, sigma, total)
    # the present counts at about the noise of one node: k of the k + 2T squares
    partitions = sum(g.n_partitions for g in grids)
    present_rho = total * k / (k + 2.0 * partitions)
    present_sensitivity = math.sqrt(k) / n  # a row adds or removes one present value each
    present_sigma = gaussian_sigma(present_sensitivity, present_rho)
    return NumberPlan(tuple(grids), s, sensitivity, sigma, total, missable, present_sigma,
                      gaussian_mechanism_rho(present_sensitivity, present_sigma),
                      present_sensitivity)


def _resolution(decimals):
    return None if decimals is None else float(round_grid_values(10.0**-decimals))


def _column_counts(frame, grids):
    """PRIVATE: the integer counts of every grid on a pandas table (one partition)."""
    parts = []
    for g in grids:
        values = frame[g.name].to_numpy(dtype=float, na_value=np.nan)
        values = values[~np.isnan(values)]
        if g.clock:
            values = check_clock_values(g.name, values)
        parts.append(g.counts(np.clip(values, g.lo, g.hi)))
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


def present_noise(plan, present, n):
    """Noise sd of each grid's nodes, given each column's share of present rows.

    A column present in a share ``p`` of the rows gets nodes with noise sd
    ``tau sqrt(p)``: for the budget ``rho - present_rho`` this minimises the
    sum over every node of its variance relative to its column's present
    rows, ``sum_c T_c (sigma_c / p_c)**2`` for ``T_c`` partitions; with every
    ``p`` equal to 1 it is the plan's equal noise. Returns
    ``(sigmas, sensitivity)``: the sd of each grid's tree nodes and the L2
    sensitivity of the counts divided by their noise sd (each grid's sd times
    its :meth:`NumberGrid.noise_scale`; their Gaussian then has noise sd 1).

    Examples
    --------
    >>> from sklearn_privsyn.numbers import NumberGrid, NumberPlan, present_noise
    >>> grids = (NumberGrid.of("a", 0, 100, 1.0, 10), NumberGrid.of("b", 0, 100, 1.0, 10))
    >>> plan = NumberPlan(grids, 0.1, 0.0, 0.0, 0.02, (False, True), 0.0, 0.0)
    >>> sigmas, _ = present_noise(plan, [1.0, 0.25], 1000)
    >>> round(float(sigmas[1] / sigmas[0]), 3)   # sqrt(0.25)
    0.5
    """
    parts = np.array([g.n_partitions for g in plan.grids], float)
    present = np.asarray(present, float)
    rest = plan.rho - plan.present_rho
    tau = math.sqrt(float(np.sum(parts / present)) / (n * n * rest))
    sigmas = tau * np.sqrt(present)
    sensitivity = math.sqrt(float(np.sum(2.0 * parts / sigmas**2))) / n
    return sigmas, sensitivity


def _present_shares(plan, roots):
    """Each grid's share of present rows from the noisy present counts (post-processing).

    A column that may not be missing is present on every row. A noisy count
    is kept within ``[PRESENT_FLOOR_SD * present_sigma, 1]``: a column
    (nearly) always missing cannot take the whole budget.
    """
    present = np.ones(len(plan.grids))
    floor = min(PRESENT_FLOOR_SD * plan.present_sigma, 1.0)
    present[np.asarray(plan.missable, bool)] = np.clip(roots, floor, 1.0)
    return present


def measure_numbers(plan, rows, n, ledger, rng):
    """PRIVATE: the Gaussian measurement of every planned grid, charged to ``ledger``.

    ``rows`` are the private table (pandas, or a Dask DataFrame) of ``n`` rows.
    With missable columns, their present counts are measured first and set
    each grid's noise (:func:`present_noise`); two charges then, both
    ``number_histogram``. Returns the noisy vector split per column with its
    noise sd and, for a missable column, its noisy present count with that
    count's sd (None otherwise):
    ``{column: (levels, candidates, round_levels, sigma, present)}``.

    Every column's trees and candidates come first in the noise's order, the
    round levels after them: the trees' noise is the same draw with or
    without round levels.
    """
    # PRIVATE: the true counts, read only by the Gaussian mechanisms below
    true = number_counts(plan.grids, rows).astype(float) / n
    sizes = [g.size for g in plan.grids]
    starts = np.cumsum([0] + sizes)
    present = None
    if any(plan.missable):
        roots = true[starts[:-1][np.asarray(plan.missable, bool)]]  # root: present rows
        ledger.charge("number_histogram", plan.present_rho)
        noisy_roots = number_histogram(roots, plan.present_sensitivity, plan.present_sigma,
                                       rng)
        sigmas, sensitivity = present_noise(plan, _present_shares(plan, noisy_roots), n)
        present = iter(noisy_roots)
    else:
        sigmas = np.full(len(plan.grids), plan.sigma)
        sensitivity = plan.sensitivity / plan.sigma
    unit = np.concatenate([g.noise_scale() for g in plan.grids])
    scale = unit * np.repeat(sigmas, sizes)
    order = np.argsort(unit, kind="stable")  # the round levels (at a larger scale) last
    ledger.charge("number_histogram", gaussian_mechanism_rho(sensitivity, 1.0))
    noisy = np.empty_like(true)
    noisy[order] = number_histogram(true[order] / scale[order], sensitivity, 1.0, rng)
    noisy *= scale
    missable = plan.missable or (False,) * len(plan.grids)
    return {g.name: (*g.split(noisy[a:b]), float(sd),
                     (float(next(present)), plan.present_sigma) if m else None)
            for g, a, b, sd, m in zip(plan.grids, starts[:-1], starts[1:], sigmas, missable)}


def missing_share(levels, sigma, present):
    """A missable column's share of missing rows, with its sd (post-processing).

    Two noisy counts of the column's present rows, both unbiased: the tree's
    root (noise sd ``sigma``) and the present count measured first
    (``present``, a pair ``(count, sd)``); their inverse-variance mean, taken
    from one, clipped to ``[0, 1]``.

    Examples
    --------
    >>> from sklearn_privsyn.numbers import missing_share
    >>> share, sd = missing_share([[0.96]], 0.02, (0.98, 0.02))
    >>> round(share, 3), round(sd, 4)
    (0.03, 0.0141)
    """
    count, count_sd = present
    weights = np.array([sigma**-2.0, count_sd**-2.0])
    estimate = float(weights @ [levels[0][0], count]) / float(weights.sum())
    return min(max(1.0 - estimate, 0.0), 1.0), float(weights.sum() ** -0.5)
