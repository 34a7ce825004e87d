"""A quality report of synthetic data: one self-contained HTML page.

:func:`quality_report` compares a synthetic table with the real one it was
made from and returns an HTML page with every plot embedded (base64 PNG, no
external file): per-column distributions, a heat map of the total variation
distance (TVD) of every pair of columns, the workload's errors (max and mean
absolute error, mean per-marginal TVD as in AIM, the worst marginals), the
rows' plausibility (the share of synthetic rows holding a pair of values that no
real row holds, beside the same share for one half of the real rows against the
other, and the mean TVDs),
train-on-synthetic / test-on-real utility for a target column, and the
privacy spent when the estimator or its ledger is given.

The report reads the real data: it is for the data owner and is **not**
differentially private. Release the synthetic data, not the report.

Plots need matplotlib (``pip install 'sklearn-privsyn[report]'``).
"""

from __future__ import annotations

import base64
import html
import io
import warnings

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from ._number_spec import float_values
from .metrics import (
    column_distributions,
    column_kinds,
    compared_values,
    fidelity_report,
    impossible_pair_rate,
    ks_distance,
    pair_tvd,
    train_synthetic_test_real,
    workload_error,
)

__all__ = [
    "SECTIONS",
    "column_distributions",
    "columns_figure",
    "number_summary",
    "numbers_figure",
    "pair_tvd",
    "pair_tvd_figure",
    "quality_report",
    "tvd_histogram_figure",
    "write_report",
]

#: ``id`` -> heading of every section of the page, in order.
SECTIONS = {
    "privacy": "Privacy spent",
    "workload": "Workload error",
    "plausibility": "Plausibility of the rows",
    "columns": "Per-column distributions",
    "numbers": "Numbers: real and synthetic values",
    "pairs": "Pairwise total variation distance",
    "utility": "Train on synthetic, test on real",
}

_NOTICE = (
    "This report reads the real data. It is for the data owner and is <strong>not</strong> "
    "differentially private: release the synthetic data, never this page."
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.45; }
.notice { background: #fff4e5; border-left: 4px solid #e8a33d; padding: 0.6em 1em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
img { max-width: 100%; }
"""


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "The quality report draws its plots with matplotlib, which is not installed; "
            "install it with pip install 'sklearn-privsyn[report]'."
        ) from None
    return plt


def _png(fig):
    """The figure as an ``<img>`` tag with the PNG inline."""
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}"/>'


def _table(frame, float_format="{:.4g}"):
    """A DataFrame as an escaped HTML table (index as the first column)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [frame.index.name or ""]
                   + list(frame.columns))
    body = []
    for index, *row in frame.itertuples(name=None):
        cells = [f"<th>{html.escape(str(index))}</th>"]
        for value in row:
            text = float_format.format(value) if isinstance(value, float) else str(value)
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _privacy_section(estimator, ledger, delta):
    if estimator is not None:
        ledger = getattr(estimator, "ledger_", None)
        if ledger is None:
            raise ValueError(
                f"estimator {type(estimator).__name__} has no ledger_; fit it first."
            )
        delta = estimator.delta_
        summary = (f"({estimator.epsilon_:.4g}, {delta:.3g})-differentially private: zCDP "
                   f"rho {ledger.rho_spent:.4g} spent of {estimator.rho_:.4g}.")
    elif ledger is not None:
        summary = f"zCDP rho {ledger.rho_spent:.4g} spent of {ledger.rho_budget:.4g}"
        if delta is not None and ledger.rho_spent > 0:
            summary += f": ({ledger.epsilon(delta):.4g}, {delta:.3g})-differentially private"
        summary += "."
    else:
        return ("<p>Not shown: no estimator or ledger was given. The page cannot tell how "
                "the synthetic data was made.</p>")
    by_mechanism = ledger.to_frame().groupby("mechanism", sort=False).agg(
        charges=("count", "sum"), rho=("total_rho", "sum")
    )
    return f"<p>{html.escape(summary)}</p>" + _table(by_mechanism, "{:.4g}")


def tvd_histogram_figure(tvd):
    """Histogram of per-marginal total variation distances (a matplotlib Figure)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 2.6))
    ax.hist(tvd, bins=min(30, max(5, len(tvd))), color="#4c72b0")
    ax.set_xlabel("total variation distance of a marginal")
    ax.set_ylabel("marginals")
    return fig


def columns_figure(shares, ncols=3):
    """Bar charts of :func:`column_distributions`, real beside synthetic (a Figure)."""
    plt = _pyplot()
    n = len(shares)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 2.6 * nrows), squeeze=False)
    for ax, (col, frame) in zip(axes.ravel(), shares.items()):
        x = np.arange(len(frame))
        ax.bar(x - 0.2, frame["real"], width=0.4, label="real", color="#4c72b0")
        ax.bar(x + 0.2, frame["synthetic"], width=0.4, label="synthetic", color="#dd8452")
        ax.set_title(str(col), fontsize=10)
        if len(frame) <= 12:
            ax.set_xticks(x, [str(v)[:12] for v in frame.index], rotation=45, ha="right",
                          fontsize=7)
        else:
            ax.set_xticks([])
            ax.set_xlabel(f"{len(frame)} values or bins", fontsize=8)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    axes.ravel()[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def pair_tvd_figure(matrix):
    """Heat map of :func:`pair_tvd`'s matrix, diagonal left blank (a Figure)."""
    plt = _pyplot()
    size = max(4.0, 0.45 * len(matrix) + 2)
    fig, ax = plt.subplots(figsize=(size, size * 0.85))
    values = matrix.to_numpy(copy=True)
    np.fill_diagonal(values, np.nan)  # a column against itself
    image = ax.imshow(values, cmap="viridis", vmin=0)
    labels = [str(c) for c in matrix.columns]
    ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    fig.colorbar(image, ax=ax, label="total variation distance")
    return fig


def _workload_section(workload, real, synthetic, n_worst):
    error = workload_error(workload, real, synthetic)
    tvd = error.per_marginal_tvd
    summary = pd.DataFrame(
        {"value": [error.max_error, error.mean_error, float(tvd.mean()), error.max_tvd]},
        index=pd.Index(["max absolute error", "mean absolute error",
                        "mean per-marginal TVD", "max per-marginal TVD"], name="measure"),
    )
    worst = error.to_frame().sort_values("tvd", ascending=False, kind="stable").head(n_worst)
    return (
        f"<p>{len(error.marginals)} marginals, {workload.n_queries_:,} cells; "
        f"{len(real):,} real and {len(synthetic):,} synthetic rows. Errors are differences "
        "of fractions of rows over every cell; a marginal's total variation distance is "
        "half the sum of its cells' errors (AIM's measure).</p>"
        + _table(summary)
        + _png(tvd_histogram_figure(tvd))
        + f"<h3>The {len(worst)} worst marginals</h3>"
        + _table(worst.set_index("marginal"))
    )


def _rules_table(workload, real, synthetic):
    """The declared rules and the share of rows keeping each (empty without any)."""
    rules = workload.rules_
    if not rules:
        return ""
    shares = pd.DataFrame(
        {"synthetic rows keeping it": [float(r.kept(synthetic).mean()) for r in rules],
         "real rows keeping it": [float(r.kept(real).mean()) for r in rules]},
        index=pd.Index([str(r) for r in rules], name="declared rule (at_most, at_least, "
                                                   "exactly_when, only_when, equal_when)"))
    return "<h3>The declared rules</h3>" + _table(shares)


def _plausibility_section(workload, real, synthetic, n_worst):
    report = fidelity_report(real, synthetic)
    summary = pd.DataFrame(
        {"value": [report.impossible_pair_rate, report.reference_impossible_pair_rate,
                   float(report.tvd_1way.mean()), float(report.tvd_2way.mean()),
                   float(report.tvd_2way.max())]},
        index=pd.Index(["synthetic rows holding an impossible pair",
                        "the same for one half of the real rows against the other",
                        "mean 1-way TVD", "mean 2-way TVD", "max 2-way TVD"], name="measure"),
    )
    discrete = [c for c, kind in report.kinds.items() if kind == "discrete"]
    pairs = [(a, b) for i, a in enumerate(discrete) for b in discrete[i + 1:]]
    rates = pd.Series({f"{a} / {b}": impossible_pair_rate(real, synthetic, columns=[a, b])
                       for a, b in pairs}, dtype=float)
    worst = rates[rates > 0].sort_values(ascending=False, kind="stable").head(n_worst)
    listing = (f"<h3>The pairs of columns with the most impossible rows</h3>"
               + _table(worst.rename("share of synthetic rows").rename_axis("pair").to_frame())
               if len(worst) else "<p>No synthetic row holds a pair of values that no real "
               "row holds.</p>")
    return (
        "<p>A synthetic row is impossible when it holds a pair of values of two discrete "
        "columns that no real row holds (a husband who is female, an education that "
        "contradicts its years). Sampling alone produces some: one random half of the real "
        "rows measured against the other half shows how many. TVDs are between the real "
        "and synthetic distributions of every column and pair of columns, numbers cut at "
        "the real deciles.</p>" + _table(summary) + _rules_table(workload, real, synthetic)
        + listing
    )


def _columns_section(workload, real, synthetic):
    figure = columns_figure(column_distributions(workload, real, synthetic))
    return ("<p>Share of rows with each value (or in each bin or point mass of a number; "
            "the numbers' values are in the next section) of every column, real beside "
            "synthetic; a derived column by its values, or its real deciles.</p>"
            + _png(figure))


def _number_columns(workload, real):
    """The binned columns of the workload (its numbers), in column order."""
    edges = getattr(workload, "bin_edges_", {})
    return [c for c in workload.columns_ if c in edges and len(edges[c]) > 1
            and pd.api.types.is_numeric_dtype(real[c].dtype)]


def number_summary(real, synthetic, columns, points=None):
    """Per number: the KS distance of the values and the shares of its point masses.

    Parameters
    ----------
    real, synthetic : DataFrame
    columns : list
        The numeric columns.
    points : dict, default=None
        Column -> exact values whose shares to show (e.g. a workload's
        ``points_``); the real column's most common value is always shown.

    Returns
    -------
    summary : DataFrame
        One row per column and shown value: ``ks`` (of the column),
        ``value``, ``real share``, ``synthetic share``, and the real and
        synthetic ``mean`` and ``median`` of the column.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.report import number_summary
    >>> real = pd.DataFrame({"gain": [0, 0, 0, 5000]})
    >>> synthetic = pd.DataFrame({"gain": [0, 1200, 3000, 5000]})
    >>> number_summary(real, synthetic, ["gain"]).loc[0, ["value", "real share",
    ...                                                   "synthetic share"]].tolist()
    [0.0, 0.75, 0.25]
    """
    rows = []
    points = points or {}
    for col in columns:
        r = compared_values(float_values(real[col]))
        s = compared_values(float_values(synthetic[col]))
        finite = r[~np.isnan(r)]
        shown = list(compared_values(points.get(col, [])))
        if finite.size:
            values, counts = np.unique(finite, return_counts=True)
            top = float(values[np.argmax(counts)])
            if top not in shown:
                shown.insert(0, top)
        ks = ks_distance(r, s)
        for value in shown or [np.nan]:
            rows.append({"column": str(col), "ks": ks, "value": value,
                         "real share": float(np.mean(r == value)),
                         "synthetic share": float(np.mean(s == value)),
                         "real mean": float(np.nanmean(r)) if finite.size else np.nan,
                         "synthetic mean": float(np.nanmean(s)) if np.isfinite(s).any()
                         else np.nan,
                         "real median": float(np.nanmedian(r)) if finite.size else np.nan,
                         "synthetic median": float(np.nanmedian(s)) if np.isfinite(s).any()
                         else np.nan})
    return pd.DataFrame(rows)


def numbers_figure(real, synthetic, columns, ncols=3):
    """Empirical CDFs of numeric columns, real beside synthetic, KS in the title (a Figure)."""
    plt = _pyplot()
    n = len(columns)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 2.8 * nrows), squeeze=False)
    for ax, col in zip(axes.ravel(), columns):
        r, s = float_values(real[col]), float_values(synthetic[col])
        for values, label, colour in ((r, "real", "#4c72b0"), (s, "synthetic", "#dd8452")):
            values = np.sort(values[~np.isnan(values)])
            if values.size:
                ax.step(values, np.arange(1, values.size + 1) / values.size, where="post",
                        label=label, color=colour, linewidth=1.2)
        ax.set_title(f"{col}  (KS {ks_distance(r, s):.3f})", fontsize=10)
        ax.set_ylim(0, 1.02)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    if n:
        axes.ravel()[0].legend(fontsize=8, loc="lower right")
        axes.ravel()[0].set_ylabel("share of rows at or below", fontsize=8)
    fig.tight_layout()
    return fig


def _numbers_section(workload, real, synthetic):
    columns = _number_columns(workload, real)
    if not columns:
        return "<p>The workload bins no numeric column.</p>"
    summary = number_summary(real, synthetic, columns, getattr(workload, "points_", {}))
    return ("<p>Every binned number at the resolution of its values, not of its bins: the "
            "share of rows at or below each value (empirical CDF), real beside synthetic, with "
            "the Kolmogorov-Smirnov distance (the largest vertical gap). The table shows, per "
            "number, the real column's most common value and the workload's point masses "
            "(values with codes of their own) with their real and synthetic shares.</p>"
            + _png(numbers_figure(real, synthetic, columns))
            + _table(summary.set_index("column")))


def _pairs_section(workload, real, synthetic):
    matrix = pair_tvd(workload, real, synthetic)
    upper = matrix.to_numpy()[np.triu_indices(len(matrix), 1)]
    mean = f"{upper.mean():.4f}" if upper.size else "n/a"
    return (f"<p>Total variation distance between the real and synthetic distributions of "
            f"every pair of columns (mean over pairs {mean}); 0 is identical, 1 disjoint.</p>"
            + _png(pair_tvd_figure(matrix)))


def _utility_section(workload, real, synthetic, target, random_state):
    if target is None:
        return ("<p>Not shown: no target column was given (<code>target=</code>, or "
                "<code>--target</code> on the command line).</p>")
    scores = train_synthetic_test_real(real, synthetic, target, workload=workload,
                                       random_state=random_state)
    return (
        f"<p>Accuracy in predicting <code>{html.escape(str(target))}</code> on a held-out 30% "
        "of the real rows, for models trained on the other 70% of the real rows and on the "
        "synthetic rows. Unless the synthesizer was fitted without the held-out rows, they "
        "also shaped the synthetic data.</p>" + _table(scores)
    )


def quality_report(real, synthetic, *, workload=None, estimator=None, ledger=None,
                   delta=None, target=None, title="Synthetic data quality report",
                   n_worst=10, random_state=0):
    """An HTML page comparing synthetic data with the real data.

    Parameters
    ----------
    real, synthetic : DataFrame
        The real table and the synthetic one (same columns).
    workload : QueryWorkload, default=None
        The workload whose error is reported, and whose encoding is used
        everywhere (fitted, or fitted here on ``real``). None uses the
        estimator's ``workload_``.
    estimator : fitted synthesizer, default=None
        Gives the privacy spent (``epsilon_``, ``delta_``, ``ledger_``) and,
        without ``workload``, the workload.
    ledger : PrivacyLedger, default=None
        The privacy spent, when there is no estimator; ``delta`` converts it
        to (epsilon, delta).
    delta : float, default=None
        For ``ledger``.
    target : str, default=None
        Column for the train-on-synthetic, test-on-real section.
    title : str, default="Synthetic data quality report"
    n_worst : int, default=10
        Worst marginals listed.
    random_state : int, default=0
        Seed of the utility section's split and models.

    Returns
    -------
    page : str
        A complete HTML document; every section of :data:`SECTIONS` has
        an element with that ``id``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.report import quality_report
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> real = pd.DataFrame({"a": [0, 1, 1, 0], "b": ["x", "y", "y", "y"]})
    >>> synthetic = pd.DataFrame({"a": [0, 1], "b": ["y", "y"]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": ["x", "y"]}, k=2)
    >>> page = quality_report(real, synthetic, workload=wl)
    >>> page.startswith("<!DOCTYPE html>"), 'id="pairs"' in page
    (True, True)
    """
    _pyplot()  # fail early, with the install hint, when matplotlib is missing
    if workload is None:
        if estimator is None:
            raise ValueError("Give workload= (a QueryWorkload) or a fitted estimator=.")
        workload = getattr(estimator, "workload_", None)
        if workload is None:
            raise ValueError(f"estimator {type(estimator).__name__} has no workload_; fit it "
                             "first or give workload=.")
    try:
        check_is_fitted(workload)
    except NotFittedError:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reading the real data is the report's job
            workload = clone(workload).fit(real)
    for name, frame in (("real", real), ("synthetic", synthetic)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a DataFrame; got {type(frame).__name__}.")
        missing = [c for c in workload.table_columns_ if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} has no column {missing[0]!r} (a column of the workload).")
    real = real[list(workload.table_columns_)]  # derived columns included: the workload
    synthetic = synthetic[list(workload.table_columns_)]  # drops them where it encodes

    bodies = {
        "privacy": _privacy_section(estimator, ledger, delta),
        "workload": _workload_section(workload, real, synthetic, n_worst),
        "plausibility": _plausibility_section(workload, real, synthetic, n_worst),
        "columns": _columns_section(workload, real, synthetic),
        "numbers": _numbers_section(workload, real, synthetic),
        "pairs": _pairs_section(workload, real, synthetic),
        "utility": _utility_section(workload, real, synthetic, target, random_state),
    }
    sections = "".join(
        f'<section id="{key}"><h2>{html.escape(SECTIONS[key])}</h2>{bodies[key]}</section>'
        for key in SECTIONS
    )
    heading = html.escape(title)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"/><title>{heading}</title>'
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>{heading}</h1>"
        f'<p class="notice" id="notice">{_NOTICE}</p>'
        f"{sections}</body></html>\n"
    )


def write_report(path, real, synthetic, **kwargs):
    """Write :func:`quality_report`'s page to ``path`` (UTF-8).

    Parameters
    ----------
    path : str or path-like
    real, synthetic : DataFrame
    **kwargs
        Passed to :func:`quality_report`.

    Returns
    -------
    path : str or path-like
        ``path``, for convenience.
    """
    page = quality_report(real, synthetic, **kwargs)
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path
