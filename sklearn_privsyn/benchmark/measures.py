"""What a benchmark row measures besides the workload error of the answers.

On the rows ``sample(n)`` returns (a peer's own rows, a resample's real rows):
the workload's max error, mean error and mean per-marginal TVD; the fidelity
measures of ``../shared/datasets/REAL.md``
(:func:`sklearn_privsyn.metrics.fidelity_report`: 1- and 2-way TVD with
numbers cut at real deciles, Kolmogorov-Smirnov distance and point mass of
every number, the impossible-pair rate beside the real halves' rate); and
train-on-synthetic, test-on-real accuracy for the table's last column.
Answers-only references (HDMM-style, zeros) have no rows: those cells stay
empty.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FIDELITY_COLUMNS", "QUALITY_COLUMNS", "quality_metrics"]

#: The mean per-marginal TVD (AIM's measure) of the estimator's answers, the
#: same three errors on the rows ``sample(n)`` returns, train-on-synthetic,
#: test-on-real accuracy for ``target`` (the table's last column), and the
#: mean TVD of every pair of columns of the rows, in the workload's codes.
QUALITY_COLUMNS = [
    "mean_tvd", "sample_max_error", "sample_mean_error", "sample_mean_tvd", "target",
    "tstr_logreg", "tstr_boosting", "tstr_majority", "sample_pair_tvd",
]

#: The keys of :meth:`sklearn_privsyn.metrics.FidelityReport.summary`, measured on the rows.
FIDELITY_COLUMNS = [
    "mean_tvd_1way", "mean_tvd_2way", "max_tvd_2way", "mean_ks", "max_ks",
    "max_point_mass_diff", "impossible_pair_rate", "reference_impossible_pair_rate",
]


def synthetic_rows(spec, estimator, n_rows):
    """``sample(n)``'s rows (a peer's or a resample's own rows), or None for answers only."""
    if hasattr(estimator, "sample"):
        return estimator.sample(n_rows, random_state=spec["seed"])
    return getattr(estimator, "sample_", None)


def quality_metrics(spec, workload, frame, estimator, answer_error, answered=None):
    """The ``QUALITY_COLUMNS`` and ``FIDELITY_COLUMNS`` of one fitted run, and notes.

    ``answer_error`` is the absolute error of the estimator's answers on every
    cell of ``answered`` (its fitted workload, default ``workload``: a
    synthesizer may re-cut the bins of numbers); the rows are measured on
    ``workload``, the same cells for every algorithm of the grid. Train-on-synthetic accuracy is measured on a held-out 30% of the
    real rows (split with seed 0); the synthesizer was fitted on all rows,
    so those rows also shaped the synthetic data (``tstr = false`` in the
    grid skips it). A measure that fails (a
    target train-on-synthetic cannot predict, say) leaves its cells empty and
    says why in ``notes``, without failing the run.

    Returns
    -------
    metrics : dict
    notes : list of str
    """
    from sklearn_privsyn.metrics import (
        fidelity_report,
        pair_tvd,
        train_synthetic_test_real,
        workload_error,
    )

    offsets = (workload if answered is None else answered).marginal_offsets_[:-1]
    metrics = {"mean_tvd": float(np.mean(0.5 * np.add.reduceat(answer_error, offsets)))}
    notes = []
    synthetic = synthetic_rows(spec, estimator, len(frame))
    if synthetic is None:
        return metrics, notes
    sampled = workload_error(workload, frame, synthetic)
    pairs = pair_tvd(workload, frame, synthetic).to_numpy()
    metrics.update(
        sample_max_error=sampled.max_error,
        sample_mean_error=sampled.mean_error,
        sample_mean_tvd=float(sampled.per_marginal_tvd.mean()),
        sample_pair_tvd=float(pairs[np.triu_indices_from(pairs, 1)].mean()),
    )
    try:
        metrics.update(fidelity_report(frame, synthetic.reset_index(drop=True)).summary())
    except (TypeError, ValueError) as exc:
        notes.append(f"fidelity not measured: {type(exc).__name__}: {exc}")
    if not spec.get("tstr", True):
        return metrics, notes
    target = frame.columns[-1]
    try:
        scores = train_synthetic_test_real(frame, synthetic, target, workload=workload,
                                           train_on_real=False, random_state=0)
    except (TypeError, ValueError) as exc:
        notes.append(f"train-on-synthetic not measured: {type(exc).__name__}: {exc}")
        return metrics, notes
    metrics.update(
        target=target,
        tstr_logreg=float(scores.loc["logistic regression", "train on synthetic"]),
        tstr_boosting=float(scores.loc["gradient boosting", "train on synthetic"]),
        tstr_majority=float(scores.loc["majority class", "train on synthetic"]),
    )
    return metrics, notes
