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

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np

from ._number_spec import float_values
from .order_rules import declarations

__all__ = ["ValueRule", "check_declared_values", "check_listed", "parse_exactly_when",
           "parse_only_when", "json_value", "parse_value_rules", "rule_entries", "same_value"]

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


def rule_entries(declared):
    """A declaration's entries as a list (none, one, or a list of them)."""
    if declared is None:
        return []
    return list(declared) if isinstance(declared, (list, tuple)) else [declared]


def json_value(value):
    """A numpy scalar as the JSON value it is."""
    return value.item() if isinstance(value, np.generic) else value


def same_value(a, b):
    """Equal as listed values: ``1 == 1.0``, never ``True == 1``.

    Examples
    --------
    >>> same_value(1, 1.0), same_value(True, 1), same_value(np.bool_(True), True)
    (True, False, True)
    """
    return a == b and isinstance(a, (bool, np.bool_)) == isinstance(b, (bool, np.bool_))
