"""scikit-learn's private API that the package relies on, and the version bound that guards it.

Everything private is imported in ``sklearn_privsyn/_sklearn_private.py`` and
nowhere else; ``setup.cfg`` bounds scikit-learn to the releases where these
checks pass. When a release moves or changes one of them, a test here fails
and says what moved.
"""

import ast
import configparser
import inspect
from numbers import Integral, Real
from pathlib import Path

import pytest
import sklearn
from packaging.requirements import Requirement
from sklearn.base import BaseEstimator

from sklearn_privsyn import FEM
from sklearn_privsyn._sklearn_private import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    fit_context,
)

PACKAGE = Path(__file__).resolve().parents[1] / "sklearn_privsyn"


def _sklearn_requirement():
    config = configparser.ConfigParser()
    config.read(PACKAGE.parent / "setup.cfg")
    for line in config["options"]["install_requires"].splitlines():
        line = line.strip()
        if line.startswith("scikit-learn"):
            return Requirement(line)
    raise AssertionError("setup.cfg does not require scikit-learn")


def test_scikit_learn_is_bounded_above_and_installed_within_the_bound():
    requirement = _sklearn_requirement()
    assert any(spec.operator == "<" for spec in requirement.specifier), (
        "setup.cfg must bound scikit-learn above: the package uses its private API"
    )
    assert requirement.specifier.contains(sklearn.__version__), (
        f"scikit-learn {sklearn.__version__} is outside the tested range {requirement.specifier}"
    )


def test_private_api_is_imported_in_one_module_only():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "_sklearn_private.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                if "._" in node.module or private:
                    offenders.append(f"{path.relative_to(PACKAGE)}: {node.module} {private}")
    assert not offenders, "private scikit-learn imports outside _sklearn_private.py: " + "; ".join(
        offenders)


def test_fit_context_validates_parameters_before_fit():
    assert "prefer_skip_nested_validation" in inspect.signature(fit_context).parameters

    class Probe(BaseEstimator):
        _parameter_constraints = {"alpha": [Interval(Real, 0, None, closed="neither")]}

        def __init__(self, alpha=1.0):
            self.alpha = alpha

        @fit_context(prefer_skip_nested_validation=True)
        def fit(self, X=None):
            self.fitted_ = True
            return self

    assert Probe().fit().fitted_
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of Probe"):
        Probe(alpha=-1.0).fit()
    # and through a real estimator
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter of FEM"):
        FEM(epsilon=0.0).fit([[0, 1]])


@pytest.mark.parametrize(
    "constraint, good, bad",
    [
        (Interval(Real, 0, 1, closed="neither"), 0.5, 1.0),
        (Interval(Integral, 1, None, closed="left"), 1, 0),
        (StrOptions({"highs", "brute"}), "brute", "gurobi"),
        (HasMethods(["session"]), type("O", (), {"session": lambda self: None})(), object()),
    ],
    ids=["Interval-real", "Interval-int", "StrOptions", "HasMethods"],
)
def test_constraint_classes_behave_as_used(constraint, good, bad):
    assert constraint.is_satisfied_by(good)
    assert not constraint.is_satisfied_by(bad)
