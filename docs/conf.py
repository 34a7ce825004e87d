"""Sphinx configuration for the sklearn-privsyn documentation.

Build with ``sphinx-build -W -b html docs docs/_build/html`` (needs the
``docs`` extra: sphinx and numpydoc).
"""

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import sklearn_privsyn  # noqa: E402

project = "sklearn-privsyn"
author = "the sklearn-privsyn developers"
copyright = "2024-2026, the sklearn-privsyn developers"
release = sklearn_privsyn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
]

source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]
templates_path = []
html_static_path = []
html_theme = "alabaster"
html_title = f"sklearn-privsyn {release}"
nitpicky = False

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Links to other projects resolve offline too: without network access the
# inventories are simply not loaded (a warning we silence below).
intersphinx_mapping = {}
if os.environ.get("PRIVSYN_DOCS_INTERSPHINX"):
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
        "pandas": ("https://pandas.pydata.org/docs", None),
    }

RESULTS = ROOT / "benchmarks" / "RESULTS.md"

# Fitted-attribute names such as ``n_rounds_`` written without backquotes in a
# docstring ("ndarray of shape (n_rounds_, 2)") would be read by docutils as
# hyperlink references to an undefined target. Escape the trailing underscore
# of a bare identifier, leaving inline literals, roles and links untouched.
_LITERAL = re.compile(r"(``.+?``|:[\w:.-]+:`[^`]*`|`[^`]*`_{0,2})")
_BARE_TRAILING_UNDERSCORE = re.compile(r"(?<=[A-Za-z0-9])_(?![\w`])")


def _escape_trailing_underscores(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        parts = _LITERAL.split(line)
        for j in range(0, len(parts), 2):  # even parts lie outside literals and roles
            parts[j] = _BARE_TRAILING_UNDERSCORE.sub(r"\\_", parts[j])
        lines[i] = "".join(parts)


def _benchmark_results(app, docname, source):
    """Append benchmarks/RESULTS.md to the benchmarks page when the file exists."""
    if docname != "benchmarks":
        return
    if RESULTS.is_file():
        source[0] += (
            "\n\nThe file as it stands\n---------------------\n\n"
            ".. literalinclude:: ../benchmarks/RESULTS.md\n"
            "   :language: markdown\n"
        )
    else:
        source[0] += (
            "\n\n.. note::\n\n"
            "   ``benchmarks/RESULTS.md`` has not been generated in this checkout yet; "
            "run the benchmark scripts described above to produce it.\n"
        )


def setup(app):
    app.connect("source-read", _benchmark_results)
    app.connect("autodoc-process-docstring", _escape_trailing_underscores)
