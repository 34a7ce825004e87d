"""How FEM's fit time and peak memory grow with one-hot width, workload size and rounds.

    python benchmarks/scaling.py                     # runs the sweeps, then plots
    python benchmarks/scaling.py --plot-only         # re-plot the CSV

Data: ``datagen.latent_class_table`` on the LOANS schema
(``loans-domain.json``: 48 columns, 4,427 one-hot columns), ``--rows`` rows
(default 50,000), never the real data. Every run is FEM with the default HiGHS
oracle, a fixed ``rounds`` and ``samples_per_round=10`` (growth, not
accuracy), 3-way marginals, epsilon = 1, seed 0, run through
``benchmarks/run.py`` (one subprocess per run). Memory: ``fit_rss_mb`` is the
peak RSS during ``fit`` (it includes the resident data and workload);
``peak_rss_mb`` is the whole run's, which on the widest schema is set by
*generating* the data (``datagen`` builds ``n x domain-size`` temporaries),
not by FEM.

Three sweeps from the base point (48 columns, 64 marginals, 10 rounds):

* ``width``: the first 12, 24, 36 and 48 columns of the schema (8 marginals:
  the first 12 columns have only 8 eligible 3-way marginals);
* ``workload``: 16, 64, 256 and 1,024 marginals;
* ``rounds``: 5, 10, 20 and 40 rounds.

Writes ``benchmarks/paper/scaling.csv`` (the runner's columns; the number of
columns is the last field of ``dataset``) and ``benchmarks/paper/scaling.png``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run

OUT = HERE / "paper" / "scaling.csv"

BASE = {"columns": 48, "n_marginals": 64, "rounds": 10}
# sweep -> (parameter, values, other parameters that differ from BASE).
# The schema's first columns have ~100 values each, so few 3-way marginals of
# the first 12 columns have at most n cells (8): the width sweep uses 8 marginals.
SWEEPS = {
    "width": ("columns", [12, 24, 36, 48], {"n_marginals": 8}),
    "workload": ("n_marginals", [16, 64, 256, 1024], {}),
    "rounds": ("rounds", [5, 10, 20, 40], {}),
}


def scaling_specs(rows=50_000, samples_per_round=10, schema="loans", data_dir=None):
    """Runner specs of the three sweeps (the shared base point appears once)."""
    specs = []
    for setting in _settings():
        block = {
            "algorithms": [{"name": "fem", "params": {
                "rounds": setting["rounds"], "samples_per_round": samples_per_round}}],
            "datasets": [f"generated:{schema}:{rows}:{setting['columns']}"],
            "k": [3],
            "n_marginals": [setting["n_marginals"]],
            "epsilon": [1.0],
            "seeds": [0],
        }
        if data_dir is not None:
            block["data_dir"] = str(data_dir)
        specs.extend(run.expand_grid(block))
    return specs


def _settings():
    seen = []
    for param, values, other in SWEEPS.values():
        for value in values:
            setting = {**BASE, **other, param: value}
            if setting not in seen:
                seen.append(setting)
    return seen


def plot(csv_path, png_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.read_csv(csv_path)
    df = df.drop_duplicates("run_id", keep="last")
    df = df[df["status"] == "ok"].copy()
    df["columns"] = df["dataset"].str.split(":").str[3].astype(int)
    df["rounds_param"] = df["params"].map(lambda p: __import__("json").loads(p)["rounds"])
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5))
    panels = [
        ("width", "columns", "d", "one-hot width d"),
        ("workload", "n_marginals", "queries", "workload size (cells)"),
        ("rounds", "rounds_param", "rounds", "rounds"),
    ]
    for j, (sweep, param, xcol, xlabel) in enumerate(panels):
        param_name, _, other = SWEEPS[sweep]
        fixed = {k: v for k, v in {**BASE, **other}.items() if k != param_name}
        sel = df
        for key, value in fixed.items():
            col = "rounds_param" if key == "rounds" else key
            sel = sel[pd.to_numeric(sel[col]) == value]
        sel = sel.sort_values(xcol)
        axes[0, j].plot(sel[xcol], sel["fit_seconds"], "o-", label="fit")
        axes[0, j].plot(sel[xcol], sel["oracle_seconds"], "s--", label="oracle (in fit)")
        axes[0, j].set_ylabel("seconds")
        axes[0, j].legend(fontsize=8)
        axes[1, j].plot(sel[xcol], sel["fit_rss_mb"], "o-", label="peak RSS during fit")
        axes[1, j].plot(sel[xcol], sel["peak_rss_mb"], "s--", label="peak RSS of the run")
        axes[1, j].plot(sel[xcol], sel["base_rss_mb"], ":", color="grey",
                        label="after imports")
        axes[1, j].set_ylabel("MB")
        axes[1, j].legend(fontsize=8)
        for i in (0, 1):
            axes[i, j].set_xscale("log", base=2)
            axes[i, j].grid(True, which="both", alpha=0.3)
            axes[i, j].set_xlabel(xlabel)
        axes[0, j].set_title(f"{sweep} sweep")
    fig.suptitle("FEM on generated LOANS-schema data (n=50,000, 3-way, s=10, HiGHS)")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--plot-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.plot_only:
        specs = scaling_specs(rows=args.rows)
        run.run_grid(specs, args.out, n_jobs=args.n_jobs, timeout=args.timeout)
    plot(args.out, Path(args.out).with_suffix(".png"))
    print(Path(args.out).with_suffix(".png"))


if __name__ == "__main__":
    main()
