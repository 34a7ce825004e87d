"""Summary tables and plots of a benchmark CSV (the rows :func:`run_grid` writes).

:func:`make_all` writes, in a folder:

* ``summary.md``: one row per (dataset, k, marginals, epsilon, algorithm) with
  the mean over seeds of max error (and its standard deviation), mean error
  and fit seconds, the number of seeds that ran, and failures;
* ``quality.md`` (when the rows have them): mean (sd) of the TVD, the errors
  of the rows ``sample(n)`` returns and train-on-synthetic accuracy;
* ``fidelity.md`` (when the rows have them): mean (sd) of the errors of the
  rows and the fidelity measures of ``../shared/datasets/REAL.md`` (2-way TVD,
  largest KS distance and point-mass difference, impossible pairs beside the
  real halves' rate);
* ``comparison.md`` (with ``reference``, when ADULT ran): our max error
  next to the authors' (``ours / authors``) for ADULT with 64 marginals;
* ``max_error_vs_epsilon_<dataset>_k<k>_m<m>.png`` for every setting run at
  several epsilons (the paper's Figure 1): max error against epsilon, one line
  per algorithm, error bars = standard deviation over seeds;
* ``max_error_vs_marginals_<dataset>_k<k>_eps<eps>.png`` for every setting
  run with several numbers of marginals (the paper's Figure 2);
* ``by_dataset_<figure>_eps<eps>.png`` when several datasets ran at an
  epsilon: one group of bars per dataset, one bar per algorithm (mean and sd
  over seeds), for the max error and, when measured, the 2-way TVD of the
  rows.

With ``reference`` (default on) the authors' published numbers for ADULT
with 64 marginals (``AUTHORS`` below, from the paper's figures as collected in
the project notes) are drawn as dashed lines, in the colour of our
algorithm of the same name. Plots need matplotlib (the ``bench`` extra).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["comparison_markdown", "fidelity_markdown", "load_runs", "make_all",
           "plot_by_dataset", "plot_vs_epsilon", "plot_vs_marginals", "quality_markdown",
           "summarise", "summary_markdown"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


#: The authors' reported max errors on ADULT, 64 marginals: (algorithm, k) -> {eps: error}.
AUTHORS = {
    ("FEM", 3): {0.1: 0.172, 0.15: 0.133, 0.2: 0.113, 0.25: 0.106, 0.5: 0.078, 1.0: 0.076},
    ("FEM", 5): {0.1: 0.154, 0.15: 0.133, 0.2: 0.110, 0.25: 0.108, 0.5: 0.080, 1.0: 0.071},
    ("HDMM", 3): {0.1: 0.369, 0.15: 0.246, 0.2: 0.185, 0.25: 0.148, 0.5: 0.074, 1.0: 0.037},
    ("HDMM", 5): {0.1: 0.239, 0.15: 0.159, 0.2: 0.119, 0.25: 0.096, 0.5: 0.048, 1.0: 0.024},
    ("DualQuery", 3): {0.1: 0.221, 0.2: 0.154, 0.5: 0.103},
}

_NUMERIC = ["n", "k", "queries", "epsilon", "delta", "rho_spent", "seed", "max_error",
            "mean_error", "fit_seconds", "peak_rss_mb", "rounds", "oracle_calls", "timeouts",
            "mean_tvd", "sample_max_error", "sample_mean_error", "sample_mean_tvd",
            "tstr_logreg", "tstr_boosting", "tstr_majority", "fit_cpu_seconds",
            "sample_pair_tvd", "mean_tvd_1way", "mean_tvd_2way", "max_tvd_2way", "mean_ks", "max_ks",
            "max_point_mass_diff", "impossible_pair_rate", "reference_impossible_pair_rate"]

#: (column, heading, digits) of :func:`quality_markdown`, each shown as "mean (sd)".
QUALITY_TABLE = [
    ("max_error", "max error", 4),
    ("mean_tvd", "mean TVD", 3),
    ("sample_max_error", "sample(n): max error", 4),
    ("sample_mean_error", "mean error", 6),
    ("sample_mean_tvd", "mean TVD", 3),
    ("tstr_logreg", "TSTR logreg", 3),
    ("tstr_boosting", "TSTR boosting", 3),
]


#: (column, heading, digits) of :func:`fidelity_markdown`, each shown as "mean (sd)".
FIDELITY_TABLE = [
    ("sample_max_error", "max error", 4),
    ("sample_mean_error", "mean error", 6),
    ("sample_mean_tvd", "mean TVD", 3),
    ("mean_tvd_2way", "2-way TVD", 3),
    ("max_ks", "max KS", 3),
    ("max_point_mass_diff", "max point-mass diff", 3),
    ("impossible_pair_rate", "impossible pairs", 4),
    ("reference_impossible_pair_rate", "(real halves)", 4),
    ("fit_cpu_seconds", "fit CPU s", 1),
]


def load_runs(path):
    """The CSV as a DataFrame: last row per run_id, numeric columns as floats."""
    df = pd.read_csv(path, dtype={"n_marginals": "str", "params": "str", "error": "str"})
    df = df.drop_duplicates("run_id", keep="last").reset_index(drop=True)
    for col in _NUMERIC:
        if col in df:
            df[col] = pd.to_numeric(df[col], errors="coerce")
    # number of marginals actually used ("all" resolved when the run recorded it)
    counts = pd.to_numeric(df.get("marginals"), errors="coerce") if "marginals" in df else None
    fallback = pd.to_numeric(df["n_marginals"], errors="coerce")
    df["m"] = fallback if counts is None else counts.fillna(fallback)
    return df


def _ok(df):
    return df[df["status"] == "ok"]


def summarise(df):
    """Mean over seeds per (dataset, k, n_marginals, epsilon, algorithm)."""
    keys = ["dataset", "k", "n_marginals", "epsilon", "algorithm"]
    ok = _ok(df)
    agg = ok.groupby(keys, sort=True).agg(
        max_error=("max_error", "mean"),
        max_error_sd=("max_error", "std"),
        mean_error=("mean_error", "mean"),
        fit_seconds=("fit_seconds", "mean"),
        peak_rss_mb=("peak_rss_mb", "mean"),
        rounds=("rounds", "mean"),
        seeds=("seed", "nunique"),
    )
    failed = df[df["status"] != "ok"].groupby(keys).agg(
        failed=("status", "size"), why=("error", "first"))
    out = agg.join(failed, how="outer").reset_index()
    out["failed"] = out["failed"].fillna(0).astype(int)
    out["seeds"] = out["seeds"].fillna(0).astype(int)
    return out


def _fmt(value, digits):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f"{value:.{digits}f}" if digits is not None else f"{value:g}"


def summary_markdown(df):
    """Markdown table of :func:`summarise` (blank cells: nothing ran)."""
    table = summarise(df)
    lines = [
        (
            "| dataset | k | marginals | epsilon | algorithm | max error (mean) | sd | "
            "mean error | fit s | peak RSS MB | rounds | seeds | failed |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table.itertuples(index=False):
        failed = str(row.failed)
        if row.failed and isinstance(row.why, str):
            failed += f" ({row.why[:60]})"
        lines.append(
            f"| {row.dataset} | {int(row.k)} | {row.n_marginals} | {row.epsilon:g} | "
            f"{row.algorithm} | {_fmt(row.max_error, 4)} | {_fmt(row.max_error_sd, 4)} | "
            f"{_fmt(row.mean_error, 6)} | {_fmt(row.fit_seconds, 1)} | "
            f"{_fmt(row.peak_rss_mb, 0)} | {_fmt(row.rounds, 0)} | {row.seeds} | {failed} |"
        )
    return "\n".join(lines) + "\n"


def _mean_sd_markdown(df, table, keys, labels):
    ok = _ok(df)
    head = " | ".join(heading for _, heading, _ in table)
    lines = [f"| {' | '.join(labels)} | {head} | seeds |",
             "|" + "---|" * (len(keys) + len(table) + 1)]
    for key, frame in ok.groupby(keys, sort=True):
        cells = []
        for col, _, digits in table:
            values = frame[col].dropna() if col in frame else pd.Series(dtype=float)
            if values.empty:
                cells.append("")
            elif len(values) == 1:
                cells.append(_fmt(values.iloc[0], digits))
            else:
                cells.append(f"{_fmt(values.mean(), digits)} ({_fmt(values.std(), digits)})")
        shown = [f"{v:g}" if isinstance(v, float) else str(int(v)) if isinstance(v, np.integer)
                 else str(v) for v in key]
        lines.append(f"| {' | '.join(shown)} | " + " | ".join(cells)
                     + f" | {frame['seed'].nunique()} |")
    return "\n".join(lines) + "\n"


def quality_markdown(df):
    """Markdown table of the quality columns: mean (sd) over seeds per setting.

    Blank cells: not measured (an answers-only baseline has no synthetic rows).
    """
    return _mean_sd_markdown(df, QUALITY_TABLE, ["dataset", "k", "n_marginals", "epsilon",
                                                 "algorithm"],
                             ["dataset", "k", "marginals", "epsilon", "algorithm"])


def fidelity_markdown(df):
    """Markdown table of the rows' errors and fidelity measures: mean (sd) over seeds.

    One line per (dataset, epsilon, algorithm); blank cells: not measured.
    """
    return _mean_sd_markdown(df, FIDELITY_TABLE, ["dataset", "epsilon", "algorithm"],
                             ["dataset", "epsilon", "algorithm"])


#: Our algorithm label -> the authors' name for it, for the comparison table.
OURS_TO_AUTHORS = {"fem": "FEM", "hdmm": "HDMM", "hdmm-simplex": "HDMM", "dualquery": "DualQuery"}


def comparison_markdown(df, dataset="adult", n_marginals="64"):
    """Our max error (mean over seeds) next to the authors' at each epsilon.

    One row per (algorithm, k) that ran on ``dataset`` with ``n_marginals``
    marginals; each cell is ``ours / authors`` (``-`` where one is missing).
    """
    ok = _ok(df)
    ok = ok[(ok["dataset"] == dataset) & (ok["n_marginals"] == str(n_marginals))]
    eps_grid = sorted(set(ok["epsilon"]) | {e for pts in AUTHORS.values() for e in pts})
    lines = ["| algorithm | k | " + " | ".join(f"eps {e:g}" for e in eps_grid) + " |",
             "|---|---|" + "---|" * len(eps_grid)]
    means = ok.groupby(["algorithm", "k", "epsilon"])["max_error"].mean()
    for (algorithm, k), _ in ok.groupby(["algorithm", "k"]):
        ref = AUTHORS.get((OURS_TO_AUTHORS.get(algorithm, ""), int(k)), {})
        cells = []
        for e in eps_grid:
            ours = means.get((algorithm, k, e))
            theirs = ref.get(e)
            text = "-" if ours is None else f"{ours:.3f}"
            text += "" if theirs is None else f" / {theirs:.3f}"
            cells.append(text)
        lines.append(f"| {algorithm} | {int(k)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _line(ax, frame, x, label, **kwargs):
    stats = frame.groupby(x)["max_error"].agg(["mean", "std"]).sort_index()
    ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0.0), label=label,
                marker="o", capsize=3, **kwargs)


def _colours(df):
    """A fixed colour per algorithm label (the same in every figure)."""
    labels = sorted(set(df["algorithm"]) | {"fem", "hdmm", "dualquery"})
    cycle = _pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    return {label: cycle[i % len(cycle)] for i, label in enumerate(labels)}


def plot_vs_epsilon(df, dataset, k, n_marginals, path, reference=True):
    """Max error against epsilon, one line per algorithm (the paper's Figure 1)."""
    sel = _ok(df)
    sel = sel[(sel["dataset"] == dataset) & (sel["k"] == k) & (sel["n_marginals"] == n_marginals)]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    colours = _colours(df)
    for algorithm, frame in sel.groupby("algorithm"):
        _line(ax, frame, "epsilon", algorithm, color=colours[algorithm])
    if reference and dataset == "adult" and str(n_marginals) == "64":
        for (name, kk), points in AUTHORS.items():
            if kk == k:
                eps = sorted(points)
                ax.plot(eps, [points[e] for e in eps], ls="--", marker="x", alpha=0.6,
                        color=colours.get(name.lower(), "grey"), label=f"{name} (authors)")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("max error")
    ax.set_yscale("log")
    ax.set_title(f"{dataset}, {k}-way, {n_marginals} marginals")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_vs_marginals(df, dataset, k, epsilon, path):
    """Max error against the number of marginals (the paper's Figure 2)."""
    sel = _ok(df)
    sel = sel[(sel["dataset"] == dataset) & (sel["k"] == k) & np.isclose(sel["epsilon"], epsilon)]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    colours = _colours(df)
    for algorithm, frame in sel.groupby("algorithm"):
        _line(ax, frame, "m", algorithm, color=colours[algorithm])
    ax.set_xlabel("number of marginals")
    ax.set_ylabel("max error")
    ax.set_yscale("log")
    ax.set_xscale("log", base=2)
    ax.set_title(f"{dataset}, {k}-way, epsilon = {epsilon:g}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_by_dataset(df, epsilon, figure, path, title=None):
    """One group of bars per dataset, one bar per algorithm: mean and sd of ``figure``."""
    sel = _ok(df)
    sel = sel[np.isclose(sel["epsilon"], epsilon) & sel[figure].notna()]
    stats = sel.groupby(["dataset", "algorithm"])[figure].agg(["mean", "std"])
    datasets = sorted(sel["dataset"].unique())
    algorithms = sorted(sel["algorithm"].unique())
    colours = _colours(df)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.5, 1.2 * len(datasets) + 2), 4.2))
    width = 0.8 / max(len(algorithms), 1)
    for i, algorithm in enumerate(algorithms):
        means = [stats["mean"].get((d, algorithm), np.nan) for d in datasets]
        sds = [stats["std"].get((d, algorithm), np.nan) for d in datasets]
        ax.bar(np.arange(len(datasets)) + (i - (len(algorithms) - 1) / 2) * width, means,
               width, yerr=np.nan_to_num(sds), capsize=2, label=algorithm,
               color=colours[algorithm])
    ax.set_xticks(np.arange(len(datasets)))
    ax.set_xticklabels([_slug(d) for d in datasets], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(figure.replace("sample_", "").replace("_", " ") + " (rows)")
    ax.set_title(title or f"epsilon = {epsilon:g} (mean and sd over seeds)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _slug(dataset):
    """A file-name-safe form of a dataset name (paths in generated:SCHEMA:N shortened)."""
    parts = [Path(p).stem if "/" in p or p.endswith(".json") else p for p in str(dataset).split(":")]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts))


def _has(df, column):
    return column in df and df[column].notna().any()


def make_all(csv_path, outdir, reference=True, plots=True):
    """Write the summary tables and every plot the CSV supports; returns the paths written.

    ``plots=False`` writes the tables only (no matplotlib needed).
    """
    df = load_runs(csv_path)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    summary = outdir / "summary.md"
    summary.write_text(summary_markdown(df))
    written.append(summary)
    if _has(df, "mean_tvd"):
        quality = outdir / "quality.md"
        quality.write_text(quality_markdown(df))
        written.append(quality)
    if _has(df, "mean_tvd_2way"):
        fidelity = outdir / "fidelity.md"
        fidelity.write_text(fidelity_markdown(df))
        written.append(fidelity)
    if reference and (df["dataset"] == "adult").any():
        comparison = outdir / "comparison.md"
        comparison.write_text(comparison_markdown(df))
        written.append(comparison)
    if not plots:
        return written
    ok = _ok(df)
    for (dataset, k, m), frame in ok.groupby(["dataset", "k", "n_marginals"]):
        if frame["epsilon"].nunique() > 1:
            path = outdir / f"max_error_vs_epsilon_{_slug(dataset)}_k{int(k)}_m{m}.png"
            plot_vs_epsilon(df, dataset, k, m, path, reference=reference)
            written.append(path)
    for (dataset, k, eps), frame in ok.groupby(["dataset", "k", "epsilon"]):
        if frame["m"].nunique() > 1:
            path = outdir / f"max_error_vs_marginals_{_slug(dataset)}_k{int(k)}_eps{eps:g}.png"
            plot_vs_marginals(df, dataset, k, eps, path)
            written.append(path)
    for eps, frame in ok.groupby("epsilon"):
        if frame["dataset"].nunique() < 2:
            continue
        for figure in ("sample_max_error", "mean_tvd_2way"):
            if _has(frame, figure):
                path = outdir / f"by_dataset_{figure.replace('sample_', '')}_eps{eps:g}.png"
                plot_by_dataset(df, eps, figure, path)
                written.append(path)
    return written
