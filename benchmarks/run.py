"""Cross-study benchmark runner: algorithms x datasets x epsilon x k x marginals x seeds.

Every run is one tidy row of a CSV (see ``COLUMNS``). Rows already in the CSV
(same ``run_id``, a hash of the run's key) are not rerun, so an interrupted
grid resumes where it stopped; a failing run records its error in its row and
never stops the others.

Usage::

    # a config file (TOML or JSON, see benchmarks/configs/)
    python benchmarks/run.py --config benchmarks/configs/paper.toml
    # or the grid on the command line
    python benchmarks/run.py --out out/runs.csv --algorithms fem hdmm zeros \\
        --datasets titanic --epsilon 0.5 1 --k 2 3 --n-marginals 8 --seeds 0 1 2 \\
        --params fem='{"solver": "heuristic", "rounds": 20}' --n-jobs 2
    # summary table and plots from the CSV
    python benchmarks/plots.py out/runs.csv --outdir out/

**Algorithms** (``--algorithms``; in a config, a name or a table
``{name=..., label=..., params={...}}``): ``fem``, ``sepfem``, ``dualquery``,
``dqrs``, ``mwem`` (the package's estimators), ``hdmm`` (the authors'
HDMM-style baseline), ``zeros`` (all-zeros answers), ``resample`` (``n``
real rows drawn with replacement: not private, the cost of drawing ``n`` rows
alone), and the optional peers
``mst``, ``aim``, ``snmwem`` (smartnoise-synth; "not installed" rows when it is
absent). Params are keyword arguments of the estimator; ``label`` (default:
the name) is the ``algorithm`` column, so one estimator can appear with
several settings.

**Datasets** (``--datasets``): a name with ``NAME.csv`` and
``NAME-domain.json`` in the shared datasets folder (``adult``, ``titanic``;
``--data-dir`` or ``PRIVSYN_SHARED_DATASETS``), ``bundled-adult`` (the raw
Adult table shipped with the package, with its public domain), or
``generated:SCHEMA:N[:C][:dominant[=SHARE]]`` (``N`` rows of
``datagen.latent_class_table`` on the domain of ``SCHEMA`` -- a dataset name or
a path to a ``*-domain.json`` -- restricted to its first ``C`` columns if
given; ``dominant`` then gives every column (each with probability ``SHARE``)
a value most rows share, ``datagen.with_dominant_values``). The table's seed
is the grid key ``data_seed`` (``--data-seed``): 0 by default, so every run
sees the same table, or ``"seed"``, the run's seed, so that each seed draws
both a new table and a new fit.

**Workload**: the paper's protocol: all k-way marginals with at most ``n``
cells, ``n_marginals`` of them drawn with ``RandomState(workload_seed=0)``
(``all`` keeps every eligible one). ``delta`` defaults to ``1/n**2``.
``orders`` (``--orders``): ``drawn`` (the protocol's order, the default) and/or
``shuffled`` (the same marginals listed in an order shuffled by ``order_seed``,
``--order-seed``, default 0; ``protocol.in_order``).

**Summary**: the grid ends with one mean and sd line per setting
(``protocol.summary_lines``) of the errors of the rows ``sample(n)`` returns
(``sample_*``), those of the answers, and the fit's wall and CPU time.

**Figures**: ``max_error``, ``mean_error`` and ``mean_tvd`` are those of the
estimator's answers (a synthesizer's weighted records); the ``sample_*``
columns are those of the rows ``sample(n)`` returns (``QUALITY_COLUMNS``);
``fit_cpu_seconds`` is the fit's CPU time (user + sys of the run's process).

**Isolation and memory**: by default each row runs in a fresh Python
subprocess, which reports its own peak resident set size
(``peak_rss_mb``: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end of
the row, so it includes loading or generating the data; ``base_rss_mb``: the
same right after imports) and is killed after ``--timeout`` seconds. On
Linux the high-water mark is also reset (``/proc/self/clear_refs``) just
before ``fit``, and ``fit_rss_mb`` is the peak during ``fit`` (VmHWM),
counting what was already resident (interpreter, data, workload).
``--isolation none`` runs rows inside the joblib worker (faster start, no
time-out; ``peak_rss_mb`` is then the worker's lifetime peak).

**Parallelism**: rows run in parallel through joblib (``--n-jobs``; default
1). Any joblib backend works; for a Dask cluster start a client, then use
``--backend dask --scheduler tcp://HOST:8786`` (or, from Python,
``with joblib.parallel_backend("dask"): run_grid(...)`` after
``distributed.Client(...)``); Ray: ``ray.util.joblib.register_ray()`` then
``--backend ray``. Rows spawn a subprocess each, which works on Dask/Ray
workers too; results are written by this process as rows complete.
"""

from __future__ import annotations

import argparse
import collections
import csv
import datetime
import hashlib
import importlib
import itertools
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from protocol import ORDERS, in_order, paper_workload, summary_lines  # noqa: E402

from sklearn_privsyn.registry import CLI_ALGORITHMS  # noqa: E402

DEFAULT_DATA_DIR = Path(
    os.environ.get("PRIVSYN_SHARED_DATASETS", HERE.parent.parent / "shared" / "datasets")
)

#: Columns filled by ``quality_metrics``: mean per-marginal TVD (AIM's measure)
#: of the estimator's answers, the same three errors on the rows ``sample(n)``
#: returns, and train-on-synthetic, test-on-real accuracy for ``target`` (the
#: dataset's last column). New measures go here and in ``quality_metrics``.
QUALITY_COLUMNS = [
    "mean_tvd", "sample_max_error", "sample_mean_error", "sample_mean_tvd", "target",
    "tstr_logreg", "tstr_boosting", "tstr_majority",
]

#: Columns of the results CSV, in order.
COLUMNS = [
    "run_id", "algorithm", "estimator", "params", "dataset", "n", "n_attributes", "d",
    "k", "n_marginals", "queries", "epsilon", "delta", "rho_budget", "rho_spent",
    "epsilon_spent", "seed", "max_error", "mean_error", "fit_seconds", "total_seconds",
    "peak_rss_mb", "base_rss_mb", "rounds", "oracle_calls", "oracle_seconds", "timeouts",
    "fallbacks", "status", "error", "started", "host", "marginals", "fit_rss_mb",
    *QUALITY_COLUMNS, "order", "fit_cpu_seconds", "data_seed",
]

#: name -> (module, attribute): the baselines and peers here, then every synthesizer
#: of the package's registry by the names the command line uses (read at each lookup).
ALGORITHMS = collections.ChainMap({
    "hdmm": ("baselines", "HDMMBaseline"),
    "zeros": ("baselines", "ZeroBaseline"),
    "resample": ("baselines", "ResampleBaseline"),
    "mst": ("peers", "SmartNoisePeer"),
    "aim": ("peers", "SmartNoisePeer"),
    "snmwem": ("peers", "SmartNoisePeer"),
}, CLI_ALGORITHMS)
_PEER_SYNTH = {"mst": "mst", "aim": "aim", "snmwem": "mwem"}

_KEY_FIELDS = ("algorithm", "estimator", "params", "dataset", "k", "n_marginals", "epsilon",
               "delta", "seed", "workload_seed")
# Part of the key only for a shuffled order, so rows run before orders existed keep their ids.
_ORDER_KEY_FIELDS = ("order", "order_seed")
# Part of the key only when not 0, so rows run before data seeds existed keep their ids.
_DATA_SEED_KEY = "data_seed"


# ----------------------------------------------------------------------------- grid


def _as_list(value):
    if value is None:
        return [None]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _algorithm_entry(entry, extra_params=None):
    if isinstance(entry, str):
        entry = {"name": entry}
    entry = dict(entry)
    name = entry.get("name")
    if name is None:
        raise ValueError(f"algorithm entry {entry!r} has no 'name'")
    params = dict((extra_params or {}).get(name, {}))
    params.update(entry.get("params", {}))
    return {"name": name, "label": entry.get("label", name), "params": params}


def _data_seed_value(value, seed):
    """The table's seed: an int, or ``"seed"`` for the run's own seed."""
    if value == "seed":
        return int(seed)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"data_seed must be an int or 'seed'; got {value!r}")
    return value


def _marginals_value(value):
    if value is None or value == "all":
        return None
    return int(value)


def expand_grid(block, defaults=None, extra_params=None):
    """Run specs (dicts) of one grid block: the product of its lists.

    Order: dataset, k, n_marginals, workload order, epsilon, seed, then
    algorithm (so the algorithms of one setting run one after the other).
    """
    block = {**(defaults or {}), **block}
    unknown = set(block) - {"algorithms", "datasets", "epsilon", "k", "n_marginals",
                            "seeds", "delta", "workload_seed", "data_dir", "params",
                            "orders", "order_seed", "data_seed"}
    if unknown:
        raise ValueError(f"unknown grid keys {sorted(unknown)}")
    params_by_name = {**(extra_params or {}), **block.get("params", {})}
    algorithms = [_algorithm_entry(a, params_by_name) for a in _as_list(block["algorithms"])]
    specs = []
    orders = _as_list(block.get("orders", ["drawn"]))
    if set(orders) - set(ORDERS):
        raise ValueError(f"orders must be among {ORDERS}; got {orders}")
    for dataset, k, n_marg, order, eps, seed in itertools.product(
        _as_list(block.get("datasets", ["adult"])),
        _as_list(block.get("k", [3])),
        _as_list(block.get("n_marginals", [64])),
        orders,
        _as_list(block["epsilon"]),
        _as_list(block.get("seeds", [0])),
    ):
        for algo in algorithms:
            spec = {
                "algorithm": algo["label"],
                "estimator": algo["name"],
                "params": algo["params"],
                "dataset": str(dataset),
                "k": int(k),
                "n_marginals": _marginals_value(n_marg),
                "epsilon": float(eps),
                "delta": None if block.get("delta") is None else float(block["delta"]),
                "seed": int(seed),
                "workload_seed": int(block.get("workload_seed", 0)),
                "order": str(order),
                "order_seed": int(block.get("order_seed", 0)),
                "data_seed": _data_seed_value(block.get("data_seed", 0), seed),
                "data_dir": str(block.get("data_dir", DEFAULT_DATA_DIR)),
            }
            spec["run_id"] = run_id(spec)
            specs.append(spec)
    return specs


def canonical_params(params):
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def run_id(spec):
    """Short hash of the fields that identify a run (not data_dir, not timing)."""
    key = {f: spec[f] for f in _KEY_FIELDS}
    if spec.get("order", "drawn") != "drawn":
        key.update({f: spec[f] for f in _ORDER_KEY_FIELDS})
    if spec.get(_DATA_SEED_KEY, 0):
        key[_DATA_SEED_KEY] = spec[_DATA_SEED_KEY]
    key["params"] = canonical_params(spec["params"])
    return hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def load_config(path):
    """Read a TOML or JSON config: ``{output, n_jobs, ..., grid: [blocks]}``."""
    path = Path(path)
    if path.suffix == ".toml":
        import tomllib

        with open(path, "rb") as handle:
            config = tomllib.load(handle)
    else:
        with open(path) as handle:
            config = json.load(handle)
    blocks = config.get("grid")
    if not blocks:
        raise ValueError(f"{path} has no [[grid]] block")
    return config


def specs_from_config(config):
    defaults = config.get("defaults", {})
    specs = []
    for block in config["grid"]:
        specs.extend(expand_grid(block, defaults))
    return specs


# ----------------------------------------------------------------------------- one run


def load_dataset(name, data_dir=DEFAULT_DATA_DIR, data_seed=0):
    """(DataFrame, workload kwargs) for a dataset name; ``data_seed`` seeds generated tables."""
    from sklearn_privsyn.datasets import load_coded_csv

    data_dir = Path(data_dir)
    if name == "bundled-adult":
        from sklearn_privsyn.datasets import adult_public_domain, load_adult

        return load_adult(), adult_public_domain()
    if name.startswith("generated:"):
        from datagen import latent_class_table, load_domain, with_dominant_values

        parts = name.split(":")
        dominant = None
        if len(parts) > 3 and parts[-1].startswith("dominant"):
            _, _, share = parts.pop().partition("=")
            dominant = float(share) if share else 1.0
        if len(parts) not in (3, 4):
            raise ValueError(
                "generated dataset must be 'generated:SCHEMA:N[:COLUMNS][:dominant[=SHARE]]'; "
                f"got {name!r}"
            )
        schema, n_rows = parts[1], int(parts[2])
        schema_path = Path(schema)
        if not schema_path.suffix:
            schema_path = data_dir / f"{schema}-domain.json"
        domain = load_domain(schema_path)
        if len(parts) == 4:  # the first COLUMNS columns of the schema
            domain = dict(list(domain.items())[: int(parts[3])])
        frame = latent_class_table(domain, n_rows, random_state=data_seed)
        if dominant is not None:  # its own stream, independent of the table's
            frame = with_dominant_values(frame, domain, share=dominant,
                                         random_state=[data_seed, 1])
        return frame, {"domain": domain}
    frame, domain = load_coded_csv(data_dir / f"{name}.csv", data_dir / f"{name}-domain.json")
    return frame, {"domain": domain}


def synthetic_rows(spec, estimator, n_rows):
    """``sample(n)``'s rows (a peer's own sample), or None for answer-only baselines."""
    if hasattr(estimator, "sample"):
        return estimator.sample(n_rows, random_state=spec["seed"])
    return getattr(estimator, "sample_", None)


def quality_metrics(spec, workload, frame, estimator, answer_error):
    """The ``QUALITY_COLUMNS`` of one fitted run.

    ``answer_error`` is the absolute error of the estimator's answers on every
    cell. Train-on-synthetic accuracy is measured on a held-out 30% of the
    real rows (split with seed 0); the synthesizer was fitted on all rows,
    so those rows also shaped the synthetic data.
    """
    import numpy as np

    from sklearn_privsyn.metrics import workload_error
    from sklearn_privsyn.metrics import train_synthetic_test_real

    offsets = workload.marginal_offsets_[:-1]
    metrics = {"mean_tvd": float(np.mean(0.5 * np.add.reduceat(answer_error, offsets)))}
    synthetic = synthetic_rows(spec, estimator, len(frame))
    if synthetic is None:
        return metrics
    sampled = workload_error(workload, frame, synthetic)
    target = frame.columns[-1]
    scores = train_synthetic_test_real(frame, synthetic, target, workload=workload,
                                       train_on_real=False, random_state=0)
    metrics.update(
        sample_max_error=sampled.max_error,
        sample_mean_error=sampled.mean_error,
        sample_mean_tvd=float(sampled.per_marginal_tvd.mean()),
        target=target,
        tstr_logreg=float(scores.loc["logistic regression", "train on synthetic"]),
        tstr_boosting=float(scores.loc["gradient boosting", "train on synthetic"]),
        tstr_majority=float(scores.loc["majority class", "train on synthetic"]),
    )
    return metrics


def _make_estimator(spec, workload):
    module_name, attr = ALGORITHMS[spec["estimator"]]
    module = importlib.import_module(module_name)
    cls = getattr(module, attr)
    params = dict(spec["params"])
    if spec["estimator"] in _PEER_SYNTH:
        params.setdefault("synth", _PEER_SYNTH[spec["estimator"]])
    return cls(epsilon=spec["epsilon"], delta=spec["delta"], workload=workload,
               random_state=spec["seed"], **params)


def _maxrss_mb():
    # Linux reports kilobytes, macOS bytes.
    scale = 1.0 if sys.platform == "darwin" else 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _reset_peak_rss():
    """Reset this process's RSS high-water mark (Linux >= 4.0); True if it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _peak_rss_since_reset_mb():
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


def execute(spec, base_rss_mb=None):
    """Run one spec in this process; always returns a row (errors recorded)."""
    started = time.perf_counter()
    row = _empty_row(spec)
    row["base_rss_mb"] = base_rss_mb
    load_peak = 0.0
    try:
        import numpy as np

        frame, wl_kwargs = load_dataset(spec["dataset"], spec["data_dir"],
                                        spec.get("data_seed", 0))
        drawn = paper_workload(len(frame), k=spec["k"], n_marginals=spec["n_marginals"],
                               random_state=spec["workload_seed"], **wl_kwargs)
        workload = in_order(drawn, frame, spec.get("order", "drawn"),
                            spec.get("order_seed", 0)).fit(frame)
        row.update(n=len(frame), n_attributes=workload.layout_.n_attributes,
                   d=workload.layout_.n_features, queries=workload.n_queries_,
                   marginals=len(workload.marginals_))
        if spec["n_marginals"] is None:
            row["n_marginals"] = "all"
        true_answers = workload.answer(frame)

        estimator = _make_estimator(spec, workload)
        load_peak = _maxrss_mb()  # clear_refs resets getrusage's maxrss too
        reset = _reset_peak_rss()
        fit_start, cpu_start = time.perf_counter(), time.process_time()
        estimator.fit(frame)
        row["fit_seconds"] = time.perf_counter() - fit_start
        row["fit_cpu_seconds"] = time.process_time() - cpu_start
        if reset:  # peak during fit, counting what was resident when it started
            row["fit_rss_mb"] = _peak_rss_since_reset_mb()

        if hasattr(estimator, "answers_"):
            answers = np.asarray(estimator.answers_, dtype=float)
        elif hasattr(estimator, "fitted_answers"):
            answers = estimator.fitted_answers()
        else:
            answers = estimator.workload_.answer_codes(estimator.records_, estimator.weights_)
        error = np.abs(true_answers - answers)
        row["max_error"] = float(error.max())
        row["mean_error"] = float(error.mean())
        row.update(quality_metrics(spec, workload, frame, estimator, error))
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
    row["total_seconds"] = time.perf_counter() - started
    row["peak_rss_mb"] = max(load_peak, _maxrss_mb())
    return row


def _worker_main(spec_json, out_path):
    """Entry point of a row's subprocess: run the spec, write the row as JSON."""
    import numpy  # noqa: F401  (imports first, so base_rss_mb excludes only the run)
    import pandas  # noqa: F401

    import sklearn_privsyn.workload  # noqa: F401

    base = _maxrss_mb()
    spec = json.loads(spec_json)
    row = execute(spec, base_rss_mb=base)
    with open(out_path, "w") as handle:
        json.dump(row, handle)


def run_isolated(spec, timeout=None, python=None):
    """Run one spec in a fresh subprocess; returns its row (errors and time-outs recorded)."""
    with tempfile.TemporaryDirectory(prefix="privsyn-bench-") as tmp:
        out_path = os.path.join(tmp, "row.json")
        cmd = [python or sys.executable, str(Path(__file__).resolve()), "--worker",
               json.dumps(spec), out_path]
        started = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            row = _empty_row(spec)
            row["status"] = "timeout"
            row["error"] = f"killed after the time-out of {timeout} s"
            row["total_seconds"] = time.perf_counter() - started
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
    if isolation == "subprocess":
        return run_isolated(spec, timeout=timeout)
    return execute(spec)


# ----------------------------------------------------------------------------- the grid


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


def run_grid(specs, out, *, n_jobs=1, isolation="subprocess", timeout=None,
             retry_failed=False, progress=True):
    """Run the specs not yet in ``out`` and append one row each, as they complete.

    Returns the list of new rows. Use a joblib backend context
    (``with joblib.parallel_backend("dask"): ...``) to run on a cluster.
    """
    from joblib import Parallel, delayed

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
    skipped = len(seen) - len(todo)
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
                err = row.get("max_error")
                bar.set_postfix_str(
                    f"{row['algorithm']} eps={row['epsilon']} k={row['k']} "
                    f"m={row['n_marginals']} seed={row['seed']}: {row['status']}"
                    + (f" max_err={err:.4f}" if isinstance(err, float) else "")
                    + (f" t={row['fit_seconds']:.1f}s" if row.get("fit_seconds") else "")
                )
                bar.update(1)
    if bar is not None:
        bar.close()
    return rows


#: The per-run figures of a row that the grid's summary averages.
SUMMARY_FIGURES = ("sample_max_error", "sample_mean_error", "sample_mean_tvd", "max_error",
                   "mean_tvd", "fit_seconds", "fit_cpu_seconds")


def grid_summary(specs, out):
    """Mean and sd lines, per setting, of the grid's rows in ``out`` that ran ok."""
    ids = {spec["run_id"] for spec in specs}
    with open(out, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["run_id"] in ids and r["status"] == "ok"]
    if not rows:
        return []
    for row in rows:
        row["order"] = row.get("order") or "drawn"  # rows written before orders existed
    by = ["dataset", "k", "n_marginals", "order", "epsilon", "algorithm"]
    return summary_lines(rows, by, SUMMARY_FIGURES)


def _parse_params(items):
    params = {}
    for item in items or []:
        name, _, text = item.partition("=")
        if not text:
            raise SystemExit(f"--params expects NAME='{{json}}', got {item!r}")
        params[name] = json.loads(text)
    return params


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        _worker_main(argv[1], argv[2])
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", help="TOML or JSON grid config")
    parser.add_argument("--out", help="results CSV (appended; overrides the config's output)")
    parser.add_argument("--algorithms", nargs="+")
    parser.add_argument("--datasets", nargs="+", default=["adult"])
    parser.add_argument("--epsilon", type=float, nargs="+")
    parser.add_argument("--k", type=int, nargs="+", default=[3])
    parser.add_argument("--n-marginals", nargs="+", default=["64"],
                        help="ints or 'all'")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--orders", nargs="+", choices=ORDERS, default=["drawn"],
                        help="workload orders: the protocol's and/or shuffled")
    parser.add_argument("--order-seed", type=int, default=0, help="seed of the shuffled order")
    parser.add_argument("--delta", type=float, default=None, help="default 1/n^2")
    parser.add_argument("--data-seed", default="0",
                        help="seed of generated tables: an int, or 'seed' (the run's seed)")
    parser.add_argument("--params", nargs="*", metavar="NAME=JSON",
                        help="estimator keyword arguments per algorithm name")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--backend", default=None,
                        help="joblib backend, e.g. 'dask' (needs --scheduler) or 'ray'")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address")
    parser.add_argument("--isolation", choices=["subprocess", "none"], default=None)
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per row (subprocess isolation only)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="rerun rows whose status is not ok")
    parser.add_argument("--dry-run", action="store_true", help="list the runs to do")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    config = load_config(args.config) if args.config else {}
    if args.config:
        specs = specs_from_config(config)
    else:
        if not args.algorithms or not args.epsilon:
            parser.error("give --config, or at least --algorithms and --epsilon")
        block = {"algorithms": args.algorithms, "datasets": args.datasets,
                 "epsilon": args.epsilon, "k": args.k, "n_marginals": args.n_marginals,
                 "seeds": args.seeds, "delta": args.delta, "orders": args.orders,
                 "order_seed": args.order_seed,
                 "data_seed": args.data_seed if args.data_seed == "seed" else int(args.data_seed)}
        if args.data_dir:
            block["data_dir"] = args.data_dir
        specs = expand_grid(block, extra_params=_parse_params(args.params))
    out = args.out or config.get("output")
    if not out:
        parser.error("give --out (or 'output' in the config)")
    if args.config and not Path(out).is_absolute() and "output" in config and not args.out:
        out = str(HERE.parent / out)  # config outputs are relative to the repository
    n_jobs = args.n_jobs if args.n_jobs is not None else config.get("n_jobs", 1)
    if args.backend and args.n_jobs is None:
        n_jobs = -1  # every worker of the cluster
    isolation = args.isolation or config.get("isolation", "subprocess")
    timeout = args.timeout if args.timeout is not None else config.get("timeout")

    if args.dry_run:
        done = read_done(out)
        for spec in specs:
            flag = "done" if spec["run_id"] in done else "todo"
            print(flag, spec["run_id"], spec["algorithm"], spec["dataset"], f"k={spec['k']}",
                  f"m={spec['n_marginals']}", f"eps={spec['epsilon']}", f"seed={spec['seed']}",
                  canonical_params(spec["params"]))
        return 0

    kwargs = {"n_jobs": n_jobs, "isolation": isolation, "timeout": timeout,
              "retry_failed": args.retry_failed, "progress": not args.no_progress}
    if args.backend:
        import joblib

        client = None
        if args.backend == "dask":
            from dask.distributed import Client

            client = Client(args.scheduler) if args.scheduler else Client()
        with joblib.parallel_backend(args.backend):
            rows = run_grid(specs, out, **kwargs)
        if client is not None:
            client.close()
    else:
        rows = run_grid(specs, out, **kwargs)
    failed = sum(r["status"] != "ok" for r in rows)
    print(f"{len(rows)} runs appended to {out} ({failed} not ok)", file=sys.stderr)
    for line in grid_summary(specs, out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
