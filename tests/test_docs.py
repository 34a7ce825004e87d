"""The Sphinx documentation builds without a single warning.

Needs the ``docs`` extra (sphinx, numpydoc, myst-parser); skipped with the reason otherwise.
One build (about 10 s) serves every check, through a module-scoped fixture.
"""

import html
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_privsyn

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

_missing = [m for m in ("sphinx", "numpydoc", "myst_parser")
            if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(
    bool(_missing),
    reason=f"{' and '.join(_missing)} not installed (pip install -e '.[docs]')",
)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         "-d", str(out / ".doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, timeout=300,
    )
    return result, out


def test_sphinx_build_has_no_warnings(build):
    result, _ = build
    assert result.returncode == 0, f"sphinx-build -W failed:\n{result.stderr}"
    assert result.stderr.strip() == "", result.stderr


def test_api_reference_covers_the_public_names(build):
    result, out = build
    assert result.returncode == 0, result.stderr
    api = (out / "api.html").read_text(encoding="utf-8")
    for name in sklearn_privsyn.__all__:
        if name.startswith("__"):
            continue
        assert f'id="sklearn_privsyn.{name}"' in api, f"{name} missing from docs/api.rst"


@pytest.mark.parametrize(
    "page", ["getting_started", "privacy", "algorithms/fem", "algorithms/sepfem",
             "algorithms/dualquery", "algorithms/dqrs", "algorithms/mwem", "algorithms/adaptive",
             "solvers", "sklearn", "cli", "report", "benchmarks", "results", "internals"],
)
def test_pages_exist(build, page):
    _, out = build
    assert (out / f"{page}.html").is_file()


def test_results_page_renders_the_results_file_with_its_tables_and_plots(build):
    _, out = build
    page = (out / "results.html").read_text(encoding="utf-8")
    source = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page)).replace("\u2019", "'")
    headings = re.findall(r"^#+ (.+)$", source, flags=re.M)
    assert len(headings) > 3
    for heading in headings:
        assert heading in text
    assert "| ---" not in page and "|---" not in page  # pipe tables became tables
    n_tables = len(re.findall(r"^\|[-| ]+\|$", source, flags=re.M))
    assert page.count("<table") == n_tables
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", source)
    assert images
    for image in images:
        name = Path(image).name
        assert f'src="_images/{name}"' in page
        assert (out / "_images" / name).is_file()
