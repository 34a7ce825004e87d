"""Equalities under a condition: a number equal to another on the rows holding given values.

A loan fully paid has repaid its whole principal: on openintro's loans the
principal repaid equals the amount on every row whose status is ``"Fully
Paid"`` (447 of 10,000) and on none of the others. Modelled, the principal is
drawn inside its bin, and every synthetic fully paid loan kept a balance (the
amount less the principal; $15,900 on average), a row a loan officer calls
wrong at first sight.

That a column equals another where a third holds one of a few values is
public knowledge: declared (``equal_when=`` in
:class:`~sklearn_privsyn.QueryWorkload`, ``"equal_when"`` in a domain file),
decoding sets the column to the other on those rows, where the other's
value is one the column can hold (among its listed values, within its
bounds; a row of the model that breaks the rule otherwise keeps its value),
before the derived columns are computed (the balance is then 0) and before
the decimals are rounded. It reads nothing but
the fitted model's rows and the declaration: post-processing, no budget. The
rule also joins the rules every ``sample(n)`` keeps, so that where the model
draws groups of columns apart, the three columns are drawn together.

A declaration is ``{column: {"column": other, "when": c, "values": [v, ...]}}``
(or a list of these); the three columns are modelled (not derived), the two
numbers numeric.

Examples
--------
>>> import pandas as pd
>>> from sklearn_privsyn.equal_when import parse_equal_when
>>> rule, = parse_equal_when({"principal": {"column": "amount", "when": "status",
...                                         "values": ["Fully Paid"]}},
...                          ["amount", "principal", "status"])
>>> str(rule)
"principal == amount when status in ['Fully Paid']"
>>> rows = pd.DataFrame({"amount": [1000, 2000, 3000], "principal": [400.5, 2000.0, 10.0],
...                      "status": ["Current", "Fully Paid", "Fully Paid"]})
>>> rule.kept(rows).tolist()
[True, True, False]
>>> rule.apply(rows).tolist()
[400.5, 2000.0, 3000.0]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._number_spec import float_values
from .order_rule_drafts import MAX_EXCEPTION_SHARE, MIN_BROKEN_ROWS, drafted_numbers
from .order_rules import declarations
from .value_rules import check_listed

__all__ = ["EqualWhen", "check_equal_when", "draft_equal_when", "parse_equal_when"]

#: draft_equal_when takes a condition's value only where it is held by at least this many
#: rows holding both numbers, and a condition only where its values hold at least
#: MIN_CONDITION_SHARE of the rows.
MIN_VALUE_ROWS = 5
MIN_CONDITION_SHARE = 0.01
#: ... and only where the two numbers are equal on fewer than this share of the other rows
#: (otherwise the two are nearly the same column, which a condition does not describe).
MAX_OTHER_TIE_SHARE = 0.5


@dataclass(frozen=True)
class EqualWhen:
    """``column == other`` on the rows where ``when`` is one of ``values``."""

    column: object
    other: object
    when: object
    values: tuple

    #: The declaration's name.
    key = "equal_when"

    @property
    def columns(self):
        """The columns the rule reads."""
        return (self.column, self.other, self.when)

    @property
    def numbers(self):
        """The numbers it compares (their values keep their shares when rows are kept)."""
        return (self.column, self.other)

    def __str__(self):
        return f"{self.column} == {self.other} when {self.when} in {list(self.values)!r}"

    def _held(self, frame):
        """Rows where the rule applies: the condition holds and ``other`` is present."""
        return (frame[self.when].isin(list(self.values)).to_numpy()
                & frame[self.other].notna().to_numpy())

    def kept(self, frame):
        """Whether each row of ``frame`` keeps the rule (True where ``column`` is missing)."""
        left, right = float_values(frame[self.column]), float_values(frame[self.other])
        return ~self._held(frame) | np.isnan(left) | (left == right)

    def apply(self, frame, holds=None):
        """The column of ``frame`` with ``other``'s values on the rows the rule holds on.

        ``holds`` (numbers -> mask), when given, says which values the column can
        hold (its listed values, its bounds): a row whose ``other`` is none of them
        keeps its own value, breaking the rule rather than the column's domain.
        """
        target = frame[self.column]
        held = self._held(frame) & target.notna().to_numpy()
        copied = float_values(frame[self.other])
        if holds is not None:
            held &= holds(np.where(held, copied, np.nan))
        if not held.any():
            return target
        values = float_values(target).copy()
        values[held] = copied[held]
        if target.dtype.kind in "iu":
            return pd.Series(np.round(values).astype(target.dtype), index=target.index,
                             name=target.name)
        return pd.Series(values, index=target.index, name=target.name).astype(target.dtype)


def parse_equal_when(spec, columns):
    """The declared rules (``{column: {"column": other, "when": c, "values": [...]}}``).

    Raises ``ValueError`` naming the column: not a column of the table, a
    declaration without its three keys, or a column equal to itself or
    conditioned on one of the two numbers.
    """
    rules = []
    for col, rule, where in declarations(spec, columns, "equal_when", "rule"):
        if not isinstance(rule, Mapping) or set(rule) != {"column", "when", "values"}:
            raise ValueError(f"{where} must be {{\"column\": other, \"when\": column, "
                             f"\"values\": [...]}}; got {rule!r}.")
        other, when, values = rule["column"], rule["when"], rule["values"]
        for name in (other, when):
            if name not in list(columns):
                raise ValueError(f"{where}: {name!r} is not a column of the table.")
        if other == col:
            raise ValueError(f"{where}: a column cannot be equal to itself.")
        if when in (col, other):
            raise ValueError(f"{where}: the condition {when!r} must be a third column.")
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"{where}: \"values\" must be a non-empty list; got {values!r}.")
        rules.append(EqualWhen(col, other, when, tuple(values)))
    return tuple(rules)


def check_equal_when(rules, derived, categories):
    """ValueError naming the column when a rule reads a derived column, or names a value
    that is not among a listed condition's values."""
    for rule in rules:
        for col in rule.columns:
            if col in derived:
                raise ValueError(f"equal_when[{rule.column!r}]: column {col!r} is derived; "
                                 "the rule's three columns must be modelled.")
        check_listed(rule, rule.when, rule.values, categories)


def draft_equal_when(X, domain, mark):
    """Add ``"equal_when"`` (marked ``mark``) where a number equals another under a condition.

    For two drafted numbers ``a`` and ``b`` (bounds, or listed numbers; not
    derived, not clocks) and a listed column ``c`` (not derived): ``V`` the
    values of ``c`` held by at least ``MIN_VALUE_ROWS`` rows holding both
    numbers, on all of which (but ``MAX_EXCEPTION_SHARE``) ``a == b``. Drafted
    when ``V`` is not every value of ``c``, its rows are at least
    ``MIN_CONDITION_SHARE`` of the table, the numbers tie on fewer than
    ``MAX_OTHER_TIE_SHARE`` of the other rows, and an independent pairing of
    the two numbers would break the tie on at least ``MIN_BROKEN_ROWS`` of
    ``V``'s rows (a tie of chance is no rule), and the tie takes two values or more
    on them (houses without a basement have 0 baths and 0 square feet of it: a
    value each, not one number equal to the other). Of several conditions, the one
    whose values hold the most rows. The rule goes on ``a`` when ``a`` is at
    most ``b`` (``"at_most"``: the principal repaid, within the amount), else
    on the later of the two. Read from the data: not covered by the privacy
    guarantee until reviewed.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> amount = rng.integers(10, 400, 1000) * 100
    >>> paid = rng.random(1000) < 0.2
    >>> X = pd.DataFrame({"amount": amount, "status": np.where(paid, "Paid", "Current"),
    ...                   "principal": np.where(paid, amount, np.round(amount * 0.3, 2))})
    >>> domain = {"amount": {"bounds": [1000, 40000]}, "status": {"values": ["Current", "Paid"]},
    ...           "principal": {"bounds": [0, 40000], "at_most": "amount"}}
    >>> draft_equal_when(X, domain, "read_from_data")
    >>> domain["principal"]["equal_when"]
    {'column': 'amount', 'when': 'status', 'values': ['Paid']}
    """
    numbers = [c for c in drafted_numbers(domain) if not domain[c].get("clock")]
    listed = [c for c, e in domain.items() if "values" in e and len(e["values"]) >= 2]
    values = {c: float_values(X[c]) for c in numbers}
    codes = {c: pd.factorize(X[c], sort=True) for c in listed}  # missing: -1
    for a, b in itertools.combinations(numbers, 2):
        both = ~(np.isnan(values[a]) | np.isnan(values[b]))
        tie = both & (values[a] == values[b])
        if tie.sum() < MIN_BROKEN_ROWS:
            continue
        chance = _chance_tie(values[a][both], values[b][both])
        found = []
        for c in listed:
            if c in (a, b):
                continue
            code, uniques = codes[c]
            held, n_present = _tied_codes(code, both, tie, len(uniques))
            rows = both & np.isin(code, held)
            others = both & ~rows
            if (not held.size or held.size == n_present
                    or np.unique(values[a][rows & tie]).size < 2  # one value: no equality
                    or rows.sum() < MIN_CONDITION_SHARE * len(X)
                    or tie[others].sum() >= MAX_OTHER_TIE_SHARE * others.sum()
                    or rows.sum() * (1.0 - chance) < MIN_BROKEN_ROWS):
                continue
            found.append((-int(rows.sum()), listed.index(c), pd.Index(uniques)[held].tolist()))
        if found:
            _, i, held = min(found, key=lambda f: f[:2])
            c = listed[i]
            col, other = (a, b) if _at_most(domain[a], b) else (b, a)
            domain[col].update({"equal_when": {"column": other, "when": c,
                                               "values": held}, mark: True})


def _at_most(entry, column):
    """Whether a drafted entry is declared at most ``column`` (plainly)."""
    bounds = entry.get("at_most", [])
    return column in (bounds if isinstance(bounds, list) else [bounds])


def _tied_codes(code, both, tie, n_values):
    """The codes of the condition's values on whose rows holding both numbers they tie (but
    ``MAX_EXCEPTION_SHARE``), each held by ``MIN_VALUE_ROWS`` such rows at least, and the
    number of its values present on those rows."""
    inside = both & (code >= 0)
    count = np.bincount(code[inside], minlength=n_values)
    tied = np.bincount(code[inside], weights=tie[inside], minlength=n_values)
    allowed = np.floor(MAX_EXCEPTION_SHARE * count)
    return (np.flatnonzero((count >= MIN_VALUE_ROWS) & (count - tied <= allowed)),
            int(np.count_nonzero(count)))


def _chance_tie(x, y):
    """The probability that ``x`` and ``y`` paired at random are equal."""
    xs, xc = np.unique(x, return_counts=True)
    ys, yc = np.unique(y, return_counts=True)
    common, xi, yi = np.intersect1d(xs, ys, return_indices=True)
    return float(np.sum(xc[xi] * yc[yi])) / (len(x) * len(y))
