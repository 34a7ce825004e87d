"""Reading private tables from CSV and Parquet files, converted by their public domain.

The data layer's door for files: ``privsyn`` reads every input through
:func:`read_table` (or :func:`read_source`, :func:`frame_of` and
:func:`convert_table`, its steps), and so can a script; a Parquet dataset
directory, whose rows need not fit in memory, through
:func:`read_parquet_dataset` (a Dask DataFrame). The files are private:
an error names the file, the column and the kind of problem, never a cell or a
line number. :class:`TableFileError` is a ``ValueError``.
"""

import csv
import io
import sys

from .domain_file import all_numbers, derived_values

__all__ = [
    "TableFileError",
    "check_parquet_engine",
    "convert_table",
    "frame_of",
    "is_dataset_directory",
    "is_parquet",
    "parse_booleans",
    "parse_numbers",
    "read_parquet_dataset",
    "read_source",
    "read_table",
]


class TableFileError(ValueError):
    """A file that cannot be read or converted; the message names the file and column."""


_INTEGER_TEXT = r"\s*[+-]?\d+\s*"


def parse_numbers(text, col, path, *, integer):
    """A column of CSV strings as numbers (empty cells missing); an error naming the column.

    The error never quotes a cell or a row number: the file is private.
    ``integer=None`` returns integers when every cell is written as one (``3``,
    not ``3.0``), so that numbers are written back in the input's kind. An
    integer column with empty cells comes back as pandas' nullable ``Int64``.
    """
    import numpy as np
    import pandas as pd

    empty = text == ""
    series = pd.Series(text, dtype=object)
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(values) & ~empty
    if integer:
        bad |= np.isfinite(values) & (values != np.round(values))
    if bad.any():
        kind = "integer codes" if integer else "numbers"
        raise TableFileError(f"column {col!r} of {path} must hold {kind}; it has other values")
    if integer is None:
        integer = bool(series[~empty].astype(str).str.fullmatch(_INTEGER_TEXT).all())
    if not (integer and np.isfinite(values[~empty]).all()):
        return values
    if empty.any():
        return pd.arrays.IntegerArray(np.where(empty, 0, values).astype(np.int64), empty)
    return values.astype(np.int64)


def is_parquet(path):
    """Whether ``path`` names a Parquet file (``.parquet`` or ``.pq``)."""
    return str(path).lower().endswith((".parquet", ".pq"))


def check_parquet_engine(path):
    """Raise :class:`TableFileError` unless pyarrow or fastparquet is installed."""
    import importlib.util

    if not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
        raise TableFileError(
            f"{path}: reading and writing Parquet needs pyarrow; install it with "
            "pip install 'sklearn-privsyn[parquet]'"
        )


def read_source(path):
    """Read a CSV (``-`` for stdin) or Parquet file once, for :func:`frame_of`.

    Parameters
    ----------
    path : str or path-like
        A ``.parquet`` (or ``.pq``) file, or a CSV file with a header row.

    Returns
    -------
    source : tuple
        ``("csv", text)`` or ``("parquet", DataFrame)``, with the path last.
    """
    import pandas as pd

    if is_parquet(path):
        check_parquet_engine(path)
        try:
            frame = pd.read_parquet(path)
        except FileNotFoundError:
            raise TableFileError(f"no such file: {path}") from None
        except Exception as exc:  # noqa: BLE001  (the engines raise many kinds)
            raise TableFileError(f"{path} is not a readable Parquet file: {exc}") from None
        if list(frame.columns) != [str(c) for c in frame.columns]:
            raise TableFileError(f"{path} has column names that are not text")
        return "parquet", frame, path
    try:
        if str(path) == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
    except FileNotFoundError:
        raise TableFileError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TableFileError(f"cannot read {path}: {exc}") from None
    return "csv", text, path


def frame_of(source, *, as_text):
    """The table of :func:`read_source`'s output, in the file's column order.

    ``as_text`` gives every cell as a string (missing cells as ``""``), for
    conversion by a domain; otherwise pandas infers the types.
    """
    import pandas as pd

    kind, content, path = source
    if kind == "parquet":
        frame = content
        if as_text:
            frame = frame.astype(object).where(frame.notna(), "").astype(str)
    else:
        header = next(csv.reader(io.StringIO(content)), [])
        duplicated = sorted({c for c in header if header.count(c) > 1})
        if duplicated:
            raise TableFileError(f"{path} has duplicate column names: {duplicated}")
        try:
            # only an empty cell is missing, as in convert_table: "NA" or "null" is text
            if as_text:
                frame = pd.read_csv(io.StringIO(content), dtype=str, keep_default_na=False)
            else:
                frame = pd.read_csv(io.StringIO(content), keep_default_na=False,
                                    na_values=[""])
        except pd.errors.EmptyDataError as exc:
            raise TableFileError(f"{path} is not a readable CSV file: {exc}") from None
        except pd.errors.ParserError:
            # pandas names the offending line; the file is private, so this does not
            raise TableFileError(
                f"{path} is not a readable CSV file: a row has the wrong number of fields or "
                "broken quoting"
            ) from None
    if len(frame) == 0:
        raise TableFileError(f"{path} has a header but no data rows")
    return frame


def is_dataset_directory(path):
    """Whether ``path`` is a directory: a Parquet dataset (one file per partition)."""
    import os

    return str(path) != "-" and os.path.isdir(path)


def read_parquet_dataset(path, params):
    """A Parquet dataset directory as a ``dask.dataframe.DataFrame`` of the domain's columns.

    Nothing is read but the schema (column names and types): the rows stay
    on disk, read and counted partition by partition when a synthesizer is
    fitted (:mod:`sklearn_privsyn.counts`). Parquet columns are typed, so
    they are used as stored; a value outside its domain is an error at fit
    that names the column.

    Parameters
    ----------
    path : str or path-like
        A directory of Parquet files.
    params : dict
        The output of :func:`~sklearn_privsyn.domain_file.read_domain`.

    Returns
    -------
    frame : dask.dataframe.DataFrame
        Columns in the domain's order.
    dropped : list of str
        Columns of the dataset not in the domain.
    input_order : list of str
        The domain's columns in the dataset's order.
    """
    check_parquet_engine(path)
    try:
        import dask.dataframe as dd
    except ImportError:
        raise TableFileError(
            f"{path} is a directory: reading a Parquet dataset needs dask; install it with "
            "pip install 'sklearn-privsyn[dask]'"
        ) from None
    try:
        frame = dd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001  (the engines raise many kinds)
        raise TableFileError(f"{path} is not a readable Parquet dataset: {exc}") from None
    names = list(frame.columns)
    if names != [str(c) for c in names]:
        raise TableFileError(f"{path} has column names that are not text")
    columns = params["columns"]
    missing = [c for c in columns if c not in names]
    if missing:
        raise TableFileError(
            f"{path} has no column {missing[0]!r} (named in the domain file); its columns "
            f"are {names}"
        )
    dropped = [c for c in names if c not in columns]
    return frame[columns], dropped, [c for c in names if c in columns]


def read_table(path, params=None):
    """Read a CSV or Parquet file, converting each column as its domain entry says.

    Columns are read as text and converted per column: integer codes for a
    size, numbers for bounds (integers when every cell is written as one),
    and for a list of values, booleans when every listed value is one,
    numbers when every listed value is a number and text otherwise. Without
    ``params`` pandas infers the types.

    Parameters
    ----------
    path : str or path-like
        The CSV file (``-`` reads stdin), or a ``.parquet`` file.
    params : dict, default=None
        The output of :func:`~sklearn_privsyn.domain_file.read_domain`. Columns missing from the domain
        are dropped (the caller is told which); domain columns missing from
        the file are an error.

    Returns
    -------
    frame : pandas.DataFrame
        Columns in the domain's order.
    dropped : list of str
        Columns of the file not in the domain.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("b,a,extra\\nx,1,9\\ny,0,9\\n")
    >>> params = {"columns": ["a", "b"], "domain": {"a": 2, "b": ["x", "y"]},
    ...           "bounds": {}, "bins": {}}
    >>> frame, dropped = read_table(path, params)
    >>> frame.to_dict("list"), dropped
    ({'a': [1, 0], 'b': ['x', 'y']}, ['extra'])
    """
    source = read_source(path)
    frame = frame_of(source, as_text=params is not None)
    if params is None:
        return frame, []
    return convert_table(frame, params, path)


def convert_table(frame, params, path):
    """Convert a table of text cells by its domain (see :func:`read_table`)."""
    import pandas as pd

    columns = params["columns"]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise TableFileError(
            f"{path} has no column {missing[0]!r} (named in the domain file); its columns "
            f"are {list(frame.columns)}"
        )
    dropped = [c for c in frame.columns if c not in columns]
    out = {}
    for col in columns:
        text = frame[col].to_numpy(dtype=object)
        spec = params["domain"].get(col)
        if col in params.get("derived", {}):  # the values its declaration gives, or numbers
            spec = derived_values(params["derived"][col])
        if isinstance(spec, int):
            out[col] = parse_numbers(text, col, path, integer=True)
        elif isinstance(spec, list):
            out[col] = _parse_listed(text, col, path, spec)
        else:  # bounds, or a derived number
            out[col] = parse_numbers(text, col, path, integer=None)
    return pd.DataFrame(out, columns=columns), dropped


def _parse_listed(text, col, path, values):
    """Cells of a column of listed ``values``: booleans when every value is one, numbers
    when every value is a number, text otherwise (empty cells missing)."""
    import pandas as pd

    if all(isinstance(v, bool) for v in values):
        return parse_booleans(text, col, path)
    if all_numbers(values):
        return parse_numbers(text, col, path, integer=all(isinstance(v, int) for v in values))
    cells = pd.Series(text, dtype=str)
    return cells.where(cells != "")


def parse_booleans(text, col, path):
    """A column of CSV strings as booleans (empty cells missing); the error names the column."""
    import numpy as np

    lowered = np.char.lower(np.asarray(text, dtype=str))
    empty = lowered == ""
    if not np.isin(lowered[~empty], ["true", "false"]).all():
        raise TableFileError(f"column {col!r} of {path} must hold true or false; it has other values")
    if empty.any():
        return np.where(empty, None, lowered == "true").astype(object)
    return lowered == "true"
