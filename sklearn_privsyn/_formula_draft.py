"""Drafting a number that follows a known formula of others: a loan's installment.

``privsyn domain`` drafts ``{"derived": {"of": [amount, rate, term], "expression":
...}}`` (:mod:`sklearn_privsyn.expressions`) for a binned number that is, on all
but ``MAX_OFF_SHARE`` of its rows and to one unit of its last decimal, the
payment of an annuity: ``P r / (1 - (1 + r) ** -n)`` for a principal ``P`` (a
number above 0), a rate per period ``r`` (a number above 0: a percentage a year
over 1,200, or a fraction a year over 12, when every value is at most 1) and
``n`` periods (whole numbers from 1 to ``MAX_PERIODS``), missing exactly where
a source is. Modelled, such a column is drawn inside its bins beside an amount,
a rate and a term it does not fit (a $10,000 loan at 12.61% over 36 months paid
$580 a month); derived, every synthetic row computes it. A relation found on
every row but a few is no accident; like the rest of a draft it is read from
the data and marked so.
"""

import itertools

import numpy as np

from ._coders import is_number_dtype
from ._number_spec import float_values
from ._sum_draft import MAX_OFF_SHARE, last_decimal
from .expressions import quoted

__all__ = ["MAX_PERIODS", "MIN_ROWS", "annuity_text", "draft_annuities"]

#: Most periods of a term (months: a hundred years).
MAX_PERIODS = 1200
#: Fewest rows with every column present for a formula to be drafted.
MIN_ROWS = 100


def annuity_text(principal, rate, periods, per_period):
    """The annuity's formula as an expression's text (names between backticks).

    Examples
    --------
    >>> annuity_text("amount", "rate", "term", 1200)
    '`amount` * (`rate` / 1200) / (1 - (1 + `rate` / 1200) ** -`term`)'
    """
    r = f"{quoted(rate)} / {per_period}"
    return f"{quoted(principal)} * ({r}) / (1 - (1 + {r}) ** -{quoted(periods)})"


def _annuity(principal, rate, periods):
    with np.errstate(all="ignore"):
        return principal * rate / (1.0 - (1.0 + rate) ** -periods)


def draft_annuities(X, domain, mark):
    """Draft as derived each binned number that is the annuity of three others (see above).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"amount": rng.integers(10, 400, 300) * 100,
    ...                   "rate": rng.integers(500, 2500, 300) / 100,
    ...                   "term": rng.choice([36, 60], 300)})
    >>> r = X["rate"] / 1200
    >>> X["installment"] = (X["amount"] * r / (1 - (1 + r) ** -X["term"])).round(2)
    >>> domain = {c: {"bounds": [0, 1e5]} for c in X}
    >>> draft_annuities(X, domain, "read")
    >>> domain["installment"]["derived"]["of"]
    ['amount', 'rate', 'term']
    """
    values = {c: float_values(X[c]) for c in X.columns if is_number_dtype(X[c].dtype)
              and ("values" in domain[c] or "bounds" in domain[c] or "derived" in domain[c])}
    present = {c: ~np.isnan(v) for c, v in values.items()}

    def where(test):
        return [c for c, v in values.items() if present[c].any() and test(v[present[c]])]

    principals = where(lambda v: np.all(v > 0))
    rates = where(lambda v: np.all((v > 0) & (v <= 100)))
    periods = where(lambda v: np.all((v >= 1) & (v <= MAX_PERIODS) & (v == np.round(v))))
    targets = [c for c in values if "bounds" in domain[c] and not domain[c].get("clock")
               and quoted(c)]
    found = _annuities_of(targets, values, present, principals, rates, periods)
    for y, spec in found.items():
        domain[y] = {"derived": spec, mark: True}


def _annuities_of(targets, values, present, principals, rates, periods):
    """``{target: derived spec}`` of the targets that are an annuity of candidate columns:
    for each target the first candidates (in the order of the lists) that fit it.

    Each annuity is computed once and compared with every target still open.
    """
    tolerance = {y: last_decimal(v) + 1e-9 * max(1.0, float(np.nanmax(np.abs(v))))
                 for y in targets for v in [values[y]]}
    found = {}
    for names in itertools.product(principals, rates, periods):
        left = [y for y in targets if y not in found and y not in names]
        if not left or len(set(names)) < 3 or not all(map(quoted, names)):
            continue
        p, r, n = names
        both = present[p] & present[r] & present[n]
        left = [y for y in left if np.array_equal(both, present[y])]
        if not left or both.sum() < MIN_ROWS:
            continue
        rate = values[r][both]
        for per_period in (1200, 12) if rate.max() <= 1 else (1200,):
            paid = _annuity(values[p][both], rate / per_period, values[n][both])
            for y in left:
                off = ~(np.abs(paid - values[y][both]) <= tolerance[y])
                if y not in found and off.sum() <= MAX_OFF_SHARE * both.sum():
                    found[y] = {"of": list(names),
                                "expression": annuity_text(p, r, n, per_period)}
    return found
