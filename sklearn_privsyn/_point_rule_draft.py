"""Drafting a value found only at a number's point: no credit card, no card expenditure.

:func:`~sklearn_privsyn.domain_draft.draft_domain` calls :func:`draft_at_points`
after the other value rules: for a listed column ``b`` (never missing) and a
binned number ``a`` with drafted ``"points"`` that no rule of either names yet,
``b == v`` found only where ``a`` is exactly one of its points ``p`` becomes
``{"value": v, "column": a, "between": [p, p]}`` in ``b``'s ``"only_when"``. AER's
``CreditCard``: the 296 applicants without a card all have an expenditure of 0,
and 2% of the card holders spend 0 too, so the rule holds one way only;
modelled, 78% of the synthetic applicants without a card spent up to 2,700 a
month. The ranges of :func:`~sklearn_privsyn.value_rules.draft_only_when` leave
such a value out (a range of one value is narrower than any they take), and a
value tied to a range both ways (:func:`~sklearn_privsyn.value_rules.draft_exactly_between`)
is drafted first. Read from the data, like the rest of a draft.
"""

import itertools

import numpy as np

from ._number_spec import float_values
from .order_rule_drafts import MAX_EXCEPTION_SHARE, beyond_chance
from .value_rules import MIN_VALUE_ROWS, MIN_VALUE_SHARE, json_value, rule_entries

__all__ = ["draft_at_points", "drafted_points"]


def draft_at_points(X, domain, mark):
    """Add ``"only_when"`` rules ``"between": [p, p]`` (marked ``mark``) of :func:`drafted_points`.

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
    """
    named = {(b, r["column"]) for b, e in domain.items() for key in ("only_when", "exactly_when")
             for r in rule_entries(e.get(key))}
    listed = [c for c, e in domain.items() if "values" in e and not X[c].isna().any()]
    numbers = [c for c, e in domain.items() if "bounds" in e and e.get("points")]
    for b, a in itertools.product(listed, numbers):
        if b == a or (b, a) in named or (a, b) in named:
            continue
        known = set(domain[b]["values"])
        for v, p in drafted_points(X[b], X[a], domain[a]["points"]):
            if json_value(v) in known:
                rules = rule_entries(domain[b].get("only_when")) + [
                    {"value": json_value(v), "column": a, "between": [p, p]}]
                domain[b].update({"only_when": rules[0] if len(rules) == 1 else rules,
                                  mark: True})


def drafted_points(left, right, points):
    """``(v, p)``: each value ``v`` of ``left`` found only where ``right == p``, a point.

    Drafted for ``v`` held by ``MIN_VALUE_SHARE`` of the rows and beside
    ``MIN_VALUE_ROWS`` present values of ``right``, all but
    ``MAX_EXCEPTION_SHARE`` of them at ``p``, when a table with the two
    independent would break it on ``EXCEPTION_EVIDENCE`` times as many rows as
    the data do and on ``MIN_BROKEN_ROWS`` (a missing ``right`` keeps the rule,
    as it does a range).
    """
    x = float_values(right)
    present = ~np.isnan(x)
    found = []
    for v, share in left.value_counts(normalize=True).items():
        if share < MIN_VALUE_SHARE:
            break
        beside = x[present & (left == v).to_numpy()]
        if beside.size < MIN_VALUE_ROWS:
            continue
        for p in points:
            exceptions = int(np.sum(beside != p))
            if exceptions > MAX_EXCEPTION_SHARE * beside.size:
                continue
            if beyond_chance(beside.size * (1.0 - np.mean(x[present] == p)), exceptions):
                found.append((v, p))
                break
    return found
