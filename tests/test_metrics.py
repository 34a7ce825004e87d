from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from sklearn_privsyn.metrics import WorkloadError, synthesizer_error, workload_error
from sklearn_privsyn.workload import QueryWorkload

DOMAIN = {"a": ["x", "y", "z"], "b": 2, "c": [True, False]}


def _frame(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n, p=[0.6, 0.3, 0.1]),
            "b": rng.integers(0, 2, n),
            "c": rng.random(n) < 0.5,
        }
    )


def _pandas_tvd(real, synth, cols):
    p = real.value_counts(subset=list(cols), normalize=True)
    q = synth.value_counts(subset=list(cols), normalize=True)
    p, q = p.align(q, fill_value=0.0)
    return 0.5 * float(np.abs(p - q).sum()), float(np.abs(p - q).max())


def test_workload_error_matches_pandas():
    real, synth = _frame(300, 0), _frame(40, 1)
    wl = QueryWorkload(domain=DOMAIN, k=2).fit(real)
    err = workload_error(wl, real, synth)
    assert isinstance(err, WorkloadError)
    assert err.marginals == (("a", "b"), ("a", "c"), ("b", "c"))
    expected = [_pandas_tvd(real, synth, m) for m in err.marginals]
    np.testing.assert_allclose(err.per_marginal_tvd, [t for t, _ in expected], atol=1e-12)
    assert err.max_error == pytest.approx(max(m for _, m in expected), abs=1e-12)
    # mean over every cell of every marginal (cells absent from both count as 0 error)
    assert err.mean_error == pytest.approx(2 * sum(t for t, _ in expected) / (6 + 6 + 4))
    assert err.max_tvd == pytest.approx(max(t for t, _ in expected))
    frame = err.to_frame()
    assert frame["marginal"].tolist() == ["a x b", "a x c", "b x c"]


def test_identical_tables_have_zero_error():
    real = _frame(100, 2)
    err = workload_error(QueryWorkload(domain=DOMAIN, k=3).fit(real), real, real.sample(frac=1))
    assert err.max_error == pytest.approx(0, abs=1e-15)
    assert err.mean_error == pytest.approx(0, abs=1e-15)
    np.testing.assert_allclose(err.per_marginal_tvd, 0, atol=1e-15)


def test_records_and_weights_equal_expanded_frame():
    real = _frame(200, 3)
    wl = QueryWorkload(domain=DOMAIN, k=2).fit(real)
    synth = _frame(10, 4)
    reps = np.arange(1, 11)
    expanded = synth.loc[synth.index.repeat(reps)]
    by_frame = workload_error(wl, real, expanded)
    by_records = workload_error(wl, real, wl.encode(synth), synthetic_weights=reps)
    assert by_records.max_error == pytest.approx(by_frame.max_error)
    assert by_records.mean_error == pytest.approx(by_frame.mean_error)
    np.testing.assert_allclose(by_records.per_marginal_tvd, by_frame.per_marginal_tvd)
    fake = SimpleNamespace(workload_=wl, records_=wl.encode(synth), weights_=reps / reps.sum())
    via_synth = synthesizer_error(fake, real)
    assert via_synth.max_error == pytest.approx(by_frame.max_error)
    # a frame with weights takes the same path
    weighted = workload_error(wl, real, synth, synthetic_weights=reps)
    assert weighted.max_error == pytest.approx(by_frame.max_error)


def test_unfitted_workload_is_cloned_and_fitted():
    real, synth = _frame(50, 5), _frame(50, 6)
    wl = QueryWorkload(domain=DOMAIN, k=1)
    err = workload_error(wl, real, synth)
    assert not hasattr(wl, "layout_")
    assert err.marginals == (("a",), ("b",), ("c",))
    with pytest.raises(ValueError, match="unfitted workload"):
        workload_error(wl, np.zeros((3, 3), dtype=int), synth)


def test_bad_inputs():
    real = _frame(20, 7)
    wl = QueryWorkload(domain=DOMAIN, k=1).fit(real)
    with pytest.raises(TypeError, match="synthetic must be a DataFrame"):
        workload_error(wl, real, {"a": ["x"]})
    with pytest.raises(NotFittedError, match="records_"):
        synthesizer_error(SimpleNamespace(workload_=wl), real)
    with pytest.raises(ValueError, match="outside"):
        workload_error(wl, real, np.array([[5, 0, 0]]))
