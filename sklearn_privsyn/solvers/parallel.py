"""Oracle calls of one fit spread over joblib workers, or made in this thread.

FEM's and sepFEM's data player draws many independent samples a round; each is
one oracle call. :class:`WorkerOracles` solves a round's problems in joblib
workers, each keeping its own session of the fit between rounds;
:class:`SerialOracle` solves them in one session here. Both have
``solve_all(problems) -> records`` and ``close()``.
"""

from __future__ import annotations

import copy
import threading
import uuid
from collections import OrderedDict

import numpy as np
from joblib import Parallel, delayed

from ._base import SolverStats
from ._session import open_session

__all__ = ["SerialOracle", "WorkerOracles"]


# Oracle sessions that live in a joblib worker between rounds of one fit, so
# that a worker keeps its HiGHS model (and solution pool) and only adds the
# round's new queries instead of rebuilding. They are thread-local: under a
# threading backend (joblib "threading", Dask's threaded workers) no two
# threads ever share a session, and concurrent fits in one process, which have
# different tokens, never close each other's sessions. A worker keeps the
# sessions of its most recently served fits and closes older ones itself.
_WORKER = threading.local()
_FITS_PER_WORKER = 4


def _worker_session(oracle, layout, token, seed):
    sessions = getattr(_WORKER, "sessions", None)
    if sessions is None:
        sessions = _WORKER.sessions = OrderedDict()
    session = sessions.get(token)
    if session is None:
        session = sessions[token] = open_session(oracle, layout, seed)
        while len(sessions) > _FITS_PER_WORKER:
            sessions.popitem(last=False)[1].close()
    sessions.move_to_end(token)
    return session


def _solve_chunk(oracle, layout, token, seed, problems):
    """One joblib task: solve ``problems`` in this worker's session of the fit ``token``.

    Returns the records and the chunk's :class:`SolverStats` (faults included),
    which the fit merges: a worker's statistics never stay behind in the worker.
    """
    session = _worker_session(oracle, layout, token, seed)
    before = copy.copy(session.stats)
    records = [session.solve(problem).record for problem in problems]
    return records, session.stats.since(before)


class SerialOracle:
    """The data player's oracle in this thread: one session for the whole fit."""

    def __init__(self, session):
        self.session = session

    def solve_all(self, problems):
        return [self.session.solve(problem).record for problem in problems]

    def close(self):
        self.session.close()


class WorkerOracles:
    """The data player's oracle spread over joblib workers for one fit.

    Each round's problems are split into ``n_workers`` chunks; each worker
    solves its chunk in its own session of this fit (see ``_worker_session``)
    and hands back its statistics, merged into ``stats``. One ``Parallel``
    object serves the whole fit, so a threading backend keeps its threads (and
    their sessions) from round to round.
    """

    def __init__(self, oracle, layout, n_jobs, n_workers, seed):
        self.oracle = oracle
        self.layout = layout
        self.n_workers = n_workers
        self.seed = seed
        self.token = uuid.uuid4().hex
        self.stats = SolverStats()
        self.parallel = Parallel(n_jobs=n_jobs)
        self.parallel.__enter__()

    def solve_all(self, problems):
        chunks = np.array_split(np.arange(len(problems)), self.n_workers)
        results = self.parallel(
            delayed(_solve_chunk)(self.oracle, self.layout, self.token, self.seed,
                                  [problems[i] for i in chunk])
            for chunk in chunks
            if len(chunk)
        )
        records = []
        for chunk_records, chunk_stats in results:
            self.stats.merge(chunk_stats)
            records.extend(chunk_records)
        return records

    def close(self):
        self.parallel.__exit__(None, None, None)
