"""The package's layout: old import paths still work, and no private name crosses modules."""

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sklearn_privsyn"

# (old path, new path, names): modules and names that moved, re-exported at the old path.
MOVED = [
    ("sklearn_privsyn.marginal_budget", "sklearn_privsyn.cell_budget",
     ["DEFAULT_CELL_BUDGET", "MarginalChoice", "budgeted_marginals"]),
    ("sklearn_privsyn.projection", "sklearn_privsyn.adaptive",
     ["MarginalCells", "Projection", "ProjectionResult", "project", "checked_targets",
      "zeroed_targets"]),
    ("sklearn_privsyn.product_mixture", "sklearn_privsyn.adaptive",
     ["ProductMixture", "ProductMixtureResult", "fit_product_mixture",
      "sample_product_mixture"]),
    ("sklearn_privsyn.cli", "sklearn_privsyn.table_files", ["read_table"]),
    ("sklearn_privsyn.solvers._base", "sklearn_privsyn._layout", ["OneHotLayout"]),
    ("sklearn_privsyn.solvers", "sklearn_privsyn._layout", ["OneHotLayout"]),
    ("sklearn_privsyn.dualquery", "sklearn_privsyn.privacy",
     ["acceptance_probabilities", "rejection_step_rho"]),
    ("sklearn_privsyn._base", "sklearn_privsyn._sampling", ["allocate_counts"]),
]


@pytest.mark.parametrize("old, new, names", MOVED, ids=[m[0] for m in MOVED])
def test_moved_names_are_the_same_objects_at_their_old_paths(old, new, names):
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), name


def _private_imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.level or node.module.startswith("sklearn_privsyn")):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield f"{path.relative_to(PACKAGE)}:{node.lineno}: {alias.name}"


def test_no_module_imports_a_private_name_from_another():
    # private modules with public names are fine; `from .x import _name` is not
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _private_imports(path)]
    assert found == []


# Issue 23: modules that show the architecture stay readable.
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 450


def test_no_module_or_class_grows_past_its_size_limit():
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(PACKAGE)
        if len(text.splitlines()) >= MAX_MODULE_LINES:
            too_long.append(f"{where}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size >= MAX_CLASS_LINES:
                    too_long.append(f"{where}: class {node.name} {size} lines")
    assert too_long == []
