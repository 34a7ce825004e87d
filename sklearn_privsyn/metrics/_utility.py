"""Machine-learning utility of synthetic data: train on synthetic, test on real.

A classifier for one column (the target) is trained on the synthetic rows and
scored on real rows it never saw, beside the same classifier trained on real
rows. Both read the real data: the scores are for the data owner and are not
differentially private.

Features are the workload's codes of the other columns, so real and
synthetic rows are encoded alike whatever the dtypes: one-hot codes for
logistic regression, the codes themselves (bins are ordered) for gradient
boosting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

__all__ = ["MODELS", "train_synthetic_test_real"]

#: Model name -> factory of ``(layout block sizes of the features, seed) -> classifier``.
MODELS = {
    "logistic regression": lambda sizes, seed: make_pipeline(
        OneHotEncoder(categories=[np.arange(s) for s in sizes], handle_unknown="ignore"),
        LogisticRegression(max_iter=1000),
    ),
    "gradient boosting": lambda sizes, seed: HistGradientBoostingClassifier(random_state=seed),
}


def _fitted(workload, real):
    try:
        check_is_fitted(workload)
    except NotFittedError:
        workload = clone(workload).fit(real)
    return workload


# Below this many training rows models fit on one thread: OpenMP's start-up and
# spin-waiting cost more than the fit (10-30x slower on a busy 2-core machine).
_ONE_THREAD_ROWS = 10_000


def _fit_or_constant(model, X, y):
    """A model fitted on (X, y); one class only gives a constant prediction."""
    if np.unique(y).size < 2:
        return DummyClassifier(strategy="most_frequent").fit(X, y)
    with threadpool_limits(1 if len(y) < _ONE_THREAD_ROWS else None):
        return model.fit(X, y)


def train_synthetic_test_real(real, synthetic, target, *, workload, real_test=None,
                              test_size=0.3, models=None, train_on_real=True, random_state=0):
    """Accuracy on real rows of classifiers trained on synthetic and on real rows.

    Parameters
    ----------
    real : DataFrame
        Real rows. Without ``real_test``, a ``test_size`` share is held out
        to score every model and the rest trains the real-data models.
    synthetic : DataFrame
        Synthetic rows with the same columns.
    target : str
        The column to predict.
    workload : QueryWorkload
        Encodes the rows (fitted, or fitted here on ``real``).
    real_test : DataFrame, default=None
        Real rows to score on; then all of ``real`` trains. Hold these rows
        out of the synthesizer's fit too for a test the synthetic data has
        never seen.
    test_size : float, default=0.3
        Share of ``real`` held out when ``real_test`` is None.
    models : list of str, default=None
        Names of :data:`MODELS`; None uses all.
    train_on_real : bool, default=True
        Also train on the real training rows (the ``"train on real"``
        column); False skips those fits.
    random_state : int, default=0
        Seed of the split and of the models.

    Returns
    -------
    scores : DataFrame
        One row per model plus ``"majority class"`` (the most frequent class
        of the training rows); columns ``"train on real"`` and ``"train on
        synthetic"``: accuracy on the real test rows.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(0, 2, 400)
    >>> real = pd.DataFrame({"x": x, "y": np.where(rng.random(400) < 0.9, x, 1 - x)})
    >>> wl = QueryWorkload(domain={"x": 2, "y": 2}, k=2)
    >>> scores = train_synthetic_test_real(real, real.sample(frac=1, random_state=1), "y",
    ...                                    workload=wl, models=["logistic regression"])
    >>> scores.round(2)
                         train on real  train on synthetic
    logistic regression           0.93                0.93
    majority class                0.60                0.60
    """
    workload = _fitted(workload, real)
    columns = list(workload.columns_)
    if target not in columns:
        raise ValueError(f"target {target!r} is not a column of the workload; its columns are "
                         f"{columns}.")
    if len(columns) < 2:
        raise ValueError("A target needs at least one other column to predict it from.")
    names = list(MODELS) if models is None else list(models)
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {list(MODELS)}.")
    t = columns.index(target)
    features = [a for a in range(len(columns)) if a != t]
    sizes = [workload.layout_.block_sizes[a] for a in features]

    real_codes = workload.encode(real)
    if real_test is None:
        train_codes, test_codes = train_test_split(real_codes, test_size=test_size,
                                                   random_state=random_state)
    else:
        train_codes, test_codes = real_codes, workload.encode(real_test)
    synthetic_codes = workload.encode(synthetic)

    def split(codes):
        return codes[:, features], codes[:, t]

    X_test, y_test = split(test_codes)
    trained_on = {"train on real": train_codes} if train_on_real else {}
    trained_on["train on synthetic"] = synthetic_codes
    factories = {name: MODELS[name] for name in names}
    factories["majority class"] = lambda sizes, seed: DummyClassifier()
    scores = {
        name: [
            float(np.mean(_fit_or_constant(make(sizes, random_state), *split(codes))
                          .predict(X_test) == y_test))
            for codes in trained_on.values()
        ]
        for name, make in factories.items()
    }
    return pd.DataFrame.from_dict(scores, orient="index", columns=list(trained_on))
