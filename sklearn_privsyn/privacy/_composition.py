"""Composition of zCDP charges, budget plans, and the ledger that refuses to overspend."""

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from ..exceptions import BudgetExceededError
from ._checks import check_count, check_real
from ._conversions import rho_to_epsilon

__all__ = ["LedgerEntry", "PrivacyLedger", "compose", "split_budget"]


def _exact_total(charges):
    """``sum(rho * count)`` in exact rational arithmetic (floats are dyadic rationals)."""
    return sum((Fraction(rho) * count for rho, count in charges), Fraction(0))


def _round_up(value):
    """The smallest float ``>= value`` (a rational)."""
    out = float(value)
    if Fraction(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def compose(charges):
    """Total zCDP of ``(rho, count)`` charges, ``sum(rho * count)``, rounded up.

    zCDP composes by addition. The sum is computed exactly (every float is a
    rational number) and rounded up to the next float, so it is never below
    the true total whatever the order or the number of charges, and, for a
    float ``budget``, ``compose(charges) <= budget`` holds exactly when the
    true total is within the budget. :class:`PrivacyLedger` adds its
    charges the same way.

    Parameters
    ----------
    charges : iterable of (float, int)
        Cost of one run and number of runs.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import compose
    >>> compose([(0.25, 2), (0.125, 4)])
    1.0
    >>> compose([(0.1 / 7, 7)]) > 0.1  # seven sevenths of 0.1 add up to more
    True
    """
    return _round_up(_exact_total(charges))


def split_budget(rho, counts, shares=None):
    """Per-run costs for parts of a plan whose total never exceeds ``rho``.

    Part ``i`` is a mechanism run ``counts[i]`` times at the same cost; it
    gets the share ``shares[i]`` of ``rho`` (equal shares by default), so
    its per-run cost is about ``rho * shares[i] / counts[i]``. The costs are
    then rounded down, together, until ``compose(zip(costs, counts)) <=
    rho``: their exact sum is within the budget, so the plan never asks the
    ledger for more than it holds, by any rounding. Turn a cost into a mechanism's
    parameter with :func:`exponential_mechanism_epsilon` or
    :func:`gaussian_sigma`, which round on the safe side too.

    Parameters
    ----------
    rho : float
        Budget to split, ``>= 0`` and finite.
    counts : sequence of int
        Runs of each part, each ``>= 1``.
    shares : sequence of float, default=None
        Non-negative weights of the parts (normalised to sum to one);
        ``None`` gives every part the same share.

    Returns
    -------
    costs : tuple of float
        One per-run cost per part.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import compose, split_budget
    >>> costs = split_budget(0.1, [3])  # three rounds of a tenth
    >>> costs[0] * 3 <= 0.1
    True
    >>> sel, meas = split_budget(0.1, [10, 10], shares=[0.3, 0.7])
    >>> compose([(sel, 10), (meas, 10)]) <= 0.1
    True
    """
    rho = check_real(rho, "rho", low=0.0)
    counts = [check_count(c) for c in counts]
    if not counts:
        raise ValueError("counts must name at least one part.")
    if shares is None:
        shares = [1.0] * len(counts)
    shares = [check_real(w, "shares", low=0.0) for w in shares]
    if len(shares) != len(counts):
        raise ValueError(
            f"shares has {len(shares)} entries but counts has {len(counts)}."
        )
    total_share = math.fsum(shares)
    if total_share <= 0.0:
        raise ValueError("shares must not all be zero.")
    costs = [rho * (w / total_share) / c for w, c in zip(shares, counts)]
    shave = 1.0
    while compose(zip(costs, counts)) > rho:
        # a few ulps at a time: the first pass is off by rounding only
        shave *= 1.0 - 4.0 * np.finfo(float).eps
        costs = [rho * (w / total_share) / c * shave for w, c in zip(shares, counts)]
    return tuple(costs)


class LedgerEntry(NamedTuple):
    """``count`` charges of ``rho`` each by the mechanism named ``mechanism``."""

    mechanism: str
    rho: float
    count: int


class PrivacyLedger:
    """Running total of zCDP spent, which refuses to overspend.

    Charges compose by addition (zCDP composition). Charges of the same
    ``rho`` by the same mechanism are aggregated into one :class:`LedgerEntry`;
    entries keep the order in which they first appeared.

    Parameters
    ----------
    rho_budget : float, default=np.inf
        Total zCDP budget, ``>= 0``; ``inf`` records without a limit.

    Notes
    -----
    A charge is refused, with nothing recorded, when the new total
    (:func:`compose` of every entry) would exceed ``rho_budget``, by any
    amount: there is no slack for rounding. Plans that split the budget
    into equal parts should use :func:`split_budget`, whose parts fit by
    construction (``T`` charges of ``rho_budget / T`` can sum to a few ulps
    more than the budget, and are refused). :attr:`rho_spent` and
    :meth:`epsilon` report the amount actually charged, never the budget.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import PrivacyLedger
    >>> ledger = PrivacyLedger(rho_budget=0.1)
    >>> for _ in range(10):
    ...     ledger.charge("exponential", 0.01)
    >>> ledger.entries
    (LedgerEntry(mechanism='exponential', rho=0.01, count=10),)
    >>> ledger.can_afford(1e-6)
    False
    >>> ledger.rho_spent
    0.1
    >>> round(ledger.epsilon(1e-6), 4)
    2.1419
    """

    def __init__(self, rho_budget=np.inf):
        self._rho_budget = check_real(rho_budget, "rho_budget", low=0.0,
                                       allow_inf=True)
        self._counts = {}  # (mechanism, rho) -> count, insertion-ordered
        self._exact_spent = Fraction(0)  # the true total; rho_spent rounds it up
        self._rho_spent = 0.0

    @property
    def rho_budget(self):
        """Total zCDP budget (float, possibly ``inf``)."""
        return self._rho_budget

    @property
    def rho_spent(self):
        """zCDP charged so far: the exact sum of the charges, rounded up (float)."""
        return self._rho_spent

    @property
    def rho_remaining(self):
        """The largest single charge the ledger still accepts (about ``rho_budget - rho_spent``).

        Rounded down where needed, so ``can_afford(rho_remaining)`` always holds.
        """
        if math.isinf(self._rho_budget):
            return math.inf
        remaining = max(0.0, float(Fraction(self._rho_budget) - self._exact_spent))
        while remaining > 0.0 and not self.can_afford(remaining):
            remaining = math.nextafter(remaining, 0.0)
        return remaining

    @property
    def entries(self):
        """Tuple of :class:`LedgerEntry`, in order of first charge."""
        return tuple(LedgerEntry(m, r, c) for (m, r), c in self._counts.items())

    def _total_with(self, rho, count):
        return self._exact_spent + _exact_total([(rho, count)])

    def _fits(self, total):
        return math.isinf(self._rho_budget) or total <= Fraction(self._rho_budget)

    def can_afford(self, rho, count=1):
        """Whether ``count`` charges of ``rho`` fit in the remaining budget.

        Parameters
        ----------
        rho : float
            Cost of one charge, ``>= 0`` and finite.
        count : int, default=1
            Number of charges, ``>= 1``.

        Returns
        -------
        affordable : bool
        """
        rho = check_real(rho, "rho", low=0.0)
        count = check_count(count)
        return self._fits(self._total_with(rho, count))

    def charge(self, mechanism, rho, count=1):
        """Record ``count`` runs of ``mechanism`` costing ``rho`` each.

        Parameters
        ----------
        mechanism : str
            Name of the mechanism, e.g. ``"exponential"``.
        rho : float
            zCDP cost of one run, ``>= 0`` and finite.
        count : int, default=1
            Number of runs, ``>= 1``.

        Raises
        ------
        BudgetExceededError
            If the exact total would exceed the budget by any amount; nothing
            is recorded.
        """
        if not isinstance(mechanism, str) or not mechanism:
            raise TypeError(
                f"mechanism must be a non-empty string, got {mechanism!r}."
            )
        rho = check_real(rho, "rho", low=0.0)
        count = check_count(count)
        total = self._total_with(rho, count)
        if not self._fits(total):
            raise BudgetExceededError(
                f"charging {count} x rho={rho!r} for {mechanism!r} would spend "
                f"rho={_round_up(total)!r}, more than the budget rho_budget="
                f"{self._rho_budget!r} (already spent {self._rho_spent!r})."
            )
        key = (mechanism, rho)
        self._counts[key] = self._counts.get(key, 0) + count
        self._exact_spent = total
        self._rho_spent = _round_up(total)

    def epsilon(self, delta, method="cks"):
        """Epsilon spent so far at ``delta``: ``rho_to_epsilon(rho_spent, delta, method)``.

        Parameters
        ----------
        delta : float
            ``0 < delta < 1``.
        method : {"cks", "classic"}, default="cks"
            See :func:`rho_to_epsilon`.

        Returns
        -------
        epsilon : float
        """
        return rho_to_epsilon(self._rho_spent, delta, method=method)

    def to_frame(self):
        """The entries as a DataFrame.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``mechanism``, ``rho``, ``count`` and ``total_rho``
            (``rho * count``), one row per entry.
        """
        import pandas as pd

        entries = self.entries
        frame = pd.DataFrame(
            {
                "mechanism": pd.Series([e.mechanism for e in entries], dtype="str"),
                "rho": np.array([e.rho for e in entries], dtype=float),
                "count": np.array([e.count for e in entries], dtype=np.int64),
            }
        )
        frame["total_rho"] = frame["rho"] * frame["count"]
        return frame

    def __repr__(self):
        parts = ", ".join(
            f"{m}: {c} x {r:.6g}" for (m, r), c in self._counts.items()
        )
        return (
            f"PrivacyLedger(rho_budget={self._rho_budget:.6g}, "
            f"rho_spent={self._rho_spent:.6g}, entries=[{parts}])"
        )
