"""Tests of the quality report (sklearn_privsyn.report) and train-on-synthetic utility."""

import base64
import builtins
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import DQRS, PrivacyLedger, QueryWorkload
from sklearn_privsyn.cli import main
from sklearn_privsyn.metrics import workload_error
from sklearn_privsyn.metrics import column_distributions, fidelity_report, pair_tvd
from sklearn_privsyn.report import SECTIONS, quality_report
from sklearn_privsyn.metrics import train_synthetic_test_real

pytest.importorskip("matplotlib", reason="the report needs matplotlib (pip install -e '.[report]')")

_VOID = {"meta", "img", "br", "hr", "link", "input", "col", "source", "wbr"}


class _Checker(HTMLParser):
    """Tag balance, ids and images of a page."""

    def __init__(self):
        super().__init__()
        self.stack, self.ids, self.images, self.errors = [], [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "img":
            self.images.append(attrs["src"])
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]} ")
        else:
            self.stack.pop()


def _check(page):
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == [], (checker.errors, checker.stack)
    return checker


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(0)
    n = 300
    x = rng.integers(0, 3, n)
    real = pd.DataFrame({
        "x": x,
        "colour": np.where(x == 0, "red", rng.choice(["red", "blue"], n)),
        "amount": rng.uniform(0, 100, n),
        "y": np.where(rng.random(n) < 0.85, x > 0, x == 0),
    })
    workload = QueryWorkload(domain={"x": 3, "colour": ["red", "blue"], "y": [False, True]},
                             bounds={"amount": (0, 100)}, bins={"amount": 4}, k=2)
    estimator = DQRS(epsilon=2, workload=workload, solver="brute", random_state=0).fit(real)
    synthetic = estimator.sample(n, random_state=0)
    return real, synthetic, workload, estimator


def test_report_is_well_formed_and_holds_every_section(tables):
    real, synthetic, _, estimator = tables
    page = quality_report(real, synthetic, estimator=estimator, target="y",
                          title="<Test & report>")
    checker = _check(page)
    assert page.startswith("<!DOCTYPE html>")
    assert checker.ids == ["notice", *SECTIONS]
    for heading in SECTIONS.values():
        assert f"<h2>{heading}</h2>" in page
    assert "&lt;Test &amp; report&gt;" in page  # text is escaped
    assert "not</strong> differentially private" in page
    # plots are inline PNGs: columns, numbers, pairs and the TVD histogram; no external file
    assert len(checker.images) == 4
    for src in checker.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"{estimator.epsilon_:.4g}" in page
    assert "logistic regression" in page and "gradient boosting" in page


def test_report_figures_match_the_metrics(tables):
    real, synthetic, _, estimator = tables
    error = workload_error(estimator.workload_, real, synthetic)
    page = quality_report(real, synthetic, estimator=estimator)
    for value in (error.max_error, error.mean_error, error.per_marginal_tvd.mean()):
        assert f"<td>{value:.4g}</td>" in page
    assert "no target column was given" in page


def test_report_plausibility_shows_impossible_pairs_beside_the_real_halves():
    real = pd.DataFrame({"sex": ["F", "M"] * 50, "role": ["Wife", "Husband"] * 50,
                         "x": [0, 1, 2, 3] * 25})
    synthetic = real.copy()
    synthetic.loc[:9, "sex"] = "M"  # ten male wives
    synthetic.loc[:9, "role"] = "Wife"
    workload = QueryWorkload(domain={"sex": ["F", "M"], "role": ["Husband", "Wife"], "x": 4},
                             k=2)
    page = quality_report(real, synthetic, workload=workload)
    report = fidelity_report(real, synthetic)
    assert report.impossible_pair_rate == pytest.approx(0.1)
    for value in (report.impossible_pair_rate, report.reference_impossible_pair_rate,
                  report.tvd_2way.mean()):
        assert f"<td>{value:.4g}</td>" in page
    assert "<td>sex / role</td>" in page or "<th>sex / role</th>" in page
    clean = quality_report(real, real, workload=workload)
    assert "No synthetic row holds a pair of values that no real row holds" in clean
    assert "declared rule" not in page


def test_report_plausibility_lists_the_declared_rules():
    real = pd.DataFrame({"worked": [5, 9, 20, 3] * 25, "at_company": [5, 2, 20, 1] * 25})
    synthetic = real.assign(at_company=[9, 2, 20, 1] * 25)  # a quarter breaks the rule
    real["work"], synthetic["work"] = ["job", "none", "job", "job"] * 25, "job"
    workload = QueryWorkload(bounds={"worked": (0, 40), "at_company": (0, 40)},
                             domain={"work": ["job", "none"]}, k=2,
                             at_most={"at_company": "worked"},
                             exactly_when={"worked": {"value": 9, "column": "work",
                                                      "values": ["none"]}})
    page = quality_report(real, synthetic, workload=workload)
    assert "declared rule (at_most, at_least, exactly_when, only_when, equal_when)" in page
    assert ">at_company &lt;= worked</t" in page
    assert "<td>0.75</td>" in page and "<td>1</td>" in page
    assert "worked == 9 exactly when work in [&#x27;none&#x27;]" in page


def test_report_without_privacy_says_so_and_a_ledger_is_converted(tables):
    real, synthetic, workload, _ = tables
    page = quality_report(real, synthetic, workload=workload)
    assert "no estimator or ledger was given" in page
    ledger = PrivacyLedger(0.5)
    ledger.charge("gaussian_mechanism", 0.1, count=2)
    page = quality_report(real, synthetic, workload=workload, ledger=ledger, delta=1e-6)
    assert f"({ledger.epsilon(1e-6):.4g}, 1e-06)-differentially private" in page


def test_column_distributions_and_pair_tvd(tables):
    real, synthetic, workload, _ = tables
    fitted = QueryWorkload(**{k: v for k, v in workload.get_params().items()}).fit(real)
    shares = column_distributions(fitted, real, synthetic)
    assert list(shares) == ["x", "colour", "amount", "y"]
    expected = real["colour"].value_counts(normalize=True)
    assert shares["colour"]["real"].to_dict() == pytest.approx(expected.to_dict())
    assert list(shares["amount"].index) == ["[0, 25)", "[25, 50)", "[50, 75)", "[75, 100]"]
    matrix = pair_tvd(fitted, real, synthetic)
    assert np.allclose(matrix, matrix.T) and np.all(np.diag(matrix) == 0)
    by_hand = 0.5 * (pd.crosstab(real["x"], real["colour"], normalize=True)
                     .sub(pd.crosstab(synthetic["x"], synthetic["colour"], normalize=True),
                          fill_value=0).abs().to_numpy().sum())
    assert matrix.loc["x", "colour"] == pytest.approx(by_hand)


def test_column_distributions_show_derived_columns_by_their_values(tables):
    real, _, workload, _ = tables
    real = real.assign(tens=real["x"] * 10, logs=np.log1p(real["amount"]))
    derived = {"tens": {"of": "x", "map": {0: 0, 1: 10, 2: 20}},
               "logs": {"of": "amount", "apply": "log1p"}}
    wl = QueryWorkload(**{**workload.get_params(), "derived": derived}).fit(real)
    estimator = DQRS(epsilon=2, workload=wl, solver="brute", random_state=0).fit(real)
    synthetic = estimator.sample(len(real), random_state=0)
    shares = column_distributions(estimator.workload_, real, synthetic)
    assert list(shares) == ["x", "colour", "amount", "y", "tens", "logs"]
    assert list(shares["tens"].index) == ["0", "10", "20"]
    assert shares["tens"]["real"].to_numpy() == pytest.approx(
        real["tens"].value_counts(normalize=True).sort_index().to_numpy())
    assert shares["tens"]["synthetic"].to_numpy() == pytest.approx(
        synthetic["x"].value_counts(normalize=True).sort_index().to_numpy())
    assert len(shares["logs"]) == 10 and shares["logs"].index[0].startswith("(-inf, ")
    assert shares["logs"]["real"].to_numpy() == pytest.approx(np.full(10, 0.1), abs=0.01)
    assert shares["logs"]["synthetic"].sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, "Give workload= .* or a fitted estimator="),
        ({"workload": "W", "target": "nope"}, ValueError, "target 'nope' is not a column"),
    ],
)
def test_report_errors(tables, kwargs, error, match):
    real, synthetic, workload, _ = tables
    if kwargs.get("workload") == "W":
        kwargs = {**kwargs, "workload": workload}
    with pytest.raises(error, match=match):
        quality_report(real, synthetic, **kwargs)


def test_report_without_matplotlib_says_how_to_install(tables, monkeypatch):
    real, synthetic, workload, _ = tables
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r"pip install 'sklearn-privsyn\[report\]'"):
        quality_report(real, synthetic, workload=workload)


def test_train_on_synthetic_scores_a_copy_of_real_like_real(tables):
    real, _, workload, _ = tables
    scores = train_synthetic_test_real(real, real, "y", workload=workload,
                                       real_test=real.iloc[:100])
    assert list(scores.index) == ["logistic regression", "gradient boosting", "majority class"]
    assert np.allclose(scores["train on real"], scores["train on synthetic"])
    assert scores.loc["logistic regression", "train on real"] > 0.8
    majority = (real["y"].iloc[:100] == real["y"].mode()[0]).mean()
    assert scores.loc["majority class", "train on real"] == pytest.approx(majority)


def test_train_on_synthetic_with_one_class_predicts_it(tables):
    real, _, workload, _ = tables
    one_class = real.assign(y=True)
    scores = train_synthetic_test_real(real, one_class, "y", workload=workload)
    held_out_true = scores.loc["majority class", "train on synthetic"]
    assert np.allclose(scores["train on synthetic"], held_out_true)


def test_report_command(tmp_path, capsys, tables):
    real, synthetic, _, _ = tables
    real.to_csv(tmp_path / "real.csv", index=False)
    domain = {"x": 3, "colour": ["red", "blue"], "amount": {"bounds": [0, 100], "bins": 4},
              "y": [False, True]}
    (tmp_path / "d.json").write_text(json.dumps(domain))
    common = ["--domain", str(tmp_path / "d.json"), "--k", "2", "--seed", "0"]
    assert main(["fit", str(tmp_path / "real.csv"), *common, "--algorithm", "dqrs", "--rounds", "3",
                 "--solver", "brute", "--ledger", str(tmp_path / "ledger.json"),
                 "-o", str(tmp_path / "syn.csv")]) == 0
    err = capsys.readouterr().err
    assert main(["report", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv"), *common,
                 "--target", "y", "--ledger", str(tmp_path / "ledger.json"),
                 "-o", str(tmp_path / "report.html")]) == 0
    assert "not for release" in capsys.readouterr().err
    page = (tmp_path / "report.html").read_text()
    assert _check(page).ids == ["notice", *SECTIONS]
    spent = json.loads((tmp_path / "ledger.json").read_text())
    assert f"({spent['epsilon']:.4g}, {spent['delta']:.3g})-differentially private" in page
    assert f"privacy spent: ({spent['epsilon']:.4g}" in err
    assert main(["report", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv"), *common,
                 "--target", "nope"]) == 1
    assert "--target 'nope' is not a column" in capsys.readouterr().err


def test_the_numbers_section_shows_values_not_bins():
    # a number that is 0 in 80% of rows: uniform draws inside the first bin hide nothing
    # at the bins' level, but the values' CDF and the point-mass shares show it
    from sklearn_privsyn.report import number_summary

    rng = np.random.default_rng(0)
    real = pd.DataFrame({"gain": np.where(rng.random(400) < 0.8, 0, rng.integers(1, 9000, 400)),
                         "sex": rng.choice(["F", "M"], 400)})
    synthetic = real.assign(gain=rng.integers(0, 1000, 400))  # same bin [0, 1000), no zeros
    wl = QueryWorkload(domain={"sex": ["F", "M"]}, bounds={"gain": (0, 9999)},
                       bins={"gain": 10}, points={"gain": [0]}, k=2)
    page = quality_report(real, synthetic, workload=wl)
    assert 'id="numbers"' in page
    summary = number_summary(real, synthetic, ["gain"], {"gain": [0]})
    row = summary.iloc[0]
    assert row["value"] == 0 and row["real share"] == pytest.approx((real["gain"] == 0).mean())
    assert row["synthetic share"] < 0.01 and row["ks"] > 0.5
    assert f"{row['ks']:.3f}" in page or f"{row['ks']:.4g}" in page
