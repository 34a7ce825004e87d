"""A product model's rows with its value ties held: the pool from which rules are kept.

A model that draws every column independently (a product of 1-way marginals: a
thin budget, a small table) breaks a declared tie ``b == v exactly when a in
S`` on most rows, and a row keeping several ties at once is as rare as the
product of their shares: a customer with no internet service whose six
internet services each read "no internet service" is about one draw in 40,000 of
such a model of modeldata's ``wa_churn``, and one in 200,000 once the monthly
price must be a phone line's too. The pool of rows that keep the rules
(:func:`~sklearn_privsyn.order_rules.sample_keeping_rules`) may then hold none
of them, and the rows cannot get the model's share of the value (no internet:
22% of the customers, 0-11% of the synthetic ones). Drawn here instead: ``a``
as the model draws it, then ``b`` at ``v`` where ``a`` is in ``S`` and, where
it is not, drawn again from the model's own draws of ``b`` other than ``v``.
For a product that is the model conditioned on each tie given ``a``, whose
shares it keeps. It reads the fitted model and the declared rules only:
post-processing, no budget.
"""

import numpy as np

from .value_rules import same_value

__all__ = ["code_ties", "hold_ties"]


def code_ties(rules, columns, categories):
    """``[(b, v, a, S)]``, as code indices, of the ties between two listed modelled columns.

    ``rules`` are value rules and others (only the value ties are read:
    ``exactly`` with ``values``, neither a range nor a missing value);
    ``columns`` the modelled columns in code order; ``categories`` each
    listed column's values in code order. A tie is read in declared order;
    one whose value or given values are not listed is left to the rules'
    rejection.

    Examples
    --------
    >>> from sklearn_privsyn.value_rules import parse_exactly_when
    >>> rules = parse_exactly_when({"tv": {"value": "none", "column": "internet",
    ...                                   "values": ["No"]}}, ["internet", "tv"])
    >>> code_ties(rules, ["internet", "tv"], {"internet": ["DSL", "No"],
    ...                                      "tv": ["none", "yes", "no"]})
    [(1, 0, 0, [1])]
    """
    columns = list(columns)
    ties = []
    for rule in rules:
        if not (getattr(rule, "exactly", False) and getattr(rule, "values", ())
                and rule.between is None and not rule.missing):
            continue
        if not {rule.column, rule.given} <= set(categories) & set(columns):
            continue
        at_v = [i for i, w in enumerate(categories[rule.column]) if same_value(w, rule.value)]
        given = [i for i, w in enumerate(categories[rule.given])
                 if any(same_value(w, u) for u in rule.values)]
        if len(at_v) == 1 and given:
            ties.append((columns.index(rule.column), at_v[0], columns.index(rule.given), given))
    return ties


def hold_ties(codes, ties, rng):
    """``codes`` (rows of a product model) with each tie of :func:`code_ties` held.

    For a tie ``(b, v, a, S)`` in turn: ``b`` is set to ``v`` where ``a`` is in
    ``S``, and where it is not and ``b`` is ``v``, ``b`` is drawn again among
    the rows' own codes of ``b`` other than ``v`` (the model's shares of
    ``b`` without ``v``). Returns a new array.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[1, 2], [1, 0], [0, 0], [0, 2]])
    >>> hold_ties(codes, [(1, 0, 0, [1])], np.random.default_rng(0)).tolist()
    [[1, 0], [1, 0], [0, 2], [0, 2]]
    """
    codes = np.array(codes, copy=True)
    for b, v, a, given in ties:
        own = codes[:, b].copy()
        inside = np.isin(codes[:, a], given)
        codes[inside, b] = v
        wrong = ~inside & (codes[:, b] == v)
        others = own[own != v]
        if wrong.any() and others.size:
            codes[wrong, b] = rng.choice(others, int(wrong.sum()))
    return codes
