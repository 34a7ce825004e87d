"""What each ``privsyn`` command does, once its arguments are parsed."""

import contextlib
import json
import sys
import time
import warnings

from ..domain_file import (
    declared_rules,
    dump_domain,
    parse_domain,
    read_domain,
    warn_read_from_data,
    workload_kwargs,
)
from ..registry import get_synthesizer
from ..table_files import (
    check_parquet_engine,
    convert_table,
    frame_of,
    is_dataset_directory,
    is_parquet,
    read_parquet_dataset,
    read_source,
)
from ._errors import CLIError, UsageError
from ._ledger_file import read_ledger, write_ledger

__all__ = ["cmd_demo", "cmd_domain", "cmd_evaluate", "cmd_fit", "cmd_report", "oracle_of",
           "rounds_phrase"]


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


@contextlib.contextmanager
def _warnings_printed(quiet=False):
    """The warnings raised inside, on stderr as ``privsyn: warning: ...`` (each once)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            if not quiet:
                _print_warnings(caught)


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
    from ..workload import QueryWorkload

    return QueryWorkload(
        **workload_kwargs(params),
        k=args.k,
        n_marginals=n_marginals,
        max_cells=args.max_cells,
        clip=args.clip,
        random_state=args.seed,
    )


def _choose_workload(args, params, frame, n_input=None):
    """The workload of ``fit`` and ``evaluate``: the paper's protocol with
    ``--marginals``, otherwise marginals chosen under ``--cell-budget``."""
    from ..cell_budget import budgeted_workload

    if args.marginals is not None:
        return _make_workload(args, params, args.marginals)
    workload, choice = budgeted_workload(params, frame, k=args.k, max_cells=args.max_cells,
                                         cell_budget=args.cell_budget, clip=args.clip,
                                         random_state=args.seed, n_rows=n_input)
    _note(args, f"workload: {choice.describe()}; set --marginals, --max-cells, "
                "--cell-budget or --k to change it")
    return workload


def _draft(typed, args, *, quiet=False):
    """A domain drafted from the typed table (``frame_of(source, as_text=False)``) by
    ``privsyn domain``'s rules; warnings on stderr."""
    from ..domain_draft import draft_domain

    with _warnings_printed(quiet):
        return draft_domain(typed, max_categories=args.max_categories, bins=args.bins,
                            point_share=args.point_share)


def _read_dataset_directory(args, path):
    """(Dask table in domain order, the dataset's columns, params, dropped) for fit."""
    if args.domain is None:
        raise UsageError(
            f"{path} is a Parquet dataset directory: its rows are counted where they are, "
            "never read to draft a domain; give --domain"
        )
    params = read_domain(args.domain)
    with _warnings_printed():
        warn_read_from_data(params, args.domain)
    _override_missing(args, params)
    frame, dropped, input_order = read_parquet_dataset(path, params)
    return frame, input_order, params, dropped


def _read_with_domain(args, path, *, quiet_draft=False):
    """(table in domain order, the file's columns, params) for fit and evaluate."""
    source = read_source(path)
    if args.domain is None:
        params = parse_domain(_draft(frame_of(source, as_text=False), args, quiet=quiet_draft),
                              "the drafted domain")
    else:
        params = read_domain(args.domain)
        with _warnings_printed(quiet_draft):
            warn_read_from_data(params, args.domain)
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
        if is_parquet(output):
            check_parquet_engine(output)
            frame.to_parquet(output, index=False)
        elif output == "-":
            frame.to_csv(sys.stdout, index=False)
            sys.stdout.flush()
        else:
            frame.to_csv(output, index=False)
    except OSError as exc:
        raise CLIError(f"cannot write {output}: {exc.strerror or exc}") from None


def oracle_of(args, default="highs"):
    """``--solver`` as given, or (with ``--time-limit``) that oracle, or ``default``, with the limit."""
    if args.time_limit is None:
        return args.solver
    from ..solvers import get_oracle

    return type(get_oracle(args.solver or default))(time_limit=args.time_limit)


def cmd_fit(args):
    if args.domain is None and not args.infer_domain:
        raise UsageError(
            "--domain is required: the domain (each column's values, sizes or bounds) must "
            "be public knowledge. Pass --infer-domain to read it from the data instead, "
            "which is NOT covered by the privacy guarantee"
        )
    if args.domain is not None and args.infer_domain:
        raise UsageError("give either --domain or --infer-domain, not both")
    cls = _load_algorithm(args.algorithm)
    directory = is_dataset_directory(args.input)
    if args.scheduler is not None and not directory:
        raise UsageError("--scheduler applies only to a Parquet dataset directory INPUT")
    if directory:
        frame, input_order, params, dropped = _read_dataset_directory(args, args.input)
    else:
        frame, input_order, params, dropped = _read_with_domain(args, args.input)
    if dropped:
        _note(args, f"ignoring columns of {args.input} not in the domain: {dropped}")

    verbose = args.verbose if args.verbose is not None else int(sys.stderr.isatty())
    settings = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "random_state": args.seed,
        "verbose": 0 if args.quiet else verbose,
        "solver": (oracle_of(args, cls().get_params().get("solver", "highs"))
                   if (args.solver or args.time_limit) else None),
        "rounds": args.rounds,
        "samples_per_round": args.samples_per_round,
        "number_share": args.number_share,
    }
    accepted = cls().get_params()
    given = {k: v for k, v in settings.items() if v is not None}
    unsupported = [k for k in given if k not in accepted]
    if unsupported:
        flags = ", ".join("--" + k.replace("_", "-") for k in unsupported)
        raise UsageError(f"{flags} does not apply to --algorithm {args.algorithm}")

    from ..counts import n_rows

    with _dask_client(args.scheduler):
        n_input = n_rows(frame)
        workload = _choose_workload(args, params, frame, n_input)
        estimator = cls(workload=workload, **given)
        started = time.perf_counter()
        with _warnings_printed():
            estimator.fit(frame)
        seconds = time.perf_counter() - started
    n_rows = args.rows if args.rows is not None else n_input
    with _warnings_printed():
        synthetic = estimator.sample(n_rows, random_state=args.seed)[input_order]
    _write_table(synthetic, args.output)
    if args.ledger:
        write_ledger(estimator, args.ledger)

    if not args.quiet:
        wl = estimator.workload_
        print(
            f"privsyn: {type(estimator).__name__} fitted on {n_input:,} rows x "
            f"{frame.shape[1]} columns in {seconds:.1f} s"
            + rounds_phrase(estimator)
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


@contextlib.contextmanager
def _dask_client(address):
    """A ``dask.distributed`` client of the cluster at ``address`` while fitting (or nothing)."""
    if address is None:
        yield None
        return
    try:
        from dask.distributed import Client
    except ImportError:
        raise UsageError(
            "--scheduler needs dask.distributed; install it with "
            "pip install 'sklearn-privsyn[dask]'"
        ) from None
    try:
        client = Client(address, timeout="30s")
    except OSError as exc:
        raise UsageError(f"cannot connect to the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client


def cmd_evaluate(args):
    from ..metrics import workload_error

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


def cmd_domain(args):
    from ..domain_draft import MARK

    typed = frame_of(read_source(args.input), as_text=False)
    draft = _draft(typed, args)
    _write_text(dump_domain(draft), args.output)
    marked = [col for col, entry in draft.items() if entry.get(MARK)]
    _note(args, f"drafted the domain of {len(draft)} columns"
                + ("" if args.output == "-" else f" to {args.output}")
                + (f"; review the {len(marked)} entries marked {MARK!r}" if marked else ""))
    derived = {col: entry["derived"] for col, entry in draft.items() if "derived" in entry}
    if derived:
        found = ", ".join(f"{col} of {' and '.join(_as_list(spec['of']))}"
                          for col, spec in derived.items())
        _note(args, f"derived (computed from their sources, never modelled): {found}; "
                    "check each relation against public knowledge")
        outside = [col for col, spec in derived.items()
                   if "ranges" in spec and _outside_ranges(typed, col, spec)]
        if outside:
            _note(args, f"a few rows of the data hold {', '.join(outside)} outside the ranges "
                        "drafted (coding errors?); the synthetic rows keep the ranges")
    clocks = [str(col) for col, entry in draft.items() if entry.get("clock")]
    days = [f"{col} of {' and '.join(_as_list(entry['day_of']))}"
            for col, entry in draft.items() if "day_of" in entry]
    logs = [str(col) + (" (its bins)" if entry["scale"] == "log-bins" else "")
            for col, entry in draft.items() if entry.get("scale", "linear") != "linear"]
    read_as = []
    if clocks:
        read_as.append(f"times of day written HHMM (clocks): {', '.join(clocks)}")
    if logs:
        read_as.append(f"numbers binned on a log scale: {', '.join(logs)}")
    if days:
        read_as.append(f"days of their months: {', '.join(days)}")
    rules = declared_rules(parse_domain(draft, "the drafted domain"))
    if rules:
        read_as.append(f"rules the synthetic rows keep: {', '.join(str(r) for r in rules)}")
    if read_as:
        _note(args, f"read as {'; '.join(read_as)}; check them against the table's "
                    "documentation")
    broken = [str(rule) for rule in rules if not rule.kept(typed).all()]
    if broken:
        _note(args, f"a few rows of the data break {', '.join(broken)} (coding errors?); "
                    "the synthetic rows keep every rule on every row")
    return 0


def _outside_ranges(frame, col, spec):
    """Whether a row of ``frame`` holds ``col`` outside its drafted range (a drafted
    ``"ranges"`` leaves out at most 1% of each value's rows)."""
    import pandas as pd

    key = frame[spec["of"]].astype(str)
    lo = key.map({str(v): lo for v, lo, _ in spec["ranges"]})
    hi = key.map({str(v): hi for v, _, hi in spec["ranges"]})
    x = pd.to_numeric(frame[col], errors="coerce")
    return bool(((x < lo) | (x > hi)).any())


def _as_list(of):
    return [str(c) for c in of] if isinstance(of, list) else [str(of)]


def rounds_phrase(estimator):
    """How the fit spent its rounds, for the summary line (empty if it has none)."""
    rounds = getattr(estimator, "n_rounds_", None)
    if rounds is None:
        return ""
    if rounds == 0:
        return " (1-way marginals only)"
    selected = getattr(estimator, "n_selection_rounds_", None)
    if selected is not None:  # AdaptiveProjection's adaptive selection
        measured = len(getattr(estimator, "marginal_measurements_", ()))
        return (f" (adaptive selection: {selected} round{'s' if selected != 1 else ''}, "
                f"{measured} marginals measured)")
    return f" ({rounds} round{'s' if rounds != 1 else ''})"


def cmd_report(args):
    from ..report import quality_report

    real, synthetic, params = _read_real_and_synthetic(args)
    if args.target is not None and args.target not in real.columns:
        raise CLIError(f"--target {args.target!r} is not a column of the domain; its columns "
                       f"are {list(real.columns)}")
    ledger, delta = read_ledger(args.ledger) if args.ledger else (None, None)
    workload = _choose_workload(args, params, real)
    page = quality_report(real, synthetic, workload=workload, ledger=ledger, delta=delta,
                          target=args.target, title=f"Synthetic data quality: {args.synthetic}")
    _write_text(page, args.output)
    if args.output != "-":
        _note(args, f"wrote the report to {args.output} (it reads the real data: it is for "
                    "you, not for release)")
    return 0


def cmd_demo(args):
    from ..demo import run_demo

    verbose = args.verbose if args.verbose is not None else int(sys.stderr.isatty())
    run_demo(epsilon=args.epsilon, n_marginals=args.marginals, seed=args.seed,
             rows=args.rows, verbose=verbose, algorithm=args.algorithm)
    return 0
