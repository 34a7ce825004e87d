"""The ``privsyn`` command: fit a synthesizer on a CSV, evaluate synthetic data, run the demo.

Run ``privsyn --help`` (or ``python -m sklearn_privsyn --help``) for usage.
Exit status: 0 on success, 1 for a data or validation error (a missing file,
an unknown column, a value outside the domain, an unavailable algorithm), 2
for a usage error (an unknown option, a bad number such as ``--epsilon -1``),
130 when interrupted. Errors are one line on stderr, without a traceback.
Synthetic rows go to ``-o`` (stdout by default); everything else (progress,
privacy spent, warnings) goes to stderr.
"""

import argparse
import csv
import io
import json
import math
import sys
import time
import warnings

from .domain_draft import DEFAULT_BINS, DEFAULT_MAX_CATEGORIES
from .domain_file import (
    _all_numbers,
    _warn_read_from_data,
    _workload_kwargs,
    dump_domain,
    parse_domain,
    read_domain,
)
from .marginal_budget import DEFAULT_CELL_BUDGET
from .registry import CLI_ALGORITHMS, get_synthesizer
from .solvers import ORACLE_NAMES

__all__ = [
    "ALGORITHMS",
    "EXIT_DATA",
    "EXIT_USAGE",
    "build_parser",
    "main",
    "read_table",
]

#: Exit status of a data or validation error.
EXIT_DATA = 1
#: Exit status of a usage error (argparse's own).
EXIT_USAGE = 2

#: ``--algorithm`` name -> (module, class), a live view of the registry; imported on use.
ALGORITHMS = CLI_ALGORITHMS

#: ``--solver`` names.
SOLVERS = ORACLE_NAMES

_DESCRIPTION = """\
Differentially private synthetic data from a CSV file (AdaptiveProjection by
default; FEM, sepFEM, DualQuery, DQRS and MWEM of Vietri et al., ICML 2020). The synthetic table approximately
answers a workload of k-way marginal queries (counts of every combination of
values of k columns) and is (epsilon, delta)-differentially private with
respect to the rows of the input: replacing any one row changes the
distribution of the output by at most a factor exp(epsilon), up to delta."""

_EPILOG = """\
examples:
  # the paper's format: a CSV of integer codes and a JSON {column: size}
  privsyn fit adult.csv --domain adult-domain.json --epsilon 1 \\
      --k 3 --marginals 64 --seed 0 -o synthetic.csv

  # the same error measure as the paper, on the same 64 marginals
  privsyn evaluate adult.csv synthetic.csv --domain adult-domain.json \\
      --k 3 --marginals 64 --seed 0 --per-marginal

  # AdaptiveProjection on the bundled UCI Adult data (--algorithm fem: FEM)
  privsyn demo --epsilon 1

domain files (JSON object, one entry per column, in the order marginals are
enumerated):
  {"age": 85, "sex": 2}                  integer codes 0..size-1 (paper format)
  {"colour": ["red", "green", "blue"]}   the column's values, as listed
  {"income": {"bounds": [0, 200000], "bins": 20}}
                                         numbers, binned on public bounds
  {"city": {"values": ["Paris", "Other"], "other": "Other", "missing": true}}
                                         unknown cities become "Other"; the
                                         column may be empty (missing)
The domain must be public knowledge (documentation, standards, round
numbers), never read off the private data: it is not covered by the privacy
guarantee.

exit status: 0 success, 1 data or validation error, 2 usage error,
130 interrupted. Synthetic rows go to -o (stdout by default); progress, the
privacy spent and warnings go to stderr."""


class CLIError(Exception):
    """A user error: printed as one line on stderr, exit status ``EXIT_DATA``."""


class UsageError(Exception):
    """A usage error found after parsing: exit status ``EXIT_USAGE``."""


# --------------------------------------------------------------------------- types


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text!r}")
    return value


def _probability(text):
    value = _positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1); got {text!r}")
    return value


def _whole_number(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number; got {text!r}") from None


def _positive_int(text):
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {text!r}")
    return value


def _max_cells(text):
    if text == "n_rows":
        return text
    return _positive_int(text)


def _missing_columns(text):
    if text in ("error", "category"):
        return text
    columns = [c.strip() for c in text.split(",") if c.strip()]
    if not columns:
        raise argparse.ArgumentTypeError(
            f"expected 'error', 'category' or column names; got {text!r}"
        )
    return columns


def _seed(text):
    value = _whole_number(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be in 0..2**32-1; got {text!r}")
    return value


# --------------------------------------------------------------------------- files


_INTEGER_TEXT = r"\s*[+-]?\d+\s*"


def _numbers(text, col, path, *, integer):
    """A column of CSV strings as numbers (empty cells missing); CLIError naming the column.

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
        raise CLIError(f"column {col!r} of {path} must hold {kind}; it has other values")
    if integer is None:
        integer = bool(series[~empty].astype(str).str.fullmatch(_INTEGER_TEXT).all())
    if not (integer and np.isfinite(values[~empty]).all()):
        return values
    if empty.any():
        return pd.arrays.IntegerArray(np.where(empty, 0, values).astype(np.int64), empty)
    return values.astype(np.int64)


def _is_parquet(path):
    return str(path).lower().endswith((".parquet", ".pq"))


def _parquet_engine(path):
    import importlib.util

    if not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
        raise CLIError(
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

    if _is_parquet(path):
        _parquet_engine(path)
        try:
            frame = pd.read_parquet(path)
        except FileNotFoundError:
            raise CLIError(f"no such file: {path}") from None
        except Exception as exc:  # noqa: BLE001  (the engines raise many kinds)
            raise CLIError(f"{path} is not a readable Parquet file: {exc}") from None
        if list(frame.columns) != [str(c) for c in frame.columns]:
            raise CLIError(f"{path} has column names that are not text")
        return "parquet", frame, path
    try:
        if str(path) == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
    except FileNotFoundError:
        raise CLIError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(f"cannot read {path}: {exc}") from None
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
            raise CLIError(f"{path} has duplicate column names: {duplicated}")
        try:
            # only an empty cell is missing, as in convert_table: "NA" or "null" is text
            if as_text:
                frame = pd.read_csv(io.StringIO(content), dtype=str, keep_default_na=False)
            else:
                frame = pd.read_csv(io.StringIO(content), keep_default_na=False,
                                    na_values=[""])
        except pd.errors.EmptyDataError as exc:
            raise CLIError(f"{path} is not a readable CSV file: {exc}") from None
        except pd.errors.ParserError:
            # pandas names the offending line; the file is private, so this does not
            raise CLIError(
                f"{path} is not a readable CSV file: a row has the wrong number of fields or "
                "broken quoting"
            ) from None
    if len(frame) == 0:
        raise CLIError(f"{path} has a header but no data rows")
    return frame


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
        raise CLIError(
            f"{path} has no column {missing[0]!r} (named in the domain file); its columns "
            f"are {list(frame.columns)}"
        )
    dropped = [c for c in frame.columns if c not in columns]
    out = {}
    for col in columns:
        text = frame[col].to_numpy(dtype=object)
        spec = params["domain"].get(col)
        if isinstance(spec, int):
            out[col] = _numbers(text, col, path, integer=True)
        elif isinstance(spec, list) and all(isinstance(v, bool) for v in spec):
            out[col] = _booleans(text, col, path)
        elif isinstance(spec, list):
            if _all_numbers(spec):
                integer = all(isinstance(v, int) for v in spec)
                out[col] = _numbers(text, col, path, integer=integer)
            else:
                values = pd.Series(text, dtype=str)
                out[col] = values.where(values != "")
        else:  # bounds
            out[col] = _numbers(text, col, path, integer=None)
    return pd.DataFrame(out, columns=columns), dropped


def _booleans(text, col, path):
    """A column of CSV strings as booleans (empty cells missing); the error names the column."""
    import numpy as np

    lowered = np.char.lower(np.asarray(text, dtype=str))
    empty = lowered == ""
    if not np.isin(lowered[~empty], ["true", "false"]).all():
        raise CLIError(f"column {col!r} of {path} must hold true or false; it has other values")
    if empty.any():
        return np.where(empty, None, lowered == "true").astype(object)
    return lowered == "true"


# --------------------------------------------------------------------------- commands


def _note(args, message):
    if not getattr(args, "quiet", False):
        print(f"privsyn: {message}", file=sys.stderr)


def _print_warnings(caught):
    seen = set()
    for w in caught:
        text = str(w.message)
        if text not in seen:
            seen.add(text)
            print(f"privsyn: warning: {text}", file=sys.stderr)


def _load_algorithm(name):
    entry = get_synthesizer(name)
    try:
        return entry.load()
    except (ImportError, AttributeError) as exc:
        raise CLIError(
            f"algorithm {name!r} is not available in this installation "
            f"({entry.module}.{entry.name}: {exc})"
        ) from None


def _make_workload(args, params, n_marginals):
    from .workload import QueryWorkload

    return QueryWorkload(
        **_workload_kwargs(params),
        k=args.k,
        n_marginals=n_marginals,
        max_cells=args.max_cells,
        clip=args.clip,
        random_state=args.seed,
    )


def _choose_workload(args, params, frame):
    """The workload of ``fit`` and ``evaluate``: the paper's protocol with
    ``--marginals``, otherwise marginals chosen under ``--cell-budget``."""
    from .marginal_budget import budgeted_marginals

    if args.marginals is not None:
        return _make_workload(args, params, args.marginals)
    one_way = [(c,) for c in frame.columns]
    sizes = _make_workload(args, params, None).set_params(
        marginals=one_way, max_cells=None
    ).fit(frame).domain_sizes_
    choice = budgeted_marginals(sizes, k=args.k, max_cells=args.max_cells,
                                cell_budget=args.cell_budget, n_rows=len(frame),
                                random_state=args.seed)
    _note(args, f"workload: {choice.describe()}; set --marginals, --max-cells, "
                "--cell-budget or --k to change it")
    return _make_workload(args, params, None).set_params(
        marginals=list(choice.marginals), max_cells=None
    )


def _draft(source, args, *, quiet=False):
    """A domain drafted from the data by ``privsyn domain``'s rules; warnings on stderr."""
    from .domain_draft import draft_domain

    typed = frame_of(source, as_text=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draft = draft_domain(typed, max_categories=args.max_categories, bins=args.bins)
    if not quiet:
        _print_warnings(caught)
    return draft


def _read_with_domain(args, path, *, quiet_draft=False):
    """(table in domain order, the file's columns, params) for fit and evaluate."""
    source = read_source(path)
    if args.domain is None:
        params = parse_domain(_draft(source, args, quiet=quiet_draft), "the drafted domain")
    else:
        params = read_domain(args.domain)
        if not quiet_draft:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                _warn_read_from_data(params, args.domain)
            _print_warnings(caught)
    _override_missing(args, params)
    raw = frame_of(source, as_text=True)
    frame, dropped = convert_table(raw, params, path)
    return frame, [c for c in raw.columns if c in params["columns"]], params, dropped


def _override_missing(args, params):
    """``--handle-missing`` replaces the domain's ``"missing"`` declarations (with a note)."""
    flag = args.handle_missing
    if flag is None:
        return
    if isinstance(flag, list):
        declared = flag
    else:
        declared = list(params["columns"]) if flag == "category" else []
    if set(declared) != set(params["missing"]):
        source = "the drafted domain" if args.domain is None else args.domain
        _note(args, f"--handle-missing {','.join(declared) or 'error'} replaces the columns "
                    f"declared \"missing\" in {source}: {params['missing']}")
    params["missing"] = list(declared)


def _read_real_and_synthetic(args):
    """The real and synthetic tables of ``evaluate`` and ``report``, with the domain params."""
    # These commands read the real data by design: a domain drafted from it is no leak here.
    real, _, params, _ = _read_with_domain(args, args.real, quiet_draft=True)
    synthetic, _ = convert_table(frame_of(read_source(args.synthetic), as_text=True), params,
                                 args.synthetic)
    return real, synthetic, params


def _write_text(text, output):
    """Write text to ``output`` (``-``: stdout)."""
    if output == "-":
        sys.stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise CLIError(f"cannot write {output}: {exc.strerror or exc}") from None


def _write_table(frame, output):
    """Write a table to ``output``: Parquet by extension, else CSV (``-``: stdout)."""
    try:
        if _is_parquet(output):
            _parquet_engine(output)
            frame.to_parquet(output, index=False)
        elif output == "-":
            frame.to_csv(sys.stdout, index=False)
            sys.stdout.flush()
        else:
            frame.to_csv(output, index=False)
    except OSError as exc:
        raise CLIError(f"cannot write {output}: {exc.strerror or exc}") from None


def _oracle(args, default="highs"):
    """``--solver`` as given, or (with ``--time-limit``) that oracle, or ``default``, with the limit."""
    if args.time_limit is None:
        return args.solver
    from .solvers import get_oracle

    return type(get_oracle(args.solver or default))(time_limit=args.time_limit)


def _cmd_fit(args):
    if args.domain is None and not args.infer_domain:
        raise UsageError(
            "--domain is required: the domain (each column's values, sizes or bounds) must "
            "be public knowledge. Pass --infer-domain to read it from the data instead, "
            "which is NOT covered by the privacy guarantee"
        )
    if args.domain is not None and args.infer_domain:
        raise UsageError("give either --domain or --infer-domain, not both")
    cls = _load_algorithm(args.algorithm)
    frame, input_order, params, dropped = _read_with_domain(args, args.input)
    if dropped:
        _note(args, f"ignoring columns of {args.input} not in the domain: {dropped}")

    verbose = args.verbose if args.verbose is not None else int(sys.stderr.isatty())
    settings = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "random_state": args.seed,
        "verbose": 0 if args.quiet else verbose,
        "solver": (_oracle(args, cls().get_params().get("solver", "highs"))
                   if (args.solver or args.time_limit) else None),
        "rounds": args.rounds,
        "samples_per_round": args.samples_per_round,
    }
    accepted = cls().get_params()
    given = {k: v for k, v in settings.items() if v is not None}
    unsupported = [k for k in given if k not in accepted]
    if unsupported:
        flags = ", ".join("--" + k.replace("_", "-") for k in unsupported)
        raise UsageError(f"{flags} does not apply to --algorithm {args.algorithm}")

    workload = _choose_workload(args, params, frame)
    estimator = cls(workload=workload, **given)
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(frame)
        finally:
            _print_warnings(caught)
    seconds = time.perf_counter() - started
    n_rows = args.rows if args.rows is not None else len(frame)
    synthetic = estimator.sample(n_rows, random_state=args.seed)[input_order]
    _write_table(synthetic, args.output)
    if args.ledger:
        _write_ledger(estimator, args.ledger)

    if not args.quiet:
        wl = estimator.workload_
        print(
            f"privsyn: {type(estimator).__name__} fitted on {len(frame):,} rows x "
            f"{frame.shape[1]} columns in {seconds:.1f} s"
            + _rounds_phrase(estimator)
            + f"; workload: {len(wl.marginals_)} marginals, {wl.n_queries_:,} queries",
            file=sys.stderr,
        )
        for entry in estimator.ledger_.entries:
            print(f"privsyn:   {entry.mechanism}: {entry.count} x rho {entry.rho:.4g}",
                  file=sys.stderr)
        print(
            f"privsyn: privacy spent: ({estimator.epsilon_:.4g}, {estimator.delta_:.3g})-DP "
            f"(zCDP rho {estimator.ledger_.rho_spent:.4g} of {estimator.rho_:.4g}; target "
            f"epsilon {args.epsilon:g})",
            file=sys.stderr,
        )
        if args.output != "-":
            print(f"privsyn: wrote {n_rows:,} synthetic rows to {args.output}", file=sys.stderr)
    return 0


def _cmd_evaluate(args):
    from .metrics import workload_error

    real, synthetic, params = _read_real_and_synthetic(args)
    workload = _choose_workload(args, params, real)
    workload.fit(real)
    result = workload_error(workload, real, synthetic)
    if args.json:
        payload = {
            "max_error": result.max_error,
            "mean_error": result.mean_error,
            "max_tvd": result.max_tvd,
            "n_marginals": len(result.marginals),
            "n_queries": int(workload.n_queries_),
        }
        if args.per_marginal:
            payload["per_marginal_tvd"] = [
                {"marginal": list(m), "tvd": float(t)}
                for m, t in zip(result.marginals, result.per_marginal_tvd, strict=True)
            ]
        print(json.dumps(payload, indent=2))
        return 0
    print(
        f"workload: {len(result.marginals)} marginals ({args.k}-way), "
        f"{workload.n_queries_:,} queries; {len(real):,} real rows, "
        f"{len(synthetic):,} synthetic rows"
    )
    print(f"max error   {result.max_error:.4f}")
    print(f"mean error  {result.mean_error:.6f}")
    print(f"max TVD     {result.max_tvd:.4f}")
    if args.per_marginal:
        table = result.to_frame().sort_values("tvd", ascending=False, kind="stable")
        print("per-marginal total variation distance (largest first):")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def _cmd_domain(args):
    from .domain_draft import MARK

    draft = _draft(read_source(args.input), args)
    _write_text(dump_domain(draft), args.output)
    marked = [col for col, entry in draft.items() if entry.get(MARK)]
    _note(args, f"drafted the domain of {len(draft)} columns"
                + ("" if args.output == "-" else f" to {args.output}")
                + (f"; review the {len(marked)} entries marked {MARK!r}" if marked else ""))
    return 0


def _rounds_phrase(estimator):
    """How the fit spent its rounds, for the summary line (empty if it has none)."""
    rounds = getattr(estimator, "n_rounds_", None)
    if rounds is None:
        return ""
    if rounds == 0:
        return " (1-way marginals only)"
    return f" ({rounds} round{'s' if rounds != 1 else ''})"


def _write_ledger(estimator, path):
    """The fitted estimator's privacy spent as JSON, for ``privsyn report --ledger``."""
    ledger = estimator.ledger_
    payload = {
        "estimator": type(estimator).__name__,
        "epsilon": estimator.epsilon_,
        "delta": estimator.delta_,
        "rho_budget": ledger.rho_budget,
        "rho_spent": ledger.rho_spent,
        "entries": [{"mechanism": e.mechanism, "rho": e.rho, "count": e.count}
                    for e in ledger.entries],
    }
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None


def _read_ledger(path):
    """(PrivacyLedger, delta) rebuilt by charging every entry of a ledger JSON file."""
    from .privacy import PrivacyLedger

    try:
        with open(path, encoding="utf-8") as f:
            payload = json.load(f)
        ledger = PrivacyLedger(payload["rho_budget"])
        for entry in payload["entries"]:
            ledger.charge(entry["mechanism"], entry["rho"], entry["count"])
        return ledger, payload["delta"]
    except OSError as exc:
        raise CLIError(f"cannot read ledger file {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CLIError(f"ledger file {path} is not a ledger written by privsyn fit "
                       f"--ledger: {exc!r}") from None


def _cmd_report(args):
    from .report import quality_report

    real, synthetic, params = _read_real_and_synthetic(args)
    if args.target is not None and args.target not in real.columns:
        raise CLIError(f"--target {args.target!r} is not a column of the domain; its columns "
                       f"are {list(real.columns)}")
    ledger, delta = _read_ledger(args.ledger) if args.ledger else (None, None)
    workload = _choose_workload(args, params, real)
    page = quality_report(real, synthetic, workload=workload, ledger=ledger, delta=delta,
                          target=args.target, title=f"Synthetic data quality: {args.synthetic}")
    _write_text(page, args.output)
    if args.output != "-":
        _note(args, f"wrote the report to {args.output} (it reads the real data: it is for "
                    "you, not for release)")
    return 0


def _cmd_demo(args):
    from .demo import run_demo

    verbose = args.verbose if args.verbose is not None else int(sys.stderr.isatty())
    run_demo(epsilon=args.epsilon, n_marginals=args.marginals, seed=args.seed,
             rows=args.rows, verbose=verbose, algorithm=args.algorithm)
    return 0


# --------------------------------------------------------------------------- parser


def _add_workload_options(parser, seed_help):
    group = parser.add_argument_group("workload (which marginals are measured)")
    group.add_argument("--domain", metavar="FILE",
                       help="JSON file with the public domain of every column (see below)")
    group.add_argument("--k", type=_positive_int, default=3,
                       help="columns per marginal (default: 3)")
    group.add_argument("--marginals", type=_positive_int, metavar="M",
                       help="number of k-way marginals drawn at random "
                            "(default: all eligible ones)")
    group.add_argument("--max-cells", type=_max_cells, metavar="C",
                       help="keep only marginals with at most C cells; 'n_rows' uses the row "
                            "count, as the paper does (default: no limit with --marginals, "
                            "else n_rows)")
    group.add_argument("--cell-budget", type=_positive_int, metavar="B",
                       default=DEFAULT_CELL_BUDGET,
                       help="without --marginals, at most B cells in all: a random subset "
                            "of the eligible marginals is kept (default: %(default)s)")
    group.add_argument("--seed", type=_seed, default=None, help=seed_help)
    group.add_argument("--handle-missing", type=_missing_columns, default=None,
                       metavar="COLUMNS",
                       help="columns that may hold missing values (empty cells), comma "
                            "separated; each gets a missing code. 'error': none may; "
                            "'category': every column may. Replaces the domain file's "
                            "\"missing\" entries (default: as the domain file says). Part "
                            "of the public domain")
    group.add_argument("--clip", action=argparse.BooleanOptionalAction, default=True,
                       help="put numbers outside their bounds into the first or last bin "
                            "(default); --no-clip stops with an error instead")
    _add_draft_options(parser)


def _add_draft_options(parser):
    group = parser.add_argument_group(
        "drafting a domain from the data (privsyn domain, --infer-domain; NOT private)")
    group.add_argument("--bins", type=_positive_int, default=DEFAULT_BINS, metavar="B",
                       help="equal-width bins of a numeric column with many values "
                            "(default: %(default)s)")
    group.add_argument("--max-categories", type=_positive_int, default=DEFAULT_MAX_CATEGORIES,
                       metavar="M",
                       help="numeric columns with at most M distinct values get a list of "
                            "values (default: %(default)s)")


def build_parser():
    """The ``privsyn`` argument parser.

    Returns
    -------
    parser : argparse.ArgumentParser

    Examples
    --------
    >>> args = build_parser().parse_args(["fit", "data.csv", "--domain", "d.json"])
    >>> args.command, args.algorithm, args.epsilon, args.output
    ('fit', 'adaptive', 1.0, '-')
    """
    from . import __version__

    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="privsyn", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=formatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    fit = sub.add_parser(
        "fit",
        help="fit a synthesizer on a CSV file and write synthetic rows",
        description="Fit a differentially private synthesizer on INPUT (a CSV file with a\n"
        "header row) and write synthetic rows as CSV.\n\n" + _DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    fit.add_argument("input", metavar="INPUT",
                     help="the private CSV file ('-' for stdin) or Parquet file")
    fit.add_argument("-o", "--output", default="-", metavar="FILE",
                     help="where to write the synthetic rows: CSV, or Parquet for a .parquet "
                          "name (default: '-', CSV on stdout)")
    algo = fit.add_argument_group("algorithm and privacy")
    algo.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="adaptive",
                      help="adaptive (default: Gaussian measurements projected onto "
                           "records, the most accurate and fastest here), or the paper's fem, "
                           "sepfem, dualquery, dqrs, mwem (small domains only)")
    algo.add_argument("--epsilon", type=_positive_float, default=1.0,
                      help="privacy budget epsilon > 0 (default: 1); smaller is more private")
    algo.add_argument("--delta", type=_probability, default=None,
                      help="privacy parameter delta in (0, 1) (default: 1/n^2 for n rows)")
    algo.add_argument("--rows", type=_positive_int, metavar="N",
                      help="synthetic rows to write (default: as many as INPUT has)")
    algo.add_argument("--rounds", type=_positive_int, metavar="T",
                      help="number of rounds (default: derived from the budget)")
    algo.add_argument("--samples-per-round", type=_positive_int, metavar="S",
                      help="oracle samples (FEM, sepFEM) or sampled queries (DualQuery, "
                           "DQRS) per round (default: the algorithm's)")
    algo.add_argument("--solver", choices=SOLVERS, default=None,
                      help="optimisation oracle (default: hybrid for fem and sepfem, highs "
                           "for the others); it affects speed and accuracy, never privacy; "
                           "not for mwem")
    algo.add_argument("--time-limit", type=_positive_float, metavar="SECONDS",
                      help="time limit per oracle call (default: none)")
    algo.add_argument("--ledger", metavar="FILE",
                      help="also write the privacy spent (the ledger) as JSON, for "
                           "privsyn report")
    algo.add_argument("--infer-domain", action="store_true",
                      help="read the domain from the data instead of --domain (NOT private)")
    _add_workload_options(fit, "seed for the choice of marginals and for the algorithm "
                               "(default: fresh randomness)")
    noise = fit.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", action="store_true",
                       help="print only errors and warnings")
    noise.add_argument("-v", "--verbose", action="store_const", const=1, default=None,
                       help="show a progress bar (default: when stderr is a terminal)")
    fit.set_defaults(func=_cmd_fit, subparser=fit)

    evaluate = sub.add_parser(
        "evaluate",
        help="measure a synthetic CSV against the real one on a workload",
        description="Workload error of SYNTHETIC against REAL: the maximum and mean absolute\n"
        "error over every cell of every marginal (answers as fractions of rows, the\n"
        "paper's measure) and the largest total variation distance of a marginal.\n\n"
        "This reads the real data: its output is NOT differentially private.",
        epilog=_EPILOG,
        formatter_class=formatter,
    )
    evaluate.add_argument("real", metavar="REAL", help="the real CSV or Parquet file")
    evaluate.add_argument("synthetic", metavar="SYNTHETIC",
                          help="the synthetic CSV or Parquet file")
    _add_workload_options(evaluate, "seed for the choice of marginals; use fit's to "
                                    "measure on the fitted workload (default: fresh)")
    evaluate.add_argument("--per-marginal", action="store_true",
                          help="also print each marginal's total variation distance")
    evaluate.add_argument("--json", action="store_true", help="print the results as JSON")
    evaluate.set_defaults(func=_cmd_evaluate, subparser=evaluate)

    domain = sub.add_parser(
        "domain",
        help="draft a domain file from a CSV or Parquet file, for review (NOT private)",
        description="Draft a domain file for INPUT by the rules --infer-domain uses:\n"
        "text and few-valued columns get their values, other numbers their [min, max]\n"
        "and --bins bins. Every entry read from the data is marked\n"
        "\"read_from_data\": true. It is NOT covered by the privacy guarantee: replace\n"
        "each marked entry with public knowledge (documentation, standards, round\n"
        "numbers) and delete the mark before you fit.",
        epilog="example:\n  privsyn domain data.csv -o domain.json\n"
               "  privsyn fit data.csv --domain domain.json --epsilon 1 -o synthetic.csv",
        formatter_class=formatter,
    )
    domain.add_argument("input", metavar="INPUT", help="the CSV ('-' for stdin) or Parquet file")
    domain.add_argument("-o", "--output", default="-", metavar="FILE",
                        help="where to write the domain JSON (default: '-', stdout)")
    _add_draft_options(domain)
    domain.set_defaults(func=_cmd_domain, subparser=domain)

    report = sub.add_parser(
        "report",
        help="an HTML page showing how good a synthetic CSV is (NOT private)",
        description="One self-contained HTML page comparing SYNTHETIC with REAL: per-column\n"
        "distributions, a heat map of each pair of columns' total variation distance,\n"
        "the workload's errors and worst marginals, train-on-synthetic test-on-real\n"
        "accuracy for --target, and the privacy spent from --ledger.\n\n"
        "This reads the real data: the page is for the data owner and is NOT\n"
        "differentially private.",
        epilog="example:\n"
               "  privsyn fit real.csv --domain domain.json --seed 0 --ledger ledger.json "
               "-o synthetic.csv\n"
               "  privsyn report real.csv synthetic.csv --domain domain.json --seed 0 \\\n"
               "      --target income --ledger ledger.json -o report.html",
        formatter_class=formatter,
    )
    report.add_argument("real", metavar="REAL", help="the real CSV or Parquet file")
    report.add_argument("synthetic", metavar="SYNTHETIC", help="the synthetic CSV or Parquet file")
    report.add_argument("-o", "--output", default="-", metavar="FILE",
                        help="where to write the HTML page (default: '-', stdout)")
    report.add_argument("--target", metavar="COLUMN",
                        help="column to predict in the train-on-synthetic section")
    report.add_argument("--ledger", metavar="FILE",
                        help="the privacy ledger written by privsyn fit --ledger")
    _add_workload_options(report, "seed for the choice of marginals; use fit's to report "
                                  "on the fitted workload (default: fresh)")
    report.set_defaults(func=_cmd_report, subparser=report)

    demo = sub.add_parser(
        "demo",
        help="run a synthesizer (AdaptiveProjection by default) on the bundled UCI Adult data",
        description="Fit a synthesizer (AdaptiveProjection by default) on the bundled UCI\n"
        "Adult data (48,842 rows) with a public domain, then print the workload error\n"
        "and the privacy spent.",
        formatter_class=formatter,
    )
    demo.add_argument("--epsilon", type=_positive_float, default=1.0,
                      help="privacy budget (default: 1)")
    demo.add_argument("--marginals", type=_positive_int, default=32,
                      help="random 3-way marginals in the workload (default: 32)")
    demo.add_argument("--seed", type=_seed, default=0, help="random seed (default: 0)")
    demo.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="adaptive",
                      help="synthesizer to fit (default: adaptive; fem and sepfem run a quick "
                           "100-round setting)")
    demo.add_argument("--rows", type=_positive_int, default=5,
                      help="synthetic rows to print (default: 5)")
    demo.add_argument("-v", "--verbose", action="store_const", const=1, default=None,
                      help="show a progress bar (default: when stderr is a terminal)")
    demo.set_defaults(func=_cmd_demo, subparser=demo)
    return parser


def main(argv=None):
    """Run the ``privsyn`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments without the program name; ``None`` reads ``sys.argv``.

    Returns
    -------
    status : int
        0 on success, 1 (``EXIT_DATA``) for a data or validation error, 2
        (``EXIT_USAGE``) for a usage error, 130 when interrupted.

    Examples
    --------
    >>> main(["fit", "no-such-file.csv", "--domain", "no-such-domain.json"])
    1
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except UsageError as exc:
        args.subparser.print_usage(sys.stderr)
        print(f"privsyn {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CLIError, ValueError) as exc:
        print(f"privsyn {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_DATA
    except KeyboardInterrupt:
        print("privsyn: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
