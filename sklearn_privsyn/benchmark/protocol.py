"""What every multi-seed benchmark shares: the paper's workload, in either order, and the figures.

The paper's workload is drawn by its protocol (``paper_workload``): all k-way
marginals with at most ``n`` cells, ``n_marginals`` of them picked with
``random_state=0``. ``in_order(workload, X, "shuffled", order_seed)`` gives the
*same marginals in a shuffled order*, listed explicitly (``marginals=[...]``),
as a user who names them would; ``"drawn"`` keeps the protocol's order. Both
orders of one workload hold the same cells, so their figures compare directly.

``fit_and_measure`` fits an estimator and measures it on the rows
``sample(n)`` returns (``n`` the real table's rows): max error, mean error and
mean per-marginal TVD, with the fit's wall and CPU time. ``summary_lines``
turns per-run rows into one mean and sd line per setting.
"""

import time

import numpy as np
import pandas as pd
from sklearn.base import clone

from sklearn_privsyn.metrics import workload_error
from sklearn_privsyn.workload import QueryWorkload

__all__ = ["FIGURES", "ORDERS", "fit_and_measure", "in_order", "paper_workload", "sample_error",
           "summary_lines"]

#: The two workload orders: the protocol's, and the same marginals shuffled by a seed.
ORDERS = ("drawn", "shuffled")

#: Per-run figures that ``summary_lines`` averages (when present in the rows).
FIGURES = ("max_error", "mean_error", "mean_tvd", "seconds", "cpu_seconds")


def paper_workload(n_rows, *, k=3, n_marginals=64, random_state=0, **columns):
    """The paper's protocol: ``n_marginals`` random k-way marginals of at most ``n_rows`` cells.

    ``n_marginals=None`` keeps every eligible marginal; ``columns`` are the
    workload's other keyword arguments (``domain=``, ``bins=``, ...).
    """
    return QueryWorkload(k=k, n_marginals=n_marginals, max_cells=n_rows,
                         random_state=random_state, **columns)


def in_order(workload, X, order="drawn", order_seed=0):
    """``workload`` as drawn, or its marginals listed explicitly in a seeded shuffled order.

    The marginals a protocol draws depend on ``X`` only through its column
    names and row count, so fitting a clone here reads no values that matter.
    """
    if order == "drawn":
        return workload
    if order != "shuffled":
        raise ValueError(f"order must be one of {ORDERS}; got {order!r}")
    marginals = clone(workload).fit(X).marginals_
    permutation = np.random.default_rng(order_seed).permutation(len(marginals))
    return clone(workload).set_params(
        marginals=[marginals[i] for i in permutation], n_marginals=None, max_cells=None
    )


def fit_and_measure(estimator, X):
    """Fit ``estimator`` on ``X`` and measure the rows ``sample(len(X))`` returns.

    CPU time (user + sys of this process) counts solver threads but not joblib
    worker processes, so it is a lower bound when ``n_jobs`` is set.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    estimator.fit(X)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {**sample_error(estimator, X), "seconds": wall, "cpu_seconds": cpu}


def sample_error(estimator, X):
    """Errors of the rows a fitted synthesizer's ``sample(len(X))`` returns, against ``X``."""
    error = workload_error(estimator.workload_, X, estimator.sample(len(X)))
    return {
        "max_error": error.max_error,
        "mean_error": error.mean_error,
        "mean_tvd": float(np.mean(error.per_marginal_tvd)),
    }


def summary_lines(rows, by, figures=FIGURES):
    """One line per setting (the ``by`` keys): mean and sd of each figure over its runs.

    When ``by`` holds ``"order"`` and the rows hold both orders, each setting
    also gets a line over both orders together (``order=both``).
    """
    frame = pd.DataFrame(rows)
    figures = [f for f in figures if f in frame]
    frame[figures] = frame[figures].apply(pd.to_numeric, errors="coerce")
    groupings = [list(by)]
    if "order" in by and frame["order"].nunique() > 1:
        groupings.append([key for key in by if key != "order"])
    lines = []
    for keys in groupings:
        for key, group in frame.groupby(keys, sort=False, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            setting = dict(zip(keys, key))
            if "order" in by and "order" not in keys:
                setting["order"] = "both"
            text = " ".join(f"{name}={setting[name]}" for name in by)
            stats = " ".join(  # a figure no run of the setting measured is left out
                f"{f}={group[f].mean():.4g} (sd {group[f].std(ddof=1):.2g})" for f in figures
                if group[f].notna().any()
            )
            lines.append(f"mean of {len(group)}: {text} {stats}")
    return lines
