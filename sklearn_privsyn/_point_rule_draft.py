"""Drafting a value found only at a number's point: no credit card, no card expenditure.

:func:`~sklearn_privsyn.domain_draft.draft_domain` calls :func:`draft_at_points`
after the other value rules: for a listed column ``b`` (never missing) and a
binned number ``a`` with drafted ``"points"`` that no rule of either names yet,
``b == v`` found only where ``a`` is exactly one of its points ``p`` becomes
``{"value": v, "column": a, "between": [p, p]}`` in ``b``'s ``"only_when"``. AER's
``CreditCard``: the 296 applicants without a card all have an expenditure of 0,
and 2% of the card holders spend 0 too, so the rule holds one way only;
modelled, 78% of the synthetic applicants without a card spent up to 2,700 a
month. The ranges of :func:`~sklearn_privsyn.value_rule_drafts.draft_only_when` leave
such a value out (a range of one value is narrower than any they take), and a
value tied to a range both ways (:func:`~sklearn_privsyn.value_rule_drafts.draft_exactly_between`)
is drafted first. Where the point holds the value's rows alone, the rule holds both ways
and is drafted in ``b``'s ``"exactly_when"``: Boston's tracts on radial highway 24 (the
city) all pay a tax rate of 666, and no other tract does; drafted one way only, 5% of
the synthetic tracts at epsilon 1 (13% on a seed) paid 666 off highway 24. Read from the
data, like the rest of a draft.
"""

import itertools

import numpy as np

from ._number_spec import float_values
from .order_rule_drafts import MAX_EXCEPTION_SHARE, beyond_chance, exact_breaks
from .value_rule_drafts import MIN_VALUE_ROWS, MIN_VALUE_SHARE, listed_value
from .value_rules import json_value, rule_entries

__all__ = ["draft_at_points", "drafted_points"]


def draft_at_points(X, domain, mark):
    """Add ``"between": [p, p]`` rules (marked ``mark``) of :func:`drafted_points`.

    A rule that holds both ways goes to ``"exactly_when"``, the others to ``"only_when"``.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"card": ["no"] * 300 + ["yes"] * 700,
    ...                   "spent": [0.0] * 320 + list(range(1, 681))})
    >>> domain = {"card": {"values": ["no", "yes"]},
    ...           "spent": {"bounds": [0, 680], "points": [0]}}
    >>> draft_at_points(X, domain, "read_from_data")
    >>> domain["card"]["only_when"]
    {'value': 'no', 'column': 'spent', 'between': [0, 0]}
    >>> X["spent"] = [0.0] * 300 + list(range(1, 701))  # no card holder spends 0
    >>> del domain["card"]["only_when"]
    >>> draft_at_points(X, domain, "read_from_data")
    >>> domain["card"]["exactly_when"]
    {'value': 'no', 'column': 'spent', 'between': [0, 0]}
    """
    named = {(b, r["column"]) for b, e in domain.items() for key in ("only_when", "exactly_when")
             for r in rule_entries(e.get(key))}
    listed = [c for c, e in domain.items() if "values" in e and not X[c].isna().any()]
    numbers = [c for c, e in domain.items() if "bounds" in e and e.get("points")]
    for b, a in itertools.product(listed, numbers):
        if b == a or (b, a) in named or (a, b) in named:
            continue
        known = set(domain[b]["values"])
        for v, p, exactly in drafted_points(X[b], X[a], domain[a]["points"]):
            if json_value(v) in known:
                key = "exactly_when" if exactly else "only_when"
                rules = rule_entries(domain[b].get(key)) + [
                    {"value": listed_value(v, domain[b]), "column": a, "between": [p, p]}]
                domain[b].update({key: rules[0] if len(rules) == 1 else rules, mark: True})


def drafted_points(left, right, points):
    """``(v, p, exactly)``: each value ``v`` of ``left`` found only where ``right == p``, a point.

    Drafted for ``v`` held by ``MIN_VALUE_SHARE`` of the rows and beside
    ``MIN_VALUE_ROWS`` present values of ``right``, all but
    ``MAX_EXCEPTION_SHARE`` of them at ``p``, when a table with the two
    independent would break it on ``EXCEPTION_EVIDENCE`` times as many rows as
    the data do and on ``MIN_BROKEN_ROWS`` (a missing ``right`` keeps the rule,
    as it does a range). ``exactly`` when the rule holds both ways: all but
    ``MAX_EXCEPTION_SHARE`` of the rows with a present ``right`` are at ``p``
    exactly when they hold ``v``, and an independent table would break that on
    ``EXCEPTION_EVIDENCE`` times as many rows.
    """
    x = float_values(right)
    present = ~np.isnan(x)
    found = []
    for v, share in left.value_counts(normalize=True).items():
        if share < MIN_VALUE_SHARE:
            break
        held = (left == v).to_numpy()[present]
        beside = x[present][held]
        if beside.size < MIN_VALUE_ROWS:
            continue
        for p in points:
            exceptions = int(np.sum(beside != p))
            if exceptions > MAX_EXCEPTION_SHARE * beside.size:
                continue
            at_p = x[present] == p
            if beyond_chance(beside.size * (1.0 - np.mean(at_p)), exceptions):
                found.append((v, p, _holds_both_ways(held, at_p)))
                break
    return found


def _holds_both_ways(held, at_p):
    """Whether the rows holding a value (``held``) are those at a point (``at_p``), all but
    ``MAX_EXCEPTION_SHARE`` of them, beyond what an independent table would give."""
    exceptions = int(np.sum(held != at_p))
    broken = exact_breaks(held.size, np.mean(held), np.mean(at_p))
    return bool(exceptions <= MAX_EXCEPTION_SHARE * held.size and beyond_chance(broken, exceptions))
