"""Workload error of a synthetic table against the real one.

The paper's metric is the **maximum absolute error** over every query of the
workload, answers being fractions of rows. Its query class also holds the
negation ``1 - q`` of every cell query ``q``, but
``|(1 - a) - (1 - b)| = |a - b|``, so the maximum (and the mean) over positive
queries equals that over the whole class: only positive queries are compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

__all__ = ["WorkloadError", "workload_error", "synthesizer_error"]


@dataclass(frozen=True)
class WorkloadError:
    """Errors of synthetic answers on a workload.

    Attributes
    ----------
    max_error : float
        Maximum absolute error over all queries (the paper's metric).
    mean_error : float
        Mean absolute error over all queries.
    per_marginal_tvd : ndarray of shape (n_marginals,)
        Total variation distance between the real and synthetic distributions
        of each marginal: half the sum of the absolute errors of its cells.
    marginals : tuple of tuples
        The marginals, in the order of ``per_marginal_tvd``.
    """

    max_error: float
    mean_error: float
    per_marginal_tvd: np.ndarray
    marginals: tuple

    @property
    def max_tvd(self) -> float:
        """Largest per-marginal total variation distance."""
        return float(np.max(self.per_marginal_tvd))

    def to_frame(self):
        """Per-marginal TVDs as a DataFrame, one row per marginal."""
        return pd.DataFrame(
            {
                "marginal": [" x ".join(map(str, m)) for m in self.marginals],
                "tvd": self.per_marginal_tvd,
            }
        )


def _answers(workload, data, weights, name):
    if isinstance(data, pd.DataFrame):
        if weights is not None:
            return workload.answer_codes(workload.encode(data), weights)
        return workload.answer(data)
    if isinstance(data, np.ndarray) or isinstance(data, (list, tuple)):
        return workload.answer_codes(data, weights)
    raise TypeError(
        f"{name} must be a DataFrame (raw rows) or an integer array of records (codes); "
        f"got {type(data).__name__}."
    )


def workload_error(workload, real, synthetic, *, real_weights=None, synthetic_weights=None):
    """Error of a synthetic table's answers on a workload, against the real table.

    Parameters
    ----------
    workload : QueryWorkload
        A fitted workload, or an unfitted one, which is cloned and fitted on
        ``real`` (``real`` must then be a DataFrame).
    real, synthetic : DataFrame or ndarray of shape (n, n_attributes)
        A DataFrame holds raw rows (encoded by the workload); an array holds
        records in code space (e.g. a synthesizer's ``records_``).
    real_weights, synthetic_weights : array-like of shape (n,), default=None
        Optional non-negative row weights (normalised to sum to 1).

    Returns
    -------
    result : WorkloadError
        ``max_error``, ``mean_error`` and ``per_marginal_tvd``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.metrics import workload_error
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> real = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]})
    >>> synth = pd.DataFrame({"a": [0, 1], "b": [0, 1]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": 2}, k=2).fit(real)
    >>> err = workload_error(wl, real, synth)
    >>> err.max_error, err.mean_error, err.per_marginal_tvd.tolist()
    (0.25, 0.25, [0.5])
    """
    try:
        check_is_fitted(workload)
    except NotFittedError:
        if not isinstance(real, pd.DataFrame):
            raise ValueError(
                "An unfitted workload can only be fitted on a DataFrame; pass a fitted "
                "workload to compare records."
            ) from None
        workload = clone(workload).fit(real)
    return _error_of_answers(workload, _answers(workload, real, real_weights, "real"),
                             _answers(workload, synthetic, synthetic_weights, "synthetic"))


def _error_of_answers(workload, real_answers, synthetic_answers):
    diff = np.abs(real_answers - synthetic_answers)
    offsets = workload.marginal_offsets_
    tvd = 0.5 * np.add.reduceat(diff, offsets[:-1])
    return WorkloadError(
        max_error=float(diff.max()),
        mean_error=float(diff.mean()),
        per_marginal_tvd=tvd,
        marginals=tuple(workload.marginals_),
    )


def synthesizer_error(synthesizer, X_real):
    """Workload error of a fitted synthesizer's output on its own workload.

    Compares the real table with the synthesizer's weighted records
    (``records_`` and ``weights_``), or with the answers of its fitted
    distribution when it has ``fitted_answers()`` (AdaptiveProjection),
    measured on ``synthesizer.workload_``.
    This is an evaluation on the private data: it is not differentially
    private and must not be released as such.

    Parameters
    ----------
    synthesizer : fitted synthesizer
        Has ``workload_``, ``records_`` and ``weights_``.
    X_real : DataFrame or ndarray of records
        The real table (raw rows), or its records.

    Returns
    -------
    result : WorkloadError
    """
    if hasattr(synthesizer, "fitted_answers") and hasattr(synthesizer, "workload_"):
        workload = synthesizer.workload_
        return _error_of_answers(workload, _answers(workload, X_real, None, "X_real"),
                                 synthesizer.fitted_answers())
    for attr in ("workload_", "records_", "weights_"):
        if not hasattr(synthesizer, attr):
            raise NotFittedError(
                f"{type(synthesizer).__name__} has no {attr}; fit it before measuring its error."
            )
    return workload_error(
        synthesizer.workload_,
        X_real,
        synthesizer.records_,
        synthetic_weights=synthesizer.weights_,
    )
