"""Train any scikit-learn model on differentially private synthetic data.

:class:`SyntheticDataTrainer` wraps a synthesizer and a downstream estimator:
``fit(X, y)`` fits the synthesizer on the private ``(X, y)``, samples synthetic
rows, and fits the estimator on those rows only. The fitted model is then
post-processing of the synthesizer's differentially private output.
"""

from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._sklearn_private import HasMethods, Interval, fit_context

__all__ = ["SyntheticDataTrainer"]


def _estimator_has(attr):
    """Check the fitted estimator if there is one, else the unfitted one."""

    def check(self):
        if hasattr(self, "estimator_"):
            getattr(self.estimator_, attr)
        else:
            getattr(self.estimator, attr)
        return True

    return check


class SyntheticDataTrainer(MetaEstimatorMixin, BaseEstimator):
    """Fit an estimator on differentially private synthetic data.

    ``fit(X, y)`` clones ``synthesizer`` and fits it on ``X`` with ``y`` as one
    more column, draws ``n_synthetic`` synthetic rows, splits the synthetic
    target column back out, and fits a clone of ``estimator`` on the synthetic
    rows. ``predict``, ``predict_proba``, ``predict_log_proba``,
    ``decision_function`` and ``score`` are those of the fitted estimator, so
    the model can be tested on real data.

    The synthesizer's workload must cover the target column: with a
    :class:`~sklearn_privsyn.QueryWorkload` domain, the target's entry is
    keyed by ``y.name`` when ``y`` is a named :class:`pandas.Series`, and by
    ``"y"`` otherwise. Marginals that include the target are what carry the
    relation between features and target into the synthetic data.

    **Privacy cost.** Only the synthesizer reads the private data; the
    estimator sees synthetic rows only. So one ``fit`` is exactly as private as
    one ``synthesizer.fit`` on the same rows: ``(synthesizer.epsilon,
    delta)``-DP for the rows passed to ``fit`` (see ``epsilon_``, ``delta_``
    and ``rho_``), and the fitted model may be released. Every further ``fit``
    spends the full budget again, and the costs add up for every row involved
    (in zCDP, the ``rho`` of the fits add). Under cross-validation with ``K``
    folds, each row is in ``K - 1`` training folds, so it is charged ``K - 1``
    times: ``cross_val_score`` with 5 folds costs each row 4 budgets. A grid
    search over ``G`` candidates with ``K`` folds plus a refit costs each row
    ``G (K - 1) + 1`` budgets. On top of that, the *scores* computed on real
    validation folds, and any choice made from them (the best
    hyperparameters), are not protected at all: they read real rows directly.
    Cross-validate on public or already released data, or account for the
    repeated fits and treat the reported scores as private information.

    Parameters
    ----------
    synthesizer : estimator
        An unfitted synthesizer with ``fit(X, y)`` and
        ``sample(n_samples, random_state=None)``, such as
        :class:`~sklearn_privsyn.FEM`. It is cloned.
    estimator : estimator
        The model trained on the synthetic data (classifier or regressor). It
        is cloned.
    n_synthetic : int, default=None
        Number of synthetic rows to train on; ``None`` draws as many rows as
        ``X`` has (the row count is public under the replace-one
        neighbouring relation).
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of synthetic rows from the fitted synthesizer
        (``None`` uses the synthesizer's own ``random_state``). The
        synthesizer's fit is controlled by its own ``random_state``
        parameter (``synthesizer__random_state``).

    Attributes
    ----------
    synthesizer_ : estimator
        The fitted clone of ``synthesizer``.
    estimator_ : estimator
        The clone of ``estimator`` fitted on the synthetic rows.
    classes_ : ndarray
        The classes the fitted classifier knows (those present in the
        synthetic target); only for classifiers.
    n_features_in_ : int
        Number of features of ``X``.
    feature_names_in_ : ndarray of str
        Column names of ``X``, when ``X`` is a DataFrame with string names.
    target_name_ : str
        The name of the target column in the synthetic data.
    epsilon_, delta_, rho_ : float
        The privacy spent by the synthesizer's fit: ``(epsilon_,
        delta_)``-DP, ``rho_``-zCDP budget.

    See Also
    --------
    sklearn_privsyn.FEM : The recommended synthesizer.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privsyn import FEM, QueryWorkload, SyntheticDataTrainer
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"a": rng.integers(0, 2, 400), "b": rng.integers(0, 3, 400)})
    >>> y = pd.Series(X["a"].to_numpy(), name="label")
    >>> workload = QueryWorkload(domain={"a": 2, "b": 3, "label": 2}, k=2)
    >>> fem = FEM(epsilon=3.0, workload=workload, rounds=20, samples_per_round=5,
    ...           solver="brute", random_state=0)
    >>> model = SyntheticDataTrainer(fem, LogisticRegression(), random_state=0)
    >>> model.fit(X, y).score(X, y) > 0.9
    True
    >>> model.epsilon_ <= 3.0
    True
    """

    _parameter_constraints: dict = {
        "synthesizer": [HasMethods(["fit", "sample"])],
        "estimator": [HasMethods(["fit"])],
        "n_synthetic": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(self, synthesizer, estimator, *, n_synthetic=None, random_state=None):
        self.synthesizer = synthesizer
        self.estimator = estimator
        self.n_synthetic = n_synthetic
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Fit the synthesizer on ``(X, y)``, then the estimator on synthetic rows.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The private features.
        y : array-like of shape (n_samples,)
            The private target.
        **fit_params : dict
            Passed to the estimator's ``fit`` (for instance
            ``sample_weight`` of the right length for ``n_synthetic``).

        Returns
        -------
        self : SyntheticDataTrainer
            The fitted trainer.
        """
        if y is None:
            raise ValueError(
                "SyntheticDataTrainer needs a target y: it synthesises X and y together"
            )
        n_rows = len(X)
        n_synthetic = n_rows if self.n_synthetic is None else int(self.n_synthetic)
        synthesizer = clone(self.synthesizer).fit(X, y)
        synthetic = synthesizer.sample(n_synthetic, random_state=self.random_state)
        X_syn, y_syn = self._split(synthetic, synthesizer)
        if is_classifier(self.estimator) and len(pd.unique(np.asarray(y_syn))) < 2:
            raise ValueError(
                f"the {n_synthetic} synthetic rows hold a single class of the target "
                f"({np.asarray(y_syn)[0]!r}), so a classifier cannot be trained; use a "
                "larger epsilon, more rows (n_synthetic) or a workload with marginals "
                "that include the target"
            )
        estimator = clone(self.estimator).fit(X_syn, y_syn, **fit_params)

        self.synthesizer_ = synthesizer
        self.estimator_ = estimator
        self.target_name_ = synthesizer.target_name_
        self.n_features_in_ = synthesizer.n_features_in_
        if hasattr(synthesizer, "feature_names_in_"):
            self.feature_names_in_ = synthesizer.feature_names_in_
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.epsilon_ = synthesizer.epsilon_
        self.delta_ = synthesizer.delta_
        self.rho_ = synthesizer.rho_
        return self

    @staticmethod
    def _split(synthetic, synthesizer):
        """Synthetic features and target: the target is the last column."""
        if isinstance(synthetic, pd.DataFrame):
            return synthetic.iloc[:, :-1], synthetic.iloc[:, -1]
        synthetic = np.asarray(synthetic)
        y = synthetic[:, -1]
        if y.dtype == object:
            y = pd.Series(y).infer_objects().to_numpy()
        X = synthetic[:, :-1]
        if X.dtype == object:
            X = pd.DataFrame(X).infer_objects().to_numpy()
        return X, y

    @property
    def classes_(self):
        """Classes of the fitted classifier (from the synthetic target)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.classes_

    @available_if(_estimator_has("predict"))
    def predict(self, X, **params):
        """Predict with the estimator fitted on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Data to predict (real data is fine: prediction is not a release).
        **params : dict
            Passed to the estimator's ``predict``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X, **params)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X, **params):
        """Class probabilities from the estimator fitted on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        **params : dict
            Passed to the estimator's ``predict_proba``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X, **params)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X, **params):
        """Log class probabilities from the estimator fitted on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        **params : dict
            Passed to the estimator's ``predict_log_proba``.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_log_proba(X, **params)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X, **params):
        """Decision function of the estimator fitted on synthetic data.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        **params : dict
            Passed to the estimator's ``decision_function``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X, **params)

    @available_if(_estimator_has("score"))
    def score(self, X, y, **params):
        """Score of the estimator fitted on synthetic data, on ``(X, y)``.

        Scoring on real data reads it directly: the score is not
        differentially private.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **params : dict
            Passed to the estimator's ``score``.

        Returns
        -------
        score : float
            Accuracy for classifiers, R^2 for regressors (the estimator's own
            ``score``).
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.score(X, y, **params)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags.required = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags
