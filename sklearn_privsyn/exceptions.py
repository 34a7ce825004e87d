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


class BudgetExceededError(ValueError):
    """A mechanism would spend more privacy budget than remains."""
