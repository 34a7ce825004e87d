"""Checks every registered synthesizer must pass (scikit-learn's common tests, for this package).

The list comes from :mod:`sklearn_privsyn.registry`: registering a synthesizer
puts it through these checks with its ``test_params``, as well as through the
bad-input, persistence and command-line tests, and through scikit-learn's own
estimator checks (``parametrize_with_checks``). ``COMMON_CHECKS`` are plain
functions of an entry so that ``tests/test_registry.py`` can run them on a toy
synthesizer registered for one test.
"""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_privsyn import PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn._base import BaseSynthesizer
from sklearn_privsyn.registry import all_synthesizers

DOMAIN = {"a": 3, "b": ["x", "y"]}


def frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.integers(3, size=n), "b": rng.choice(["x", "y"], size=n)})


def make(entry, **params):
    return entry.create(**{"epsilon": 1.0, "workload": QueryWorkload(domain=DOMAIN, k=2),
                           "random_state": 0, **entry.test_params, **params})


def check_entry_names_a_synthesizer(entry):
    cls = entry.load()
    assert issubclass(cls, BaseSynthesizer)
    assert cls.__name__ == entry.name
    assert re.fullmatch(r"[a-z][a-z0-9_-]*", entry.cli_name)
    assert entry.description.strip()
    unknown = set(entry.test_params) - set(cls().get_params())
    assert not unknown, f"test_params of {entry.name} name no parameter: {sorted(unknown)}"


def check_quick_fit_spends_within_the_budget_and_samples_the_columns(entry):
    X = frame()
    est = make(entry).fit(X)
    assert est.ledger_.rho_spent <= est.rho_
    assert 0 < est.epsilon_ <= 1.0
    assert isinstance(est.n_rounds_, (int, np.integer)) and est.n_rounds_ >= 0
    sample = est.sample(25, random_state=1)
    assert list(sample.columns) == list(X.columns)
    assert (sample.dtypes == X.dtypes).all()
    assert set(sample["a"]) <= {0, 1, 2} and set(sample["b"]) <= {"x", "y"}


def check_same_random_state_same_output(entry):
    first = make(entry).fit(frame())
    again = make(entry).fit(frame())
    pd.testing.assert_frame_equal(first.sample(30), again.sample(30))
    assert first.ledger_.entries == again.ledger_.entries


def check_clone_and_pickle(entry):
    est = make(entry)
    assert repr(clone(est)) == repr(est)
    fitted = est.fit(frame())
    loaded = pickle.loads(pickle.dumps(fitted))
    pd.testing.assert_frame_equal(loaded.sample(20, random_state=2),
                                  fitted.sample(20, random_state=2))


COMMON_CHECKS = [
    check_entry_names_a_synthesizer,
    check_quick_fit_spends_within_the_budget_and_samples_the_columns,
    check_same_random_state_same_output,
    check_clone_and_pickle,
]


@pytest.mark.parametrize("check", COMMON_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("entry", all_synthesizers(), ids=lambda e: e.name)
def test_registered_synthesizer(entry, check):
    check(entry)


def _conformance_instance(entry):
    """The entry with its test parameters and a solver that scales to the checks' tables.

    scikit-learn's checks fit arrays of up to ten float columns (ten learned bins
    each): the brute-force oracle of ``test_params`` cannot enumerate that domain.
    """
    params = {"epsilon": 1.0, "random_state": 0, **entry.test_params}
    if "solver" in entry.load()().get_params():
        params["solver"] = "heuristic"
    return entry.create(**params)


# MWEM keeps one weight per point of the domain and refuses domains above
# max_domain_size (documented); check_dtype_object's table has 4e10 points.
_EXPECTED_FAILURES = {
    "MWEM": {"check_dtype_object": "MWEM materialises the domain (10 ten-bin columns: "
                                   "4e10 points, above max_domain_size)"},
}


@parametrize_with_checks(
    [_conformance_instance(entry) for entry in all_synthesizers()],
    expected_failed_checks=lambda est: _EXPECTED_FAILURES.get(type(est).__name__, {}),
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks feed arrays with no public domain: the leak warning is expected
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)
