"""Drafting a number that is a sum of others: a clock time of its hour and minute, a total.

:func:`~sklearn_privsyn.domain_draft.draft_domain` calls :func:`sum_of` for a
column that is no function of one other column: it looks for ``w * a + c`` of
two numbers (``w`` one of the drafter's divisors: ``100 * hour + minute``),
exact on every row, then for a plain total of two or three numbers (a loan's
``paid_total`` of its principal, interest and late fees) equal to within half
the total's last decimal (a total kept in cents may be half a cent off the sum
of its rounded parts), and for a difference ``a - c`` of two numbers where
``a`` has drafted points (a loan's balance, its amount less the principal
repaid: the amount's round values would be lost if it were the derived
total). A total with points of its own is never drafted a sum. A total or a
difference may be off on at most ``MAX_OFF_SHARE`` of the rows (coding
errors); either is missing exactly where a source is. Read from the data, like
the rest of a draft.
"""

import itertools
from fractions import Fraction

import numpy as np

from ._coders import is_number_dtype
from ._number_spec import float_values
from .expressions import quoted

__all__ = ["MAX_DECIMALS", "MAX_DENOMINATOR", "MAX_OFF_SHARE", "draft_linear", "last_decimal",
           "sum_of"]

#: A total's last decimal is found among 10**0 .. 10**-MAX_DECIMALS.
MAX_DECIMALS = 6
#: Rows of the quick look, before all rows are checked.
HEAD_ROWS = 1000
#: A total (or difference) may be off on at most this share of the present rows.
MAX_OFF_SHARE = 0.001
#: The weights and constant of a drafted linear relation are fractions with at most this
#: denominator (a month is a twelfth of a year).
MAX_DENOMINATOR = 12
#: ... or decimals of at most this many places (a rate of 0.085 a minute).
MAX_WEIGHT_DECIMALS = 4
#: A relation of one source is drafted for a column of at least this many values.
ONE_SOURCE_VALUES = 30
#: ... and one step of its source moving it by at least this share of its own step
#: (0.45 cent a tenth of a minute, not 0.01 hour a minute, nor a tenth of a year a unit).
MIN_LANDED = 0.25
#: Least squares' misses may exceed the tolerance this many times in the search.
SCREEN_SLACK = 2.0
#: A linear relation is looked for on at least this many rows a term (and 30).
ROWS_PER_TERM = 10


def _numbers(series):
    return float_values(series) if is_number_dtype(series.dtype) else None


def last_decimal(values):
    """The place of the last decimal of ``values`` (1, 0.1, ..., 1e-6), or 0 if finer."""
    present = values[~np.isnan(values)]
    for k in range(MAX_DECIMALS + 1):
        scaled = present * 10.0**k
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 + 1e-12 * np.abs(scaled)):
            return 10.0**-k
    return 0.0


def sum_of(X, b, domain, isna, divisors):
    """``(sources, weights)`` of a sum that column ``b`` equals on every row, or None.

    Parameters
    ----------
    X : DataFrame
    b : column
    domain : dict
        The draft so far: sources are drafted numbers (``"values"`` or
        ``"bounds"``), not derived columns.
    isna : dict
        Column -> its missing mask.
    divisors : sequence of int
        The weights ``w`` tried in ``w * a + c``.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"p": [10.25, 3.5, 0.0, 7.0], "i": [1.0, 0.25, 2.5, 0.0],
    ...                   "f": [0.0, 0.0, 0.5, 1.25]})
    >>> X["total"] = X["p"] + X["i"] + X["f"]
    >>> domain = {c: {"bounds": [0, 20]} for c in X}
    >>> sum_of(X, "total", domain, {c: X[c].isna().to_numpy() for c in X}, (10, 100))
    (['p', 'i', 'f'], [1, 1, 1])
    """
    y = _numbers(X[b])
    if y is None:
        return None
    candidates = {c: _numbers(X[c]) for c in X.columns
                  if c != b and "derived" not in domain[c] and ("values" in domain[c]
                                                               or "bounds" in domain[c])}
    candidates = {c: v for c, v in candidates.items() if v is not None}
    head = slice(0, min(len(y), HEAD_ROWS))  # a quick look first: then all rows
    for a, x in candidates.items():
        for c, z in candidates.items():
            if c == a or not np.array_equal(isna[b], isna[a] | isna[c]):
                continue
            for w in divisors:
                if (np.array_equal(w * x[head] + z[head], y[head], equal_nan=True)
                        and np.array_equal(w * x + z, y, equal_nan=True)):
                    return [a, c], [w, 1]
    if "points" in domain[b]:
        return None
    pointed = {c for c in candidates if "points" in domain[c]}
    return _total_of(y, candidates, isna[b], head, pointed)


def _total_of(y, candidates, missing, head, pointed=()):
    """Two or three candidates whose plain sum is ``y`` to half the coarsest last decimal
    among them and ``y`` (a total kept in cents beside parts in cents, or in full), or two
    whose difference is, the first one of ``pointed``; off on at most ``MAX_OFF_SHARE``
    of the present rows."""
    present = ~missing
    if not present.any():
        return None
    slack = 1e-9 * max(1.0, float(np.max(np.abs(y[present]))))
    tolerance = 0.5 * last_decimal(y) + slack
    # a source equal to the total is no part of one, nor a column of zeros (a smaller
    # total found first covers any total holding one)
    parts = {c: v for c, v in candidates.items()
             if np.any(np.nan_to_num(v) != 0)
             and not np.allclose(v[present], y[present], atol=tolerance, rtol=0)}
    names = list(parts)
    decimals = {c: last_decimal(v) for c, v in parts.items()}
    allowed = int(MAX_OFF_SHARE * present.sum())
    tried = [(combo, [1] * size) for size in (2, 3)
             for combo in itertools.combinations(names, size)]
    tried += [((a, c), [1, -1]) for a in names if a in pointed for c in names if c != a]
    for combo, weights in tried:
        if not np.array_equal(missing, np.logical_or.reduce(
                [np.isnan(parts[c]) for c in combo])):
            continue
        within = max(tolerance, 0.5 * max(decimals[c] for c in combo) + slack)
        for rows in (head, slice(None)):  # a quick look first: then all rows
            total = sum(w * parts[c][rows] for c, w in zip(combo, weights))
            off = ~(np.abs(total - y[rows]) <= within) & present[rows]
            if off.sum() > allowed:
                break
        else:
            return list(combo), weights
    return None


def draft_linear(X, domain, isna, mark):
    """Draft as derived each number that is a linear relation of others the sums do not cover.

    For a number ``b`` (drafted ``"bounds"`` or listed numbers), the numbers
    missing exactly where it is are its candidates: least squares on the first
    ``HEAD_ROWS`` rows finds whether ``b`` is ``w_1 a_1 + ... + w_k a_k + c``
    to half its last decimal, then sources are dropped one at a time (the
    smallest terms first) while the relation holds. It is drafted when it
    holds on all but ``MAX_OFF_SHARE`` of the rows with weights and ``c``
    that are fractions of denominator at most ``MAX_DENOMINATOR`` or decimals
    of at most ``MAX_WEIGHT_DECIMALS`` places, and when :func:`sum_of` would
    not find it (a constant, a weight that is no whole number, or four sources
    or more): a date in years of its year and month, ``year + (month - 1) /
    12``; a batter's total bases, ``hit + double + 2 triple + 3 home_run``; a
    phone call's charge of its minutes at a rate, ``0.17 minutes`` to the
    cent. Of two or more sources the weights are positive (``b`` is the total
    of its parts, not a part: the year is no date less a twelfth of the
    month). Of one source ``a``, ``b`` needs ``ONE_SOURCE_VALUES`` values, a
    constant that is a whole number of its steps and one step of ``a``
    moving it by ``MIN_LANDED`` of its step at least (a line that rounds to
    ``floor(a / 10)`` is an interval function, not a relation); when ``a =
    b / w`` holds too, ``a`` is the source only if its steps land on distinct
    steps of ``b`` (minutes in tenths, charges in cents at 0.27 a minute),
    the later column on a tie. Drafted first, so that the sources stay
    modelled (the year is no interval of the date). Returns the sources.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"year": [2000, 2000, 2001, 2003, 2003] * 8,
    ...                   "month": [1, 7, 12, 3, 5] * 8})
    >>> X["date"] = X["year"] + (X["month"] - 1) / 12
    >>> domain = {c: {"bounds": [0, 3000]} for c in X}
    >>> sorted(draft_linear(X, domain, {c: X[c].isna().to_numpy() for c in X}, "read"))
    ['month', 'year']
    >>> domain["date"]["derived"]
    {'of': ['year', 'month'], 'expression': '`year` + `month` / 12 - 1 / 12'}
    """
    values = {c: v for c in X.columns if "values" in domain[c] or "bounds" in domain[c]
              for v in [_numbers(X[c])] if v is not None}
    sources, names = set(), list(values)
    filled = None  # every number with its missing values as 0, made once when first needed
    for b in values:
        if b in sources:
            continue
        candidates = [c for c in values if c != b and c not in sources
                      and "derived" not in domain[c] and np.array_equal(isna[c], isna[b])]
        found = _linear_of(values[b], {c: values[c] for c in candidates}, ~isna[b])
        if found is None and not isna[b].any():
            filled = filled or {c: np.nan_to_num(v, nan=0.0) for c, v in values.items()}
            found = _total_of_answers(b, filled, isna, domain)
        if found is None:
            continue
        spec, weights, constant = found
        if len(spec["of"]) == 1 and not _one_source_kept(
                b, spec["of"][0], weights[0], constant, values, isna, names):
            continue
        domain[b] = {"derived": spec, mark: True}
        sources.update(spec["of"])
    return sources


def _total_of_answers(b, filled, isna, domain):
    """``found`` of :func:`_linear_of` where ``b`` (never missing) is a whole-weight sum of
    numbers some of which are missing, each missing one counting as 0 (a survey's score of
    its items; drafted ``"missing": 0``), or None. The numbers with missing values are
    tried first, then every number (a total of the items, not of a subtotal and the rest:
    the GSS's ``sumnat`` of its eighteen items, ``sumnatsoc`` of ten of them); the sources
    of other totals may be its own; ``filled`` holds the numbers, missing values as 0."""
    others = [c for c in filled if c != b and "derived" not in domain[c]]
    gaps = [c for c in others if isna[c].any()]
    for names in (gaps, others) if gaps else ():
        found = _linear_of(filled[b], {c: filled[c] for c in names}, ~isna[b], few=True)
        if found is not None and "sum" in found[0] and set(found[0]["of"]) & set(gaps):
            return {**found[0], "missing": 0}, found[1], found[2]
    return None


def _one_source_kept(b, a, weight, constant, values, isna, names):
    """Whether ``b = weight a + constant`` is drafted (see :func:`draft_linear`)."""
    if np.unique(values[b][~isna[b]]).size < ONE_SOURCE_VALUES:
        return False  # a few values: a map's, if any (a line fits 5 points to +-0.5)
    # how far one step of a moves b, in b's steps (b exact: as far as need be)
    step = last_decimal(values[b])
    landed = float(abs(weight)) * last_decimal(values[a]) / step if step else np.inf
    if landed < MIN_LANDED:
        return False  # b a rounding of a (an hour of a time): a line fits it to +-0.5
    if step and (constant / Fraction(step).limit_denominator(10**MAX_DECIMALS)
                 ).denominator != 1:
        return False  # floor(x / 10) is x / 10 - 0.45 to +-0.5: b's own steps only
    # b = w a and a = b / w may both hold to the rows' decimals (charges to the cent at
    # 0.27 a minute, minutes in tenths): a is the source if its steps land on b's, so
    # that the synthetic rows hold both as the real ones do; on a tie the later column
    # is derived
    return not ((landed < 1 or landed == 1 and names.index(a) > names.index(b))
                and _linear_of(values[a], {b: values[b]}, ~isna[b]) is not None)


def _linear_of(y, candidates, present, few=False):
    """``(derived spec, weights, constant)`` of ``y`` as a linear relation of
    ``candidates`` (see :func:`draft_linear`), or None; a plain sum of two or three
    only with ``few`` (:func:`sum_of` finds the others)."""
    rows = np.flatnonzero(present)
    names = [c for c in candidates if rows.size and np.ptp(candidates[c][rows]) > 0]
    if not names or len(rows) < max(30, ROWS_PER_TERM * (len(names) + 1)):
        return None
    head = rows[:max(HEAD_ROWS, ROWS_PER_TERM * (len(names) + 1))]
    tolerance = 0.5 * last_decimal(y) + 1e-9 * max(1.0, float(np.max(np.abs(y[rows]))))

    def fit(terms, at):
        """Least squares' weights and constant, and whether they miss no row of ``at`` by
        more than SCREEN_SLACK tolerances (least squares is not the smallest largest miss:
        a rate rounded to the cent misses by half a cent, its fitted rate by a hair more;
        the nice weights below are held to the tolerance itself)."""
        design = np.column_stack([candidates[c][at] for c in terms] + [np.ones(len(at))])
        coef = np.linalg.lstsq(design, y[at], rcond=None)[0]
        return coef, bool(np.all(np.abs(design @ coef - y[at]) <= SCREEN_SLACK * tolerance))

    coef, exact = fit(names, head)
    if not exact:
        return None
    scale = [abs(w) * np.std(candidates[c][head]) for c, w in zip(names, coef)]
    terms = list(names)
    for c in [names[i] for i in np.argsort(scale)]:
        if len(terms) > 1 and fit([t for t in terms if t != c], head)[1]:
            terms.remove(c)
    coef = fit(terms, head)[0]
    if len(terms) > 1 and any(w <= 0 for w in coef[:-1]):
        return None  # a part, not the total (hits are total bases less ...)
    nice = next((n for n in _nice_weights(coef) if all(w != 0 for w in n[:-1])
                 and _holds(n, terms, candidates, y, rows, tolerance)), None)
    if nice is None:
        return None
    weights, constant = nice[:-1], nice[-1]
    whole = constant == 0 and all(w.denominator == 1 for w in weights)
    if whole and 2 <= len(terms) <= 3 and not few:
        return None  # a plain sum of two or three: sum_of's
    if whole and len(terms) > 1:
        return {"of": terms, "sum": [int(w) for w in weights]}, weights, constant
    if not all(quoted(c) for c in terms):
        return None  # a formula names its columns by text, without backticks
    return {"of": terms, "expression": _linear_text(terms, weights, constant)}, weights, constant


def _holds(nice, terms, candidates, y, rows, tolerance):
    total = sum(float(w) * candidates[c][rows] for c, w in zip(terms, nice[:-1])) \
        + float(nice[-1])
    return np.sum(np.abs(total - y[rows]) > tolerance) <= MAX_OFF_SHARE * len(rows)


def _nice_weights(coef):
    """Candidate fractions near ``coef``: small denominators, then short decimals."""
    yield [Fraction(float(w)).limit_denominator(MAX_DENOMINATOR) for w in coef]
    for places in range(1, MAX_WEIGHT_DECIMALS + 1):
        yield [Fraction(round(float(w), places)).limit_denominator(10**places) for w in coef]


def _linear_text(terms, weights, constant):
    """The formula ``w_1 a_1 + ... + c`` as an expression's text (names in backticks)."""
    parts = []
    for name, w in [*zip(terms, weights), (None, constant)]:
        if w == 0:
            continue
        size = abs(w)
        if name is None:
            text = str(size.numerator)
        else:
            text = quoted(name) if size.numerator == 1 else f"{size.numerator} * {quoted(name)}"
        if size.denominator != 1:
            text += f" / {size.denominator}"
        if parts:
            parts.append(f"{'-' if w < 0 else '+'} {text}")
        else:
            parts.append(f"-{text}" if w < 0 else text)
    return " ".join(parts)
