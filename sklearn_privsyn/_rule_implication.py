"""Drafting: an implication that rules already drafted imply, through a third column.

:func:`~sklearn_privsyn.value_rule_drafts.draft_only_when` asks :func:`implied_by_ties`
before it drafts ``b == v only when a in S``: where ``b == v`` holds a column
``c`` to some of its values and ``a``'s ``exactly_when`` ties one value of ``a``
to values of ``c``, the implication says nothing more, and a reader (and the
sampler) would carry one rule for every pair of columns that share ``c``.
"""

__all__ = ["implied_by_ties"]


def implied_by_ties(rule, b, ties, domain, drafted):
    """Whether ``b == v only when a in S`` follows from rules already drafted, through a third
    column ``c``: ``b == v`` holds ``c`` to some of its values (``b``'s ``exactly_when``, or
    an ``only_when`` of ``b`` in ``drafted``), and ``a``'s ``exactly_when`` ties one value
    of ``a`` to values of ``c``; ``ties`` holds the ``exactly_when`` rules of the domain as
    ``{column: (value, c, values)}``. Telco's six internet services are each "No internet
    service" exactly when the internet service is "No"; that any one is "No" only when
    another is not "No internet service" (141 rules on modeldata's wa_churn) says nothing
    more.
    """
    v, a, given = rule["value"], rule["column"], set(rule["values"])
    if a not in ties:
        return False
    holds = []  # (c, the values c may hold where b == v)
    if b in ties:
        vb, c, values = ties[b]
        holds.append((c, values if v == vb else set(domain[c]["values"]) - values))
    holds += [(r["column"], set(r["values"])) for r in drafted if r["value"] == v]
    va, c_a, values_a = ties[a]
    for c, values in holds:
        if c != c_a:
            continue
        if values <= values_a and va in given:  # a == va on every such row
            return True
        if not values & values_a and set(domain[a]["values"]) - {va} <= given:  # a != va
            return True
    return False

