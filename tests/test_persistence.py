"""Persistence: fitted synthesizers pickle, reload, sample identically, and hold no private data.

What may be stored on a fitted synthesizer is the DP output (records, weights,
the chosen queries and noisy measurements), the public domain and the public
row count ``n``. What must not be: the rows, their encoding, or the true
workload answers. The checks below walk every attribute recursively and search
the pickled bytes for the exact binary representation of every real value of
a continuous column (values that a synthetic sample, drawn uniformly within
bins, cannot reproduce). A control with a data-derived domain shows that the
byte search does find values that are stored.
"""

import io
import pickle
import struct
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_privsyn import (
    AdaptiveProjection,
    PrivacyLeakWarning,
    QueryWorkload,
    SyntheticDataTrainer,
)
from sklearn_privsyn.privacy import LedgerEntry, PrivacyLedger
from sklearn_privsyn.registry import all_synthesizers
from sklearn_privsyn.solvers import OneHotLayout

N = 137  # prime, and different from every synthetic record count used below

# Every registered synthesizer with its test parameters, a few more rounds (so
# that more of the fit is stored), and AdaptiveProjection's other representation.
ALGORITHMS = {
    **{entry.name: (entry.load(), {**entry.test_params,
                                   **({"rounds": 6} if "rounds" in entry.test_params else {})})
       for entry in all_synthesizers()},
    "AdaptiveProjection-products": (AdaptiveProjection, {"rounds": 1, "max_iter": 10,
                                                         "representation": "products"}),
}


@pytest.fixture(scope="module")
def private():
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], N),
            "code": rng.integers(0, 3, N),
            "amount": rng.uniform(0.0, 10.0, N),  # continuous: every value is unique
        }
    )


def _public_workload():
    return QueryWorkload(
        domain={"colour": ["red", "green", "blue"], "code": 3},
        bounds={"amount": (0.0, 10.0)},
        bins={"amount": 5},
        k=2,
    )


def _fit(name, X, workload=None):
    cls, params = ALGORITHMS[name]
    return cls(epsilon=1.0, workload=workload or _public_workload(), random_state=0,
               **params).fit(X)


def _walk(obj, path="estimator", seen=None):
    """Yield (path, value) for every object reachable through attributes and containers."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield path, obj
    if isinstance(obj, (str, bytes, int, float, bool, type(None), np.generic, type)):
        return
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            for i, value in enumerate(obj.ravel()):
                yield from _walk(value, f"{path}[{i}]", seen)
        return
    if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
        return
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _walk(key, f"{path} key", seen)
            yield from _walk(value, f"{path}[{key!r}]", seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, value in enumerate(obj):
            yield from _walk(value, f"{path}[{i}]", seen)
    else:
        attrs = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        for name in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, name):
                attrs[name] = getattr(obj, name)
        for name, value in attrs.items():
            yield from _walk(value, f"{path}.{name}", seen)


def _leaked_values(blob, values):
    """Real values whose exact float64 bytes occur in ``blob``."""
    return [v for v in values if struct.pack("<d", v) in blob]


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_pickle_round_trip_samples_identically(private, name):
    fitted = _fit(name, private)
    loaded = pickle.loads(pickle.dumps(fitted))
    for seed in (None, 0, 123):
        pd.testing.assert_frame_equal(fitted.sample(50, random_state=seed),
                                      loaded.sample(50, random_state=seed))
    for attr in ("records_", "weights_", "component_weights_"):
        if hasattr(fitted, attr):
            np.testing.assert_array_equal(getattr(loaded, attr), getattr(fitted, attr))
    assert loaded.epsilon_ == fitted.epsilon_ and loaded.delta_ == fitted.delta_
    assert loaded.ledger_.rho_spent == fitted.ledger_.rho_spent
    assert loaded.get_params(deep=False).keys() == fitted.get_params(deep=False).keys()


def test_joblib_round_trip(private, tmp_path):
    fitted = _fit("FEM", private)
    joblib.dump(fitted, tmp_path / "fem.joblib")
    loaded = joblib.load(tmp_path / "fem.joblib")
    pd.testing.assert_frame_equal(fitted.sample(40, random_state=1),
                                  loaded.sample(40, random_state=1))


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_fitted_synthesizer_stores_no_private_data(private, name):
    fitted = _fit(name, private)
    true_answers = fitted.workload_.answer(private)
    true_records = fitted.workload_.encode(private)
    for path, value in _walk(fitted):
        assert not isinstance(value, (pd.DataFrame, pd.Series)), f"{path} is a {type(value)}"
        if isinstance(value, np.ndarray) and value.dtype != object:
            # nothing shaped like the private rows: the row count n is public,
            # but no array should have one entry per private row
            assert N not in value.shape, f"{path} has shape {value.shape} (n = {N} rows)"
            if value.shape == true_answers.shape:
                assert not np.allclose(value, true_answers), f"{path} holds the true answers"
            assert value.shape != true_records.shape or not np.array_equal(
                value, true_records), f"{path} holds the encoded private rows"
    blob = pickle.dumps(fitted)
    assert _leaked_values(blob, private["amount"].to_numpy()) == []


def test_byte_search_finds_stored_values(private):
    """Control: with bounds read from the data, the min and max are stored, and found."""
    workload = QueryWorkload(domain={"colour": ["red", "green", "blue"], "code": 3},
                             bins={"amount": 5}, k=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        fitted = _fit("FEM", private, workload)
    leaked = _leaked_values(pickle.dumps(fitted), private["amount"].to_numpy())
    assert sorted(leaked) == [private["amount"].min(), private["amount"].max()]


def test_trainer_round_trip_and_no_private_rows(private):
    X = private[["colour", "amount"]].assign(
        colour=private["colour"].map({"red": 0, "green": 1, "blue": 2}))
    y = pd.Series(private["code"].to_numpy(), name="code")
    workload = QueryWorkload(domain={"colour": 3, "code": 3}, bounds={"amount": (0.0, 10.0)},
                             bins={"amount": 5}, k=2)
    cls, params = ALGORITHMS["FEM"]
    synthesizer = cls(epsilon=1.0, workload=workload, random_state=0, **params)
    trainer = SyntheticDataTrainer(synthesizer, LogisticRegression(), n_synthetic=200,
                                   random_state=0).fit(X, y)
    buffer = io.BytesIO()
    joblib.dump(trainer, buffer)
    buffer.seek(0)
    loaded = joblib.load(buffer)
    np.testing.assert_allclose(loaded.predict_proba(X), trainer.predict_proba(X))
    assert _leaked_values(buffer.getvalue(), private["amount"].to_numpy()) == []
    for path, value in _walk(trainer):
        assert not isinstance(value, (pd.DataFrame, pd.Series)), f"{path} is a {type(value)}"
        if isinstance(value, np.ndarray):
            assert N not in value.shape, f"{path} has shape {value.shape}"


# Classes that moved, and the path that pickles written before the move name them by.
MOVED = {PrivacyLedger: "sklearn_privsyn.privacy", LedgerEntry: "sklearn_privsyn.privacy",
         OneHotLayout: "sklearn_privsyn.solvers._base",
         AdaptiveProjection: "sklearn_privsyn.adaptive"}


def _as_pickled_before_the_moves(blob):
    """A protocol-0 pickle with every moved class named by its old path."""
    for cls, old in MOVED.items():
        blob = blob.replace(f"c{cls.__module__}\n{cls.__name__}\n".encode(),
                            f"c{old}\n{cls.__name__}\n".encode())
    return blob


@pytest.mark.parametrize("name", ["FEM", "AdaptiveProjection"])
def test_pickles_of_moved_classes_load_from_their_old_paths(private, name):
    fitted = _fit(name, private)
    blob = pickle.dumps(fitted, protocol=0)
    old = _as_pickled_before_the_moves(blob)
    for cls, path in MOVED.items():
        assert f"c{cls.__module__}\n{cls.__name__}\n".encode() not in old
    assert b"csklearn_privsyn.privacy\nPrivacyLedger\n" in old
    assert b"csklearn_privsyn.solvers._base\nOneHotLayout\n" in old
    loaded = pickle.loads(old)
    assert type(loaded) is type(fitted)
    assert loaded.ledger_.entries == fitted.ledger_.entries
    pd.testing.assert_frame_equal(loaded.sample(30, random_state=4),
                                  fitted.sample(30, random_state=4))
