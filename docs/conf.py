"""Sphinx configuration for the sklearn-privsyn documentation.

Build with ``sphinx-build -W -b html docs docs/_build/html`` (needs the
``docs`` extra: sphinx, numpydoc and myst-parser).
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
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/architecture.md is read in the repository (README links it), not rendered here.
exclude_patterns = ["_build", "architecture.md"]
templates_path = []
html_static_path = []
html_theme = "alabaster"
# wide enough for the results page's tables
html_theme_options = {"page_width": "1180px"}
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


BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "RESULTS.md"

# A Markdown link or image whose target is a path (not a URL, not an anchor).
_MD_LINK = re.compile(r"(!?)\[([^\]]*)\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s]+)\)")


def _results_link(match):
    """Rewrite one link of benchmarks/RESULTS.md for the docs page ``results``.

    Images are read from ``benchmarks/`` (Sphinx copies them into the build);
    a link to another file of the repository (a note, a CSV) becomes a
    download of that file; a link to a file not written yet becomes its text.
    """
    bang, text, target = match.groups()
    path = (BENCHMARKS / target).resolve()
    relative = os.path.relpath(path, HERE).replace(os.sep, "/")
    if bang:
        return f"![{text}]({relative})"
    label = text.replace("`", "").replace("<", "").replace(">", "") or target
    if path.is_file():
        return f"{{download}}`{label} <{relative}>`"
    return label


def _results_page(app, docname, source):
    """The docs page ``results`` is benchmarks/RESULTS.md, with its links made to work here."""
    if docname != "results":
        return
    app.env.note_dependency(str(RESULTS))
    text = RESULTS.read_text(encoding="utf-8")
    source[0] = _MD_LINK.sub(_results_link, text)


def setup(app):
    app.connect("source-read", _results_page)
    app.connect("autodoc-process-docstring", _escape_trailing_underscores)
