"""Tests of SyntheticDataTrainer: delegation, scikit-learn integration, privacy attributes."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone, is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.tree import DecisionTreeRegressor

from sklearn_privsyn import FEM, QueryWorkload, SyntheticDataTrainer

N = 300


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"colour": rng.choice(["red", "green", "blue"], N), "size": rng.integers(0, 4, N)}
    )
    # label is "yes" exactly for red rows: a synthesizer keeping the 2-way
    # marginal (colour, label) lets a model learn it.
    y = pd.Series(np.where(X["colour"] == "red", "yes", "no"), name="label")
    return X, y


def _workload():
    return QueryWorkload(
        domain={"colour": ["red", "green", "blue"], "size": 4, "label": ["no", "yes"]}, k=2
    )


def _fem(epsilon=3.0, random_state=0):
    return FEM(
        epsilon=epsilon,
        workload=_workload(),
        rounds=15,
        samples_per_round=4,
        solver="brute",
        random_state=random_state,
    )


def _classifier():
    encode = ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="ignore"), ["colour"])],
                               remainder="passthrough")
    return make_pipeline(encode, LogisticRegression())


class RecordingClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the majority class and remembers what it was trained on."""

    def fit(self, X, y):
        self.X_seen_ = X.copy()
        self.y_seen_ = np.asarray(y).copy()
        values, counts = np.unique(self.y_seen_, return_counts=True)
        self.classes_ = values
        self.majority_ = values[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


class StubSynthesizer(BaseEstimator):
    """Returns fixed synthetic rows: lets the split and the errors be checked exactly."""

    def __init__(self, rows=None):
        self.rows = rows

    def fit(self, X, y=None):
        self.n_features_in_ = np.asarray(X).shape[1]
        self.target_name_ = "y"
        self.epsilon_, self.delta_, self.rho_ = 0.5, 1e-6, 0.01
        return self

    def sample(self, n_samples, random_state=None):
        rows = np.asarray(self.rows, dtype=object)
        return np.resize(rows, (n_samples, rows.shape[1]))


def test_fit_trains_the_estimator_on_synthetic_rows_only(data):
    X, y = data
    trainer = SyntheticDataTrainer(_fem(), RecordingClassifier(), n_synthetic=123,
                                   random_state=0).fit(X, y)
    seen = trainer.estimator_.X_seen_
    assert len(seen) == 123 and len(trainer.estimator_.y_seen_) == 123
    assert list(seen.columns) == ["colour", "size"]
    # what the estimator saw is exactly a sample of the fitted synthesizer
    expected = trainer.synthesizer_.sample(123, random_state=0)
    pd.testing.assert_frame_equal(seen, expected.iloc[:, :-1])
    np.testing.assert_array_equal(trainer.estimator_.y_seen_, expected["label"].to_numpy())
    assert trainer.target_name_ == "label"


def test_default_n_synthetic_is_the_number_of_training_rows(data):
    X, y = data
    trainer = SyntheticDataTrainer(_fem(), RecordingClassifier()).fit(X.iloc[:250], y.iloc[:250])
    assert len(trainer.estimator_.X_seen_) == 250


def test_privacy_attributes_are_the_synthesizers(data):
    X, y = data
    trainer = SyntheticDataTrainer(_fem(epsilon=2.0), _classifier(), random_state=0).fit(X, y)
    assert trainer.epsilon_ == trainer.synthesizer_.epsilon_
    assert 0 < trainer.epsilon_ <= 2.0
    assert trainer.delta_ == pytest.approx(1.0 / N**2)
    assert trainer.rho_ == trainer.synthesizer_.rho_
    assert trainer.synthesizer_.ledger_.rho_spent <= trainer.rho_ * (1 + 1e-9)


def test_predictions_delegate_and_learn_the_relation(data):
    X, y = data
    trainer = SyntheticDataTrainer(_fem(), _classifier(), random_state=0).fit(X, y)
    np.testing.assert_array_equal(trainer.predict(X), trainer.estimator_.predict(X))
    np.testing.assert_allclose(trainer.predict_proba(X), trainer.estimator_.predict_proba(X))
    np.testing.assert_allclose(
        trainer.decision_function(X), trainer.estimator_.decision_function(X)
    )
    np.testing.assert_array_equal(trainer.classes_, ["no", "yes"])
    assert trainer.score(X, y) == pytest.approx(np.mean(trainer.predict(X) == y))
    # the label is a function of colour; the synthetic (colour, label) marginal carries it
    assert trainer.score(X, y) > 0.9
    assert trainer.n_features_in_ == 2
    assert list(trainer.feature_names_in_) == ["colour", "size"]


def test_available_if_follows_the_estimator(data):
    X, y = data
    assert hasattr(SyntheticDataTrainer(_fem(), LogisticRegression()), "predict_proba")
    assert not hasattr(SyntheticDataTrainer(_fem(), DecisionTreeRegressor()), "predict_proba")
    assert not hasattr(SyntheticDataTrainer(_fem(), RecordingClassifier()), "decision_function")
    assert not hasattr(SyntheticDataTrainer(_fem(), RecordingClassifier()), "predict_proba")


def test_estimator_type_follows_the_estimator():
    assert is_classifier(SyntheticDataTrainer(_fem(), LogisticRegression()))
    assert is_regressor(SyntheticDataTrainer(_fem(), LinearRegression()))
    assert not is_classifier(SyntheticDataTrainer(_fem(), LinearRegression()))


def test_regression_target():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.integers(0, 4, 1000)})
    y = pd.Series(X["a"].to_numpy(), name="t")  # t == a
    # default rounds (about 120 here): enough for the 16-cell (a, t) marginal
    fem = FEM(epsilon=3.0, workload=QueryWorkload(domain={"a": 4, "t": 4}, k=2),
              samples_per_round=4, solver="brute", random_state=0)
    trainer = SyntheticDataTrainer(fem, DecisionTreeRegressor(random_state=0),
                                   random_state=0).fit(X, y)
    assert trainer.score(X, y) > 0.8
    assert not hasattr(trainer, "classes_")


def test_numpy_input_splits_the_last_column():
    X = np.array([[0, 1], [1, 0]] * 50)
    y = np.array([0, 1] * 50)
    rows = [[0, 1, 0], [1, 0, 1], [1, 1, 1]]
    trainer = SyntheticDataTrainer(StubSynthesizer(rows), RecordingClassifier(),
                                   n_synthetic=6).fit(X, y)
    np.testing.assert_array_equal(trainer.estimator_.X_seen_, [[0, 1], [1, 0], [1, 1]] * 2)
    np.testing.assert_array_equal(trainer.estimator_.y_seen_, [0, 1, 1] * 2)
    assert trainer.estimator_.X_seen_.dtype.kind == "i"
    assert trainer.epsilon_ == 0.5 and trainer.delta_ == 1e-6 and trainer.rho_ == 0.01
    assert not hasattr(trainer, "feature_names_in_")


def test_single_synthetic_class_is_a_clear_error():
    X = np.zeros((20, 1), dtype=int)
    y = np.array([0, 1] * 10)
    trainer = SyntheticDataTrainer(StubSynthesizer([[0, 1]]), LogisticRegression())
    with pytest.raises(ValueError, match="single class of the target"):
        trainer.fit(X, y)


def test_y_is_required(data):
    X, _ = data
    with pytest.raises(ValueError, match="needs a target y"):
        SyntheticDataTrainer(_fem(), LogisticRegression()).fit(X, None)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_synthetic": 0}, "n_synthetic"),
        ({"estimator": "logreg"}, "estimator"),
        ({"synthesizer": LogisticRegression()}, "synthesizer"),
    ],
)
def test_invalid_parameters(data, params, match):
    X, y = data
    kwargs = {"synthesizer": _fem(), "estimator": LogisticRegression(), **params}
    with pytest.raises(ValueError, match=match):
        SyntheticDataTrainer(**kwargs).fit(X, y)


def test_same_seeds_give_the_same_model(data):
    X, y = data
    a = SyntheticDataTrainer(_fem(random_state=3), _classifier(), random_state=4).fit(X, y)
    b = SyntheticDataTrainer(_fem(random_state=3), _classifier(), random_state=4).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X))


def test_get_params_exposes_nested_parameters():
    trainer = SyntheticDataTrainer(_fem(), LogisticRegression(C=2.0))
    params = trainer.get_params(deep=True)
    assert params["synthesizer__epsilon"] == 3.0
    assert params["estimator__C"] == 2.0
    cloned = clone(trainer).set_params(synthesizer__epsilon=0.5)
    assert cloned.synthesizer.epsilon == 0.5 and trainer.synthesizer.epsilon == 3.0


def test_works_as_a_pipeline_step(data):
    X, y = data
    keep = FunctionTransformer(lambda frame: frame[["colour", "size"]])  # stateless
    pipe = Pipeline([("select", keep),
                     ("model", SyntheticDataTrainer(_fem(), _classifier(), random_state=0))])
    pipe.fit(X, y)
    assert pipe.score(X, y) == pytest.approx(pipe[-1].score(X, y))
    assert pipe.predict_proba(X).shape == (N, 2)


def test_cross_validation_fits_the_synthesizer_on_each_training_fold(data):
    X, y = data
    trainer = SyntheticDataTrainer(_fem(), _classifier(), random_state=0)
    result = cross_validate(trainer, X, y, cv=3, return_estimator=True)
    assert len(result["test_score"]) == 3
    for fitted in result["estimator"]:
        # delta = 1 / n**2 for the n rows the synthesizer saw: the training fold only
        assert fitted.synthesizer_.delta_ == pytest.approx(1.0 / (2 * N // 3) ** 2)
        assert len(fitted.synthesizer_.sample(5, random_state=0)) == 5
    scores = cross_val_score(trainer, X, y, cv=3)
    np.testing.assert_allclose(scores, result["test_score"])


def test_grid_search_tunes_nested_parameters(data):
    X, y = data
    trainer = SyntheticDataTrainer(_fem(), DummyClassifier(), random_state=0)
    grid = GridSearchCV(
        trainer,
        {"synthesizer__epsilon": [0.5, 3.0], "estimator__strategy": ["prior", "most_frequent"]},
        cv=2,
    ).fit(X, y)
    assert grid.best_params_["synthesizer__epsilon"] in (0.5, 3.0)
    best = grid.best_estimator_
    assert best.synthesizer_.epsilon == grid.best_params_["synthesizer__epsilon"]
    assert best.epsilon_ <= grid.best_params_["synthesizer__epsilon"]
    assert len(grid.cv_results_["mean_test_score"]) == 4
