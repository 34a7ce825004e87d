"""Rules a fitted model's rows cannot keep together: which to leave out, and a warning.

Drafted rules each hold on the real rows, and together too, but a model fitted
on a thin budget may never draw a row that keeps them all: on a panel of states
whose every count follows the population (deaths by age, populations by age,
miles driven), ``privsyn domain`` drafts a ratio between nearly every two
counts, and a model that draws the counts apart meets 159 of them together on
no row of two million. ``sample()`` then has no row to give. Leaving rules out
is post-processing of public declarations (no budget, no data): it changes the
rows, never the guarantee, and the warning names every rule left out.

:func:`keepable_rules` leaves rules out greedily, on one batch of the model's
rows: each time the rule whose absence adds the most rows keeping the rest (the
rows breaking it alone), until the batch keeps enough of them for the pool.
"""

import warnings

import numpy as np

__all__ = ["keepable_rules"]


def keepable_rules(rules, frame, min_kept):
    """The rules kept and those left out so that ``min_kept`` rows of ``frame`` keep all kept.

    Parameters
    ----------
    rules : sequence of OrderRule or ValueRule
        Each with ``kept(frame)``.
    frame : DataFrame
        Rows drawn from the fitted model.
    min_kept : int
        Rows of ``frame`` that must keep every rule kept.

    Returns
    -------
    kept_rules, left_out : lists of rules, in the order of ``rules``.

    Warns
    -----
    UserWarning
        When a rule is left out, naming each.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.order_rules import OrderRule
    >>> frame = pd.DataFrame({"a": [1, 2, 3, 4], "b": [2, 1, 4, 3], "c": [9, 9, 9, 9]})
    >>> rules = [OrderRule("a", "b"), OrderRule("a", "c")]
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     kept, left_out = keepable_rules(rules, frame, 3)
    >>> [str(r) for r in kept], [str(r) for r in left_out]
    (['a <= c'], ['a <= b'])
    """
    rules = list(rules)
    breaks = np.column_stack([~np.asarray(r.kept(frame), bool) for r in rules])
    times_broken = breaks.sum(axis=0)
    active = np.ones(len(rules), dtype=bool)
    while active.any():
        broken = breaks[:, active].sum(axis=1)
        if np.sum(broken == 0) >= min_kept:
            break
        # rows that only this rule stops; ties go to the rule broken most often
        alone = breaks[broken == 1].sum(axis=0)
        score = np.where(active, alone * (len(frame) + 1) + times_broken, -1)
        active[int(np.argmax(score))] = False
    kept_rules = [r for r, a in zip(rules, active) if a]
    left_out = [r for r, a in zip(rules, active) if not a]
    if left_out:
        warnings.warn(
            f"The fitted model's rows cannot keep all {len(rules)} declared rules together "
            f"(too few of {len(frame):,} rows drawn keep them): {len(left_out)} left out, "
            f"and the synthetic rows may break them: {', '.join(map(str, left_out))}. "
            "Fewer rules in the domain (or more budget) keep them all.",
            UserWarning, stacklevel=4)
    return kept_rules, left_out
