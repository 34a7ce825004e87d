"""Tests of the ``privsyn`` command line (sklearn_privsyn.cli)."""

import dataclasses
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import types

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import FEM, QueryWorkload, cli, registry
from sklearn_privsyn.cli import EXIT_DATA, EXIT_USAGE, main, read_table
from sklearn_privsyn.cli._commands import oracle_of, rounds_phrase
from sklearn_privsyn.domain_file import read_domain
from sklearn_privsyn.registry import all_synthesizers, get_synthesizer

FAST = ["--algorithm", "fem", "--solver", "brute", "--rounds", "4", "--samples-per-round", "3",
        "--seed", "0"]


@pytest.fixture()
def files(tmp_path):
    """A small private CSV (text, codes, numbers) and its public domain."""
    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "code": rng.integers(0, 3, n),
            "amount": rng.uniform(0, 100, n).round(2),
        }
    )
    csv_path = tmp_path / "data.csv"
    frame.to_csv(csv_path, index=False)
    domain = {
        "colour": ["red", "green", "blue"],
        "code": 3,
        "amount": {"bounds": [0, 100], "bins": 4},
    }
    domain_path = tmp_path / "domain.json"
    domain_path.write_text(json.dumps(domain))
    return types.SimpleNamespace(dir=tmp_path, csv=csv_path, domain=domain_path, frame=frame)


def _fit(files, *extra):
    return main(["fit", str(files.csv), "--domain", str(files.domain), *FAST, *extra])


def test_fit_writes_synthetic_rows_in_the_domain(files, capsys):
    out = files.dir / "synthetic.csv"
    assert _fit(files, "--epsilon", "2", "--rows", "57", "-o", str(out)) == 0
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["colour", "code", "amount"]
    assert len(synthetic) == 57
    assert set(synthetic["colour"]) <= {"red", "green", "blue"}
    assert set(synthetic["code"]) <= {0, 1, 2}
    assert synthetic["amount"].between(0, 100).all()
    err = capsys.readouterr().err
    spent = re.search(r"privacy spent: \(([0-9.e-]+), ([0-9.e-]+)\)-DP", err)
    assert spent is not None, err
    assert 0 < float(spent.group(1)) <= 2.0
    assert float(spent.group(2)) == pytest.approx(1 / 120**2, rel=1e-2)
    assert "wrote 57 synthetic rows" in err


def test_fit_matches_the_python_api(files, capsys):
    """Same seed, same workload: the CLI's output is FEM's sample exactly."""
    out = files.dir / "synthetic.csv"
    assert _fit(files, "--epsilon", "1.5", "--k", "2", "--marginals", "2", "-o", str(out)) == 0
    workload = QueryWorkload(
        domain={"colour": ["red", "green", "blue"], "code": 3},
        bounds={"amount": (0.0, 100.0)},
        bins={"amount": 4},
        k=2,
        n_marginals=2,
        random_state=0,
    )
    fem = FEM(epsilon=1.5, workload=workload, solver="brute", rounds=4, samples_per_round=3,
              random_state=0).fit(files.frame)
    expected = fem.sample(len(files.frame), random_state=0)
    synthetic = pd.read_csv(out)
    np.testing.assert_array_equal(synthetic["colour"], expected["colour"])
    np.testing.assert_array_equal(synthetic["code"], expected["code"])
    np.testing.assert_allclose(synthetic["amount"], expected["amount"])


def test_fit_to_stdout_keeps_stdout_for_data(files, capsys):
    assert _fit(files, "--rows", "10") == 0
    captured = capsys.readouterr()
    synthetic = pd.read_csv(io.StringIO(captured.out))
    assert synthetic.shape == (10, 3)
    assert "privacy spent" in captured.err and "privacy" not in captured.out


def test_quiet_prints_nothing(files, capsys):
    assert _fit(files, "--quiet", "-o", str(files.dir / "s.csv")) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("algorithm", [entry.cli_name for entry in all_synthesizers()])
def test_every_algorithm(files, capsys, algorithm):
    args = ["fit", str(files.csv), "--domain", str(files.domain), "--algorithm", algorithm,
            "--epsilon", "1", "--seed", "1", "--rounds", "3", "-o", str(files.dir / "s.csv")]
    if "solver" in get_synthesizer(algorithm).create().get_params():
        args += ["--solver", "brute"]
    assert main(args) == 0, capsys.readouterr().err
    assert len(pd.read_csv(files.dir / "s.csv")) == len(files.frame)


def test_infer_domain_warns_that_it_is_not_private(files, capsys):
    assert main(["fit", str(files.csv), "--infer-domain", *FAST, "-q",
                 "-o", str(files.dir / "s.csv")]) == 0
    err = capsys.readouterr().err
    assert "privsyn: warning:" in err and "not covered by the privacy guarantee" in err


def test_unknown_extra_columns_are_dropped_with_a_note(files, capsys):
    frame = files.frame.assign(extra=1)
    frame.to_csv(files.csv, index=False)
    out = files.dir / "s.csv"
    assert _fit(files, "-o", str(out)) == 0
    assert "ignoring columns of" in capsys.readouterr().err
    assert "extra" not in pd.read_csv(out).columns


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--epsilon", "-1"], "must be a finite number > 0"),
        (["--epsilon", "abc"], "expected a number"),
        (["--epsilon", "inf"], "must be a finite number > 0"),
        (["--delta", "1.5"], r"must be in \(0, 1\)"),
        (["--rows", "0"], "must be at least 1"),
        (["--algorithm", "gan"], "invalid choice"),
        (["--algorithm", "mwem", "--solver", "brute"], "--solver does not apply to"),
        (["--infer-domain"], "not both"),
    ],
)
def test_usage_errors_exit_2(files, capsys, extra, match):
    # argparse's own errors raise SystemExit(2); those found after parsing return 2
    try:
        status = main(["fit", str(files.csv), "--domain", str(files.domain), *extra])
    except SystemExit as exc:
        status = exc.code
    assert status == EXIT_USAGE
    err = capsys.readouterr().err
    assert re.search(match, err), err
    assert "Traceback" not in err


def test_missing_domain_is_a_usage_error(files, capsys):
    assert main(["fit", str(files.csv)]) == EXIT_USAGE
    assert "--domain is required" in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == EXIT_USAGE
    assert "examples:" in capsys.readouterr().err


@pytest.mark.parametrize(
    "csv_text, domain, match",
    [
        ("colour,code\nred,0\npink,1\n", {"colour": ["red"], "code": 2},
         r"Column 'colour' has values outside its domain"),
        ("colour,code\nred,0\nred,5\n", {"colour": ["red"], "code": 2},
         r"Column 'code' has values outside its domain of integer codes 0\.\.1"),
        ("colour,code\nred,0\nred,x\n", {"colour": ["red"], "code": 2},
         r"column 'code' of .* must hold integer codes; it has other values"),
        ("colour,code\nred,0\n,1\n", {"colour": ["red"], "code": 2},
         r"Column 'colour' has missing values .* not declared missable"),
        ("colour,code\nred,0\nred,0,7\n", {"colour": ["red"], "code": 2},
         r"not a readable CSV file: a row has the wrong number of fields"),
        ("colour\nred\n", {"colour": ["red"], "code": 2}, r"has no column 'code'"),
        ("colour,colour\nred,red\n", {"colour": ["red"]}, "duplicate column names"),
        ("colour,code\n", {"colour": ["red"], "code": 2}, "no data rows"),
        ("colour,code\nred,0\n", {"code": 0}, "domain size must be an int of at least 1"),
        ("colour,code\nred,0\n", {"code": []}, "list of values is empty"),
        ("colour,code\nred,0\n", {"code": {"bins": 3}}, "needs"),
        ("colour,code\nred,0\n", {"code": {"bounds": [5, 1]}}, "lo < hi"),
        ("colour,code\nred,0\n", [1, 2], "must hold a non-empty JSON object"),
        ("colour,code\nred,0\n", {"colour": {"values": ["red"], "other": "Other"}, "code": 2},
         "column 'colour': \"other\" must be one of the column's values; got 'Other'"),
        ("colour,code\nred,0\n", {"colour": ["red"], "code": {"size": 2, "missing": "no"}},
         "column 'code': \"missing\" must be true or false"),
    ],
)
def test_data_errors_exit_1(tmp_path, capsys, csv_text, domain, match):
    (tmp_path / "d.csv").write_text(csv_text)
    (tmp_path / "d.json").write_text(json.dumps(domain))
    status = main(["fit", str(tmp_path / "d.csv"), "--domain", str(tmp_path / "d.json"), *FAST,
                   "-o", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err
    assert status == EXIT_DATA, err
    assert re.search(match, err), err
    assert "Traceback" not in err and err.startswith("privsyn fit: error:")
    # the private file's values and row numbers never reach the terminal
    assert not re.search(r"pink|'x'|has value\b|(row|line) \d", err), err


def test_handle_missing_and_clip_flags(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("colour,age\nred,30\n,45\nblue,250\nred,\n")
    (tmp_path / "d.json").write_text(json.dumps(
        {"colour": ["red", "blue"], "age": {"bounds": [0, 100], "bins": 4}}))
    base = ["fit", str(tmp_path / "d.csv"), "--domain", str(tmp_path / "d.json"), *FAST,
            "--k", "1", "-o", str(tmp_path / "s.csv"), "--rows", "200", "--epsilon", "50"]
    # empty cells in a column not declared missable are an error naming the column only
    assert main(base + ["--handle-missing", "age"]) == EXIT_DATA
    assert re.search(r"Column 'colour' has missing values", capsys.readouterr().err)
    # declared columns get a missing code; 250 is clipped into the last bin by default
    assert main(base + ["--handle-missing", "colour,age", "-q"]) == 0, capsys.readouterr().err
    synthetic = pd.read_csv(tmp_path / "s.csv")
    assert synthetic["age"].dropna().between(0, 100).all()
    assert synthetic["colour"].isna().any() and synthetic["age"].isna().any()
    # --no-clip opts in to being told, without the value
    assert main(base + ["--handle-missing", "colour,age", "--no-clip"]) == EXIT_DATA
    err = capsys.readouterr().err.replace(str(tmp_path), "TMP")  # (pytest's tmp dir has a number)
    assert "Column 'age' has values outside its bounds [0, 100]" in err and "250" not in err


@pytest.mark.parametrize("which", ["csv", "domain"])
def test_missing_files_exit_1(files, capsys, which):
    paths = {"csv": str(files.csv), "domain": str(files.domain)}
    paths[which] = str(files.dir / "absent")
    assert main(["fit", paths["csv"], "--domain", paths["domain"]]) == EXIT_DATA
    err = capsys.readouterr().err
    assert "absent" in err and "Traceback" not in err


def test_invalid_json_exit_1(files, capsys):
    files.domain.write_text("{not json")
    assert _fit(files) == EXIT_DATA
    assert "not valid JSON" in capsys.readouterr().err


def test_unavailable_algorithm_exit_1(files, capsys, monkeypatch):
    fem = get_synthesizer("fem")
    monkeypatch.setitem(registry._REGISTRY, fem.name,
                        dataclasses.replace(fem, module="no_such_module"))
    assert _fit(files) == EXIT_DATA
    assert "algorithm 'fem' is not available" in capsys.readouterr().err


def test_time_limit_builds_an_oracle():
    from sklearn_privsyn.solvers import HeuristicOracle, HighsOracle, HybridOracle

    args = types.SimpleNamespace(solver=None, time_limit=5.0)
    oracle = oracle_of(args)
    assert isinstance(oracle, HighsOracle) and oracle.time_limit == 5.0
    args = types.SimpleNamespace(solver="heuristic", time_limit=2.0)
    assert isinstance(oracle_of(args), HeuristicOracle)
    # without --solver the limit goes to the algorithm's own default oracle
    oracle = oracle_of(types.SimpleNamespace(solver=None, time_limit=3.0), "hybrid")
    assert isinstance(oracle, HybridOracle) and oracle.time_limit == 3.0
    assert oracle_of(types.SimpleNamespace(solver="pulp", time_limit=None)) == "pulp"


def test_read_domain_formats(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"a": 4, "b": ["x", 1], "c": {"bounds": [0, 10]},
                                "d": {"bounds": [0, 1], "bins": [0, 0.5, 1]}}))
    params = read_domain(path)
    assert params["columns"] == ["a", "b", "c", "d"]
    assert params["domain"] == {"a": 4, "b": ["x", 1]}
    assert params["bounds"] == {"c": (0.0, 10.0), "d": (0.0, 1.0)}
    assert params["bins"] == {"c": 10, "d": [0, 0.5, 1]}


def test_read_table_converts_by_domain(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("n,s,f\n1,007,2.5\n2,7,3\n")
    params = {"columns": ["n", "s", "f"], "domain": {"n": [1, 2], "s": ["007", "7"]},
              "bounds": {"f": (0.0, 5.0)}, "bins": {}}
    frame, dropped = read_table(path, params)
    assert dropped == []
    assert frame["n"].tolist() == [1, 2] and frame["n"].dtype.kind == "i"
    assert frame["s"].tolist() == ["007", "7"]  # text stays text: "007" is not 7
    assert frame["f"].tolist() == [2.5, 3.0] and frame["f"].dtype.kind == "f"


def _crosstab_error(real, synthetic, cols):
    r = real.groupby(cols).size() / len(real)
    s = synthetic.groupby(cols).size() / len(synthetic)
    diff = r.sub(s, fill_value=0).abs()
    return diff


def test_evaluate_reports_the_marginal_errors(tmp_path, capsys):
    real = pd.DataFrame({"a": [0, 0, 1, 1, 2, 2, 2, 2], "b": [0, 1, 0, 1, 0, 1, 1, 1]})
    synthetic = pd.DataFrame({"a": [0, 1, 2, 2], "b": [0, 0, 1, 1]})
    real.to_csv(tmp_path / "real.csv", index=False)
    synthetic.to_csv(tmp_path / "syn.csv", index=False)
    (tmp_path / "d.json").write_text(json.dumps({"a": 3, "b": 2}))
    args = ["evaluate", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv"),
            "--domain", str(tmp_path / "d.json"), "--k", "2"]
    assert main(args + ["--json", "--per-marginal"]) == 0
    result = json.loads(capsys.readouterr().out)
    diff = _crosstab_error(real, synthetic, ["a", "b"])  # cells absent from both are 0
    assert result["max_error"] == pytest.approx(diff.max())
    assert result["mean_error"] == pytest.approx(diff.sum() / 6)  # 3 x 2 cells
    assert result["max_tvd"] == pytest.approx(diff.sum() / 2)
    assert result["n_queries"] == 6
    assert result["per_marginal_tvd"] == [{"marginal": ["a", "b"],
                                           "tvd": pytest.approx(diff.sum() / 2)}]
    assert main(args + ["--per-marginal"]) == 0
    out = capsys.readouterr().out
    assert f"max error   {diff.max():.4f}" in out and "a x b" in out


def test_evaluate_without_domain_and_bad_synthetic(tmp_path, capsys):
    pd.DataFrame({"a": ["x", "y"]}).to_csv(tmp_path / "real.csv", index=False)
    pd.DataFrame({"a": ["x", "x"]}).to_csv(tmp_path / "syn.csv", index=False)
    pd.DataFrame({"a": ["z", "x"]}).to_csv(tmp_path / "bad.csv", index=False)
    pd.DataFrame({"b": ["x"]}).to_csv(tmp_path / "other.csv", index=False)
    base = ["evaluate", str(tmp_path / "real.csv"), "--k", "1", "--json"]
    assert main(base[:2] + [str(tmp_path / "syn.csv")] + base[2:]) == 0
    assert json.loads(capsys.readouterr().out)["max_error"] == pytest.approx(0.5)
    assert main(base[:2] + [str(tmp_path / "bad.csv")] + base[2:]) == EXIT_DATA
    assert "Column 'a' has values outside its domain" in capsys.readouterr().err
    assert main(base[:2] + [str(tmp_path / "other.csv")] + base[2:]) == EXIT_DATA
    assert "has no column 'a'" in capsys.readouterr().err


def test_demo_calls_run_demo(monkeypatch):
    import sklearn_privsyn.demo as demo

    calls = []
    monkeypatch.setattr(demo, "run_demo", lambda **kwargs: calls.append(kwargs))
    assert main(["demo", "--epsilon", "0.5", "--marginals", "4", "--seed", "3"]) == 0
    assert main(["demo", "--algorithm", "dqrs"]) == 0
    assert calls == [
        {"epsilon": 0.5, "n_marginals": 4, "seed": 3, "rows": 5, "verbose": 0,
         "algorithm": "adaptive"},
        {"epsilon": 1.0, "n_marginals": 32, "seed": 0, "rows": 5, "verbose": 0,
         "algorithm": "dqrs"},
    ]


def test_python_dash_m_help():
    result = subprocess.run([sys.executable, "-m", "sklearn_privsyn", "fit", "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage: privsyn fit" in result.stdout and "examples:" in result.stdout
    assert "exit status" in result.stdout


def test_python_dash_m_error_has_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_privsyn", "evaluate", str(tmp_path / "nope.csv"),
         str(tmp_path / "nope.csv")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == EXIT_DATA
    assert "no such file" in result.stderr and "Traceback" not in result.stderr


def test_console_script_is_installed():
    script = os.path.join(os.path.dirname(sys.executable), "privsyn")
    if not os.path.exists(script):
        pytest.skip("the privsyn console script is not installed in this environment")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.startswith("privsyn ")


# --------------------------------------------------------------- drafting, order, Parquet


def _census_like(tmp_path, n=150):
    """Text, a many-valued integer column (like fnlwgt), few-valued integers and floats."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({
        "weight": rng.integers(10_000, 500_000, n),
        "job": rng.choice(["a", "b", "c"], n),
        "kids": rng.integers(0, 4, n),
        "score": rng.normal(50, 10, n).round(3),
    })
    path = tmp_path / "raw.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_domain_command_drafts_a_marked_file(tmp_path, capsys):
    frame, path = _census_like(tmp_path)
    out = tmp_path / "domain.json"
    assert main(["domain", str(path), "--bins", "6", "-o", str(out)]) == 0
    draft = json.loads(out.read_text())
    assert list(draft) == list(frame.columns)
    assert draft["weight"] == {"bounds": [int(frame["weight"].min()),
                                          int(frame["weight"].max())],
                               "bins": 6, "read_from_data": True}
    assert draft["job"] == {"values": ["a", "b", "c"], "read_from_data": True}
    assert draft["kids"] == {"values": [0, 1, 2, 3], "read_from_data": True}
    err = capsys.readouterr().err
    assert "privsyn: warning:" in err and "not covered by the privacy guarantee" in err
    assert "review the 4 entries marked 'read_from_data'" in err

    # fitting on the drafted file works, and warns while marks remain
    synthetic = tmp_path / "s.csv"
    assert main(["fit", str(path), "--domain", str(out), *FAST, "-o", str(synthetic)]) == 0
    assert "marked 'read_from_data'" in capsys.readouterr().err


def test_infer_domain_fits_a_raw_csv_with_a_bounded_workload(tmp_path, capsys):
    frame, path = _census_like(tmp_path, n=400)
    out = tmp_path / "s.csv"
    assert main(["fit", str(path), "--infer-domain", *FAST, "--cell-budget", "300",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    chosen = re.search(r"workload: (\d+) of (\d+) eligible 3-way marginals \(([\d,]+) cells",
                       err)
    assert chosen is not None, err
    assert int(chosen.group(3).replace(",", "")) <= 300
    synthetic = pd.read_csv(out)
    assert synthetic.shape == frame.shape
    assert synthetic["weight"].between(frame["weight"].min(), frame["weight"].max()).all()


def test_synthetic_columns_follow_the_input_and_keep_their_kind(tmp_path, capsys):
    frame, path = _census_like(tmp_path)
    domain = {  # a different order than the file's
        "score": {"bounds": [0, 100], "bins": 4},
        "kids": 4,
        "job": ["a", "b", "c"],
        "weight": {"bounds": [0, 500_000], "bins": 5},
    }
    (tmp_path / "d.json").write_text(json.dumps(domain))
    out = tmp_path / "s.csv"
    assert main(["fit", str(path), "--domain", str(tmp_path / "d.json"), *FAST,
                 "-o", str(out)]) == 0
    with open(out) as f:
        header, first = f.readline().strip(), f.readline().strip()
    assert header == "weight,job,kids,score"
    weight, _, kids, score = first.split(",")
    assert re.fullmatch(r"\d+", weight) and re.fullmatch(r"\d", kids)
    assert "." in score  # a float column comes back as floats


def test_evaluate_measures_on_the_workload_fit_chose(tmp_path, capsys):
    frame, path = _census_like(tmp_path)
    out = tmp_path / "s.csv"
    args = [*FAST, "--infer-domain", "--k", "2", "--cell-budget", "100"]
    assert main(["fit", str(path), *args, "-o", str(out)]) == 0
    fit_line = re.search(r"workload: .*", capsys.readouterr().err).group(0)
    assert main(["evaluate", str(path), str(out), "--k", "2", "--cell-budget", "100",
                 "--seed", "0"]) == 0
    assert fit_line in capsys.readouterr().err


@pytest.mark.skipif(
    not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")),
    reason="Parquet needs pyarrow (pip install -e '.[parquet]')",
)
def test_parquet_in_and_out(tmp_path, capsys):
    frame, _ = _census_like(tmp_path)
    source = tmp_path / "raw.parquet"
    frame.to_parquet(source, index=False)
    domain = tmp_path / "d.json"
    assert main(["domain", str(source), "-o", str(domain)]) == 0
    out = tmp_path / "s.parquet"
    assert main(["fit", str(source), "--domain", str(domain), *FAST, "-o", str(out)]) == 0
    synthetic = pd.read_parquet(out)
    assert list(synthetic.columns) == list(frame.columns)
    assert [synthetic[c].dtype.kind for c in frame.columns] == ["i", "O", "i", "f"]
    assert set(synthetic["job"]) <= {"a", "b", "c"}


def test_run_demo_reports_error_and_privacy_of_a_real_fit():
    from sklearn_privsyn.demo import run_demo

    lines = []
    fitted = run_demo(epsilon=1.0, n_marginals=2, seed=0, rows=2, verbose=0,
                      algorithm="adaptive", print_fn=lines.append)
    text = "\n".join(lines)
    assert "AdaptiveProjection on UCI Adult" in text
    assert f"epsilon={fitted.epsilon_:.4f}" in text and fitted.epsilon_ <= 1.0
    assert "workload error of 48,842 synthetic rows" in text


def test_run_demo_rejects_an_unknown_algorithm():
    from sklearn_privsyn.demo import run_demo

    with pytest.raises(ValueError, match="algorithm must be one of"):
        run_demo(algorithm="gan", print_fn=lambda line: None)


def test_domain_file_declares_missing_and_other(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({
        "city": rng.choice(["Paris", "Rome", "Oslo", "Lima"], n, p=[0.3, 0.2, 0.25, 0.25]),
        "kids": rng.integers(0, 3, n),
        "income": pd.array(rng.integers(0, 90_000, n), dtype="Int64"),
    })
    frame.loc[rng.random(n) < 0.3, "income"] = pd.NA
    path, domain, out = tmp_path / "d.csv", tmp_path / "d.json", tmp_path / "s.csv"
    frame.to_csv(path, index=False)
    assert main(["domain", str(path), "-o", str(domain)]) == 0
    draft = json.loads(domain.read_text())
    assert draft["income"]["missing"] is True and draft["income"]["read_from_data"] is True
    assert "missing" not in draft["city"] and "missing" not in draft["kids"]
    draft["city"] = {"values": ["Paris", "Rome", "Other"], "other": "Other"}
    draft["kids"] = [0, 1, 2]
    draft["income"] = {"bounds": [0, 100000], "bins": 4, "missing": True}
    domain.write_text(json.dumps(draft))
    capsys.readouterr()

    # FEM keeps 12 records here; with equal-width bins (no numbers' measurement) one of
    # them misses the income, which is what this test is about
    base = ["fit", str(path), "--domain", str(domain), *FAST, "--k", "2", "--epsilon", "50",
            "--rows", "1000", "--number-share", "0", "-o", str(out)]
    assert main(base) == 0
    err = capsys.readouterr().err
    assert "warning" not in err and "replaces" not in err, err
    synthetic = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert synthetic["income"].isna().any()
    # an integer column with empty cells comes back as integers and empty cells
    incomes = pd.read_csv(out, dtype=str, keep_default_na=False)["income"]
    assert incomes.str.fullmatch(r"\d*").all() and (incomes != "").any()
    assert not synthetic[["city", "kids"]].isna().any().any()
    assert set(synthetic["city"]) <= {"Paris", "Rome", "Other"} and "Other" in set(
        synthetic["city"])

    # the flag replaces the file's declaration, and says so
    assert main(base + ["--handle-missing", "income"]) == 0
    assert "replaces" not in capsys.readouterr().err  # the same declaration: no note
    assert main(base + ["--handle-missing", "error"]) == EXIT_DATA
    err = capsys.readouterr().err
    assert "--handle-missing error replaces the columns declared \"missing\" in" in err
    assert "['income']" in err and "Column 'income' has missing values" in err


def _doc_blocks(text, start, end):
    """(language, content) of each code block between two markers of a reST page."""
    lines = text[text.index(start):text.index(end)].splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = re.match(r"\.\. code-block:: (\w+)", lines[i])
        i += 1
        if not match:
            continue
        body = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("   ")):
            body.append(lines[i][3:])
            i += 1
        blocks.append((match.group(1), "\n".join(body).strip()))
    return blocks


def test_own_csv_walkthrough_in_the_docs_runs(tmp_path, monkeypatch, capsys):
    """docs/cli.rst's "Your own CSV" commands, as written, on the first 300 Adult rows."""
    import shlex

    page = (os.path.dirname(__file__) + "/../docs/cli.rst")
    with open(page, encoding="utf-8") as f:
        blocks = _doc_blocks(f.read(), ".. _own-csv:", "``privsyn fit``: synthesise")
    monkeypatch.chdir(tmp_path)
    ran = []
    for language, content in blocks:
        if language == "json":  # step 2: the review's edits, and every mark deleted
            draft = json.loads((tmp_path / "domain.json").read_text())
            draft.update(json.loads(content))
            for entry in draft.values():
                entry.pop("read_from_data", None)
            (tmp_path / "domain.json").write_text(json.dumps(draft))
            continue
        argv = shlex.split(content.replace("\\\n", " "))
        if argv[:2] == ["python", "-c"]:
            exec(argv[2], {})  # noqa: S102  (the docs' own command)
            # keep the test lean: the first 300 rows stand for the whole file
            pd.read_csv("adult.csv", nrows=300).to_csv("adult.csv", index=False)
        else:
            assert argv[0] == "privsyn"
            assert main(argv[1:]) == 0, capsys.readouterr().err
        ran.append(argv[0] if argv[0] != "privsyn" else argv[1])
    assert ran == ["python", "domain", "fit", "report"]
    err = capsys.readouterr().err
    assert "marked 'read_from_data' in domain.json" not in err  # the review removed them
    real = pd.read_csv("adult.csv", keep_default_na=False, na_values=[""])
    synthetic = pd.read_csv("synthetic.csv", keep_default_na=False, na_values=[""])
    assert list(synthetic.columns) == list(real.columns) and len(synthetic) == 300
    declared = [c for c, e in json.loads((tmp_path / "domain.json").read_text()).items()
                if e.get("missing")]
    assert "native-country" in declared
    assert set(synthetic.columns[synthetic.isna().any()]) <= set(declared)
    assert set(synthetic["native-country"].dropna()) <= {"United-States", "Canada", "Mexico",
                                                         "Other"}
    assert json.loads((tmp_path / "ledger.json").read_text())["epsilon"] <= 1
    assert (tmp_path / "report.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_fit_defaults_to_adaptive_projection(files, capsys):
    out = files.dir / "synthetic.csv"
    assert main(["fit", str(files.csv), "--domain", str(files.domain), "--seed", "0",
                 "-o", str(out)]) == 0
    assert "privsyn: AdaptiveProjection fitted on" in capsys.readouterr().err
    assert len(pd.read_csv(out)) == 120


@pytest.mark.parametrize("rounds, phrase", [
    (None, ""), (0, " (1-way marginals only)"), (1, " (1 round)"), (8, " (8 rounds)"),
])
def test_summary_names_the_rounds_a_fit_used(rounds, phrase):
    estimator = types.SimpleNamespace() if rounds is None else types.SimpleNamespace(n_rounds_=rounds)
    assert rounds_phrase(estimator) == phrase


def test_summary_names_adaptive_selection():
    estimator = types.SimpleNamespace(n_rounds_=90, n_selection_rounds_=12,
                                      marginal_measurements_={(0,): 0, (1,): 0, (0, 1): 0})
    assert rounds_phrase(estimator) == " (adaptive selection: 12 rounds, 3 marginals measured)"


def test_number_share_flag_and_drafted_points(tmp_path, capsys):
    # a number that is 0 in 70% of rows: privsyn domain drafts the point, privsyn fit
    # measures the numbers with a share of the budget (a ledger entry of its own) unless
    # --number-share 0
    rng = np.random.default_rng(0)
    n = 4000
    frame = pd.DataFrame({
        "gain": np.where(rng.random(n) < 0.7, 0, rng.integers(1, 50_000, n)),
        "hours": rng.integers(1, 100, n),
        "sex": rng.choice(["F", "M"], n),
    })
    path, domain, out = tmp_path / "d.csv", tmp_path / "d.json", tmp_path / "s.csv"
    frame.to_csv(path, index=False)
    assert main(["domain", str(path), "-o", str(domain), "--max-categories", "5"]) == 0
    draft = json.loads(domain.read_text())
    assert draft["gain"]["points"] == [0] and draft["gain"]["bins"] == 9
    assert "points" not in draft["hours"]
    capsys.readouterr()
    base = ["fit", str(path), "--domain", str(domain), "--seed", "0", "--epsilon", "2",
            "-o", str(out)]
    assert main(base) == 0
    err = capsys.readouterr().err
    assert re.search(r"number_histogram: 1 x rho", err)
    synthetic = pd.read_csv(out)
    assert abs((synthetic["gain"] == 0).mean() - (frame["gain"] == 0).mean()) < 0.03
    assert main(base + ["--number-share", "0"]) == 0
    assert "number_histogram" not in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse's own usage error
        main(base + ["--number-share", "1.5"])
    assert exc.value.code == EXIT_USAGE
    assert "--number-share: must be 'auto' or a number in [0, 1)" in capsys.readouterr().err


def test_fit_names_a_column_its_random_marginals_leave_out(files, capsys):
    # --marginals draws that many k-way marginals: with k = 1 and one marginal, two of the
    # three columns are in none, and stderr says which and what covers them
    out = files.dir / "synthetic.csv"
    assert _fit(files, "--k", "1", "--marginals", "1", "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "are in no marginal the fit measured" in err
    assert "without --marginals, covers every column" in err
    assert _fit(files, "--k", "1", "-o", str(out), "-q") == 0  # the default covers them all
    assert "no marginal" not in capsys.readouterr().err
