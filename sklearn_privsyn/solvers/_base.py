"""Value objects and protocols shared by every optimisation oracle.

The oracle never sees private data: an :class:`OracleProblem` holds only the
public one-hot layout, queries chosen by differentially private mechanisms and
fresh noise. Whatever an oracle returns is post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from .._layout import OneHotLayout, readonly

__all__ = [
    "OneHotLayout",
    "OracleProblem",
    "OracleResult",
    "SolverStats",
    "OracleSession",
    "Oracle",
    "STATUSES",
]

#: Status strings an :class:`OracleResult` may carry.
STATUSES = ("optimal", "time_limit", "heuristic", "fallback")


@dataclass(frozen=True, eq=False)
class OracleProblem:
    """One oracle call: maximise ``sum_i w_i q_i(x) + <x, c>`` over valid records.

    ``q_i`` is a conjunction of one-hot literals (1 when all of its columns are
    1) or, when ``negated[i]``, one minus that conjunction.

    Parameters
    ----------
    layout : OneHotLayout
    literals : array of int, shape (m, kmax)
        One-hot column indices of each query, padded with -1.
    negated : array of bool, shape (m,)
    weights : array of float, shape (m,)
        Non-negative weights (FEM: multiplicities).
    linear : array of float, shape (n_features,)
        Linear term ``c`` on the one-hot record.
    query_ids : array of int, shape (m,), optional
        Stable, distinct ids of the queries (workload query ids); back-ends
        cache per-query model parts by id. Defaults to ``0..m-1``.
    warm_starts : array of int, shape (r, n_attributes), optional
        Records to start a local search from. When given, the search uses
        these instead of the session's memory of earlier answers, and the
        session remembers nothing from the call.
    seed : int, optional
        Seed of this call's random draws (restarts, search order), in place
        of the session's generator. With ``warm_starts`` and ``seed`` a call
        is a function of the problem alone, whichever session or worker
        solves it: this is what makes an inexact oracle's output the same
        for any ``n_jobs``.

    Examples
    --------
    >>> import numpy as np
    >>> layout = OneHotLayout((2, 2))
    >>> problem = OracleProblem(layout, literals=[[0, 2]], negated=[False],
    ...                         weights=[3.0], linear=[0.0, 0.5, 0.0, 0.0])
    >>> problem.objective([[0, 0], [1, 0], [1, 1]]).tolist()
    [3.0, 0.5, 0.5]
    """

    layout: OneHotLayout
    literals: np.ndarray
    negated: np.ndarray
    weights: np.ndarray
    linear: np.ndarray
    query_ids: np.ndarray | None = None
    warm_starts: np.ndarray | None = None
    seed: int | None = None

    def __post_init__(self):
        layout = self.layout
        if not isinstance(layout, OneHotLayout):
            raise TypeError(f"layout must be a OneHotLayout, got {type(layout).__name__}.")
        d = layout.n_features
        lit = np.asarray(self.literals)
        if lit.ndim == 1 and lit.size == 0:
            lit = lit.reshape(0, 0)
        if lit.ndim != 2:
            raise ValueError(f"literals must be a 2-d (m, kmax) array; got shape {lit.shape}.")
        if lit.size and not np.issubdtype(lit.dtype, np.integer):
            raise ValueError(f"literals must hold integer column indices; got dtype {lit.dtype}.")
        lit = lit.astype(np.intp, copy=True)
        m = lit.shape[0]
        if lit.size and (lit.min() < -1 or lit.max() >= d):
            bad = np.argwhere((lit < -1) | (lit >= d))[0]
            raise ValueError(
                f"literals[{bad[0]}, {bad[1]}] = {lit[bad[0], bad[1]]} is not a one-hot column "
                f"index in 0..{d - 1} (or -1 padding)."
            )
        empty = (lit >= 0).sum(axis=1) == 0
        if m and np.any(empty):
            i = int(np.argmax(empty))
            raise ValueError(f"query {i} (literals[{i}]) has no literals.")

        def vector(name, value, dtype, length):
            arr = np.asarray(value)
            if arr.shape != (length,):
                raise ValueError(f"{name} must have shape ({length},); got shape {arr.shape}.")
            return arr.astype(dtype, copy=True)

        neg = np.asarray(self.negated)
        if neg.size and neg.dtype != bool:
            if not np.all((neg == 0) | (neg == 1)):
                raise ValueError("negated must be boolean.")
        neg = vector("negated", neg, bool, m)
        w = vector("weights", self.weights, float, m)
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"weights must be finite and >= 0; got min {w.min() if m else None}.")
        c = vector("linear", self.linear, float, d)
        if not np.all(np.isfinite(c)):
            raise ValueError("linear must be finite.")
        if self.query_ids is None:
            ids = np.arange(m, dtype=np.int64)
        else:
            ids = vector("query_ids", self.query_ids, np.int64, m)
            if len(np.unique(ids)) != m:
                raise ValueError("query_ids must be distinct.")
        for name, value in (("literals", lit), ("negated", neg), ("weights", w),
                            ("linear", c), ("query_ids", ids)):
            object.__setattr__(self, name, readonly(value))
        if self.warm_starts is not None:
            starts = np.array(layout.check_records(self.warm_starts, name="warm_starts"))
            object.__setattr__(self, "warm_starts", readonly(starts))
        if self.seed is not None:
            if isinstance(self.seed, (bool, np.bool_)) or not isinstance(
                self.seed, (int, np.integer)
            ) or self.seed < 0:
                raise ValueError(f"seed must be a non-negative int; got {self.seed!r}.")
            object.__setattr__(self, "seed", int(self.seed))

    @property
    def n_queries(self) -> int:
        """Number of queries ``m``."""
        return self.literals.shape[0]

    def query_values(self, records) -> np.ndarray:
        """``q_i(x)`` for each record and query, shape ``(n, m)`` float."""
        codes = self.layout.check_records(records)
        lit = self.literals
        n, m = codes.shape[0], lit.shape[0]
        if m == 0:
            return np.zeros((n, 0))
        attr = np.where(lit >= 0, self.layout.attribute_of[np.maximum(lit, 0)], 0)
        code = np.where(lit >= 0, self.layout.code_of[np.maximum(lit, 0)], -1)
        out = np.empty((n, m))
        chunk = max(1, 2_000_000 // max(1, m * lit.shape[1]))
        for lo in range(0, n, chunk):
            sub = codes[lo:lo + chunk]
            match = (sub[:, attr] == code) | (lit < 0)
            out[lo:lo + chunk] = match.all(axis=2)
        out[:, self.negated] = 1.0 - out[:, self.negated]
        return out

    def objective(self, records) -> np.ndarray:
        """Objective values of records, shape ``(n,)``."""
        codes = self.layout.check_records(records)
        lin = self.linear[self.layout.starts + codes].sum(axis=1)
        if self.n_queries == 0:
            return lin
        return self.query_values(codes) @ self.weights + lin

    def fallback_record(self) -> np.ndarray:
        """Data-independent fallback: per block argmax of the linear term."""
        return linear_argmax(self.layout, self.linear)


def linear_argmax(layout: OneHotLayout, linear) -> np.ndarray:
    """Record maximising ``<x, linear>`` alone (first maximiser in each block)."""
    linear = np.asarray(linear, dtype=float)
    return np.array(
        [int(np.argmax(linear[s:s + b])) for s, b in zip(layout.starts, layout.block_sizes)],
        dtype=np.intp,
    )


@dataclass(frozen=True)
class OracleResult:
    """What an oracle returns.

    Attributes
    ----------
    record : ndarray of int, shape (n_attributes,)
        A valid record in code space.
    objective : float
        Objective value of ``record``.
    status : {"optimal", "time_limit", "heuristic", "fallback"}
    bound : float
        Best known upper bound on the optimum (``inf`` if unknown).
    seconds : float
        Wall-clock time of the call.
    """

    record: np.ndarray
    objective: float
    status: str
    bound: float = float("inf")
    seconds: float = 0.0

    @property
    def gap(self) -> float:
        """``bound - objective`` (``inf`` if no bound is known)."""
        return float(self.bound - self.objective)


@dataclass
class SolverStats:
    """Counters a session keeps; fitted estimators expose them as ``solver_stats_``.

    Examples
    --------
    >>> stats = SolverStats()
    >>> stats.record(OracleResult(np.array([0]), 1.0, "optimal", 1.0, 0.25))
    >>> stats.calls, stats.n_optimal, stats.seconds
    (1, 1, 0.25)

    ``n_checked``, ``n_improved`` and ``max_gap`` are kept by oracles that
    check an inexact answer with an exact solver (:class:`HybridOracle`):
    calls checked, calls where the exact solver found a better record, and
    the largest objective by which it did.
    """

    calls: int = 0
    seconds: float = 0.0
    n_optimal: int = 0
    n_time_limit: int = 0
    n_fallback: int = 0
    n_heuristic: int = 0
    n_errors: int = 0
    n_checked: int = 0
    n_improved: int = 0
    max_gap: float = 0.0
    last_error: str | None = field(default=None, repr=False)

    _counts = ("calls", "seconds", "n_optimal", "n_time_limit", "n_fallback", "n_heuristic",
               "n_errors", "n_checked", "n_improved")

    def record(self, result: OracleResult) -> None:
        """Count one call's result."""
        self.calls += 1
        self.seconds += float(result.seconds)
        attr = {
            "optimal": "n_optimal",
            "time_limit": "n_time_limit",
            "fallback": "n_fallback",
            "heuristic": "n_heuristic",
        }.get(result.status)
        if attr is not None:
            setattr(self, attr, getattr(self, attr) + 1)

    def merge(self, other: "SolverStats") -> None:
        """Add another session's counters (parallel workers) to these."""
        for name in self._counts:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.max_gap = max(self.max_gap, other.max_gap)
        self.last_error = other.last_error or self.last_error

    def since(self, earlier: "SolverStats") -> "SolverStats":
        """The counts added since the snapshot ``earlier`` of these statistics.

        ``max_gap`` stays the largest so far; ``last_error`` is kept only when
        errors were added.
        """
        added = SolverStats(**{name: getattr(self, name) - getattr(earlier, name)
                               for name in self._counts})
        added.max_gap = self.max_gap
        if added.n_errors:
            added.last_error = self.last_error
        return added

    def as_dict(self) -> dict:
        """Counters as a plain dict."""
        return {**{name: getattr(self, name) for name in self._counts}, "max_gap": self.max_gap}


@runtime_checkable
class OracleSession(Protocol):
    """A stateful solver for one fit (may keep a model alive between calls)."""

    stats: SolverStats

    def solve(self, problem: OracleProblem) -> OracleResult: ...

    def close(self) -> None: ...


@runtime_checkable
class Oracle(Protocol):
    """A user-facing back-end: parameters only, picklable."""

    def session(self, layout: OneHotLayout, random_state: int | None = None) -> OracleSession: ...
