"""A column in no marginal the fit measured is named in an UncoveredColumnWarning.

Through the Python API a workload's ``marginals=`` may leave a column out; the
fit then learns nothing of it. Every registered synthesizer says so once per
fit, naming the columns (public: the schema), and stays silent when every
column is measured: a full workload, the advice of the warning followed, or
AdaptiveProjection's schedules that open with every 1-way marginal.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload, UncoveredColumnWarning
from sklearn_privsyn.registry import all_synthesizers

DOMAIN = {"a": 3, "b": ["x", "y"], "c": 4}


def frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.integers(3, size=n), "b": rng.choice(["x", "y"], size=n),
                         "c": rng.integers(4, size=n)})


def uncovered_warnings(est, marginals):
    est.set_params(workload=QueryWorkload(domain=DOMAIN, marginals=marginals))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(frame())
    return [str(w.message) for w in caught if issubclass(w.category, UncoveredColumnWarning)]


def create(entry):
    params = {"epsilon": 1.0, "random_state": 0, **entry.test_params}
    if entry.name == "AdaptiveProjection":
        params["rounds"] = 1  # everything at once: only the workload is measured
    return entry.create(**params)


@pytest.mark.parametrize("entry", all_synthesizers(), ids=lambda e: e.name)
def test_a_column_in_no_marginal_is_named_once(entry):
    messages = uncovered_warnings(create(entry), [("a", "b")])
    assert len(messages) == 1
    assert "columns ['c'] are in no marginal the fit measured" in messages[0]
    assert "('c',)" in messages[0]  # the marginal to add
    assert entry.name in messages[0]


@pytest.mark.parametrize("entry", all_synthesizers(), ids=lambda e: e.name)
@pytest.mark.parametrize("marginals", [[("a", "b"), ("c",)], [("a", "b", "c")], None])
def test_every_column_measured_warns_nothing(entry, marginals):
    assert uncovered_warnings(create(entry), marginals) == []


@pytest.mark.parametrize("rounds", [0, 2])
def test_adaptive_schedules_that_measure_every_one_way_marginal_warn_nothing(rounds):
    est = AdaptiveProjection(epsilon=1.0, rounds=rounds, max_iter=10, random_state=0)
    assert uncovered_warnings(est, [("a", "b")]) == []
    assert est.n_rounds_ == rounds
