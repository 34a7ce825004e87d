"""Bad input at every public entry point: clear errors naming the culprit, no partial state.

Every registered synthesizer (sklearn_privsyn.registry) runs with its test
parameters on tiny data. A failed ``fit`` must raise an error that names the
column or parameter, and leave the estimator without any fitted attribute
(for a refit too: never a mix of the previous fit's attributes and this one's).
"""

import math
import resource
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from sklearn_privsyn import FEM, MWEM, DualQuery, PrivacyLeakWarning, QueryWorkload, SepFEM
from sklearn_privsyn.registry import all_synthesizers

DOMAIN = {"a": 2, "b": ["x", "y"]}
FAST = {entry.load(): dict(entry.test_params) for entry in all_synthesizers()}
ESTIMATORS = list(FAST)
IDS = [cls.__name__ for cls in ESTIMATORS]


def frame(n_repeats=3):
    return pd.DataFrame({"a": [0, 1, 1, 0] * n_repeats, "b": ["x", "y", "x", "x"] * n_repeats})


def make(cls, workload="default", **params):
    if isinstance(workload, str):
        workload = QueryWorkload(domain=DOMAIN, k=2)
    return cls(**{"epsilon": 1.0, "workload": workload, "random_state": 0, **FAST[cls], **params})


def fitted_attributes(est):
    return sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("__"))


def assert_unfitted(est):
    assert fitted_attributes(est) == []
    with pytest.raises(NotFittedError):
        est.sample(2)


parametrize_estimators = pytest.mark.parametrize("cls", ESTIMATORS, ids=IDS)


# ------------------------------------------------------------------ shapes and rows


@parametrize_estimators
def test_empty_data_is_rejected(cls):
    est = make(cls)
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        est.fit(frame().iloc[:0])
    assert_unfitted(est)


@parametrize_estimators
def test_no_columns_is_rejected(cls):
    est = make(cls, workload=None)
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        est.fit(pd.DataFrame(index=range(4)))
    assert_unfitted(est)


@parametrize_estimators
def test_one_row_needs_an_explicit_delta(cls):
    est = make(cls)
    with pytest.raises(ValueError, match=r"n_samples=1: delta=None"):
        est.fit(frame().iloc[:1])
    assert_unfitted(est)
    est = make(cls, delta=1e-3).fit(frame().iloc[:1])
    assert est.delta_ == 1e-3
    assert est.ledger_.rho_spent <= est.rho_
    assert est.sample(3).shape == (3, 2)


@parametrize_estimators
def test_three_dimensional_and_sparse_input(cls):
    with pytest.raises(ValueError, match="2-dimensional"):
        make(cls, workload=None).fit(np.zeros((4, 2, 2)))
    with pytest.raises(TypeError, match="Sparse data"):
        make(cls, workload=None).fit(sp.csr_matrix(np.eye(4)))


@parametrize_estimators
def test_y_of_wrong_length_or_clashing_name(cls):
    X = frame()
    with pytest.raises(ValueError, match=r"X has 12 rows but y has 3"):
        make(cls, workload=None).fit(X, [0, 1, 0])
    with pytest.raises(ValueError, match=r"column 'a'"):
        make(cls, workload=None).fit(X, pd.Series([0] * 12, name="a"))


# ------------------------------------------------------------------ values


def assert_reveals_no_row(message, secret=None):
    """An input error names the column and the problem, never a row number or a value."""
    assert "row" not in message.lower()
    if secret is not None:
        assert secret not in message


@parametrize_estimators
@pytest.mark.parametrize(
    "column, values, match, secret",
    [
        ("a", [0, 1, np.nan, 0], r"Column 'a' has missing values \(NaN/None\) but is not "
         r"declared missable", None),
        ("b", ["x", None, "x", "x"], r"Column 'b' has missing values", None),
        ("b", ["x", pd.NA, "x", "x"], r"Column 'b' has missing values", None),
        ("b", ["x", "zebra", "x", "x"], r"Column 'b' has values outside its domain of 2 "
         r"values \['x', 'y'\]: .*'other' category", "zebra"),
        ("b", ["x", 1, "x", "x"], r"Column 'b' has values outside its domain", "1"),
        ("a", [0, 1, 2, 0], r"Column 'a' has values outside its domain of integer codes 0\.\.1",
         "2"),
        ("a", [0, 1, 0.5, 0], r"Column 'a' has values outside its domain of integer codes",
         "0.5"),
        ("a", [0, 1, -7, 0], r"Column 'a' has values outside its domain of integer codes", "7"),
        ("a", [0, 1, np.inf, 0], r"Column 'a' has infinite values \(inf or -inf\)", None),
        ("a", [0, 1, "q", 0], r"domain\['a'\] = 2 \(integer codes\) needs a numeric column",
         None),
    ],
)
def test_bad_values_name_the_column(cls, column, values, match, secret):
    X = frame().assign(**{column: values * 3})
    est = make(cls)
    with pytest.raises(ValueError, match=match) as caught:
        est.fit(X)
    assert_reveals_no_row(str(caught.value), secret)
    assert_unfitted(est)


@parametrize_estimators
@pytest.mark.parametrize(
    "values, match",
    [
        ([0.5, 9.25, 1.0, 2.0], r"Column 'v' has values outside its bounds \[0, 4\]: widen"),
        ([0.5, -9.25, 1.0, 2.0], r"Column 'v' has values outside its bounds \[0, 4\]"),
    ],
)
def test_out_of_bounds_numbers_raise_only_with_clip_false(cls, values, match):
    X = frame(1).assign(v=values)
    strict = QueryWorkload(domain=DOMAIN, bounds={"v": (0.0, 4.0)}, bins={"v": 4}, k=2,
                           clip=False)
    est = make(cls, workload=strict)
    with pytest.raises(ValueError, match=match) as caught:
        est.fit(X)
    assert_reveals_no_row(str(caught.value), "9.25")
    assert_unfitted(est)
    # by default the declared bounds are the contract: values go into the end bins
    default = QueryWorkload(domain=DOMAIN, bounds={"v": (0.0, 4.0)}, bins={"v": 4}, k=2)
    fitted = make(cls, workload=default).fit(X)
    codes = fitted.workload_.encode(X)[:4, 2]
    assert codes.tolist() == [0, 3 if values[1] > 0 else 0, 1, 2]


@parametrize_estimators
@pytest.mark.parametrize("clip", [True, False])
def test_infinities_are_an_error_naming_the_column(cls, clip):
    X = frame(1).assign(v=[0.5, -np.inf, 1.0, 2.0])
    workload = QueryWorkload(domain=DOMAIN, bounds={"v": (0.0, 4.0)}, k=2, clip=clip)
    with pytest.raises(ValueError, match=r"Column 'v' has infinite values") as caught:
        make(cls, workload=workload).fit(X)
    assert_reveals_no_row(str(caught.value))


@parametrize_estimators
def test_strings_in_a_binned_column_are_an_error_naming_the_column(cls):
    X = frame(1).assign(v=["0.5", "q", "1", "2"])
    workload = QueryWorkload(domain=DOMAIN, bounds={"v": (0.0, 4.0)}, bins={"v": 4}, k=2)
    with pytest.raises(ValueError, match=r"Column 'v' has dtype .* binned as numeric"):
        make(cls, workload=workload).fit(X)
    mixed = frame(1).assign(v=[0.5, "secret", 1.0, 2.0])
    with pytest.raises(ValueError, match=r"Column 'v' has dtype") as caught:
        make(cls, workload=workload).fit(mixed)
    assert_reveals_no_row(str(caught.value), "secret")


@parametrize_estimators
def test_missing_values_as_a_category(cls):
    X = frame().assign(a=[0, 1, np.nan, 0] * 3, b=["x", None, "x", "y"] * 3)
    workload = QueryWorkload(domain=DOMAIN, k=2, handle_missing="category")
    est = make(cls, workload=workload, epsilon=50.0).fit(X)
    assert est.workload_.layout_.block_sizes == (3, 3)
    sample = est.sample(400, random_state=0)
    # values come from the domain plus the missing code, and nothing else
    assert set(sample["a"].dropna()) <= {0, 1}
    assert set(sample["b"].dropna()) <= {"x", "y"}
    # a quarter of the rows miss a and of b; at epsilon=50 the synthetic data keeps them
    if cls is MWEM:
        assert sample["a"].isna().mean() == pytest.approx(0.25, abs=0.1)


@parametrize_estimators
def test_mixed_type_column_with_a_learned_domain(cls):
    X = frame().assign(b=["x", 1, "x", 2.5] * 3)
    with pytest.warns(PrivacyLeakWarning, match=r"columns \['a', 'b'\]"):
        est = make(cls, workload=None).fit(X)
    values = set(est.sample(200, random_state=0)["b"])
    assert values <= {"x", 1, 2.5}


@parametrize_estimators
def test_constant_columns(cls):
    X = frame().assign(c=7, f=2.5, s="k")
    workload = QueryWorkload(domain={**DOMAIN, "c": [7], "s": ["k"]}, k=2)
    with pytest.warns(PrivacyLeakWarning, match=r"numeric columns \['f'\]"):
        est = make(cls, workload=workload).fit(X)
    sample = est.sample(50, random_state=0)
    assert (sample["c"] == 7).all() and (sample["s"] == "k").all()
    # a constant float column with learned bounds stays constant (one bin [2.5, 2.5])
    assert (sample["f"] == 2.5).all()


def test_high_cardinality_pairs_are_a_clear_error_not_an_allocation():
    n = 30_000
    ids = np.arange(n).astype(str)
    X = pd.DataFrame({"id": ids, "id2": ids[::-1], "a": np.arange(n) % 2})
    workload = QueryWorkload(domain={"id": list(ids), "id2": list(ids), "a": 2}, k=2)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"900,120,000 queries.*\('id', 'id2'\) with "
                                         r"900,000,000 cells.*max_cells"):
        FEM(workload=workload, solver="heuristic", rounds=2, samples_per_round=2).fit(X)
    assert time.perf_counter() - start < 20
    # ru_maxrss is in KiB on Linux: the 900M-entry query index (7 GB) was never built
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 1_000_000


def test_high_cardinality_column_in_small_marginals_fits():
    n = 20_000
    rng = np.random.default_rng(0)
    ids = np.arange(n).astype(str)
    X = pd.DataFrame({"id": ids, "a": rng.integers(2, size=n), "b": rng.integers(3, size=n)})
    workload = QueryWorkload(domain={"id": list(ids), "a": 2, "b": 3}, k=3)
    est = FEM(workload=workload, solver="heuristic", rounds=2, samples_per_round=2,
              random_state=0).fit(X)
    assert est.workload_.n_queries_ == n * 6
    assert est.sample(5).shape == (5, 3)


def test_too_many_column_subsets_is_a_clear_error():
    X = pd.DataFrame(np.zeros((2, 1000), dtype=int))
    with pytest.raises(ValueError, match=r"k=3 over 1000 columns gives 166,167,000 marginals"):
        QueryWorkload(k=3, domain={c: 1 for c in X.columns}).fit(X)


# ------------------------------------------------------------------ columns


@parametrize_estimators
def test_duplicate_column_names(cls):
    X = pd.DataFrame([[0, "x", 1]] * 4, columns=["a", "b", "a"])
    est = make(cls)
    with pytest.raises(ValueError, match=r"duplicate column names: \['a'\]"):
        est.fit(X)
    assert_unfitted(est)


@parametrize_estimators
def test_arrays_without_names(cls):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 3)
    est = make(cls, workload=QueryWorkload(domain={"x0": 2, "x1": 2}, k=2)).fit(X)
    out = est.sample(7, random_state=0)
    assert isinstance(out, np.ndarray) and out.shape == (7, 2)
    assert set(np.unique(out)) <= {0, 1}
    assert not hasattr(est, "feature_names_in_")
    # a workload naming columns the array does not have
    est = make(cls)
    with pytest.raises(ValueError, match=r"domain names columns not in X: \['a', 'b'\]\. "
                                         r"X has columns \['x0', 'x1'\]"):
        est.fit(X)
    assert_unfitted(est)


@parametrize_estimators
def test_workload_marginal_naming_a_missing_column(cls):
    workload = QueryWorkload(domain=DOMAIN, marginals=[("a", "zz"), ("b",)])
    est = make(cls, workload=workload)
    with pytest.raises(ValueError, match=r"marginals entry \('a', 'zz'\) names columns not in "
                                         r"X: \['zz'\]"):
        est.fit(frame())
    assert_unfitted(est)


# ------------------------------------------------------------------ parameters


@parametrize_estimators
@pytest.mark.parametrize(
    "params, match",
    [
        ({"epsilon": 0}, "'epsilon' parameter"),
        ({"epsilon": -1.0}, "'epsilon' parameter"),
        ({"epsilon": math.nan}, "'epsilon' parameter"),
        ({"epsilon": math.inf}, "'epsilon' parameter"),
        ({"epsilon": "1"}, "'epsilon' parameter"),
        ({"delta": 0.0}, "'delta' parameter"),
        ({"delta": -1e-6}, "'delta' parameter"),
        ({"delta": 1.0}, "'delta' parameter"),
        ({"delta": 1.5}, "'delta' parameter"),
        ({"delta": math.nan}, "'delta' parameter"),
        ({"delta": math.inf}, "'delta' parameter"),
        ({"random_state": "seed"}, "'random_state' parameter"),
        ({"conversion": "rdp"}, "'conversion' parameter"),
    ],
)
def test_privacy_parameters_are_validated(cls, params, match):
    est = make(cls, **params)
    with pytest.raises(ValueError, match=match):
        est.fit(frame())
    assert_unfitted(est)


@parametrize_estimators
@pytest.mark.parametrize(
    "n_samples, error, match",
    [
        (0, ValueError, "n_samples must be at least 1; got 0"),
        (-5, ValueError, "n_samples must be at least 1; got -5"),
        (2.5, TypeError, "n_samples must be an int; got 2.5"),
        (3.0, TypeError, "n_samples must be an int; got 3.0"),
        ("3", TypeError, "n_samples must be an int; got '3'"),
        (None, TypeError, "n_samples must be an int; got None"),
        (True, TypeError, "n_samples must be an int; got True"),
    ],
)
def test_bad_n_samples(cls, n_samples, error, match):
    est = make(cls).fit(frame())
    with pytest.raises(error, match=match):
        est.sample(n_samples)
    assert est.sample(np.int64(3)).shape == (3, 2)


@parametrize_estimators
def test_sample_before_fit(cls):
    assert_unfitted(make(cls))


# ------------------------------------------------------------------ partial state


FAILING_IN_THE_LOOP = {
    FEM: ({"rounds": None, "round_epsilon": 100.0}, "round_epsilon"),
    SepFEM: ({"rounds": 2, "round_epsilon": 0.1}, "at most one of rounds and round_epsilon"),
    DualQuery: ({"learning_rate": 0.5}, "at most one of rounds"),
    MWEM: ({"max_domain_size": 3}, "max_domain_size=3"),
}


@pytest.mark.parametrize("cls", list(FAILING_IN_THE_LOOP), ids=lambda c: c.__name__)
def test_failure_after_the_workload_is_fitted_leaves_no_attributes(cls):
    # these errors are raised by _fit_records, after the base class set workload_,
    # ledger_, rho_, ...: none of them may survive
    params, match = FAILING_IN_THE_LOOP[cls]
    est = make(cls, **params)
    with pytest.raises(ValueError, match=match):
        est.fit(frame())
    assert_unfitted(est)


@parametrize_estimators
@pytest.mark.parametrize("stage", ["data", "loop"])
def test_failed_refit_leaves_the_estimator_unfitted(cls, stage):
    est = make(cls).fit(frame())
    assert est.sample(2).shape == (2, 2)
    if stage == "data":
        bad = frame().assign(b=["x", "z", "x", "x"] * 3)
        with pytest.raises(ValueError, match="Column 'b'"):
            est.fit(bad)
    else:
        # new columns and a failure once the new workload is fitted
        other = pd.DataFrame({"p": [0, 1, 2, 0] * 3, "q": [1, 0, 1, 1] * 3})
        est.set_params(workload=QueryWorkload(domain={"p": 3, "q": 2}, k=2))

        def broken(data, rng):
            assert est.workload_.columns_ == ("p", "q")
            raise RuntimeError("failure inside the loop")

        est._fit_records = broken
        with pytest.raises(RuntimeError, match="failure inside the loop"):
            est.fit(other)
        del est._fit_records
    # no mix of the old fit (records_, weights_) with the new workload_
    assert_unfitted(est)
    # and the estimator is usable again
    est.set_params(workload=QueryWorkload(domain=DOMAIN, k=2)).fit(frame())
    assert est.sample(2).shape == (2, 2)


def test_failed_workload_refit_leaves_it_unfitted():
    workload = QueryWorkload(domain={"a": 2}, k=1).fit(pd.DataFrame({"a": [0, 1]}))
    with pytest.raises(ValueError, match=r"domain names columns not in X: \['a'\]"):
        workload.fit(pd.DataFrame({"z": [0, 1]}))
    assert [k for k in vars(workload) if k.endswith("_")] == []
    assert not hasattr(workload, "_coders")
    with pytest.raises(NotFittedError):
        workload.encode(pd.DataFrame({"a": [0]}))


def test_constant_float_column_round_trips_in_the_workload():
    X = pd.DataFrame({"f": [2.5, 2.5, 2.5]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        workload = QueryWorkload(k=1).fit(X)
    assert workload.bin_edges_["f"].tolist() == [2.5, 2.5]
    assert workload.encode(X).ravel().tolist() == [0, 0, 0]
    assert workload.decode([[0], [0]], random_state=0)["f"].tolist() == [2.5, 2.5]
    assert workload.encode(pd.DataFrame({"f": [3.0, 1.0]})).ravel().tolist() == [0, 0]
    strict = workload.set_params(clip=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        strict.fit(X)
    with pytest.raises(ValueError, match=r"Column 'f' has values outside its bounds"):
        strict.encode(pd.DataFrame({"f": [3.0]}))


# ------------------------------------------------------------------ command line


def test_cli_reports_an_oversized_workload_without_a_traceback(tmp_path, capsys):
    from sklearn_privsyn.cli import main

    (tmp_path / "data.csv").write_text("id,id2\n0,1\n2,3\n4,5\n")
    (tmp_path / "domain.json").write_text('{"id": 30000, "id2": 30000}')
    args = ["fit", str(tmp_path / "data.csv"), "--domain", str(tmp_path / "domain.json"),
            "--k", "2", "--rows", "3", "-o", str(tmp_path / "out.csv")]
    # the paper's protocol (--marginals) has no cell budget: the workload itself refuses
    status = main([*args, "--marginals", "1"])
    err = capsys.readouterr().err
    assert status == 1
    assert "900,000,000 queries" in err and "max_cells" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.csv").exists()
    # the default workload's budget refuses first, naming the column
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "the smallest, 'id', has 30,000" in err and "--cell-budget" in err
    assert "Traceback" not in err
