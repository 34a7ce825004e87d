"""The registry of synthesizers: lookups, and a toy synthesizer that the whole package picks up.

Adding a synthesizer is one module plus one registry line: ``Toy`` below is the
module, ``TOY`` the line. Registered for a test, it runs through the common
checks, ``privsyn fit --algorithm toy`` and the benchmark runner, none of which
names it.
"""

import dataclasses
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sklearn_privsyn
from sklearn_privsyn import cli, registry
from sklearn_privsyn._base import BaseSynthesizer
from sklearn_privsyn.privacy import gaussian_mechanism, gaussian_sigma
from sklearn_privsyn.registry import (
    CLI_ALGORITHMS,
    SynthesizerEntry,
    all_synthesizers,
    create,
    get_synthesizer,
    registered,
)
from sklearn_privsyn.solvers import ORACLE_NAMES
from test_common import COMMON_CHECKS


class Toy(BaseSynthesizer):
    """Noisy 1-way marginals, sampled as a product: the smallest honest synthesizer.

    Replacing one row moves each column's vector of fractions by ``sqrt(2) / n``
    in L2, so all of them together by ``sqrt(2 a) / n`` for ``a`` columns: one
    Gaussian mechanism spends the budget.
    """

    def __init__(self, *, epsilon=1.0, delta=None, workload=None, n_records=64,
                 conversion="cks", random_state=None, verbose=0):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.n_records = n_records
        self.conversion = conversion
        self.random_state = random_state
        self.verbose = verbose

    _parameter_constraints: dict = {**BaseSynthesizer._parameter_constraints,
                                    "n_records": [int]}

    def _fit_records(self, data, rng):
        layout = self.workload_.layout_
        n = data.n_rows
        fractions = data.answers([(a,) for a in range(layout.n_attributes)])
        sensitivity = math.sqrt(2 * layout.n_attributes) / n
        sigma = gaussian_sigma(sensitivity, self.rho_)
        self.ledger_.charge("gaussian_mechanism", self.rho_)
        noisy = np.clip(gaussian_mechanism(fractions, sensitivity, sigma, rng), 1e-6, None)
        columns = []
        for start, size in zip(layout.starts, layout.block_sizes, strict=True):
            p = noisy[start:start + size]
            columns.append(rng.choice(size, size=self.n_records, p=p / p.sum()))
        self.n_rounds_ = 1
        return np.column_stack(columns), np.ones(self.n_records)


TOY = SynthesizerEntry("Toy", __name__, "toy", "noisy 1-way marginals (a test's toy)",
                       test_params={"n_records": 16})


@pytest.fixture
def toy():
    with registered(TOY) as entry:
        yield entry


# ------------------------------------------------------------------ the registry


def test_every_public_synthesizer_is_registered_and_exported():
    names = [entry.name for entry in all_synthesizers()]
    assert names == ["FEM", "SepFEM", "DualQuery", "DQRS", "MWEM", "AdaptiveProjection"]
    for entry in all_synthesizers():
        assert entry.name in sklearn_privsyn.__all__
        assert getattr(sklearn_privsyn, entry.name) is entry.load()


def test_lookup_by_class_or_command_line_name():
    assert get_synthesizer("dqrs") is get_synthesizer("DQRS")
    est = create("sepfem", epsilon=0.3, rounds=4)
    assert type(est).__name__ == "SepFEM" and est.epsilon == 0.3 and est.rounds == 4
    with pytest.raises(ValueError, match=r"unknown synthesizer 'gan'; registered names are "
                                         r"'fem', 'sepfem'"):
        get_synthesizer("gan")


def test_entries_are_immutable():
    entry = get_synthesizer("fem")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.name = "other"
    with pytest.raises(TypeError):
        entry.test_params["rounds"] = 100


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="already registered"):
        registry.register(dataclasses.replace(TOY, cli_name="fem"))
    assert "Toy" not in [e.name for e in all_synthesizers()]


def test_command_line_names_derive_from_the_registry_and_the_solvers():
    assert list(cli.ALGORITHMS) == [e.cli_name for e in all_synthesizers()]
    assert cli.ALGORITHMS["adaptive"] == ("sklearn_privsyn.adaptive", "AdaptiveProjection")
    assert tuple(cli.SOLVERS) == ORACLE_NAMES


def test_the_command_line_does_not_import_the_demo_or_numpy():
    # the demo imports its algorithms from the registry, not from the command line
    code = ("import sys, sklearn_privsyn.cli; "
            "print('sklearn_privsyn.demo' in sys.modules, 'numpy' in sys.modules)")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


# ------------------------------------------------------------------ a toy, registered


def test_toy_is_listed_only_while_registered(toy):
    assert get_synthesizer("toy") is toy
    assert CLI_ALGORITHMS["toy"] == (__name__, "Toy")
    assert "toy" in cli.ALGORITHMS
    assert type(create("Toy", n_records=3)) is Toy


def test_toy_is_gone_after_the_test():
    assert "toy" not in CLI_ALGORITHMS


@pytest.mark.parametrize("check", COMMON_CHECKS, ids=lambda c: c.__name__)
def test_common_checks_run_on_the_toy(toy, check):
    check(toy)


def test_command_line_fits_the_toy(toy, tmp_path, capsys):
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.integers(3, size=50), "b": rng.choice(["x", "y"], size=50)}).to_csv(
        tmp_path / "x.csv", index=False)
    (tmp_path / "d.json").write_text('{"a": 3, "b": ["x", "y"]}')
    status = cli.main(["fit", str(tmp_path / "x.csv"), "--domain", str(tmp_path / "d.json"),
                       "--algorithm", "toy", "--seed", "0", "-o", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "Toy fitted on 50 rows" in err and "gaussian_mechanism: 1 x rho" in err
    assert len(pd.read_csv(tmp_path / "s.csv")) == 50


def _bench_run():
    name = "privsyn_bench_run"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_benchmark_runner_runs_the_toy(toy, tmp_path):
    run = _bench_run()
    assert run.ALGORITHMS["toy"] == (__name__, "Toy")
    domain = tmp_path / "tiny-domain.json"
    domain.write_text('{"a": 3, "b": 4, "c": 2}')
    specs = run.expand_grid({"algorithms": [{"name": "toy", "params": {"n_records": 30}}],
                             "datasets": [f"generated:{domain}:200"], "epsilon": [1.0],
                             "k": [2], "n_marginals": [3], "seeds": [0]})
    rows = run.run_grid(specs, tmp_path / "runs.csv", isolation="none", progress=False)
    assert [(r["algorithm"], r["estimator"], r["status"]) for r in rows] == [("toy", "toy", "ok")]
    assert float(rows[0]["rho_spent"]) <= float(rows[0]["rho_budget"])
    assert rows[0]["rounds"] == 1
