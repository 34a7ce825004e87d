"""Running a grid: one run a row, in its own subprocess, appended to a CSV as it completes."""

from __future__ import annotations

import csv
import datetime
import importlib
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

from sklearn_privsyn.benchmark.grid import ALGORITHMS, canonical_params
from sklearn_privsyn.benchmark.measures import (
    FIDELITY_COLUMNS,
    QUALITY_COLUMNS,
    quality_metrics,
)
from sklearn_privsyn.benchmark.peers import PEERS
from sklearn_privsyn.benchmark.protocol import in_order, paper_workload, summary_lines
from sklearn_privsyn.benchmark.tables import load_dataset

__all__ = ["COLUMNS", "SUMMARY_FIGURES", "append_row", "execute", "grid_summary", "peak_rss_mb",
           "peak_rss_since_reset_mb", "pending", "read_done", "reset_peak_rss", "run_grid",
           "run_isolated", "run_spec"]

#: Columns of the results CSV, in order (new columns go at the end, so that
#: older files keep their columns; :func:`append_row` rewrites their header).
COLUMNS = [
    "run_id", "algorithm", "estimator", "params", "dataset", "n", "n_attributes", "d",
    "k", "n_marginals", "queries", "epsilon", "delta", "rho_budget", "rho_spent",
    "epsilon_spent", "seed", "max_error", "mean_error", "fit_seconds", "total_seconds",
    "peak_rss_mb", "base_rss_mb", "rounds", "oracle_calls", "oracle_seconds", "timeouts",
    "fallbacks", "status", "error", "started", "host", "marginals", "fit_rss_mb",
    *QUALITY_COLUMNS, "order", "fit_cpu_seconds", "data_seed", *FIDELITY_COLUMNS, "warnings",
]

#: The per-run figures of a row that the grid's summary lines average.
SUMMARY_FIGURES = ("sample_max_error", "sample_mean_error", "sample_mean_tvd", "max_error",
                   "mean_tvd", "mean_tvd_2way", "max_ks", "impossible_pair_rate",
                   "fit_seconds", "fit_cpu_seconds")


def _make_estimator(spec, workload):
    module_name, attr = ALGORITHMS[spec["estimator"]]
    cls = getattr(importlib.import_module(module_name), attr)
    params = dict(spec["params"])
    if spec["estimator"] in PEERS:
        params.setdefault("synth", PEERS[spec["estimator"]])
    return cls(epsilon=spec["epsilon"], delta=spec["delta"], workload=workload,
               random_state=spec["seed"], **params)


def peak_rss_mb():
    """This process's peak resident set size in MB (``getrusage``)."""
    # Linux reports kilobytes, macOS bytes.
    scale = 1.0 if sys.platform == "darwin" else 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def reset_peak_rss():
    """Reset this process's RSS high-water mark (Linux >= 4.0); True if it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def peak_rss_since_reset_mb():
    """VmHWM of /proc/self/status in MB (the peak since the last reset), or None."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _empty_row(spec):
    row = {c: None for c in COLUMNS}
    row.update({f: spec[f] for f in ("run_id", "algorithm", "estimator", "dataset", "k",
                                     "n_marginals", "epsilon", "delta", "seed")})
    order = spec.get("order", "drawn")
    row["order"] = order if order == "drawn" else f"{order}:{spec['order_seed']}"
    row["data_seed"] = spec.get("data_seed", 0)
    row["params"] = canonical_params(spec["params"])
    row["n_marginals"] = "all" if spec["n_marginals"] is None else spec["n_marginals"]
    row["started"] = datetime.datetime.now().isoformat(timespec="seconds")
    row["host"] = platform.node()
    return row


def _warning_notes(caught, notes):
    """One line of the distinct warnings (and notes) of a run, at most 500 characters."""
    seen = []
    for w in caught:
        text = f"{w.category.__name__}: {str(w.message).splitlines()[0][:160]}"
        if text not in seen:
            seen.append(text)
    return " | ".join(seen + list(notes))[:500] or None


def execute(spec, base_rss_mb=None):
    """Run one spec in this process; always returns a row (errors recorded)."""
    import numpy as np

    started = time.perf_counter()
    row = _empty_row(spec)
    row["base_rss_mb"] = base_rss_mb
    load_peak, notes = 0.0, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame, wl_kwargs = load_dataset(spec["dataset"], spec.get("data_dir"),
                                            spec.get("data_seed", 0), spec.get("table"))
            drawn = paper_workload(len(frame), k=spec["k"], n_marginals=spec["n_marginals"],
                                   random_state=spec["workload_seed"], **wl_kwargs)
            workload = in_order(drawn, frame, spec.get("order", "drawn"),
                                spec.get("order_seed", 0)).fit(frame)
            row.update(n=len(frame), n_attributes=workload.layout_.n_attributes,
                       d=workload.layout_.n_features, queries=workload.n_queries_,
                       marginals=len(workload.marginals_))

            estimator = _make_estimator(spec, workload)
            load_peak = peak_rss_mb()  # clear_refs resets getrusage's maxrss too
            reset = reset_peak_rss()
            fit_start, cpu_start = time.perf_counter(), time.process_time()
            estimator.fit(frame)
            row["fit_seconds"] = time.perf_counter() - fit_start
            row["fit_cpu_seconds"] = time.process_time() - cpu_start
            if reset:  # peak during fit, counting what was resident when it started
                row["fit_rss_mb"] = peak_rss_since_reset_mb()

            if hasattr(estimator, "answers_"):
                answers = np.asarray(estimator.answers_, dtype=float)
            elif hasattr(estimator, "fitted_answers"):
                answers = estimator.fitted_answers()
            else:
                answers = estimator.workload_.answer_codes(estimator.records_,
                                                           estimator.weights_)
            # the answers are on the fitted workload's cells, whose bins a synthesizer may
            # re-cut (at private quantiles); the rows are measured on the grid's workload
            answered = getattr(estimator, "workload_", workload)
            error = np.abs(answered.answer(frame) - answers)
            row["max_error"] = float(error.max())
            row["mean_error"] = float(error.mean())
            metrics, notes = quality_metrics(spec, workload, frame, estimator, error,
                                             answered)
            row.update(metrics)
            row["delta"] = getattr(estimator, "delta_", spec["delta"])
            row["rho_budget"] = getattr(estimator, "rho_", None)
            ledger = getattr(estimator, "ledger_", None)
            row["rho_spent"] = None if ledger is None else ledger.rho_spent
            row["epsilon_spent"] = getattr(estimator, "epsilon_", None)
            row["rounds"] = getattr(estimator, "n_rounds_", None)
            stats = getattr(estimator, "solver_stats_", None)
            if stats is not None:
                stats = stats.as_dict()
                row["oracle_calls"] = stats.get("calls")
                row["oracle_seconds"] = stats.get("seconds")
                row["timeouts"] = stats.get("n_time_limit")
                row["fallbacks"] = stats.get("n_fallback")
            row["status"] = "ok"
        except Exception as exc:  # noqa: BLE001  (one failing run never stops the grid)
            row["status"] = "error"
            row["error"] = f"{type(exc).__name__}: {exc}"[:500]
            if os.environ.get("PRIVSYN_BENCH_TRACEBACK"):
                traceback.print_exc()
    row["warnings"] = _warning_notes(caught, notes)
    row["total_seconds"] = time.perf_counter() - started
    row["peak_rss_mb"] = max(load_peak, peak_rss_mb())
    return row


def _source_root():
    """The folder holding this package's source, or None when it is installed in site-packages.

    A checkout (or an editable install) is put first on a run's path, so that
    another environment's interpreter (a peer's) runs this code; an installed
    package is not, since its folder holds this environment's other packages too.
    """
    import sklearn_privsyn

    root = Path(sklearn_privsyn.__file__).resolve().parent.parent
    return None if root.name in ("site-packages", "dist-packages") else str(root)


def run_isolated(spec, timeout=None, python=None):
    """Run one spec in a fresh subprocess; returns its row (errors and time-outs recorded).

    ``python`` (default: this interpreter, or the spec's ``python``) runs
    the row, with this package's checkout first on its path: a peer installed
    in another environment runs there.
    """
    python = python or spec.get("python") or sys.executable
    env = dict(os.environ)
    root = _source_root()
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with tempfile.TemporaryDirectory(prefix="privsyn-bench-") as tmp:
        out_path = os.path.join(tmp, "row.json")
        cmd = [python, "-m", "sklearn_privsyn.benchmark.worker", json.dumps(spec), out_path]
        started = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  check=False, env=env)
        except subprocess.TimeoutExpired:
            row = _empty_row(spec)
            row["status"] = "timeout"
            row["error"] = f"killed after the time-out of {timeout} s"
            row["total_seconds"] = time.perf_counter() - started
            return row
        except OSError as exc:  # no such interpreter
            row = _empty_row(spec)
            row["status"] = "error"
            row["error"] = f"cannot start {python}: {exc}"[:500]
            return row
        if os.path.exists(out_path):
            with open(out_path) as handle:
                return json.load(handle)
        row = _empty_row(spec)
        row["status"] = "error"
        tail = (proc.stderr or "").strip().splitlines()[-3:]
        row["error"] = (f"worker exited with code {proc.returncode}: " + " | ".join(tail))[:500]
        row["total_seconds"] = time.perf_counter() - started
        return row


def run_spec(spec, isolation="subprocess", timeout=None):
    """Run one spec, in a subprocess (``isolation="subprocess"``) or in this process."""
    if isolation == "subprocess":
        return run_isolated(spec, timeout=timeout)
    return execute(spec)


def read_done(out):
    """run_ids already in the CSV, with their status."""
    out = Path(out)
    if not out.exists():
        return {}
    with open(out, newline="") as handle:
        return {row["run_id"]: row.get("status") for row in csv.DictReader(handle)}


def _migrate_header(out):
    """Rewrite a CSV written with other columns so that it has ``COLUMNS``."""
    with open(out, newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames == COLUMNS:
            return
        rows = list(reader)
    with open(out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def append_row(out, row):
    """Append one row to the CSV ``out`` (created with its header if new)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists() or out.stat().st_size == 0
    if not new:
        _migrate_header(out)
    with open(out, "a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow({c: _fmt(row.get(c)) for c in COLUMNS})


def _fmt(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return value


def pending(specs, out, retry_failed=False):
    """The specs still to run: not yet in ``out`` (or not ok, with ``retry_failed``)."""
    done = read_done(out)
    seen, todo = set(), []
    for spec in specs:
        rid = spec["run_id"]
        if rid in seen:
            continue
        seen.add(rid)
        if rid in done and not (retry_failed and done[rid] != "ok"):
            continue
        todo.append(spec)
    return todo, len(seen) - len(todo)


def run_grid(specs, out, *, n_jobs=1, isolation="subprocess", timeout=None,
             retry_failed=False, progress=True):
    """Run the specs not yet in ``out`` and append one row each, as they complete.

    Returns the list of new rows. Use a joblib backend context
    (``with joblib.parallel_backend("dask"): ...``) to run on a cluster.
    """
    from joblib import Parallel, delayed

    todo, skipped = pending(specs, out, retry_failed)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), unit="run", desc=f"grid ({skipped} already done)")
    rows = []
    if todo:
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(run_spec)(spec, isolation, timeout) for spec in todo
        )
        for row in results:
            append_row(out, row)
            rows.append(row)
            if bar is not None:
                err = row.get("sample_max_error") or row.get("max_error")
                bar.set_postfix_str(
                    f"{row['algorithm']} {row['dataset']} eps={row['epsilon']} "
                    f"seed={row['seed']}: {row['status']}"
                    + (f" max_err={err:.4f}" if isinstance(err, float) else "")
                    + (f" t={row['fit_seconds']:.1f}s" if row.get("fit_seconds") else "")
                )
                bar.update(1)
    if bar is not None:
        bar.close()
    return rows


def grid_summary(specs, out):
    """Mean and sd lines, per setting, of the grid's rows in ``out`` that ran ok."""
    ids = {spec["run_id"] for spec in specs}
    if not Path(out).exists():
        return []
    with open(out, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["run_id"] in ids and r["status"] == "ok"]
    if not rows:
        return []
    for row in rows:
        row["order"] = row.get("order") or "drawn"  # rows written before orders existed
    by = ["dataset", "k", "n_marginals", "order", "epsilon", "algorithm"]
    return summary_lines(rows, by, SUMMARY_FIGURES)
