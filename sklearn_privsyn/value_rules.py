"""Value rules: a column holds one value exactly (or only) when another holds one of a few.

Raw Adult's occupation is ``"?"`` (not known) exactly when its workclass is
``"?"`` or ``"Never-worked"``: a person with no work has no occupation. A
model that does not measure that pair draws the two apart (at ``epsilon =
0.1`` the pair is never measured, and 13% of the synthetic rows held a
private-sector worker with no occupation, or an occupation with no
workclass). Declared (``exactly_when=`` in
:class:`~sklearn_privsyn.QueryWorkload`, ``"exactly_when"`` in a domain
file), every estimator's ``sample(n)`` keeps it the way it keeps order rules
(:mod:`sklearn_privsyn.order_rules`): rows of the model kept where the rule
holds, re-weighted to the model's own 1-way shares. Public knowledge, no
budget.

A declaration is ``{column: {"value": v, "column": other, "values": [w, ...]}}``
(or a list of such): under ``exactly_when``, ``column == v`` exactly when
``other`` is one of the ``w``; under ``only_when``, ``column == v`` only when
``other`` is one of the ``w`` (an implication: Adult's relationship is
``"Husband"`` only when the marital status is a marriage; IBM attrition's job
role ``"Sales_Executive"`` only in the department ``"Sales"``). An
implication may instead bound a number, ``{"value": v, "column": number,
"between": [lo, hi]}`` (a job level only within its pay band), and either
may tie a value to another column's missing values, ``{"value": v, "column":
other, "missing": true}`` (a loan is an individual application exactly when
its joint income is missing). Under ``exactly_when`` a range ties a value to
it both ways, and with ``"missing": true`` beside ``"between"`` to a missing
number too: a borrower has no credit inquiry in the last 12 months exactly
when the last one was 13 to 24 months ago or there was none. The ruled column
may then be a number itself (``"value": 0`` of a count).

Examples
--------
>>> import pandas as pd
>>> from sklearn_privsyn.value_rules import parse_exactly_when
>>> rules = parse_exactly_when(
...     {"occupation": {"value": "?", "column": "workclass", "values": ["?", "Never-worked"]}},
...     ["workclass", "occupation"])
>>> str(rules[0])
"occupation == '?' exactly when workclass in ['?', 'Never-worked']"
>>> rows = pd.DataFrame({"workclass": ["?", "Private", "Private", "Never-worked"],
...                      "occupation": ["?", "?", "Sales", "Sales"]})
>>> rules[0].kept(rows).tolist()
[True, False, True, False]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from ._number_spec import float_values
from ._rule_implication import implied_by_ties
from .order_rule_drafts import (MAX_EXCEPTION_SHARE, MIN_BROKEN_ROWS, beyond_chance,
                                exact_breaks)
from .order_rules import declarations

__all__ = ["ValueRule", "check_declared_values", "check_listed", "draft_exactly_between",
           "draft_exactly_when", "draft_only_when", "parse_exactly_when", "parse_only_when",
           "json_value", "parse_value_rules", "rule_entries"]

#: draft_exactly_when drafts a rule only for a value held by at least this share of the
#: rows, and with each of the other column's values held by at least MIN_VALUE_ROWS rows
#: (a rare value alone beside ``v`` by chance would be a rule of chance).
MIN_VALUE_SHARE = 0.01
MIN_VALUE_ROWS = 5
#: ... and with at most this many values of the other column.
MAX_GIVEN_VALUES = 3
# draft_only_when drafts ``b == v only when a in S`` where a model with ``a`` and ``b``
# independent would break it on at least MIN_BROKEN_ROWS rows (n P(b = v) P(a not in
# S)), and lets MAX_EXCEPTION_SHARE of the rows holding ``v`` break it (Adult: 3 of 2,331
# wives recorded male).

#: draft_only_when drafts the ranges of a number beside each value of a listed column only
#: where the column explains at least this share of the variance of the number's ranks (a
#: job level of an income, a sub-grade of an interest rate; not the tails any value's
#: range leaves out).
MIN_RANK_VARIANCE_EXPLAINED = 0.8
#: ... and none where one value's range is narrower than this share of the number's span:
#: the model draws a number inside bins of about a tenth of its span, and a range much
#: narrower than a bin (a loan sub-grade's interest rate, to the hundredth) is kept only
#: by leaving most rows out, which moves every other share.
MIN_RANGE_SPAN_SHARE = 0.05


@dataclass(frozen=True)
class ValueRule:
    """``column == value`` exactly (``exactly=False``: only) when ``given`` is in ``values``.

    With ``between=(lo, hi)``, ``given`` is a number: ``column == value`` only
    when ``lo <= given <= hi`` (or ``given`` is missing); with
    ``exactly=True``, exactly when ``lo <= given <= hi``, a missing ``given``
    keeping the row either way, or, with ``missing=True`` too, exactly when
    ``given`` is within the range or missing. With ``missing=True`` alone, it
    reads ``column == value`` exactly (only) when ``given`` is missing.
    """

    column: object
    value: object
    given: object
    values: tuple
    exactly: bool = True
    between: tuple | None = None
    missing: bool = False

    @property
    def key(self):
        """The declaration's name: ``"exactly_when"`` or ``"only_when"``."""
        return "exactly_when" if self.exactly else "only_when"

    @property
    def columns(self):
        """The columns the rule reads."""
        return (self.column, self.given)

    @property
    def numbers(self):
        """The numbers whose values keep their shares (see order_rules.sample_keeping_rules)."""
        return () if self.between is None else (self.given,)

    def __str__(self):
        if self.between is not None:
            lo, hi = self.between
            text = (f"{self.column} == {self.value!r} {'exactly' if self.exactly else 'only'} "
                    f"when {lo:g} <= {self.given} <= {hi:g}")
            if self.exactly:
                text += (f" or {self.given} is missing" if self.missing
                         else f" (a missing {self.given} keeps it)")
            return text
        if self.missing:
            return (f"{self.column} == {self.value!r} {'exactly' if self.exactly else 'only'} "
                    f"when {self.given} is missing")
        return (f"{self.column} == {self.value!r} {'exactly' if self.exactly else 'only'} "
                f"when {self.given} in {list(self.values)!r}")

    def kept(self, frame):
        """Whether each row of ``frame`` keeps the rule."""
        left = frame[self.column].isin([self.value]).to_numpy()
        if self.between is not None:
            x = float_values(frame[self.given])
            missing = np.isnan(x)
            with np.errstate(invalid="ignore"):
                right = missing | ((x >= self.between[0]) & (x <= self.between[1]))
            if self.exactly and not self.missing:
                return missing | (left == right)
        elif self.missing:
            right = frame[self.given].isna().to_numpy()
        else:
            right = frame[self.given].isin(list(self.values)).to_numpy()
        return left == right if self.exactly else right | ~left


def parse_exactly_when(spec, columns):
    """The declared rules (``{column: {"value": v, "column": c, "values": [...]}}``).

    Raises ``ValueError`` naming the column: not a column of the table, a
    declaration without its three keys, or a column ruled by itself.
    """
    return _parse(spec, columns, exactly=True)


def parse_only_when(spec, columns):
    """The declared implications (``{column: {"value": v, "column": c, "values": [...]}}``).

    Raises ``ValueError`` as :func:`parse_exactly_when` does.

    Examples
    --------
    >>> rule, = parse_only_when({"role": {"value": "Sales rep", "column": "department",
    ...                                   "values": ["Sales"]}}, ["role", "department"])
    >>> str(rule)
    "role == 'Sales rep' only when department in ['Sales']"
    """
    return _parse(spec, columns, exactly=False)


def parse_value_rules(exactly_when, only_when, columns):
    """The rules of both declarations: those of ``exactly_when``, then of ``only_when``."""
    return parse_exactly_when(exactly_when, columns) + parse_only_when(only_when, columns)


def _parse(spec, columns, exactly):
    rules = []
    key = "exactly_when" if exactly else "only_when"
    shapes = [{"value", "column", "values"}, {"value", "column", "missing"},
              {"value", "column", "between"}] + (
        [{"value", "column", "between", "missing"}] if exactly else [])
    for col, rule, where in declarations(spec, columns, key, "rule"):
        if not isinstance(rule, Mapping) or set(rule) not in shapes:
            raise ValueError(f"{where} must be {{\"value\": v, \"column\": other, "
                             "\"values\": [...]}, {\"value\": v, \"column\": other, "
                             "\"between\": [lo, hi]}" + (" (and \"missing\": true)"
                                                         if exactly else "")
                             + " or {\"value\": v, \"column\": other, \"missing\": true}"
                             + f"; got {rule!r}.")
        given = rule["column"]
        if given not in list(columns):
            raise ValueError(f"{where}: {given!r} is not a column of the table.")
        if given == col:
            raise ValueError(f"{where}: a column cannot be ruled by itself.")
        if "missing" in rule and rule["missing"] is not True:
            raise ValueError(f"{where}: \"missing\" must be true (the rule ties the value "
                             f"to {given!r} being missing); got {rule['missing']!r}.")
        if "between" in rule:
            rules.append(ValueRule(col, rule["value"], given, (), exactly,
                                   _parse_between(rule["between"], where), "missing" in rule))
            continue
        if "missing" in rule:
            rules.append(ValueRule(col, rule["value"], given, (), exactly, missing=True))
            continue
        values = rule["values"]
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"{where}: \"values\" must be a non-empty list; got {values!r}.")
        rules.append(ValueRule(col, rule["value"], given, tuple(values), exactly))
    return tuple(rules)


def _parse_between(between, where):
    ok = (isinstance(between, (list, tuple)) and len(between) == 2
          and all(isinstance(b, Real) and not isinstance(b, bool) and math.isfinite(b)
                  for b in between))
    if not ok or between[0] > between[1]:
        raise ValueError(f"{where}: \"between\" must be two finite numbers [lo, hi] with lo <= "
                         f"hi; got {between!r}.")
    return (float(between[0]), float(between[1]))


def check_declared_values(rules, categories, missable=None, bounds=None):
    """ValueError naming the column when a rule's value is not among a listed column's values.

    ``categories``: column -> its listed values (the workload's ``categories_``);
    columns not listed are not checked. ``missable``: the columns that may be
    missing, when known; a rule on another column's missing values needs it
    among them. ``bounds``: number column -> ``(lo, hi)``, when known (clocks
    not among them); a rule on a number's value needs a number within them
    (the bounds are not named: they may have been read from the data).
    """
    for rule in rules:
        if rule.missing and missable is not None and rule.given not in missable:
            raise ValueError(f"{rule.key}[{rule.column!r}]: column {rule.given!r} may not be "
                             "missing (declare it in handle_missing, or \"missing\": true in a "
                             "domain file), so the rule could never hold.")
        if bounds is not None and rule.column in bounds:
            lo, hi = bounds[rule.column]
            v = rule.value
            if isinstance(v, bool) or not isinstance(v, Real) or not lo <= v <= hi:
                raise ValueError(f"{rule.key}[{rule.column!r}]: the value {v!r} is not a number "
                                 "within the column's bounds, so the rule could never hold.")
        for col, values in ((rule.column, [rule.value]), (rule.given, rule.values)):
            check_listed(rule, col, values, categories)


def check_listed(rule, col, values, categories):
    """ValueError naming ``rule``'s column when one of ``values`` is not among the listed
    values of ``col`` (``categories``: column -> its listed values; others not checked)."""
    if col in categories and values:
        known = set(np.asarray(categories[col], dtype=object).tolist())
        unknown = [v for v in values if v not in known]
        if unknown:
            raise ValueError(f"{rule.key}[{rule.column!r}]: {unknown!r} not among "
                             f"the values of column {col!r}.")


def draft_exactly_when(X, domain, mark):
    """Add ``"exactly_when"`` (marked ``mark``) where the data show such a rule.

    For listed columns ``b`` and ``a`` of the draft (not derived): ``b == v``
    exactly when ``a`` is in ``S``, on every row, where ``v`` holds at least
    ``MIN_VALUE_SHARE`` of the rows, ``S`` is at most ``MAX_GIVEN_VALUES``
    values of ``a`` (not all of them) each held by at least
    ``MIN_VALUE_ROWS`` rows, and ``b`` is not already a function of ``a``
    (a derived column). Read from the data: not covered by the privacy
    guarantee until reviewed.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"work": ["?"] * 6 + ["none"] * 5 + ["job"] * 40 + ["own"] * 49,
    ...                   "occupation": ["?"] * 11 + ["sales", "tech"] * 44 + ["tech"]})
    >>> domain = {c: {"values": sorted(set(X[c]))} for c in X}
    >>> draft_exactly_when(X, domain, "read_from_data")
    >>> domain["occupation"]["exactly_when"]
    {'value': '?', 'column': 'work', 'values': ['?', 'none']}

    A value held exactly where another column (listed or a number) is
    missing is drafted as ``{"value": v, "column": a, "missing": True}``
    (see :func:`_drafted_missing`).
    """
    listed = [c for c, e in domain.items() if "values" in e]
    for b, a in itertools.permutations(listed, 2):
        if "exactly_when" in domain[b]:
            continue
        left, right = X[b], X[a]
        present = left.notna() & right.notna()
        if present.sum() < len(X):
            continue
        counts = right.value_counts()
        for v, share in left.value_counts(normalize=True).items():
            if share < MIN_VALUE_SHARE:
                break
            given = set(right[left == v])
            if len(given) > MAX_GIVEN_VALUES or len(given) == counts.size or any(
                    counts[w] < MIN_VALUE_ROWS for w in given):
                continue
            if not (left[right.isin(list(given))] == v).all():
                continue
            domain[b].update({"exactly_when": {
                "value": json_value(v), "column": a,
                "values": sorted((json_value(w) for w in given), key=str)}, mark: True})
            break
    for b in listed:
        found = _drafted_missing(X, b, [a for a in domain if a != b])
        if found:
            rules = rule_entries(domain[b].get("exactly_when")) + found
            domain[b].update({"exactly_when": rules[0] if len(rules) == 1 else rules,
                              mark: True})


def _drafted_missing(X, b, others):
    """``b == v`` exactly when ``a`` is missing, for each column ``a`` of ``others``.

    ``b`` is never missing and ``v`` holds at least ``MIN_VALUE_SHARE`` of
    the rows; ``a`` is missing on at least ``MIN_VALUE_ROWS`` rows and present
    on as many, and ``b == v`` where ``a`` is missing and nowhere else, on
    every row, where a table with the two independent would break it on at
    least ``MIN_BROKEN_ROWS`` rows.
    """
    left = X[b]
    if left.isna().any():
        return []
    shares, codes = left.value_counts(normalize=True), left.to_numpy()
    found = []
    for a in others:
        missing = X[a].isna().to_numpy()
        k = int(missing.sum())
        if min(k, len(X) - k) < MIN_VALUE_ROWS:
            continue
        p = k / len(X)
        for v, share in shares.items():
            if share < MIN_VALUE_SHARE:
                break
            if exact_breaks(len(X), share, p) < MIN_BROKEN_ROWS:
                continue
            if np.array_equal(codes == v, missing):
                found.append({"value": json_value(v), "column": a, "missing": True})
                break
    return found


def draft_only_when(X, domain, mark):
    """Add ``"only_when"`` (marked ``mark``) where the data show a value implying others.

    For listed columns ``b`` and ``a`` of the draft (not derived, not already
    tied by ``exactly_when``; the rule's values among the listed ones; either
    may be missing on some rows): ``b == v`` only when ``a``
    is in ``S`` is drafted when ``v`` holds at least ``MIN_VALUE_SHARE`` of the
    rows, ``S`` is the values of ``a`` found beside ``v`` on at least
    ``MIN_VALUE_ROWS`` rows (at most ``MAX_GIVEN_VALUES`` of them), the others
    (a missing ``a`` among them) beside it on at most ``MAX_EXCEPTION_SHARE`` of
    the rows holding ``v``, and a
    table with ``a`` and ``b`` independent would break it on at least
    ``MIN_BROKEN_ROWS`` rows (so the data did not keep it by chance). For a
    number ``a`` that ``b`` (never missing) ranks (see :func:`_drafted_ranges`: a job level
    and its incomes), ``b == v`` only when ``lo <= a <= hi`` is drafted for
    each of its values. A column with several such values gets a list. An
    implication that rules already drafted imply through a third column is
    left out (:func:`~sklearn_privsyn._rule_implication.implied_by_ties`). Read
    from the data: not covered by the privacy guarantee until reviewed.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"role": ["rep"] * 60 + ["lab"] * 60 + ["boss"] * 80,
    ...                   "dept": ["sales"] * 60 + ["research"] * 60
    ...                           + ["sales", "research"] * 40})
    >>> domain = {c: {"values": sorted(set(X[c]))} for c in X}
    >>> draft_only_when(X, domain, "read_from_data")
    >>> domain["role"]["only_when"]
    [{'value': 'rep', 'column': 'dept', 'values': ['sales']}, \
{'value': 'lab', 'column': 'dept', 'values': ['research']}]
    >>> domain["dept"]["only_when"][0]  # and the other way round
    {'value': 'sales', 'column': 'role', 'values': ['boss', 'rep']}
    """
    every = [c for c, e in domain.items() if "values" in e]
    ties = _value_ties(domain)
    tied = {(b, r["column"]) for b in every for r in rule_entries(domain[b].get("exactly_when"))}
    drafted = {}
    for b, a in itertools.permutations(every, 2):
        if (b, a) in tied or (a, b) in tied:
            continue
        left, right = X[b], X[a]
        shares = right.value_counts(normalize=True, dropna=False)
        for v, share in left.value_counts(normalize=True).items():
            if share < MIN_VALUE_SHARE:
                break
            counts = right[left == v].value_counts(dropna=False)  # (missing: an exception)
            inside = ((counts >= MIN_VALUE_ROWS) & counts.index.notna()).to_numpy()
            given = counts.index[inside]  # (labels, never a mask: values may be booleans)
            if len(given) > MAX_GIVEN_VALUES or (
                    counts[~inside].sum() > MAX_EXCEPTION_SHARE * counts.sum()):
                continue
            if len(X) * share * (1 - shares.reindex(given).sum()) < MIN_BROKEN_ROWS:
                continue
            if not (_listed(domain[b], [v]) and _listed(domain[a], given)):
                continue  # (a value the draft folds into its "other" value)
            rule = {"value": json_value(v), "column": a,
                    "values": sorted((json_value(w) for w in given), key=str)}
            if not implied_by_ties(rule, b, ties, domain, drafted.get(b, [])):
                drafted.setdefault(b, []).append(rule)
    numbers = [c for c, e in domain.items() if "bounds" in e]
    listed = [c for c in every if not X[c].isna().any()]
    for b, a in itertools.product(listed, numbers):
        for v, lo, hi in _drafted_ranges(X[b], X[a], domain[b]):
            drafted.setdefault(b, []).append({"value": v, "column": a, "between": [lo, hi]})
    for b, rules in drafted.items():
        domain[b].update({"only_when": rules[0] if len(rules) == 1 else rules, mark: True})


def _drafted_ranges(left, right, entry):
    """``(v, lo, hi)``: each value ``v`` of ``left`` held only beside ``lo <= right <= hi``.

    Only where ``left`` explains ``MIN_RANK_VARIANCE_EXPLAINED`` of the
    variance of the ranks of ``right`` (present on half the rows). ``[lo, hi]``
    holds all but ``MAX_EXCEPTION_SHARE`` of the values beside ``v`` (half in
    each tail); drafted for ``v`` held by ``MIN_VALUE_SHARE`` of the rows when
    an independent pairing would break it on ``EXCEPTION_EVIDENCE`` times as
    many rows as the data do, and on ``MIN_BROKEN_ROWS``. None is drafted
    when one of these ranges spans less than ``MIN_RANGE_SPAN_SHARE`` of the
    number's values (the number nearly a function of the column).
    """
    x = float_values(right)
    present = ~np.isnan(x)
    if present.sum() < 0.5 * len(x):
        return []
    ranks = pd.Series(x[present]).rank().to_numpy()
    groups = pd.Series(ranks).groupby(left.to_numpy()[present])
    within = float(((ranks - groups.transform("mean").to_numpy()) ** 2).sum())
    total = float(((ranks - ranks.mean()) ** 2).sum())
    if total == 0 or 1.0 - within / total < MIN_RANK_VARIANCE_EXPLAINED:
        return []
    values = np.sort(x[present])
    found = []
    for v, share in left.value_counts(normalize=True).items():
        if share < MIN_VALUE_SHARE:
            break
        beside = x[present & (left == v).to_numpy()]
        if beside.size < MIN_VALUE_ROWS or not _listed(entry, [v]):
            continue
        beside = np.sort(beside)
        tail = int(MAX_EXCEPTION_SHARE / 2 * beside.size)  # rows left out at each end
        lo, hi = beside[tail], beside[beside.size - 1 - tail]
        exceptions = int(np.sum((beside < lo) | (beside > hi)))
        inside = np.searchsorted(values, hi, "right") - np.searchsorted(values, lo, "left")
        broken = beside.size * (1.0 - inside / values.size)
        if hi - lo < MIN_RANGE_SPAN_SHARE * (values[-1] - values[0]):
            return []  # the number is nearly a function of the column: no range for any value
        if beyond_chance(broken, exceptions):
            found.append((json_value(v), json_value(lo), json_value(hi)))
    return found


def draft_exactly_between(X, domain, mark):
    """Add ``"exactly_when"`` with ``"between"`` (marked ``mark``) where a value fixes a range.

    For a column ``b`` of the draft (listed or binned, never missing) and a
    binned number ``a`` that none of ``b``'s rules names yet: ``b == v``
    exactly when ``lo <= a <= hi`` (a borrower has no inquiry in the last 12
    months exactly when the last was 13 to 24 months ago) is drafted when
    ``v`` holds at least ``MIN_VALUE_SHARE`` of the rows, the rows with and
    without ``v`` each hold ``a`` on ``MIN_VALUE_ROWS`` rows, the range spans
    at least ``MIN_RANGE_SPAN_SHARE`` of ``a``'s values, at most
    ``MAX_EXCEPTION_SHARE`` of the rows break it, and a table with ``a`` and
    ``b`` independent would break it on ``EXCEPTION_EVIDENCE`` times as many
    rows as the data do, and on ``MIN_BROKEN_ROWS``. With ``"missing": true``
    (a missing ``a`` on ``v``'s side: no inquiry ever) when the rows where
    ``a`` is missing keep that too; otherwise a missing ``a`` keeps the rule.
    Read from the data: not covered by the privacy guarantee until reviewed.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> months = rng.integers(0, 25, 2000).astype(float)
    >>> months[:300] = np.nan  # never an inquiry
    >>> inquiries = np.where(months <= 12, rng.integers(1, 6, 2000), 0)
    >>> X = pd.DataFrame({"inquiries": inquiries, "months": months})
    >>> domain = {"inquiries": {"bounds": [0, 5]}, "months": {"bounds": [0, 24]}}
    >>> draft_exactly_between(X, domain, "read_from_data")
    >>> domain["inquiries"]["exactly_when"]
    {'value': 0, 'column': 'months', 'between': [13.0, 24.0], 'missing': True}
    """
    numbers = {c: _sorted_present(X[c]) for c, e in domain.items() if "bounds" in e}
    named = {(b, r["column"]) for b, e in domain.items()
             for key in ("exactly_when", "only_when") for r in rule_entries(e.get(key))}
    for b in [c for c, e in domain.items() if ("values" in e or "bounds" in e)
              and not X[c].isna().any()]:
        held = [(v, (X[b] == v).to_numpy()) for v, share in X[b].value_counts(
            normalize=True).items() if share >= MIN_VALUE_SHARE
            and ("values" not in domain[b] or _listed(domain[b], [v]))]
        found = [rule for a, presorted in numbers.items()
                 if a != b and (b, a) not in named and (a, b) not in named
                 for rule in _exact_ranges(held, presorted, a)]
        if found:
            rules = rule_entries(domain[b].get("exactly_when")) + found
            domain[b].update({"exactly_when": rules[0] if len(rules) == 1 else rules,
                              mark: True})


def _sorted_present(column):
    """(the order that sorts a number's present values, those values, its missing mask)."""
    x = float_values(column)
    missing = np.isnan(x)
    order = np.flatnonzero(~missing)
    order = order[np.argsort(x[order], kind="stable")]
    return order, x[order], missing


def _exact_ranges(held, presorted, name):
    """The rules ``b == v exactly when lo <= name <= hi`` the data hold, for each ``(v,
    rows holding v)`` of ``held`` (see :func:`draft_exactly_between`)."""
    order, values, missing = presorted
    if values.size == 0:
        return []
    allowed = int(MAX_EXCEPTION_SHARE * len(missing))
    found = []
    for v, rows in held:
        beside = rows[order]  # sorted values held beside v, and not
        inside, outside = values[beside], values[~beside]
        if min(inside.size, outside.size) < MIN_VALUE_ROWS:
            continue
        exceptions, lo, hi = _fewest_exceptions(inside, outside, allowed)
        if exceptions > allowed or hi - lo < MIN_RANGE_SPAN_SHARE * (values[-1] - values[0]):
            continue
        p_in = (np.searchsorted(values, hi, "right") - np.searchsorted(values, lo, "left")) / (
            values.size)
        p_held = inside.size / values.size
        broken = exact_breaks(values.size, p_held, p_in)
        rule = {"value": json_value(v), "column": name, "between": [json_value(lo), json_value(hi)]}
        apart = int(np.sum(missing & ~rows))  # a missing number without v
        for flag, count in ((True, exceptions + apart), (False, exceptions)):
            if flag and not (missing & rows).any():
                continue
            if count <= allowed and beyond_chance(broken, count):
                found.append({**rule, "missing": True} if flag else rule)
                break
    return found


def _fewest_exceptions(inside, outside, allowed):
    """``(exceptions, lo, hi)``: the range between two of the sorted ``inside`` values, at
    most ``allowed`` of them left out, that the fewest rows break (``inside`` values
    left out, sorted ``outside`` values within); ``allowed + 1`` exceptions when none
    is broken by ``allowed`` rows or fewer."""
    k = np.arange(min(allowed, inside.size - 1) + 1)
    low = k - np.searchsorted(outside, inside[k], "left")
    high = k + np.searchsorted(outside, inside[inside.size - 1 - k], "right")
    if low.min() + high.min() > allowed:  # (the usual case: no range is close)
        return allowed + 1, inside[0], inside[-1]
    total = np.where(k[:, None] + k[None, :] <= k[-1], low[:, None] + high[None, :],
                     np.iinfo(np.int64).max)
    i, j = np.unravel_index(np.argmin(total), total.shape)
    return int(total[i, j]), inside[i], inside[inside.size - 1 - j]


def _listed(entry, values):
    """Whether every one of ``values`` is among the entry's listed values."""
    known = set(entry["values"])
    return all(json_value(v) in known for v in values)


def _value_ties(domain):
    """``{column: (v, c, values)}``: the drafted ``column == v exactly when c in values``."""
    ties = {}
    for b, e in domain.items():
        for r in rule_entries(e.get("exactly_when")):
            if "values" in r and "values" in domain.get(r["column"], {}):
                ties.setdefault(b, (r["value"], r["column"], set(r["values"])))
    return ties


def rule_entries(declared):
    """A declaration's entries as a list (none, one, or a list of them)."""
    if declared is None:
        return []
    return list(declared) if isinstance(declared, (list, tuple)) else [declared]


def json_value(value):
    """A numpy scalar as the JSON value it is."""
    return value.item() if isinstance(value, np.generic) else value
