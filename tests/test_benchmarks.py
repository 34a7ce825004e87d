"""The benchmark runner (benchmarks/run.py), its baselines and plots, on a tiny grid."""

import csv
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn.privacy import epsilon_to_rho
from sklearn_privsyn.workload import QueryWorkload

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name, filename):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


run = _load("privsyn_bench_run", "run.py")
baselines = _load("baselines", "baselines.py")
plots = _load("privsyn_bench_plots", "plots.py")

DOMAIN = {"a": 3, "b": 4, "c": 2, "d": 5}
N_ROWS = 400
FEM_FAST = {"solver": "heuristic", "rounds": 3, "samples_per_round": 3}


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "tiny-domain.json"
    path.write_text(json.dumps(DOMAIN))
    return f"generated:{path}:{N_ROWS}"


def _grid(dataset, algorithms, epsilon=(1.0,), **extra):
    block = {"algorithms": list(algorithms), "datasets": [dataset], "epsilon": list(epsilon),
             "k": [2], "n_marginals": [4], "seeds": [0], **extra}
    return run.expand_grid(block)


def _read(path):
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def _tiny_frame():
    datagen = _load("datagen", "datagen.py")
    return datagen.latent_class_table(DOMAIN, N_ROWS, random_state=0)


def test_tiny_grid_writes_one_row_per_run_with_the_columns(tmp_path, dataset):
    out = tmp_path / "runs.csv"
    specs = _grid(dataset, [{"name": "fem", "params": FEM_FAST}, "hdmm", "zeros"],
                  epsilon=(0.5, 1.0))
    rows = run.run_grid(specs, out, isolation="none", progress=False)
    assert len(rows) == 6
    header, written = _read(out)
    assert header == run.COLUMNS
    assert [r["status"] for r in written] == ["ok"] * 6
    assert {r["algorithm"] for r in written} == {"fem", "hdmm", "zeros"}

    frame = _tiny_frame()
    workload = QueryWorkload(domain=DOMAIN, k=2, n_marginals=4, max_cells=N_ROWS,
                             random_state=0).fit(frame)
    true = workload.answer(frame)
    for row in written:
        assert int(row["n"]) == N_ROWS
        assert int(row["d"]) == sum(DOMAIN.values())
        assert int(row["n_attributes"]) == len(DOMAIN)
        assert int(row["queries"]) == workload.n_queries_
        assert float(row["delta"]) == pytest.approx(1 / N_ROWS**2)
        assert 0.0 <= float(row["mean_error"]) <= float(row["max_error"]) <= 1.0
        assert json.loads(row["params"]) == (FEM_FAST if row["algorithm"] == "fem" else {})
    zeros = next(r for r in written if r["algorithm"] == "zeros")
    assert float(zeros["max_error"]) == pytest.approx(true.max())
    assert float(zeros["mean_error"]) == pytest.approx(true.mean())
    fem = next(r for r in written if r["algorithm"] == "fem")
    assert int(fem["rounds"]) == 3
    assert int(fem["oracle_calls"]) == (3 + 1) * 3  # one more sampling round than rounds
    assert float(fem["rho_spent"]) <= float(fem["rho_budget"])


def test_resume_does_not_rerun_rows_already_in_the_csv(tmp_path, dataset):
    out = tmp_path / "runs.csv"
    specs = _grid(dataset, ["hdmm", "zeros"])
    run.run_grid(specs[:1], out, isolation="none", progress=False)
    _, before = _read(out)
    rows = run.run_grid(specs, out, isolation="none", progress=False)
    assert [r["algorithm"] for r in rows] == ["zeros"]
    assert run.run_grid(specs, out, isolation="none", progress=False) == []
    _, after = _read(out)
    assert len(after) == 2 and after[0] == before[0]


def test_failing_algorithms_record_an_error_row_and_do_not_stop_the_grid(
    tmp_path, dataset, monkeypatch
):
    monkeypatch.setitem(run.ALGORITHMS, "missing", ("sklearn_privsyn.no_such_module", "X"))
    out = tmp_path / "runs.csv"
    specs = _grid(dataset, ["missing", {"name": "fem", "params": {"no_such_param": 1}},
                            "zeros"])
    run.run_grid(specs, out, isolation="none", progress=False)
    _, rows = _read(out)
    by_algorithm = {r["algorithm"]: r for r in rows}
    assert by_algorithm["missing"]["status"] == "error"
    assert "ModuleNotFoundError" in by_algorithm["missing"]["error"]
    assert by_algorithm["fem"]["status"] == "error"
    assert "no_such_param" in by_algorithm["fem"]["error"]
    assert by_algorithm["zeros"]["status"] == "ok"
    # failed rows count as done unless retried
    assert run.run_grid(specs, out, isolation="none", progress=False) == []
    retried = run.run_grid(specs, out, isolation="none", progress=False, retry_failed=True)
    assert sorted(r["algorithm"] for r in retried) == ["fem", "missing"]


def test_missing_peer_records_not_installed(tmp_path, dataset):
    pytest.importorskip("sklearn_privsyn")
    peers = _load("peers", "peers.py")
    if peers.snsynth_available():
        pytest.skip("smartnoise-synth is installed")
    rows = run.run_grid(_grid(dataset, ["mst"]), tmp_path / "r.csv", isolation="none",
                        progress=False)
    assert rows[0]["status"] == "error"
    assert "not installed" in rows[0]["error"]


def test_subprocess_isolation_measures_peak_rss_and_times_out(tmp_path, dataset):
    spec = _grid(dataset, ["zeros"])[0]
    row = run.run_isolated(spec, timeout=120)
    assert row["status"] == "ok", row["error"]
    assert row["peak_rss_mb"] >= row["base_rss_mb"] > 10
    slow = run.run_isolated(spec, timeout=0.01)  # the interpreter cannot even start
    assert slow["status"] == "timeout"
    assert slow["max_error"] is None


@pytest.mark.parametrize("projection", ["none", "clip", "simplex"])
def test_hdmm_accounting_spends_exactly_the_budget(projection):
    frame = _tiny_frame()
    workload = QueryWorkload(domain=DOMAIN, k=2, n_marginals=4, max_cells=N_ROWS,
                             random_state=0)
    base = baselines.HDMMBaseline(epsilon=0.7, workload=workload, projection=projection,
                                  random_state=1).fit(frame)
    rho = epsilon_to_rho(0.7, 1 / N_ROWS**2)
    assert base.rho_ == rho
    assert base.ledger_.rho_spent == pytest.approx(rho, rel=1e-12)
    assert base.epsilon_ == pytest.approx(0.7, rel=1e-6)
    # per marginal: L2 sensitivity sqrt(2)/n, budget rho/4 -> sigma = sqrt(4 / rho) / n
    assert base.sigma_ == pytest.approx(math.sqrt(4 / rho) / N_ROWS)
    entries = base.ledger_.entries
    assert len(entries) == 1 and entries[0].count == 4
    assert entries[0].rho == pytest.approx(rho / 4)
    offsets = base.workload_.marginal_offsets_
    sums = np.add.reduceat(base.answers_, offsets[:-1])
    if projection == "none":
        assert not np.allclose(sums, 1.0)
    else:
        assert np.allclose(sums, 1.0) and base.answers_.min() >= 0.0


def test_hdmm_noise_has_the_documented_scale():
    # one 2-way marginal with 2,500 cells: the residuals' sd estimates sigma
    domain = {"x": 50, "y": 50}
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(50, size=5000), "y": rng.integers(50, size=5000)})
    workload = QueryWorkload(domain=domain, k=2)
    base = baselines.HDMMBaseline(epsilon=1.0, workload=workload, random_state=0).fit(frame)
    residual = base.answers_ - base.workload_.answer(frame)
    expected = 1.0 / (5000 * math.sqrt(epsilon_to_rho(1.0, 1 / 5000**2)))
    assert residual.std() == pytest.approx(expected, rel=0.05)


def test_zero_baseline_spends_nothing():
    frame = _tiny_frame()
    base = baselines.ZeroBaseline(workload=QueryWorkload(domain=DOMAIN, k=1)).fit(frame)
    assert base.ledger_.rho_spent == 0.0 and base.epsilon_ == 0.0
    assert base.answers_.shape == (sum(DOMAIN.values()),)
    assert not base.answers_.any()


@pytest.mark.parametrize("seed", range(5))
def test_project_to_simplex_meets_the_kkt_conditions(seed):
    values = np.random.default_rng(seed).normal(0.1, 0.5, size=30)
    p = baselines.project_to_simplex(values)
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    support = p > 0
    tau = values[support] - p[support]  # one common shift on the support
    assert np.allclose(tau, tau[0])
    assert np.all(values[~support] <= tau[0] + 1e-12)


def test_config_files_expand_to_the_product_of_their_lists(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(
        'output = "x.csv"\n[defaults]\nseeds = [0, 1]\n'
        '[[grid]]\nalgorithms = ["zeros", {name = "hdmm", label = "h2", '
        'params = {projection = "simplex"}}]\n'
        'datasets = ["titanic"]\nk = [2, 3]\nn_marginals = [8, "all"]\nepsilon = [0.5, 1.0]\n'
    )
    specs = run.specs_from_config(run.load_config(config))
    assert len(specs) == 2 * 2 * 2 * 2 * 2
    assert len({s["run_id"] for s in specs}) == len(specs)
    assert {s["n_marginals"] for s in specs} == {8, None}
    h2 = [s for s in specs if s["algorithm"] == "h2"]
    assert all(s["params"] == {"projection": "simplex"} for s in h2)
    assert all(s["delta"] is None for s in specs)
    again = run.specs_from_config(run.load_config(config))
    assert [s["run_id"] for s in again] == [s["run_id"] for s in specs]


def test_paper_config_is_valid():
    specs = run.specs_from_config(run.load_config(BENCH / "configs" / "paper.toml"))
    fem = [s for s in specs if s["algorithm"] == "fem"]
    assert {(s["k"], s["epsilon"]) for s in fem if s["n_marginals"] == 64} == {
        (k, e) for k in (3, 5) for e in (0.1, 0.15, 0.2, 0.25, 0.5, 1.0)
    }
    assert {s["n_marginals"] for s in fem if s["epsilon"] == 0.1 and s["k"] == 3} == {
        32, 64, 128, None
    }


def test_peers_config_is_valid():
    specs = run.specs_from_config(run.load_config(BENCH / "configs" / "peers.toml"))
    assert {(s["algorithm"], s["epsilon"]) for s in specs} == {
        (a, e) for a in ("mst", "aim") for e in (0.1, 1.0)
    }


def test_plots_and_summary_from_a_csv(tmp_path, dataset):
    out = tmp_path / "runs.csv"
    specs = _grid(dataset, ["hdmm", "zeros"], epsilon=(0.5, 1.0), seeds=[0, 1])
    specs += _grid(dataset, ["zeros"], epsilon=(1.0,), n_marginals=[2, 6])
    run.run_grid(specs, out, isolation="none", progress=False)
    written = plots.make_all(out, tmp_path / "fig")
    names = {p.name for p in written}
    assert "summary.md" in names
    assert any(n.startswith("max_error_vs_epsilon") for n in names)
    assert any(n.startswith("max_error_vs_marginals") for n in names)
    table = plots.summarise(plots.load_runs(out))
    zeros = table[(table["algorithm"] == "zeros") & (table["n_marginals"] == "4")]
    assert list(zeros["seeds"]) == [2, 2]
    md = (tmp_path / "fig" / "summary.md").read_text()
    assert md.count("| zeros |") == 4 and md.count("| hdmm |") == 2


def test_comparison_table_puts_ours_next_to_the_authors(tmp_path):
    out = tmp_path / "runs.csv"
    base = {c: "" for c in run.COLUMNS}
    for seed, err in [(0, 0.1), (1, 0.2)]:
        run.append_row(out, {**base, "run_id": f"r{seed}", "algorithm": "fem", "dataset": "adult",
                             "k": 3, "n_marginals": 64, "epsilon": 0.1, "seed": seed,
                             "max_error": err, "status": "ok"})
    run.append_row(out, {**base, "run_id": "r9", "algorithm": "fem", "dataset": "adult",
                         "k": 3, "n_marginals": 64, "epsilon": 1.0, "seed": 0,
                         "status": "timeout", "error": "killed"})
    table = plots.comparison_markdown(plots.load_runs(out))
    row = next(line for line in table.splitlines() if line.startswith("| fem | 3 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "0.150 / 0.172"  # mean over the two seeds, authors' eps=0.1
    assert cells[-1] == "- / 0.076"  # the time-out left no result at eps=1


def test_fit_rss_is_the_peak_during_fit(tmp_path, dataset, monkeypatch):
    import numpy

    if run._peak_rss_since_reset_mb() is None or not run._reset_peak_rss():
        pytest.skip("no /proc/self/clear_refs")

    class Hungry(baselines.ZeroBaseline):
        def fit(self, X, y=None):
            block = numpy.ones(40 * 2**20 // 8)  # 40 MB, touched
            block.sum()
            del block
            return super().fit(X)

    monkeypatch.setattr(baselines, "Hungry", Hungry, raising=False)
    monkeypatch.setitem(run.ALGORITHMS, "hungry", ("baselines", "Hungry"))
    small = run.execute(_grid(dataset, ["zeros"])[0])
    big = run.execute(_grid(dataset, ["hungry"])[0])
    assert big["status"] == "ok", big["error"]
    assert big["fit_rss_mb"] - small["fit_rss_mb"] == pytest.approx(40, abs=8)
    assert big["peak_rss_mb"] >= big["fit_rss_mb"]


def test_dominant_values_give_columns_a_majority_value():
    datagen = _load("datagen", "datagen.py")
    domain = {f"c{i}": size for i, size in enumerate([2, 5, 40, 100, 7, 12])}
    X = datagen.latent_class_table(domain, 4000, random_state=0)
    before = X.copy()
    Y = datagen.with_dominant_values(X, domain, share=1.0, low=0.8, high=0.9, random_state=0)
    pd.testing.assert_frame_equal(X, before)  # input untouched
    for name, size in domain.items():
        top = Y[name].value_counts(normalize=True).iloc[0]
        assert 0.8 - 0.03 < top  # the replaced rows alone hold 80-90%
        assert Y[name].between(0, size - 1).all()
    untouched = datagen.with_dominant_values(X, domain, share=0.0, random_state=0)
    pd.testing.assert_frame_equal(untouched, X)


def test_rows_carry_tvd_and_train_on_synthetic_accuracy(tmp_path, dataset):
    out = tmp_path / "runs.csv"
    specs = _grid(dataset, [{"name": "fem", "params": FEM_FAST}, "hdmm"])
    run.run_grid(specs, out, isolation="none", progress=False)
    _, written = _read(out)
    fem = next(r for r in written if r["algorithm"] == "fem")
    hdmm = next(r for r in written if r["algorithm"] == "hdmm")
    target = list(DOMAIN)[-1]
    assert fem["target"] == target
    for name in ("tstr_logreg", "tstr_boosting", "tstr_majority"):
        assert 0.0 <= float(fem[name]) <= 1.0
    # FEM's answers form a distribution per marginal, so a marginal's TVD is at least its
    # largest cell error: max error <= max TVD <= the sum of the TVDs
    assert float(fem["max_error"]) <= float(fem["mean_tvd"]) * int(fem["marginals"]) + 1e-12
    assert float(fem["sample_mean_tvd"]) <= 1.0
    assert float(fem["sample_max_error"]) >= float(fem["sample_mean_error"])
    # an answers-only baseline has a TVD but no synthetic rows to train on
    assert float(hdmm["mean_tvd"]) > 0
    assert hdmm["tstr_logreg"] == hdmm["target"] == hdmm["sample_max_error"] == ""


def test_quality_table_shows_mean_and_sd_and_blanks_what_was_not_measured(tmp_path):
    out = tmp_path / "runs.csv"
    base = {c: "" for c in run.COLUMNS}
    setting = {"dataset": "adult", "k": 3, "n_marginals": 64, "epsilon": 0.1, "status": "ok"}
    for seed, tvd, acc in [(0, 0.2, 0.8), (1, 0.4, 0.7)]:
        run.append_row(out, {**base, **setting, "run_id": f"f{seed}", "algorithm": "fem",
                             "seed": seed, "max_error": 0.1, "mean_tvd": tvd,
                             "tstr_logreg": acc})
    run.append_row(out, {**base, **setting, "run_id": "h0", "algorithm": "hdmm", "seed": 0,
                         "max_error": 0.05, "mean_tvd": 3.0})
    table = plots.quality_markdown(plots.load_runs(out))
    fem = next(line for line in table.splitlines() if "| fem |" in line)
    cells = [c.strip() for c in fem.strip("|").split("|")]
    assert cells[5:8] == ["0.1000 (0.0000)", "0.300 (0.141)", ""]
    assert cells[10] == "0.750 (0.071)" and cells[-1] == "2"
    hdmm = next(line for line in table.splitlines() if "| hdmm |" in line)
    assert [c.strip() for c in hdmm.strip("|").split("|")][5:7] == ["0.0500", "3.000"]


protocol = _load("protocol", "protocol.py")


@pytest.mark.parametrize("order_seed", [0, 3])
def test_shuffled_order_lists_the_drawn_marginals_in_a_seeded_order(order_seed):
    frame = _tiny_frame()
    drawn = protocol.paper_workload(N_ROWS, k=2, n_marginals=5, domain=DOMAIN)
    assert protocol.in_order(drawn, frame, "drawn") is drawn
    shuffled = protocol.in_order(drawn, frame, "shuffled", order_seed)
    again = protocol.in_order(drawn, frame, "shuffled", order_seed)
    before = drawn.fit(frame).marginals_
    after = shuffled.fit(frame).marginals_
    assert sorted(after) == sorted(before) and after != before
    assert again.fit(frame).marginals_ == after
    assert shuffled.fit(frame).n_queries_ == drawn.n_queries_
    with pytest.raises(ValueError, match="order must be one of"):
        protocol.in_order(drawn, frame, "reversed")


def test_grid_orders_keep_the_drawn_run_ids_and_add_shuffled_runs(dataset):
    plain = _grid(dataset, ["zeros"])
    both = _grid(dataset, ["zeros"], orders=["drawn", "shuffled"], order_seed=2)
    assert [s["order"] for s in both] == ["drawn", "shuffled"]
    assert both[0]["run_id"] == plain[0]["run_id"]
    reseeded = _grid(dataset, ["zeros"], orders=["shuffled"], order_seed=3)
    assert len({both[1]["run_id"], reseeded[0]["run_id"], plain[0]["run_id"]}) == 3
    with pytest.raises(ValueError, match="orders must be among"):
        _grid(dataset, ["zeros"], orders=["reversed"])


def test_fit_and_measure_reports_the_errors_of_the_sampled_rows():
    from sklearn_privsyn import DualQuery
    from sklearn_privsyn.metrics import workload_error

    frame = _tiny_frame()
    workload = protocol.paper_workload(N_ROWS, k=2, n_marginals=4, domain=DOMAIN)
    est = DualQuery(epsilon=1.0, workload=workload, random_state=0)
    figures = protocol.fit_and_measure(est, frame)
    expected = workload_error(est.workload_, frame, est.sample(N_ROWS))
    assert figures["max_error"] == expected.max_error
    assert figures["mean_error"] == expected.mean_error
    assert figures["mean_tvd"] == pytest.approx(expected.per_marginal_tvd.mean())
    assert figures["seconds"] > 0 and figures["cpu_seconds"] >= 0


def test_summary_lines_give_mean_and_sd_per_order_and_over_both():
    rows = [{"eps": 1, "order": order, "seed": seed, "max_error": value}
            for order, values in [("drawn", [0.1, 0.3]), ("shuffled", [0.5, 0.7])]
            for seed, value in enumerate(values)]
    lines = protocol.summary_lines(rows, ["eps", "order"])
    assert lines == [
        "mean of 2: eps=1 order=drawn max_error=0.2 (sd 0.14)",
        "mean of 2: eps=1 order=shuffled max_error=0.6 (sd 0.14)",
        "mean of 4: eps=1 order=both max_error=0.4 (sd 0.26)",
    ]


def test_dqrs_against_dualquery_pairs_runs_by_seed_and_order():
    bench = _load("bench_dualquery", "bench_dualquery.py")
    errors = {("drawn", 0): (0.10, 0.08), ("drawn", 1): (0.10, 0.12),
              ("shuffled", 0): (0.20, 0.14)}
    rows = [{"algorithm": name, "epsilon": 0.5, "order": order, "seed": seed, "max_error": e}
            for (order, seed), pair in errors.items()
            for name, e in zip(["DualQuery", "DQRS"], pair)]
    rows.append({"algorithm": "DualQuery", "epsilon": 0.5, "order": "drawn", "seed": 2,
                 "max_error": 0.3})  # unpaired: left out
    [line] = bench.dqrs_against_dualquery(rows)
    assert line == ("DQRS - DualQuery max error, eps=0.5: mean -0.0200 (sd 0.0400), "
                    "DQRS lower or equal in 2 of 3 paired runs")


def test_small_tables_config_is_valid():
    specs = run.specs_from_config(run.load_config(BENCH / "configs" / "small_tables.toml"))
    algorithms = {s["algorithm"] for s in specs}
    assert {"fem", "aim", "mst"} <= algorithms  # AdaptiveProjection joins as one more block
    assert len(specs) == len(algorithms) * 4 * 2 * 5
    assert {s["dataset"] for s in specs} == {
        f"generated:adult:{n}{suffix}" for n in (1000, 7000) for suffix in ("", ":dominant")
    }
    assert {s["epsilon"] for s in specs} == {0.1, 1.0}
    assert all(s["data_seed"] == s["seed"] for s in specs)  # a new table for every seed
    assert {s["seed"] for s in specs} == set(range(5))
    assert len({s["run_id"] for s in specs}) == len(specs)


def test_generated_tables_take_a_data_seed_and_dominant_values(dataset):
    default, _ = run.load_dataset(dataset)
    pd.testing.assert_frame_equal(default, _tiny_frame())  # data seed 0: the table as before
    other, _ = run.load_dataset(dataset, data_seed=3)
    assert not other.equals(default)
    dominant, kwargs = run.load_dataset(f"{dataset}:dominant", data_seed=3)
    assert kwargs == {"domain": DOMAIN}
    for name in DOMAIN:  # each column's dominant value holds U(0.5, 0.97) of the rows
        assert dominant[name].value_counts(normalize=True).iloc[0] > 0.4
    assert dominant.equals(run.load_dataset(f"{dataset}:dominant", data_seed=3)[0])
    untouched, _ = run.load_dataset(f"{dataset}:dominant=0", data_seed=3)
    pd.testing.assert_frame_equal(untouched, other)
    with pytest.raises(ValueError, match="generated:SCHEMA:N"):
        run.load_dataset(f"{dataset}:4:5")


def test_data_seed_follows_the_run_seed_and_keeps_old_run_ids(dataset):
    specs = _grid(dataset, ["zeros"], seeds=[0, 2], data_seed="seed")
    assert [s["data_seed"] for s in specs] == [0, 2]
    legacy = {k: v for k, v in specs[0].items() if k != "data_seed"}
    assert run.run_id(legacy) == specs[0]["run_id"]  # rows written before data seeds
    fixed = _grid(dataset, ["zeros"], seeds=[2])[0]
    assert fixed["data_seed"] == 0 and fixed["run_id"] != specs[1]["run_id"]
    with pytest.raises(ValueError, match="data_seed"):
        _grid(dataset, ["zeros"], data_seed="run")


def test_a_seeded_dominant_table_is_measured_on_its_records_and_on_sample_rows(dataset):
    from sklearn_privsyn import FEM
    from sklearn_privsyn.metrics import workload_error

    # 401 rows: the weights times n are not whole, so sampling rounds some of them
    name = dataset.replace(f":{N_ROWS}", ":401:dominant")
    spec = _grid(name, [{"name": "fem", "params": FEM_FAST}], seeds=[4], data_seed="seed")[0]
    row = run.execute(spec)
    assert row["status"] == "ok", row["error"]
    assert row["data_seed"] == 4 and row["fit_cpu_seconds"] > 0

    frame, kwargs = run.load_dataset(name, data_seed=4)
    workload = QueryWorkload(k=2, n_marginals=4, max_cells=401, random_state=0,
                             **kwargs).fit(frame)
    fem = FEM(epsilon=1.0, workload=workload, random_state=4, **FEM_FAST).fit(frame)
    sampled = workload_error(workload, frame, fem.sample(401))
    assert row["sample_max_error"] == pytest.approx(sampled.max_error)
    assert row["sample_mean_error"] == pytest.approx(sampled.mean_error)
    assert row["sample_mean_tvd"] == pytest.approx(sampled.per_marginal_tvd.mean())
    weighted = workload_error(workload, frame, fem.records_, synthetic_weights=fem.weights_)
    assert row["mean_error"] == pytest.approx(weighted.mean_error)
    assert row["mean_error"] != pytest.approx(sampled.mean_error)


def test_small_tables_verdict_needs_every_seed_and_the_better_reference(tmp_path):
    small = _load("privsyn_bench_small_tables", "small_tables.py")
    out = tmp_path / "runs.csv"
    base = {c: "" for c in run.COLUMNS}
    errors = {"fem": [0.2, 0.4], "aim": [0.1, 0.3], "ap": [0.15, 0.2], "bad": [0.3, 0.3],
              "slow": [0.01, None]}
    for algorithm, values in errors.items():
        for seed, err in enumerate(values):
            run.append_row(out, {**base, "run_id": f"{algorithm}{seed}", "algorithm": algorithm,
                                 "dataset": "g", "epsilon": 1.0, "seed": seed,
                                 "sample_max_error": err, "sample_mean_error": err,
                                 "sample_mean_tvd": err,
                                 "status": "ok" if err is not None else "timeout"})
    stats = small.setting_stats(plots.load_runs(out), n_seeds=2)
    by_algorithm = stats.set_index("algorithm")
    assert by_algorithm.loc["aim", "sample_max_error"] == pytest.approx(0.2)
    assert by_algorithm.loc["aim", "sample_max_error_sd"] == pytest.approx(math.sqrt(0.02))
    assert not by_algorithm.loc["slow", "complete"]
    assert by_algorithm.drop(index="slow")["complete"].all()
    table = small.verdicts(stats, ["ap", "bad", "slow"]).set_index("candidate")
    assert table.loc["ap", "best_sample_max_error"] == pytest.approx(0.2)
    assert table.loc["ap", "best_sample_max_error_by"] == "aim"
    assert table.loc["ap", "sample_max_error_ok"] == "yes"  # 0.175 against AIM's 0.2
    assert table.loc["bad", "sample_max_error_ok"] == "no"  # 0.3: worse than both
    assert table.loc["slow", "sample_max_error_ok"] == "-"  # a time-out leaves it incomplete
    partial = small.verdicts(stats, ["ap"], references=("fem", "aim", "slow"))
    assert list(partial["sample_max_error_ok"]) == ["-"]  # a reference is incomplete
    assert "1 / 1 (timeout)" in small.stats_markdown(stats)
    wins = small.seed_wins(plots.load_runs(out), ["ap", "slow"]).set_index(
        ["candidate", "reference"])
    assert wins.loc[("ap", "aim"), ["seeds", "sample_max_error"]].tolist() == [2, 1]
    assert wins.loc[("ap", "fem"), ["seeds", "sample_max_error"]].tolist() == [2, 2]
    assert wins.loc[("slow", "aim"), ["seeds", "sample_max_error"]].tolist() == [1, 1]


def test_small_tables_rows_of_later_csvs_replace_earlier_rows_of_the_same_run(tmp_path):
    small = _load("privsyn_bench_small_tables", "small_tables.py")
    base = {c: "" for c in run.COLUMNS}

    def write(path, rows):
        for run_id, algorithm, seed, err in rows:
            run.append_row(path, {**base, "run_id": run_id, "algorithm": algorithm,
                                  "dataset": "g", "epsilon": 1.0, "seed": seed,
                                  "sample_max_error": err, "status": "ok"})

    old, new = tmp_path / "runs.csv", tmp_path / "adaptive_runs.csv"
    write(old, [("a0", "ap", 0, 0.5), ("a1", "ap", 1, 0.6), ("f0", "fem", 0, 0.3)])
    # new defaults: a new run_id (other params) for the same (dataset, epsilon, algorithm, seed)
    write(new, [("b0", "ap", 0, 0.1), ("b0", "ap", 0, 0.2)])
    runs = small.read_runs([old, new]).set_index(["algorithm", "seed"])["sample_max_error"]
    assert runs.to_dict() == {("ap", 0): 0.2, ("ap", 1): 0.6, ("fem", 0): 0.3}
    assert small.read_runs([new, old]).set_index(["algorithm", "seed"]).loc[
        ("ap", 0), "sample_max_error"] == 0.5


def test_resample_baseline_answers_n_real_rows_drawn_with_replacement():
    frame = _tiny_frame()
    workload = QueryWorkload(domain=DOMAIN, k=2, n_marginals=4, max_cells=N_ROWS,
                             random_state=0)
    base = baselines.ResampleBaseline(workload=workload, random_state=3).fit(frame)
    rows = np.random.default_rng(3).integers(N_ROWS, size=N_ROWS)
    pd.testing.assert_frame_equal(base.sample_, frame.iloc[rows])  # the runner's sample_* rows
    assert np.allclose(base.answers_, base.workload_.answer(frame.iloc[rows]))
    assert not np.allclose(base.answers_, base.workload_.answer(frame))
    assert base.epsilon_ == math.inf and not hasattr(base, "ledger_")


def test_the_draft_tables_tool_drafts_compares_and_lists_every_suite_table(tmp_path):
    tool = _load("privsyn_bench_draft_tables", "draft_tables.py")
    from sklearn_privsyn.datasets import DEV_TABLES

    names = tool.table_names(BENCH / "notes" / "draft_tables.txt")
    assert len(names) == len(set(names)) == 56 and set(DEV_TABLES) <= set(names)
    listing = tmp_path / "tables.txt"
    listing.write_text("# a comment\nadult  # the bundled table\n\n")
    assert tool.table_names(listing) == ["adult"]
    ref, out = tmp_path / "ref", tmp_path / "out"
    assert tool.main(["--tables", str(listing), "--out", str(ref)]) == 0
    draft = json.loads((ref / "adult.json").read_text())
    assert draft["education-num"]["derived"]["of"] == "education"
    out.mkdir()
    (out / "adult.json").write_bytes((ref / "adult.json").read_bytes())
    assert tool.differing(["adult.json"], out, ref) == []
    (ref / "adult.json").write_text("{}\n")
    assert tool.differing(["adult.json", "other.json"], out, ref) == ["adult.json", "other.json"]


def test_bin_tilts_generated_compares_tilted_and_uniform_draws(tmp_path):
    tool = _load("privsyn_bench_bin_tilts_generated", "bin_tilts_generated.py")
    out = tmp_path / "tilts.csv"
    assert tool.main(["--n", "2000", "--noise", "0", "--seeds", "3", "--out", str(out)]) == 0
    rows = pd.read_csv(out).set_index(["shape", "seed"])
    assert len(rows) == 3 * len(tool.SHAPES)
    falling = rows.loc["exponential"]
    assert (falling["ks_tilted"] < 0.7 * falling["ks_uniform"]).all()
    # draws of whole numbers stay whole
    rng = np.random.default_rng(0)
    counts = rng.poisson(3.0, 500).astype(float)
    for drawn in tool.draws(counts, 10, 0.0, rng):
        assert np.array_equal(drawn, np.round(drawn))
        assert drawn.min() >= counts.min() and drawn.max() <= counts.max()


def test_numbers_alone_figures_of_one_number():
    tool = _load("privsyn_bench_numbers_alone", "numbers_alone.py")
    real = np.array([0.0] * 6 + [1.0, 2.0, 3.0, 4.0])
    drawn = np.array([0.0] * 3 + [1.0, 2.0, 3.0] + [5.0] * 4)
    ks, point, lost = tool.column_figures(real, drawn)
    # CDFs at 4: 1.0 real, 0.6 drawn; 0 holds 0.6 of the real rows, 0.3 of the drawn
    assert ks == pytest.approx(0.4) and point == pytest.approx(0.3)
    assert lost == pytest.approx(0.1)  # 4 is never drawn


def test_numbers_alone_measures_the_shape_a_share_of_the_budget_buys(tmp_path):
    tool = _load("privsyn_bench_numbers_alone", "numbers_alone.py")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"wait": np.minimum(np.round(rng.exponential(3.0, 3000), 1), 50.0),
                          "kind": rng.choice(["a", "b"], 3000)})
    frame.to_csv(tmp_path / "waits.csv", index=False)
    domain = {"wait": {"bounds": [0, 50], "bins": 10}, "kind": {"values": ["a", "b"]}}
    (tmp_path / "waits-domain.json").write_text(json.dumps(domain))
    out = tmp_path / "rows.csv"
    assert tool.main(["--cache", str(tmp_path), "--tables", "waits", "--eps", "1",
                      "--share", "0", "0.5", "--draws", "2", "--out", str(out)]) == 0
    rows = pd.read_csv(out)
    assert set(rows["column"]) == {"wait"} and len(rows) == 4
    by_share = rows.groupby("share")
    assert by_share["spent_share"].first().to_dict() == {0.0: 0.0, 0.5: 0.5}
    ks = by_share["ks"].mean()
    # uniform inside bins 5 wide against values mostly below 3; the measured shape is closer
    assert ks[0.0] > 0.12 and ks[0.5] < 0.5 * ks[0.0]
