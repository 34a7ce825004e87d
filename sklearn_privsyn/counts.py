"""Marginal counts: the one thing a fit reads from the private rows.

Every synthesizer here reads its private input only through the counts of a
set of marginals (how many rows fall in each cell) and the number of rows.
A *count source* gives exactly that, whatever holds the rows:

* :class:`RecordCounts`: the rows are in memory, already encoded as records
  (a pandas DataFrame passed to ``fit``);
* :class:`DaskCounts`: the rows are a ``dask.dataframe.DataFrame``: each
  partition is encoded and counted where it lives (threads of this process,
  or the workers of a ``dask.distributed`` cluster when a ``Client`` is
  active), and only the per-partition count vectors travel and are summed.
  Dask is imported only here, and only when such a frame is given.

Both return the same exact integer counts (as float64, exact below 2**53) for
the same rows, so a fit on a Dask frame equals the fit on the same rows in
pandas for the same seed: the answers are ``counts / n_rows``, divided the
same way.

Examples
--------
>>> import pandas as pd
>>> from sklearn_privsyn.counts import RecordCounts
>>> from sklearn_privsyn.workload import QueryWorkload
>>> X = pd.DataFrame({"a": [0, 1, 1], "b": [1, 1, 0]})
>>> wl = QueryWorkload(domain={"a": 2, "b": 2}, k=2).fit(X)
>>> source = RecordCounts(wl, wl.encode(X))
>>> source.n_rows, source.counts().tolist()
(3, [0.0, 1.0, 1.0, 1.0])
>>> source.counts([(0,), (1,)]).tolist()  # the 1-way marginals of a and b
[1.0, 2.0, 1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from .marginals import MarginalSet

__all__ = ["DaskCounts", "RecordCounts", "count_source", "is_dask_frame", "n_rows", "schema"]

# Partition count vectors are summed in a tree, this many at a time.
_SPLIT_EVERY = 8


def is_dask_frame(X):
    """Whether ``X`` is a ``dask.dataframe.DataFrame`` (without importing dask)."""
    module = type(X).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(X, "to_delayed") and hasattr(X, "columns")


def n_rows(frame):
    """Rows of a pandas or Dask table (public under replace-one neighbours).

    A Dask table's rows are counted where they are (one pass, no row kept).

    Examples
    --------
    >>> import pandas as pd
    >>> n_rows(pd.DataFrame({"a": [1, 2, 3]}))
    3
    """
    return int(frame.shape[0].compute()) if is_dask_frame(frame) else len(frame)


def schema(frame):
    """An empty pandas DataFrame with ``frame``'s columns and dtypes (reads no rows)."""
    import pandas as pd

    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in frame.dtypes.items()})


class RecordCounts:
    """Counts of records held in memory.

    Parameters
    ----------
    workload : QueryWorkload
        The fitted workload (its layout and marginal set).
    records : ndarray of shape (n_rows, n_attributes)
        The private records (codes).
    """

    def __init__(self, workload, records):
        self._workload = workload
        self._records = records
        self.n_rows = int(records.shape[0])

    def counts(self, marginals=None):
        """Number of rows in every cell of ``marginals`` (default: the workload's).

        ``marginals`` are tuples of attribute indices; the cells are numbered
        as :class:`~sklearn_privsyn.marginals.MarginalSet` numbers them.
        Returns a float64 vector of exact integer counts.
        """
        return _marginal_set(self._workload, marginals).counts(self._records)

    def answers(self, marginals=None):
        """The fraction of rows in every cell: ``counts(marginals) / n_rows``."""
        answers = self.counts(marginals)
        answers /= self.n_rows
        return answers


class DaskCounts:
    """Counts of the rows of a ``dask.dataframe.DataFrame``, computed where they live.

    One pass over the partitions counts the workload's marginals and every
    column's 1-way marginal together (``prefetch``); later requests for any
    of those marginals are answered from it, others take one more pass.
    Each task encodes one partition with the workload's public encoding
    (errors name the column, never a value) and returns one count vector;
    the vectors are summed in a tree of ``_SPLIT_EVERY``. Memory per task is
    one partition plus a few count vectors (8 bytes a cell), whatever the
    number of rows. Computed with the active scheduler: a
    ``dask.distributed.Client``'s cluster when one is active, else dask's
    default (threads in this process).

    Parameters
    ----------
    workload : QueryWorkload
        The workload, fitted to the frame's schema (its encoder and marginals).
    frame : dask.dataframe.DataFrame
        The private rows, with the workload's columns.
    n_rows : int
        The number of rows (public under replace-one neighbours), already counted.
    """

    def __init__(self, workload, frame, n_rows):
        self._workload = workload
        self._frame = frame[list(workload.columns_)]
        self.n_rows = int(n_rows)
        self._cache = {}
        one_way = [(a,) for a in range(workload.layout_.n_attributes)]
        self._prefetch(list(workload.marginal_set_.marginals) + one_way)

    def _prefetch(self, marginals):
        marginal_set = MarginalSet(self._workload.layout_, marginals)
        counts, n_rows = _dask_counts(self._frame, self._workload, marginal_set)
        if n_rows != self.n_rows:
            raise ValueError(
                f"The Dask frame had {self.n_rows} rows when counted first and {n_rows} "
                "when its marginals were counted: its partitions must not change during fit."
            )
        for j, m in enumerate(marginal_set.marginals):
            self._cache[m] = counts[marginal_set.cells(j)]

    def counts(self, marginals=None):
        """Number of rows in every cell of ``marginals`` (default: the workload's).

        Same numbering and values as :meth:`RecordCounts.counts`.
        """
        marginals = (self._workload.marginal_set_.marginals if marginals is None
                     else [tuple(int(a) for a in m) for m in marginals])
        missing = [m for m in dict.fromkeys(marginals) if m not in self._cache]
        if missing:
            self._prefetch(missing)
        return np.concatenate([self._cache[m] for m in marginals]).astype(float)

    def answers(self, marginals=None):
        """The fraction of rows in every cell: ``counts(marginals) / n_rows``."""
        answers = self.counts(marginals)
        answers /= self.n_rows
        return answers


def count_source(workload, data, n_rows=None):
    """The count source of ``data``: records in memory, or a Dask DataFrame."""
    if is_dask_frame(data):
        return DaskCounts(workload, data, n_rows)
    return RecordCounts(workload, data)


def _marginal_set(workload, marginals):
    if marginals is None:
        return workload.marginal_set_
    return MarginalSet(workload.layout_, marginals)


def _count_partition(partition, workload, marginal_set):
    """(int64 counts of every cell, rows) of one partition: runs on a worker."""
    # the partition holds the workload's columns in order (no derived column): encode them
    records = workload.encoder_.encode(partition)
    counts = marginal_set.counts(records)
    return counts.astype(np.int64), int(records.shape[0])


def _add_counts(*parts):
    counts = parts[0][0].copy()
    rows = parts[0][1]
    for more, n in parts[1:]:
        counts += more
        rows += n
    return counts, rows


def _dask_counts(frame, workload, marginal_set):
    """Summed int64 counts of ``marginal_set`` over the partitions of ``frame``, and rows."""
    import dask

    workload = dask.delayed(workload, pure=True)
    marginal_set = dask.delayed(marginal_set, pure=True)
    count = dask.delayed(_count_partition, pure=True)
    add = dask.delayed(_add_counts, pure=True)
    layer = [count(part, workload, marginal_set) for part in frame.to_delayed()]
    while len(layer) > 1:
        layer = [add(*layer[i:i + _SPLIT_EVERY]) for i in range(0, len(layer), _SPLIT_EVERY)]
    (counts, rows), = dask.compute(layer[0])
    return counts, rows
