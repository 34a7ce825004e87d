"""Order rules: a number that never exceeds another (years at a company, years worked).

Real tables hold inequalities between columns: nobody has been longer at a
company than they have worked, nor longer in a role than at the company. A
model that measures a few marginals draws such columns nearly on their own,
and at thin budgets (each column's 1-way marginal only) on their own
entirely: on IBM's attrition table at ``epsilon = 1`` only 14% of the
synthetic rows kept all of its year rules, where every real row does.

That a column is at most another (plus or minus a constant) is public
knowledge: declared (``at_most=`` in :class:`~sklearn_privsyn.QueryWorkload`,
``"at_most"`` in a domain file), every estimator's ``sample(n)`` keeps it.
It draws a pool of rows from the fitted model, keeps those that hold every
rule, and re-weights the kept rows by iterative proportional fitting toward
the shares each modelled column's codes (and the values of the numbers the
rules compare) have in the whole pool: the model's own 1-way marginals, which
rejection alone would move (toward short careers). The re-weighting is the
one closest to uniform (in Kullback-Leibler divergence) with those shares;
where the model puts mass that the rules forbid (a role longer than most
tenures), the shares cannot all be met and the rows keep what the rules
allow. ``n`` rows are then drawn by weight, none twice (a row's weight is
capped at one draw). Where the model draws the rules' columns independently,
their kept rows are first moved toward those shares by Metropolis moves
(rows keeping many rules together are rare among the model's draws). It
reads nothing but the fitted model and the declaration, so it costs no
budget: post-processing.

A declaration is ``{column: bound}``, ``bound`` a column name, a column
name plus or minus a number (``"Age - 18"``, spaces around the sign), a
positive number times a column name (``"11 * air_time"``: a flight's miles at
most 11 times its minutes in the air, 660 miles an hour), a number less a
column (``"64 - experience"``: years of schooling and of work add up to at most
the age less 6), or a list of these. A rule holds where either side is
missing. The same bounds from below (``at_least=``, ``"at_least"``) give the
other side of a sum (``"12 - experience"``: nobody in the table is under 18).

Examples
--------
>>> import pandas as pd
>>> from sklearn_privsyn.order_rules import parse_at_least, parse_at_most
>>> rules = parse_at_most({"in_role": "at_company", "at_company": ["worked", "age - 18"]},
...                       ["age", "worked", "at_company", "in_role"])
>>> [str(r) for r in rules]
['in_role <= at_company', 'at_company <= worked', 'at_company <= age - 18']
>>> [str(r) for r in parse_at_least({"worked": "2 - at_company"}, ["worked", "at_company"])]
['worked >= 2 - at_company']
>>> rows = pd.DataFrame({"age": [30, 25], "worked": [10, 5], "at_company": [4, 8],
...                      "in_role": [2, None]})
>>> rules_kept(rules, rows).tolist()
[True, False]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._coders import is_number_dtype
from ._number_spec import float_values
from ._rule_relaxation import keepable_rules
from ._sampling import allocate_counts, rake

__all__ = ["OrderRule", "bound_text", "capped_shares", "check_numeric", "declarations",
           "parse_at_least", "parse_at_most", "rule_block", "rule_groups", "rules_kept",
           "sample_keeping_rules"]

#: The pool holds up to this many kept rows for each row drawn (a larger pool keeps the
#: re-weighted rows apart: fewer of the n rows are drawn twice), BLOCK_KEPT_PER_ROW for a
#: block drawn apart (its repeats are harmless; the pool only estimates shares) ...
POOL_KEPT_PER_ROW = 20
BLOCK_KEPT_PER_ROW = 5
#: ... from batches of ``max(n, MIN_BATCH)`` rows of the model, at most MAX_BATCHES of
#: them and at most MAX_POOL_ROWS rows in all (but one batch).
MAX_BATCHES = 100
MIN_BATCH = 20_000
MAX_POOL_ROWS = 2_000_000
#: A row of the pool that breaks a rule has its numbers drawn again inside their bins (its
#: codes kept) up to this many times before it is left out.
REDRAWS = 10
#: The numbers a rule compares keep their shares in up to this many quantile groups.
FINE_GROUPS = 50
#: A block of a product model moves its kept rows toward the re-weighted shares in this many
#: rounds of MOVE_SWEEPS sweeps (one column at a time), before the last re-weighting; each
#: round multiplies the tilt by the re-weighting's factors to the power MOVE_STEP (a full
#: step overshoots where the shares and the rules disagree) ...
MOVE_ROUNDS = 10
MOVE_SWEEPS = 3
MOVE_STEP = 0.3
#: ... when its pool holds at most this many kept rows (a block of n rows up to 40,000).
MOVE_MAX_ROWS = 200_000


@dataclass(frozen=True)
class OrderRule:
    """``column <= factor * bound + offset`` on every row where both are present.

    With ``at_least=True``, ``column >= factor * bound + offset``. A negative
    ``factor`` bounds a sum: ``a <= 64 - b`` is ``a + b <= 64``.
    """

    column: object
    bound: object
    offset: float = 0.0
    factor: float = 1.0
    at_least: bool = False

    @property
    def key(self):
        """The declaration's name: ``"at_most"`` or ``"at_least"``."""
        return "at_least" if self.at_least else "at_most"

    @property
    def columns(self):
        """The columns the rule reads."""
        return (self.column, self.bound)

    @property
    def numbers(self):
        """The numbers it compares (their values keep their shares when rows are kept)."""
        return self.columns

    def __str__(self):
        sign = ">=" if self.at_least else "<="
        return f"{self.column} {sign} {bound_text(self.bound, self.offset, self.factor)}"

    def kept(self, frame):
        """Whether each row of ``frame`` keeps the rule (True where a side is missing)."""
        left = float_values(frame[self.column])
        right = self.factor * float_values(frame[self.bound]) + self.offset
        with np.errstate(invalid="ignore"):
            return ~(left < right) if self.at_least else ~(left > right)


def bound_text(bound, offset, factor=1.0):
    """A bound as a declaration writes it: ``"b"``, ``"b + c"``, ``"b - c"``, ``"k * b"``
    or ``"c - b"`` (a negative factor; a rule built with both a positive factor and an
    offset reads ``"k * b + c"``).

    Examples
    --------
    >>> bound_text("age", -18.0), bound_text("air_time", 0.0, 8.7), bound_text("b", 64.0, -1.0)
    ('age - 18', '8.7 * air_time', '64 - b')
    """
    text = bound if abs(factor) == 1 else f"{_number(abs(factor))} * {bound}"
    if factor < 0:
        return f"{_number(offset)} - {text}"
    if offset == 0:
        return text
    return f"{text} {'+' if offset > 0 else '-'} {_number(abs(offset))}"


def _number(x):
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _parse_bound(text, columns, where):
    """(bound column, offset, factor) of ``"b"``, ``"b + c"``, ``"b - c"``, ``"k * b"`` or
    ``"c - b"`` / ``"c - k * b"`` (factor ``-1`` / ``-k``)."""
    if not isinstance(text, str):
        raise ValueError(f"{where} must be a column name, maybe with \" + c\" or \" - c\" "
                         f"or after \"k * \" or \"c - \"; got {text!r}.")
    head, found, tail = text.partition(" - ")
    if found and _is_number(head):
        scaled = _scaled_column(tail, columns, where)
        if scaled is not None:
            return scaled[0], float(head), -scaled[1]
    scaled = _scaled_column(text, columns, where)
    if scaled is not None:
        return scaled[0], 0.0, scaled[1]
    for sign, factor in ((" + ", 1.0), (" - ", -1.0)):
        head, found, tail = text.rpartition(sign)
        if found and head in columns and _is_number(tail):
            return head, factor * float(tail), 1.0
    raise ValueError(f"{where}: {text!r} is not a column of the table, nor a column plus or "
                     "minus a number, nor a positive number times a column, nor a number "
                     "less a column (write the sign with a space on each side).")


def _scaled_column(text, columns, where):
    """``(column, k)`` of ``"b"`` (``k = 1``) or ``"k * b"``, or None."""
    if text in columns:
        return text, 1.0
    head, found, tail = text.partition(" * ")
    if not (found and tail in columns):
        return None
    if not (_is_number(head) and float(head) > 0):
        raise ValueError(f"{where}: {text!r} multiplies {tail!r} by {head!r}; the factor "
                         "must be a positive number.")
    return tail, float(head)


def _is_number(text):
    """Whether ``text`` reads as a finite number."""
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def parse_at_most(spec, columns):
    """The declared rules (``{column: bound or [bounds]}``) checked against ``columns``.

    Parameters
    ----------
    spec : dict or None
    columns : sequence
        The table's columns.

    Returns
    -------
    rules : tuple of OrderRule

    Raises
    ------
    ValueError
        Naming the column: not a column of the table, a bound that names no
        column, or a column bounded by itself.
    """
    return _parse_rules(spec, columns, "at_most")


def parse_at_least(spec, columns):
    """The rules ``{column: bound or [bounds]}`` bounding columns from below.

    As :func:`parse_at_most`, each rule with ``at_least=True``.
    """
    return _parse_rules(spec, columns, "at_least")


def _parse_rules(spec, columns, key):
    rules = []
    for col, text, where in declarations(spec, columns, key, "bound"):
        bound, offset, factor = _parse_bound(text, columns, where)
        if bound == col:
            raise ValueError(f"{where}: a column cannot be bounded by itself.")
        rules.append(OrderRule(col, bound, offset, factor, at_least=key == "at_least"))
    return tuple(rules)


def declarations(spec, columns, name, what):
    """``(column, one declaration, where)`` of ``{column: declaration or [declarations]}``.

    ``name`` is the parameter (``"at_most"``), ``what`` one declaration in
    words; ValueError when ``spec`` is no dict or names no column of ``columns``.
    """
    if spec is None:
        return []
    if not isinstance(spec, Mapping):
        raise ValueError(f"{name} must be a dict {{column: {what}}}; got {type(spec).__name__}.")
    out = []
    for col, declared in spec.items():
        where = f"{name}[{col!r}]"
        if col not in list(columns):
            raise ValueError(f"{where}: {col!r} is not a column of the table.")
        out.extend((col, one, where)
                   for one in (declared if isinstance(declared, (list, tuple)) else [declared]))
    return out


def check_numeric(rules, frame):
    """ValueError naming a rule's column that is not numeric in ``frame`` (dtypes only).

    The columns checked are each rule's ``numbers``: both sides of an order
    rule, the number of a value rule with a range.
    """
    for rule in rules:
        for col in rule.numbers:
            dtype = frame[col].dtype
            if not is_number_dtype(dtype):
                raise ValueError(f"{rule.key}[{rule.column!r}]: column {col!r} is not a number "
                                 f"(dtype {dtype}); the rule compares numbers.")


def rules_kept(rules, frame):
    """Whether each row of ``frame`` keeps every rule."""
    kept = np.ones(len(frame), dtype=bool)
    for rule in rules:
        kept &= rule.kept(frame)
    return kept


def rule_block(rules, derived):
    """The columns the rules read, with the derived columns they hang together with.

    The rules' columns, the sources of any derived column among them and every
    derived column of a source among them (``derived``: name ->
    :class:`~sklearn_privsyn.derived.DerivedColumn`), so that a block of
    rows drawn apart from the other columns keeps its derived values.

    Examples
    --------
    >>> rule_block((OrderRule("a", "b"),), {})
    ('a', 'b')
    """
    block = list(dict.fromkeys(c for r in rules for c in r.columns))
    while True:
        more = [c for name, d in derived.items() for c in (*d.sources, name)
                if (name in block or set(d.sources) & set(block)) and c not in block]
        if not more:
            return tuple(block)
        block.extend(dict.fromkeys(more))


def rule_groups(rules, derived):
    """The rules in groups that share no column, each with its block (:func:`rule_block`).

    Where the model draws every column independently, each group's block can
    be drawn apart from the others: the rules tie nothing across groups, so
    pairs of columns of two groups stay as the model draws them.

    Examples
    --------
    >>> groups = rule_groups((OrderRule("a", "b"), OrderRule("c", "d"), OrderRule("b", "e")), {})
    >>> [(len(rules), block) for rules, block in groups]
    [(2, ('a', 'b', 'e')), (1, ('c', 'd'))]
    """
    groups = []  # (rules, their columns): no column in two groups
    for rule in rules:
        columns = set(rule_block((rule,), derived))
        joined = [g for g in groups if g[1] & columns]
        groups = [g for g in groups if not g[1] & columns] + [
            ([r for g in joined for r in g[0]] + [rule], columns.union(*(g[1] for g in joined)))]
    ordered = sorted((tuple(r for r in rules if r in g[0]) for g in groups),
                     key=lambda g: rules.index(g[0]))
    return [(g, rule_block(g, derived)) for g in ordered]


def sample_keeping_rules(draw, rules, sizes, n_samples, rng, *, block=None, redecode=None,
                         derived=None):
    """``n_samples`` rows of a model that keep every rule, with the model's 1-way shares.

    The shares restored are those of each modelled column's codes and, for
    the numbers the rules compare, of their values (cut at up to
    ``FINE_GROUPS`` quantiles of the pool): rejection moves values inside a
    bin too (years at a company toward the bin's low end).

    Parameters
    ----------
    draw : callable
        ``draw(m, rng) -> (codes, frame)``: ``m`` rows of the fitted model, as
        codes of its modelled columns and as decoded rows.
    rules : tuple of OrderRule or ValueRule
        Each with ``kept(frame)``, ``columns`` and ``numbers`` (the numbers
        whose values keep their shares).
    sizes : sequence of int
        Number of codes of each modelled column.
    n_samples : int
    rng : numpy.random.Generator
    block : tuple of (column, code index or None), default=None
        When the model draws these columns independently of the others (a
        product distribution), only they are kept and re-weighted (toward
        their own shares) and the other columns come from ``n_samples`` fresh
        rows: a block may then repeat (a row the re-weighting values at
        several draws) while the rows stay apart, and every share is met as
        the rules allow. The code index is the column's in ``codes`` (None
        for a derived column).
    derived : dict, default=None
        ``{column: DerivedColumn}`` of the block's derived columns, sources
        first, computed again from their sources when the rows are moved
        (without it, a block holding a derived column is not moved).
    redecode : callable, default=None
        ``redecode(codes, rng) -> frame``: rows decoded from given codes
        (values drawn inside their bins), in at least the rules' columns (the
        columns it leaves out keep their values). With it, a pool row breaking a rule
        that compares numbers has its values drawn again, up to ``REDRAWS``
        times, before it is left out: fewer rows are left out, so the cells'
        shares move less, and values move inside their bins instead (a young
        age beside many years of schooling moves up its age bin).

    Returns
    -------
    frame : DataFrame of ``n_samples`` rows.

    Warns
    -----
    UserWarning
        When fewer kept rows than ``n_samples`` were found: some are repeated.

    UserWarning
        When fewer than ``n_samples`` rows drawn keep every rule (a block: a
        fifth of them): the rules left out so that enough rows keep the others
        (:func:`~sklearn_privsyn._rule_relaxation.keepable_rules`).
    """
    batch = max(n_samples, MIN_BATCH)
    numbers = list(dict.fromkeys(c for r in rules for c in r.numbers))
    coded = range(len(sizes)) if block is None else [i for _, i in block if i is not None]
    keep = None if block is None else [c for c, _ in block]
    wanted = (POOL_KEPT_PER_ROW if block is None else BLOCK_KEPT_PER_ROW) * n_samples
    codes, drawn_values, values, kept, frames = [], [], [], [], []
    bank = None  # the first batch of the model's rows, as drawn (a block's moves read it)
    while (not codes or sum(len(f) for f in frames) < wanted
           and len(codes) < MAX_BATCHES and len(codes) * batch < MAX_POOL_ROWS):
        c, f = draw(batch, rng)
        bank = (c, f) if bank is None else bank
        k = rules_kept(rules, f)
        drawn = final = _number_values(f, numbers)
        if redecode is not None and numbers and not k.all():
            order, f, k = _redraw_values(redecode, rules, c, f, k, rng)
            c, drawn = c[order], drawn[order]
            final = _number_values(f, numbers)
        codes.append(c if block is None else c[:, coded])
        drawn_values.append(drawn)
        values.append(final)
        kept.append(k)
        frames.append(f[k] if keep is None else f.loc[k, keep])
    kept = np.concatenate(kept)
    # rules too few rows keep together (fewer than n rows, a block's moves start from a
    # fifth of them): some left out, with a warning
    if kept.sum() < (n_samples if block is None else n_samples / BLOCK_KEPT_PER_ROW):
        fewer, left_out = keepable_rules(rules, bank[1],
                                         math.ceil(wanted * batch / MAX_POOL_ROWS))
        if left_out:
            return (sample_keeping_rules(draw, fewer, sizes, n_samples, rng, block=block,
                                         derived=derived, redecode=redecode)
                    if fewer else draw(n_samples, rng)[1])
    if block is None and kept.sum() < n_samples:
        warnings.warn(f"Only {kept.mean():.2%} of the rows drawn from the fitted model keep the "
                      f"declared rules: {int(kept.sum()):,} kept rows give "
                      f"{n_samples:,}, some of them repeated.", UserWarning, stacklevel=3)
    # the targets: the shares of the model's own draws; the kept rows' values may have been
    # drawn again inside their bins
    codes, drawn_values = np.concatenate(codes), np.concatenate(drawn_values)
    edges = [_fine_edges(v) for v in drawn_values.T]
    model = np.column_stack([codes] + [
        _fine_groups(v, e) for v, e in zip(drawn_values.T, edges)])
    groups = np.column_stack([codes] + [
        _fine_groups(v, e) for v, e in zip(np.concatenate(values).T, edges)])
    group_sizes = [sizes[i] for i in coded] + [len(e) + 2 for e in edges]
    targets = [np.bincount(g, minlength=s) / len(g) for g, s in zip(model.T, group_sizes)]
    rows = pd.concat(frames, ignore_index=True)
    groups = groups[kept]
    derived = derived or {}
    if (block is not None and all(i is not None or c in derived for c, i in block)
            and len(rows) <= MOVE_MAX_ROWS):
        bank = (bank[0][:, coded], bank[1][keep].reset_index(drop=True))
        groups = _move_block_rows(bank, rules, (block, derived), numbers, edges, rows, groups,
                                  (group_sizes, targets), rng)
    weights = rake(groups, group_sizes, targets)
    if block is None:  # whole rows: none drawn twice
        weights = capped_shares(weights, n_samples)
    # kept rows in the order of their codes (then values): the systematic draw of
    # allocate_counts then meets every cell's share within one row, as drawing from the
    # model without rules does, where rows in draw order would be a multinomial draw
    order = np.lexsort(groups.T[::-1])
    counts = np.empty(len(rows), dtype=np.int64)
    counts[order] = allocate_counts(weights[order], n_samples, rng)
    picked = np.repeat(np.arange(len(rows)), counts)
    rows = rows.iloc[picked[rng.permutation(len(picked))]].reset_index(drop=True)
    if block is None:
        return rows
    out = draw(n_samples, rng)[1]
    for col in keep:
        out[col] = rows[col].set_axis(out.index)
    return out


def _move_block_rows(bank, rules, block, numbers, edges, rows, groups, shares, rng):
    """Move the kept rows of a block drawn from a product model toward the shares.

    Rows that keep many rules together are rare among the model's draws (a
    batter with no hit, no run, no extra base and no stolen base): too rare for
    the re-weighting alone to give them their share. Each round re-weights the
    rows (:func:`~sklearn_privsyn._sampling.rake`, its factors the tilt
    ``t``), then each sweep proposes for every row, one modelled column at a
    time, the column's value in a row of ``bank`` (``(codes, rows)`` of the
    model, as drawn) picked at random, with the derived columns of it computed
    again, accepted when the row keeps the rules and with chance ``min(1,
    t(new) / t(old))``: Metropolis moves whose stationary distribution is the
    bank's (the model's columns, independent) times the tilt, on the rows
    keeping the rules. ``block`` is ``(block, derived)``; ``rows`` (the
    block's columns) change in place; returns the rows' new groups (codes,
    then the numbers' fine groups).
    """
    (block, derived), (sizes, targets) = block, shares
    bank_codes, bank_rows = bank
    coded = [c for c, i in block if i is not None]
    fine = {c: (len(coded) + k, edges[k]) for k, c in enumerate(numbers)}
    moves = {}  # a modelled column: its code group, what it changes, the rules to check
    for j, col in enumerate(coded):
        changed = [col]  # and what is derived from it, in turn (sources first)
        for d, spec in derived.items():
            if set(spec.sources) & set(changed):
                changed.append(d)
        touching = [r for r in rules if set(r.columns) & set(changed)]
        read = [*changed, *(c for d in changed[1:] for c in derived[d].sources),
                *(c for r in touching for c in r.columns)]
        moves[col] = (j, changed, touching, list(dict.fromkeys(read)))
    tilt = [np.ones(size) for size in sizes]
    for _ in range(MOVE_ROUNDS):
        factors = rake(groups, sizes, targets, return_factors=True)[1]
        tilt = [t * f**MOVE_STEP for t, f in zip(tilt, factors)]
        for _ in range(MOVE_SWEEPS):
            for col, (j, changed, touching, read) in moves.items():
                pick = rng.integers(len(bank_rows), size=len(rows))
                proposal = rows[read].copy()  # (the other rules hold: columns kept)
                proposal[col] = bank_rows[col].iloc[pick].set_axis(rows.index)
                for d in changed[1:]:
                    proposal[d] = derived[d].compute(proposal, rng).set_axis(rows.index)
                new = [(j, bank_codes[pick, j])] + [
                    (fine[c][0], _fine_groups(float_values(proposal[c]), fine[c][1]))
                    for c in changed if c in fine]
                ratio = np.ones(len(rows))
                with np.errstate(divide="ignore", invalid="ignore"):  # a tilt of 0: never
                    for a, g in new:                                 # entered, left at once
                        ratio = ratio * tilt[a][g] / tilt[a][groups[:, a]]
                accept = rules_kept(touching, proposal) & (rng.random(len(rows)) < ratio)
                for c in changed:
                    rows[c] = proposal[c].where(accept, rows[c])
                for a, g in new:
                    groups[accept, a] = g[accept]
    return groups


def capped_shares(weights, n_samples):
    """``weights`` made at most ``1 / n_samples`` each, the excess spread over the others.

    Drawn by :func:`~sklearn_privsyn._sampling.allocate_counts`, no row is
    then drawn twice (when there are at least ``n_samples`` rows): a row the
    re-weighting values above one draw gets one, the others a little more.

    Examples
    --------
    >>> capped_shares(np.array([0.7, 0.1, 0.1, 0.1]), 2).round(3).tolist()
    [0.5, 0.167, 0.167, 0.167]
    """
    shares = np.asarray(weights, dtype=float) / np.sum(weights)
    if len(shares) <= n_samples:
        return shares
    cap = 1.0 / n_samples
    capped = np.zeros(len(shares), dtype=bool)
    while True:
        over = ~capped & (shares > cap * (1 + 1e-12))
        if not over.any():
            return shares
        capped |= over
        free = shares[~capped]
        shares = np.where(capped, cap, shares * (1.0 - cap * capped.sum()) / free.sum())


def _number_values(frame, numbers):
    """The values of the columns ``numbers`` of ``frame`` (NaN where missing), as columns."""
    if not numbers:
        return np.zeros((len(frame), 0))
    return np.column_stack([float_values(frame[col]) for col in numbers])


def _redraw_values(redecode, rules, codes, frame, kept, rng):
    """``frame`` with the rows breaking ``rules`` decoded again from their codes.

    A row's numbers are drawn again inside their bins, up to ``REDRAWS`` times
    (at most ``MAX_POOL_ROWS`` rows in all), and the first draw that keeps the
    rules replaces it (ages drawn above schooling); its codes stay. All the
    draws are decoded at once. Returns the order of the rows (those kept by
    a redraw last), the frame and the new mask of kept rows.
    """
    todo = np.flatnonzero(~kept)
    times = max(1, min(REDRAWS, MAX_POOL_ROWS // len(todo)))
    again = redecode(np.tile(codes[todo], (times, 1)), rng)  # draw t of row i at t m + i
    ok = rules_kept(rules, again).reshape(times, len(todo))
    fixable = ok.any(axis=0)
    if not fixable.any():
        return np.arange(len(frame)), frame, kept
    first = ok.argmax(axis=0)[fixable] * len(todo) + np.flatnonzero(fixable)
    fixed = todo[fixable]
    rows = frame.iloc[fixed].reset_index(drop=True)
    for col, values in again.iloc[first].reset_index(drop=True).items():
        rows[col] = values
    stay = np.ones(len(frame), dtype=bool)
    stay[fixed] = False
    rest = np.flatnonzero(stay)
    frame = pd.concat([frame.iloc[rest], rows], ignore_index=True)
    return (np.concatenate([rest, fixed]), frame,
            np.concatenate([kept[rest], np.ones(len(fixed), dtype=bool)]))


def _fine_edges(values):
    """Up to ``FINE_GROUPS - 1`` inner quantiles of the present values."""
    present = values[~np.isnan(values)]
    if present.size == 0:
        return np.zeros(0)
    return np.unique(np.quantile(present, np.linspace(0, 1, FINE_GROUPS + 1)[1:-1]))


def _fine_groups(values, edges):
    """Group of each value between ``edges``, missing last (``len(edges) + 1``)."""
    groups = np.searchsorted(edges, values, side="right")
    return np.where(np.isnan(values), len(edges) + 1, groups).astype(np.int64)
