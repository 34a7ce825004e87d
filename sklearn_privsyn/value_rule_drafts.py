"""Drafting value rules from the data: what ``privsyn domain`` proposes for review.

:func:`~sklearn_privsyn.domain_draft.draft_domain` calls these after the
columns are drafted: :func:`draft_exactly_when` (a value held exactly when
another column holds one of a few, or is missing), :func:`draft_only_when`
(implications, and a number's range beside each value of a column that ranks
it: a job level's pay band, an internet service's prices) and
:func:`draft_exactly_between` (a value held exactly when a number is within a
range). Each rule is drafted only where the data hold it on (nearly) every row
and a table with the two columns independent would break it on many rows.
Read from the data: marked ``read_from_data``, outside the privacy guarantee
until a person reviews it. The rules themselves, their checks and how
``sample(n)`` keeps them are in :mod:`sklearn_privsyn.value_rules`.
"""

import itertools

import numpy as np
import pandas as pd

from ._number_spec import float_values
from ._rule_implication import implied_by_ties
from .order_rule_drafts import (MAX_EXCEPTION_SHARE, MIN_BROKEN_ROWS, beyond_chance,
                                exact_breaks)
from .value_rules import json_value, rule_entries, same_value

__all__ = ["MIN_RANK_VARIANCE_EXPLAINED", "MIN_RANGE_SPAN_SHARE", "MIN_VALUE_ROWS",
           "MIN_VALUE_SHARE", "draft_exactly_between", "draft_exactly_when",
           "draft_only_when", "listed_value"]

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
#: job level of an income, an internet service of a monthly price, a degree of the years
#: of school; not the tails any value's range leaves out). Chosen on 46 real tables: the
#: tiers explain 0.785-1.0, the pairs whose ranges are tail facts (carriers and flight
#: numbers, job roles and incomes, years in a role and at the company) 0.70-0.752.
MIN_RANK_VARIANCE_EXPLAINED = 0.77
#: ... and none where one value's range is narrower than this share of the number's span:
#: the model draws a number inside bins of about a tenth of its span, and a range much
#: narrower than a bin (a loan sub-grade's interest rate, to the hundredth) is kept only
#: by leaving most rows out, which moves every other share.
MIN_RANGE_SPAN_SHARE = 0.05


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
                "value": listed_value(v, domain[b]), "column": a,
                "values": sorted((listed_value(w, domain[a]) for w in given), key=str)},
                mark: True})
            break
    for b in listed:
        found = _drafted_missing(X, b, domain[b], [a for a in domain if a != b])
        if found:
            rules = rule_entries(domain[b].get("exactly_when")) + found
            domain[b].update({"exactly_when": rules[0] if len(rules) == 1 else rules,
                              mark: True})


def _drafted_missing(X, b, entry, others):
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
                found.append({"value": listed_value(v, entry), "column": a,
                              "missing": True})
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
            rule = {"value": listed_value(v, domain[b]), "column": a,
                    "values": sorted((listed_value(w, domain[a]) for w in given), key=str)}
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
            found.append((listed_value(v, entry), json_value(lo), json_value(hi)))
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


def listed_value(value, entry):
    """``value`` as ``entry`` lists it: the listed ``1`` for a ``1.0`` of the data.

    A column of whole numbers with missing values is read as floats, while its
    draft lists them as integers; a rule names them as the column does.

    Examples
    --------
    >>> listed_value(np.float64(1.0), {"values": [0, 1]})
    1
    >>> listed_value(np.float64(1.5), {"values": [0, 1]})
    1.5
    """
    value = json_value(value)
    return next((w for w in entry.get("values", ()) if same_value(w, value)), value)
