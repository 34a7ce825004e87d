"""Drafting order rules from the data: what ``privsyn domain`` proposes as ``"at_most"``
(and ``"at_least"``, the bounds of a sum).

:func:`draft_at_most` reads a table and adds to a drafted domain the
inequalities its numbers keep on every row (or on all but a few coding
errors), where a table with the two columns independent would break them:
structure, not chance. Read from the data, drafts are outside the privacy
guarantee until the owner reviews them (``privsyn domain`` marks them so).
The rules themselves, and how ``sample(n)`` keeps them, are in
:mod:`sklearn_privsyn.order_rules`; the value rules' drafter
(:mod:`sklearn_privsyn.value_rules`) shares the evidence constants here, and the
drafter of derived maps the evidence of :func:`map_breaks_by_chance`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ._number_spec import float_values
from .order_rules import bound_text

__all__ = ["EXCEPTION_EVIDENCE", "MAX_EXCEPTION_SHARE", "MAX_TIED_EXCEPTION_SHARE",
           "MIN_BROKEN_ROWS", "MIN_TIE_SHARE", "beyond_chance",
           "MIN_SUM_BREAK_SHARE", "MIN_TIE_SHARE_WITH_EXCEPTIONS", "MIN_UNTIED_BREAK_SHARE",
           "draft_at_most", "drafted_numbers", "exact_breaks", "map_breaks_by_chance"]

#: draft_at_most drafts ``a <= b`` only when a == b != 0 on at least this share of the
#: rows holding both (a tie shows the columns count the same thing; an inequality
#: between unrelated columns holds with no tie).
MIN_TIE_SHARE = 0.01
#: ... or, with fewer ties, when an independent pairing would break it on this share of the
#: rows (and MIN_BROKEN_ROWS): the bulk of the two columns in order (a batter's hits within
#: his at-bats: 32%; a loan's balance within it: 44%), not only an edge (a count of debit
#: accounts within the debit limit, broken only where the limit is 0: 1.3%).
MIN_UNTIED_BREAK_SHARE = 0.05
#: A rule drafted from the data (an order rule with a constant, a value implying others) must
#: be one a table with its two columns independent would break on at least this many rows:
#: the chance that the data keep it with the two independent is then below exp(-30).
MIN_BROKEN_ROWS = 30
#: A drafted rule may be broken by at most this share of the rows (Adult: 1 of 19,716
#: husbands recorded female; GSSvocab: 28 of 28,700 people with more years of schooling
#: than their age less 6): errors of coding an expert would fix.
MAX_EXCEPTION_SHARE = 0.002
#: An order rule the data break on a few rows is drafted when ``a - b == k`` on at least
#: this share of the rows (the rows at its edge) and a table with the two columns
#: independent would break it on EXCEPTION_EVIDENCE times as many rows as the data do.
MIN_TIE_SHARE_WITH_EXCEPTIONS = 0.005
EXCEPTION_EVIDENCE = 10
#: ``a <= b`` with the exact rule's ties (``a == b != 0`` on MIN_TIE_SHARE of the rows: two
#: counts of one thing) may be broken by up to this share of the rows holding both, when an
#: independent pairing would break it on EXCEPTION_EVIDENCE times as many (loans: the months
#: since the last delinquency at most those since the last 90-day late payment, tied on 60%
#: of the rows holding both, broken on 24 of 2,237, by an independent pairing on 858).
MAX_TIED_EXCEPTION_SHARE = 0.02
#: A bound on the sum of two numbers must be one a table with the two independent would
#: break on at least this share of the rows (CPS1988's schooling and experience: 0.9% above
#: the age less 6 of a 70-year-old, 2.3% below an 18-year-old's): one that the few most
#: extreme rows set (the longest flight's distance plus its departure hour) breaks on far
#: fewer, and the rows it would keep are no truer.
MIN_SUM_BREAK_SHARE = 0.005


def draft_at_most(X, domain, mark):
    """Add ``"at_most"`` (marked ``mark``) to drafted entries of numbers never above another.

    Among the drafted numbers of ``domain`` (bounds, or listed values that are
    numbers and not booleans; not derived), for ``a`` and ``b`` present
    together on at least ``MIN_BROKEN_ROWS`` rows (a joint income and the
    applicant's own, on the joint applications only), with ``k`` the largest
    ``a - b`` seen on them:

    No rule is drafted where the two ranges imply it (``max(a) <= min(b)``: a
    0/1 flag is at most a family's size of 1 to 13 on every row, whatever the
    pairing). Otherwise:

    * ``k == 0``: ``a <= b`` is drafted when ``a == b != 0`` on at least
      ``MIN_TIE_SHARE`` of the rows (a tie shows the two count the same thing;
      an inequality between unrelated columns holds with no tie), or, with
      fewer ties, when the ranges overlap and an independent pairing would
      break it on ``MIN_UNTIED_BREAK_SHARE`` of the rows and ``MIN_BROKEN_ROWS``
      (a balance left on a loan, a batter's hits within his at-bats; a count
      of accounts below a dollar limit is kept by nearly any pairing and
      stays undrafted); the same ``a <= b`` where ``k < 0``, the rule with
      that constant is not drafted and no ratio below is (a day's mean
      temperature always below its high: 0 is no constant fitted to the data);
    * ``k`` another whole number: ``a <= b + k`` (years worked at most the
      age less 18) when the two columns' ranges overlap (two counts of one
      kind), ``a - b == k`` on at least ``MIN_TIE_SHARE`` of the rows, the
      ranges do not imply it (``k`` is above ``max(a) -
      min(b)``, which any two columns keep), and a table with ``a`` and ``b``
      independent would break it on at least ``MIN_BROKEN_ROWS`` rows (so the
      data did not keep it by chance);
    * ``a <= b`` broken on a few rows: drafted when ``a == b != 0`` on
      ``MIN_TIE_SHARE`` of the rows (the exact rule's ties), at most
      ``MAX_TIED_EXCEPTION_SHARE`` of the rows break it and an independent
      pairing would break it on ``EXCEPTION_EVIDENCE`` times as many (the
      months since a loan applicant's last delinquency at most those since
      the last 90-day late payment, one kind of event: 1% of the rows break
      it, a coding difference an expert would not copy);
    * otherwise, ``k`` the smallest whole number that at most
      ``MAX_EXCEPTION_SHARE`` of the rows exceed (years of schooling at most
      the age less 6, with a few coding errors): drafted when the ranges
      overlap, ``a - b == k`` on ``MIN_TIE_SHARE_WITH_EXCEPTIONS`` of the rows,
      and an independent pairing would break it on ``EXCEPTION_EVIDENCE``
      times as many rows as the data do. The synthetic rows keep it on every
      row.

    The rules are then reduced: one that two others imply (``a <= c + k1``,
    ``c <= b + k2``, ``k1 + k2 <= k``) is left out. Two binned numbers (not
    clocks) positive on every row holding both (but for a 0 on at most
    ``MAX_EXCEPTION_SHARE`` of them, left out), with no such rule between
    them, get ``a <= f * b`` (a flight's miles at most 8.7 times its minutes in
    the air; its minutes at most 0.37 times its miles): ``f`` the ratio ``a /
    b`` that at most ``MAX_EXCEPTION_SHARE`` of the rows exceed, rounded up to
    two significant digits (not 1: ``a <= b`` is drafted as above or not at
    all), drafted when an independent pairing would break it on
    ``EXCEPTION_EVIDENCE`` times as many rows as the data do (and on
    ``MIN_BROKEN_ROWS``): two unrelated numbers keep their largest ratio about
    as well paired at random. Two whole numbers (not clocks) whose ranges
    overlap get bounds on their sum, ``"at_most": "k - b"`` (``a + b <= k``)
    and ``"at_least": "k' - b"`` (CPS1988's years of schooling and of work add
    up to 12 through 64, the ages less 6), ``k`` the largest sum when a table
    with the two independent would break it on at least ``MIN_BROKEN_ROWS``
    rows and ``MIN_SUM_BREAK_SHARE`` of them (about one row for two unrelated
    counts; a bound the few most extreme rows set breaks on few), otherwise
    the sum at most ``MAX_EXCEPTION_SHARE`` of the rows exceed as for the
    rules with a constant (ties on ``MIN_TIE_SHARE_WITH_EXCEPTIONS``, broken
    ``EXCEPTION_EVIDENCE`` times as often by an independent pairing); the
    same from below. Read from the data: not covered by the privacy
    guarantee until reviewed.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"worked": [5, 9, 20, 3], "at_company": [5, 2, 20, 1],
    ...                   "in_role": [1, 2, 3, 1], "income": [50, 60, 70, 80]})
    >>> X = pd.concat([X] * 10)  # (a rule needs 30 rows)
    >>> domain = {c: {"bounds": [0, 100]} for c in X}
    >>> draft_at_most(X, domain, "read_from_data")
    >>> domain["at_company"]
    {'bounds': [0, 100], 'at_most': 'worked', 'read_from_data': True}
    >>> domain["in_role"]["at_most"], "at_most" in domain["worked"]
    ('at_company', False)
    """
    columns = drafted_numbers(domain)
    values = {c: float_values(X[c]) for c in columns}
    holds = {}
    scales = [c for c in columns if "bounds" in domain[c] and not domain[c].get("clock")]
    for a, b, x, y in _present_pairs(columns, values):
        k = _drafted_offset(x, y)
        if k is not None:
            holds[a, b] = k
        elif _always_below(x, y) and not (a in scales and b in scales and (
                _drafted_factor(x, y) or _drafted_factor(y, x))):
            holds[a, b] = 0.0  # (a ratio, where one is drafted, says more)
    drafted = {}
    for (a, b), k in sorted(holds.items(),
                            key=lambda p: (columns.index(p[0][0]), columns.index(p[0][1]))):
        if not any((a, c) in holds and (c, b) in holds and holds[a, c] + holds[c, b] <= k
                   for c in columns):
            drafted.setdefault(a, []).append(bound_text(b, k))
    # measurements with a true 0: binned numbers, not clocks (a listed number is a code
    # or a count of few values, whose ratios to another are coincidences of the table)
    for a, b, x, y in _present_pairs(scales, values):
        factor = None if (a, b) in holds or (b, a) in holds else _drafted_factor(x, y)
        if factor is not None:
            drafted.setdefault(a, []).append(bound_text(b, 0.0, factor))
    # sums of two whole numbers of one kind (years of schooling and of work: the age less 6)
    whole = [c for c in columns if not domain[c].get("clock") and np.all(
        np.nan_to_num(values[c]) % 1 == 0)]
    at_least = {}
    for a, b, x, y in _present_pairs(whole, values, itertools.combinations):
        if not _ranges_overlap(x, y):
            continue
        upper, lower = _drafted_sum_limit(x, y), _drafted_sum_limit(-x, -y)
        if upper is not None:
            drafted.setdefault(a, []).append(bound_text(b, upper, -1.0))
        if lower is not None:
            at_least.setdefault(a, []).append(bound_text(b, -lower, -1.0))
    for key, rules in (("at_most", drafted), ("at_least", at_least)):
        for col, bounds in rules.items():
            domain[col].update({key: bounds[0] if len(bounds) == 1 else bounds, mark: True})


def drafted_numbers(domain):
    """The numbers of a drafted domain: binned, or listed values all numbers (not booleans)."""
    return [c for c, e in domain.items() if "bounds" in e or "values" in e and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in e["values"])]


def _present_pairs(columns, values, pairs=itertools.permutations):
    """``(a, b, x, y)`` for each pair of ``columns`` (ordered: ``pairs`` is
    ``itertools.permutations``; ``combinations``, ``a`` before ``b``) present together on at
    least ``MIN_BROKEN_ROWS`` rows, ``x`` and ``y`` their values on those rows."""
    for a, b in pairs(columns, 2):
        x, y = values[a], values[b]
        both = ~(np.isnan(x) | np.isnan(y))
        if both.sum() >= MIN_BROKEN_ROWS:
            yield a, b, x[both], y[both]


def _drafted_factor(x, y):
    """The ``f`` of the rule ``x <= f * y`` the data hold (see :func:`draft_at_most`), or None."""
    if np.min(x) < 0 or np.min(y) < 0:
        return None
    zero = (x == 0) | (y == 0)  # a diamond measured 0 mm long: coding errors, a few rows
    if zero.mean() > MAX_EXCEPTION_SHARE or (~zero).sum() < MIN_BROKEN_ROWS:
        return None
    x, y = x[~zero], y[~zero]
    ratio = np.sort(x / y)
    allowed = int(MAX_EXCEPTION_SHARE * len(ratio))
    top = float(ratio[len(ratio) - 1 - allowed])
    place = 10.0 ** (math.floor(math.log10(top)) - 1)
    factor = float(np.round(math.ceil(top / place - 1e-9) * place, 12))
    if factor == 1:
        return None  # a <= b: the order rules' (with their ties), not a ratio's
    exceptions = int(np.sum(x > factor * y))
    if not beyond_chance(_independent_breaks(x / factor, y, 0.0), exceptions):
        return None
    return factor


def _drafted_sum_limit(x, y):
    """The ``k`` of the rule ``x + y <= k`` the data hold (see :func:`draft_at_most`), or None."""
    total = np.sort(x + y)
    needed = max(MIN_BROKEN_ROWS, MIN_SUM_BREAK_SHARE * len(total))
    if total[-1] >= np.max(x) + np.max(y):
        return None  # the ranges imply it
    if _independent_breaks(x, -y, total[-1]) >= needed:
        return float(total[-1])
    allowed = int(MAX_EXCEPTION_SHARE * len(total))
    k = float(total[len(total) - 1 - allowed])
    exceptions = int(np.sum(total > k))
    if exceptions == 0 or np.mean(total == k) < MIN_TIE_SHARE_WITH_EXCEPTIONS:
        return None
    if not beyond_chance(_independent_breaks(x, -y, k), exceptions, needed):
        return None
    return k


def _drafted_offset(x, y):
    """The ``k`` of the rule ``x <= y + k`` the data hold (see :func:`draft_at_most`), or None."""
    if np.max(x) <= np.min(y):
        return None  # the ranges imply it (a 0/1 flag within a family's size): no rule
    k = float(np.max(x - y))
    if k == 0 and np.mean(_edge(x, y, 0.0)) >= MIN_TIE_SHARE:
        return 0.0
    if k != 0 and _offset_rule_holds(x, y, k):
        return k
    found = _offset_with_exceptions(x, y)
    if found is None and k == 0 and _kept_by_no_pairing(x, y):
        return 0.0  # 0 is no constant fitted to the data: no tie needed at its edge
    if found is None and k > 0 and _tied_order_with_exceptions(x, y):
        return 0.0
    return found


def _always_below(x, y):
    """Whether ``x < y`` on every row is a rule ``x <= y`` (no tie, no constant: a day's mean
    temperature below its high): not implied by the ranges, and :func:`_kept_by_no_pairing`."""
    return np.max(x - y) < 0 < np.max(x) - np.min(y) and _kept_by_no_pairing(x, y)


def _kept_by_no_pairing(x, y):
    """Whether ``x <= y`` without ties is structure: overlapping ranges, and an independent
    pairing breaking it on ``MIN_UNTIED_BREAK_SHARE`` of the rows and ``MIN_BROKEN_ROWS``."""
    return _ranges_overlap(x, y) and _independent_breaks(x, y, 0.0) >= max(
        MIN_BROKEN_ROWS, MIN_UNTIED_BREAK_SHARE * len(x))


def _tied_order_with_exceptions(x, y):
    """Whether ``x <= y``, broken on a few rows, is a rule: the exact rule's ties, at most
    ``MAX_TIED_EXCEPTION_SHARE`` of the rows broken, ``EXCEPTION_EVIDENCE`` times as many by
    an independent pairing (and ``MIN_BROKEN_ROWS``)."""
    exceptions = int(np.sum(x > y))
    if exceptions > MAX_TIED_EXCEPTION_SHARE * len(x):
        return False
    if np.mean(_edge(x, y, 0.0)) < MIN_TIE_SHARE:
        return False
    return beyond_chance(_independent_breaks(x, y, 0.0), exceptions)


def _offset_with_exceptions(x, y):
    """The ``k`` of ``x <= y + k`` broken on a few rows (coding errors), or None.

    ``k`` is the smallest whole number that at most ``MAX_EXCEPTION_SHARE`` of
    the rows exceed. Drafted when the ranges overlap, the edge holds
    ``MIN_TIE_SHARE_WITH_EXCEPTIONS`` of the rows (``x == y != 0`` for ``k == 0``)
    and an independent pairing would break it on ``EXCEPTION_EVIDENCE`` times as
    many rows as the data do (and on ``MIN_BROKEN_ROWS``).
    """
    difference = np.sort(x - y)
    allowed = int(MAX_EXCEPTION_SHARE * len(difference))
    k = float(np.ceil(difference[len(difference) - 1 - allowed]))
    exceptions = int(np.sum(difference > k))
    if exceptions == 0:
        return None  # no exception: the rule is the exact one, refused above
    if not _ranges_overlap(x, y):
        return None
    if np.mean(_edge(x, y, k)) < MIN_TIE_SHARE_WITH_EXCEPTIONS:
        return None
    if not beyond_chance(_independent_breaks(x, y, k), exceptions):
        return None
    return k


def _offset_rule_holds(x, y, k):
    """Whether ``x <= y + k`` (``k != 0`` the largest ``x - y``) is a rule of the data.

    A whole ``k``, overlapping ranges, ties on ``MIN_TIE_SHARE`` of the rows,
    not implied by the ranges, and broken by an independent pairing on
    ``MIN_BROKEN_ROWS`` rows.
    """
    if not float(k).is_integer() or k >= np.max(x) - np.min(y):
        return False
    if not _ranges_overlap(x, y):
        return False
    if np.mean(_edge(x, y, k)) < MIN_TIE_SHARE:
        return False
    return _independent_breaks(x, y, k) >= MIN_BROKEN_ROWS


def _edge(x, y, k):
    """The rows at the edge of ``x <= y + k``: ``x - y == k`` (``x == y != 0`` for ``k == 0``)."""
    return (x == y) & (x != 0) if k == 0 else x - y == k


def _overlap(x, y):
    """Length of the overlap of the two ranges (not positive when they are apart)."""
    return min(np.max(x), np.max(y)) - max(np.min(x), np.min(y))


def _ranges_overlap(x, y):
    """Whether the ranges overlap: two counts of one kind, not an income and an age."""
    return _overlap(x, y) > 0


def beyond_chance(broken, exceptions, needed=MIN_BROKEN_ROWS):
    """Whether a rule the data break on ``exceptions`` rows is structure, not chance: a table
    with its columns independent would break it on ``broken`` rows, at least
    ``EXCEPTION_EVIDENCE`` times as many and at least ``needed``.

    Examples
    --------
    >>> from sklearn_privsyn.order_rule_drafts import beyond_chance
    >>> beyond_chance(552.0, 28), beyond_chance(164.0, 192), beyond_chance(29.0, 0)
    (True, False, False)
    """
    return broken >= max(needed, EXCEPTION_EVIDENCE * exceptions)


def exact_breaks(n, p, q):
    """Rows of ``n`` a table with two columns independent would break "``A`` exactly when
    ``B``" on, ``A`` held by a share ``p`` of the rows and ``B`` by ``q``.

    Examples
    --------
    >>> from sklearn_privsyn.order_rule_drafts import exact_breaks
    >>> exact_breaks(1000, 0.25, 0.25)
    375.0
    """
    return n * (p * (1 - q) + (1 - p) * q)


def _independent_breaks(x, y, k):
    """Rows a table with ``x`` and ``y`` independent would break ``x <= y + k`` on.

    The share of the ``n * n`` pairs ``(x_i, y_j)`` with ``x_i > y_j + k``, times ``n``.
    """
    return np.searchsorted(np.sort(y), x - k, side="left").sum() / len(y)


def map_breaks_by_chance(a, b, n_pairings=8):
    """Rows a table with ``a`` and ``b`` independent would break "``b`` is a function of ``a``"
    on: those off their group's most common ``b``, averaged over ``n_pairings`` pairings at
    random (seeded, so that a draft reads the same each time).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.order_rule_drafts import map_breaks_by_chance
    >>> code = np.arange(100) % 20                      # 20 values, 5 rows each
    >>> round(map_breaks_by_chance(code, code % 2))     # a function chance would not give
    32
    >>> map_breaks_by_chance(np.arange(100), code % 2)  # one row a value: any column is one
    0.0
    """
    import pandas as pd

    a, b = pd.factorize(np.asarray(a))[0].astype(np.int64), pd.factorize(np.asarray(b))[0]
    k = int(b.max()) + 1 if b.size else 1
    rng = np.random.default_rng(0)
    broken = 0.0
    for _ in range(n_pairings):
        pairs, counts = np.unique(a * k + rng.permutation(b), return_counts=True)
        groups = pairs // k
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        broken += a.size - np.maximum.reduceat(counts, starts).sum()
    return float(broken / n_pairings)
