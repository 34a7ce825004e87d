"""Warnings and errors raised by sklearn-privsyn."""


class PrivacyLeakWarning(RuntimeWarning):
    """Something was learned from the private data outside the privacy budget.

    Raised, for example, when a column's categories or numeric bounds are read
    from the data because no public ``domain`` was given for it. The privacy
    guarantee then no longer covers that information; give the domain
    explicitly to remove the leak and the warning.
    """


class SolverWarning(UserWarning):
    """The optimisation oracle timed out, failed or returned a bad answer.

    Oracle faults change accuracy only, never the privacy guarantee: the
    oracle never sees the private data.
    """


class UncoveredColumnWarning(UserWarning):
    """A column is in no marginal the synthesizer measured: its synthetic values are noise.

    A fit learns what its workload asks: a column that an explicit ``marginals=``
    list leaves out (or that marginals drawn at random miss) is never measured,
    and ``sample`` gives it values that say nothing of the data (uniform over
    its domain, or as the synthesizer's oracle left them). Add its 1-way marginal (or a marginal with the columns it goes
    with) to the workload. The command line's default workload covers every
    column.
    """


class BudgetExceededError(ValueError):
    """A mechanism would spend more privacy budget than remains."""
