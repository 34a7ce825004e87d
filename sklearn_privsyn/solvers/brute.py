"""Exact enumeration of all records: a reference oracle for tiny domains."""

from __future__ import annotations

import numpy as np

from ._session import BaseSession

__all__ = ["BruteForceOracle"]


class BruteForceOracle:
    """Exact oracle that evaluates every record; for tiny domains and tests.

    Parameters
    ----------
    max_records : int, default=2_000_000
        Largest domain (product of the block sizes) accepted; sessions on
        larger layouts raise ``ValueError``.
    chunk_size : int, default=65536
        Records evaluated per vectorised step.
    time_limit, mip_gap, threads, verbose : ignored
        Accepted for a uniform interface with the other back-ends.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    >>> layout = OneHotLayout((2, 3))
    >>> problem = OracleProblem(layout, literals=[[0, 2]], negated=[True],
    ...                         weights=[1.0], linear=[0, 0, 0.5, 0, 0])
    >>> result = BruteForceOracle().session(layout).solve(problem)
    >>> result.record.tolist(), result.objective, result.status
    ([1, 0], 1.5, 'optimal')
    """

    name = "brute"

    def __init__(self, max_records=2_000_000, chunk_size=65536, time_limit=None,
                 mip_gap=None, threads=None, verbose=False):
        self.max_records = max_records
        self.chunk_size = chunk_size
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.verbose = verbose

    def __repr__(self):
        return f"BruteForceOracle(max_records={self.max_records})"

    def session(self, layout, random_state=None):
        return BruteForceSession(self, layout, random_state)


class BruteForceSession(BaseSession):
    def __init__(self, oracle, layout, random_state):
        super().__init__(oracle, layout, random_state)
        if layout.n_records > oracle.max_records:
            raise ValueError(
                f"BruteForceOracle enumerates every record, but this layout has "
                f"{layout.n_records:.3g} records (block sizes {layout.block_sizes}), more "
                f"than max_records={oracle.max_records}; use 'highs' or 'pulp' instead."
            )

    def _records(self, lo, hi):
        index = np.arange(lo, hi, dtype=np.int64)
        out = np.empty((hi - lo, self.layout.n_attributes), dtype=np.intp)
        for a in range(self.layout.n_attributes - 1, -1, -1):
            size = self.layout.block_sizes[a]
            out[:, a] = index % size
            index //= size
        return out

    def _solve(self, problem, t0):
        best_value, best_record = -np.inf, None
        total = self.layout.n_records
        for lo in range(0, total, self.oracle.chunk_size):
            records = self._records(lo, min(total, lo + self.oracle.chunk_size))
            values = problem.objective(records)
            i = int(np.argmax(values))
            if values[i] > best_value:
                best_value, best_record = float(values[i]), records[i]
        return best_record, "optimal", best_value
