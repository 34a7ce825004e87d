"""Per-column and per-pair distributions of real and synthetic rows, in the workload's encoding.

Both functions refit the workload's encoding on the real rows with other
marginals (1-way, or every pair) and compare the shares of every cell. They
read the real data and are for the data owner, not for release.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone

from ._fidelity import decile_edges
from ._workload import workload_error

__all__ = ["column_distributions", "pair_tvd"]


def _refit(workload, real, marginals):
    """The workload's encoding, fitted on ``real``, with other marginals."""
    params = {"marginals": marginals, "n_marginals": None, "max_cells": None}
    with warnings.catch_warnings():
        # the report reads the real data by design: a domain learned here is no leak
        warnings.simplefilter("ignore")
        return clone(workload).set_params(**params).fit(real)


def column_distributions(workload, real, synthetic):
    """Real and synthetic shares of every code of every column.

    A derived column (``workload.derived_``, never encoded) is shown by its
    values: each value of a column of at most ``DERIVED_MAX_VALUES`` real
    values, else the real deciles; columns are in the table's order.

    Returns
    -------
    shares : dict
        Column -> DataFrame with the code labels as index and columns
        ``"real"`` and ``"synthetic"`` (fractions of rows).
    """
    one_way = _refit(workload, real, [(c,) for c in workload.columns_])
    labels = one_way.get_feature_names_out()
    real_answers, synthetic_answers = one_way.answer(real), one_way.answer(synthetic)
    shares = {}
    for j, col in enumerate(one_way.columns_):
        cells = slice(one_way.marginal_offsets_[j], one_way.marginal_offsets_[j + 1])
        prefix = len(str(col)) + 1
        shares[col] = pd.DataFrame(
            {"real": real_answers[cells], "synthetic": synthetic_answers[cells]},
            index=[label[prefix:] for label in labels[cells]],
        )
    derived = getattr(workload, "derived_", {})
    if not derived:
        return shares
    for col in derived:
        shares[col] = _value_shares(real[col], synthetic[col])
    return {col: shares[col] for col in workload.table_columns_}


#: A derived column with at most this many real values is shown value by value.
DERIVED_MAX_VALUES = 20


def _value_shares(real, synthetic):
    """Real and synthetic shares of each value (or real decile, ``(a, b]``) of a column."""
    numeric = (pd.api.types.is_numeric_dtype(real.dtype)
               and not pd.api.types.is_bool_dtype(real.dtype))
    deciles = numeric and real.nunique() > DERIVED_MAX_VALUES
    if deciles:  # the fidelity measures' cut (decile_edges), labelled
        edges = np.concatenate([[-np.inf], decile_edges(real.to_numpy(float)), [np.inf]])
        order = [f"({a:g}, {b:g}]" for a, b in zip(edges[:-1], edges[1:])]
        real, synthetic = (pd.cut(pd.to_numeric(x, errors="coerce"), edges, labels=order)
                           for x in (real, synthetic))
    shares = [x.astype(object).value_counts(normalize=True, dropna=False)
              for x in (real, synthetic)]
    table = pd.concat(shares, axis=1, keys=["real", "synthetic"]).fillna(0.0)
    if deciles:  # in the order of the bins, a missing value last
        table = table.reindex([v for v in order if v in table.index]
                              + [v for v in table.index if v not in order])
    elif numeric:
        table = table.sort_index(key=lambda i: pd.to_numeric(i, errors="coerce"))
    table.index = [str(v) for v in table.index]
    return table


def pair_tvd(workload, real, synthetic):
    """Total variation distance of every 2-way marginal, as a symmetric matrix.

    Returns
    -------
    tvd : DataFrame of shape (n_columns, n_columns)
        Zero on the diagonal.
    """
    columns = list(workload.columns_)
    pairs = [(a, b) for i, a in enumerate(columns) for b in columns[i + 1:]]
    matrix = pd.DataFrame(0.0, index=columns, columns=columns)
    if pairs:
        error = workload_error(_refit(workload, real, pairs), real, synthetic)
        for (a, b), tvd in zip(error.marginals, error.per_marginal_tvd, strict=True):
            matrix.loc[a, b] = matrix.loc[b, a] = tvd
    return matrix
