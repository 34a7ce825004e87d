"""Cross-study benchmarks: any synthesizer, any table, tidy rows, resumable.

A benchmark is a grid, written in a TOML (or JSON) config file:
algorithms x datasets x epsilon x k x number of marginals x seeds (and, if
asked, both workload orders). Every run is one row of a CSV file: what ran,
the privacy spent, the workload error of the answers and of the rows
``sample(n)`` returns, the fidelity measures of ``../shared/datasets/REAL.md``
on those rows, train-on-synthetic accuracy, fit time (wall and CPU) and peak
memory. Rows already in the CSV (same run id, a hash of what identifies the
run) are not run again, so an interrupted benchmark resumes where it
stopped; a failing run records its error in its row and never stops the
others. By default each run is a fresh subprocess, which measures its own
peak memory and is killed after the config's ``timeout``.

Run it with ``privsyn benchmark CONFIG`` or :func:`run_benchmark`; it ends
with one mean and sd line per setting and writes the summary tables and
plots (:mod:`sklearn_privsyn.benchmark.plots`) beside the CSV.

Config::

    output = "runs.csv"          # relative paths are read from the config's folder
    timeout = 600                # seconds a run (subprocess isolation)
    n_jobs = 1                   # runs in parallel (joblib)

    [defaults]                   # keys every [[grid]] block shares
    seeds = [0, 1, 2, 3, 4]

    [[grid]]
    algorithms = ["adaptive", "fem", {name = "fem", label = "fem-heuristic",
                                      params = {solver = "heuristic"}}, "aim"]
    datasets = ["bundled-adult", "dev:wage", "data/mine.csv"]
    epsilon = [0.1, 1.0]
    k = [3]
    n_marginals = [64]           # or "all"

Algorithms: every synthesizer of the registry by its command-line name
(``fem``, ``adaptive``, ...; :data:`sklearn_privsyn.registry.CLI_ALGORITHMS`),
the references ``hdmm`` (Gaussian answers, no rows), ``zeros`` and
``resample`` (real rows: not private), and smartnoise-synth's ``aim``,
``mst`` and ``snmwem`` when it is installed ("not installed" rows otherwise;
an entry's ``python = "/path/to/python"`` runs it with another environment's
interpreter). Datasets: see :func:`load_dataset`. The workload of a run is
the paper's protocol: ``n_marginals`` random k-way marginals among those of
at most ``n`` cells, drawn with ``workload_seed`` (0).

Examples
--------
>>> from sklearn_privsyn.benchmark import expand_grid
>>> specs = expand_grid({"algorithms": ["fem", "zeros"], "datasets": ["bundled-adult"],
...                      "epsilon": [1.0], "seeds": [0, 1]})
>>> [(s["algorithm"], s["seed"]) for s in specs]
[('fem', 0), ('zeros', 0), ('fem', 1), ('zeros', 1)]
"""

from __future__ import annotations

from pathlib import Path

from sklearn_privsyn.benchmark.grid import (
    ALGORITHMS,
    canonical_params,
    config_path,
    default_data_dir,
    expand_grid,
    load_config,
    run_id,
    specs_from_config,
)
from sklearn_privsyn.benchmark.measures import FIDELITY_COLUMNS, QUALITY_COLUMNS
from sklearn_privsyn.benchmark.runner import (
    COLUMNS,
    SUMMARY_FIGURES,
    append_row,
    execute,
    grid_summary,
    pending,
    read_done,
    run_grid,
    run_isolated,
    run_spec,
)
from sklearn_privsyn.benchmark.tables import load_dataset

__all__ = [
    "ALGORITHMS",
    "COLUMNS",
    "FIDELITY_COLUMNS",
    "QUALITY_COLUMNS",
    "SUMMARY_FIGURES",
    "append_row",
    "canonical_params",
    "default_data_dir",
    "execute",
    "expand_grid",
    "grid_summary",
    "load_config",
    "load_dataset",
    "read_done",
    "run_benchmark",
    "run_grid",
    "run_id",
    "run_isolated",
    "run_spec",
    "specs_from_config",
    "write_report",
]


def write_report(csv_path, outdir=None, *, plots=True):
    """Write the summary tables and plots of a benchmark CSV; returns the paths written.

    ``outdir`` defaults to the CSV's folder. Plots need matplotlib (the
    ``bench`` extra); without it, or with ``plots=False``, only the tables
    are written.
    """
    import importlib.util

    from sklearn_privsyn.benchmark.plots import make_all

    outdir = Path(csv_path).parent if outdir is None else Path(outdir)
    plots = plots and importlib.util.find_spec("matplotlib") is not None
    return make_all(csv_path, outdir, plots=plots)


def run_benchmark(config, *, out=None, n_jobs=None, timeout=None, isolation=None,
                  retry_failed=False, data_dir=None, progress=True, report=True):
    """Run a benchmark config: the runs not yet in its CSV, then its summary and plots.

    Parameters
    ----------
    config : str, path-like or dict
        A TOML or JSON config file (or its :func:`load_config` dict).
    out : str or path-like, default=None
        The results CSV; default: the config's ``output``.
    n_jobs, timeout, isolation : default=None
        Override the config's (``n_jobs`` 1, no time-out, ``"subprocess"``).
    retry_failed : bool, default=False
        Run again the rows whose status is not ``ok``.
    data_dir : str or path-like, default=None
        The folder of the coded datasets, where the config does not name one.
    progress : bool, default=True
        Show a progress bar.
    report : bool, default=True
        Write the summary tables and plots (:func:`write_report`) to the
        config's ``plots`` folder (default: the CSV's folder).

    Returns
    -------
    result : dict
        ``out`` (the CSV), ``rows`` (the new rows), ``summary`` (one line per
        setting) and ``report`` (the files written).
    """
    if not isinstance(config, dict):
        config = load_config(config)
    specs = specs_from_config(config, data_dir=data_dir)
    out = Path(out) if out is not None else config_path(config, "output")
    if out is None:
        raise ValueError("the config names no 'output' CSV; give one")
    rows = run_grid(
        specs, out,
        n_jobs=n_jobs if n_jobs is not None else config.get("n_jobs", 1),
        isolation=isolation or config.get("isolation", "subprocess"),
        timeout=timeout if timeout is not None else config.get("timeout"),
        retry_failed=retry_failed, progress=progress,
    )
    written = []
    if report and out.exists():
        written = write_report(out, config_path(config, "plots") or out.parent)
    return {"out": out, "rows": rows, "summary": grid_summary(specs, out), "report": written}
