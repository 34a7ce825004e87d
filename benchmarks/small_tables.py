"""Issue 12's small-table question: is a candidate never worse than the better of its references?

Reads the runner's CSV of ``benchmarks/configs/small_tables.toml`` (generated
tables on ADULT's schema, n = 1,000 and 7,000, with and without a dominant
value per column, eps 0.1 and 1, 5 seeds) and prints markdown tables:

* per setting (dataset, epsilon) and algorithm, the mean (sd) over seeds of
  max error, mean error and mean per-marginal TVD of the rows ``sample(n)``
  returns (the runner's ``sample_*`` columns), fit wall and CPU seconds, and how many runs were ok or not (a
  setting is complete when all ``--seeds`` runs are ok: a time-out is not a
  result, and averaging the seeds that finished would flatter the slow side);
* per setting and candidate (``--candidates``), each figure's best reference
  mean (``--references``, default FEM and AIM) and whether the candidate's
  mean is at most it ("yes" / "no"; "-" when the candidate or any reference is
  incomplete);
* with ``--candidates``, per setting, candidate and reference, on how many of
  the seeds both ran the candidate's figure is at most the reference's (each
  seed draws one table that every algorithm fits, so this pairs them).

Several CSVs are read as one, in the order given: a row of a later file
replaces every earlier row (of an earlier file, or earlier in the same file)
with the same (dataset, epsilon, algorithm, seed), so new rows of an
algorithm (new defaults, a rerun of a time-out) can go in a file of their own
and be passed after the one they supersede.

With ``--plots DIR``, one figure per epsilon and figure (max error and mean
TVD of the rows) with a group of bars per table and a bar per algorithm (mean
and sd over the seeds that ran).

Usage::

    python benchmarks/small_tables.py benchmarks/small_tables/runs.csv \\
        benchmarks/small_tables/adaptive_runs.csv --candidates adaptive \\
        --plots benchmarks/small_tables
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from plots import load_runs, plot_by_dataset  # noqa: E402

#: (column, heading, format) of the per-setting table, each shown as "mean (sd)".
FIGURES = [
    ("sample_max_error", "max error", "{:.3f}"),
    ("sample_mean_error", "mean error", "{:.2e}"),
    ("sample_mean_tvd", "mean TVD", "{:.3f}"),
    ("fit_seconds", "fit s", "{:.0f}"),
    ("fit_cpu_seconds", "fit CPU s", "{:.1f}"),
]
#: The figures a candidate is compared on (lower is better).
COMPARED = ("sample_max_error", "sample_mean_error", "sample_mean_tvd")
KEYS = ["dataset", "epsilon"]
#: What identifies a run across CSVs: a later row with the same values replaces earlier ones.
RUN_KEYS = KEYS + ["algorithm", "seed"]


def read_runs(paths):
    """The runner CSVs ``paths`` as one frame: per ``RUN_KEYS``, the last row read wins."""
    df = pd.concat([load_runs(path) for path in paths], ignore_index=True)
    return df.drop_duplicates(RUN_KEYS, keep="last").reset_index(drop=True)


def setting_stats(df, n_seeds=5):
    """Mean, sd and run counts per (dataset, epsilon, algorithm), and whether it is complete.

    A setting is complete when ``n_seeds`` runs of it are ok and none failed.
    """
    df = df.copy()
    for column, _, _ in FIGURES:
        df[column] = pd.to_numeric(df.get(column), errors="coerce")
    rows = []
    for key, frame in df.groupby(KEYS + ["algorithm"], sort=True):
        ok = frame[frame["status"] == "ok"]
        row = dict(zip(KEYS + ["algorithm"], key), ok=len(ok), not_ok=len(frame) - len(ok),
                   why=", ".join(sorted(set(frame.loc[frame["status"] != "ok", "status"]))))
        row["complete"] = row["ok"] == n_seeds and row["not_ok"] == 0
        for column, _, _ in FIGURES:
            row[column] = ok[column].mean()
            row[f"{column}_sd"] = ok[column].std()
        rows.append(row)
    return pd.DataFrame(rows)


def _cell(mean, sd, fmt):
    if pd.isna(mean):
        return ""
    return fmt.format(mean) + ("" if pd.isna(sd) else f" ({fmt.format(sd)})")


def stats_markdown(stats):
    head = " | ".join(heading for _, heading, _ in FIGURES)
    lines = [f"| dataset | eps | algorithm | {head} | runs ok / not |",
             "|" + "---|" * (4 + len(FIGURES))]
    for row in stats.itertuples(index=False):
        cells = [_cell(getattr(row, c), getattr(row, f"{c}_sd"), fmt) for c, _, fmt in FIGURES]
        runs = f"{row.ok} / {row.not_ok}" + (f" ({row.why})" if row.not_ok else "")
        lines.append(f"| {row.dataset} | {row.epsilon:g} | {row.algorithm} | "
                     + " | ".join(cells) + f" | {runs} |")
    return "\n".join(lines) + "\n"


def verdicts(stats, candidates, references=("fem", "aim")):
    """Per setting and candidate: the best complete reference mean per figure, and the verdict."""
    complete = stats[stats["complete"]]
    rows = []
    for key, frame in stats.groupby(KEYS, sort=True):
        refs = complete[(complete[KEYS] == pd.Series(dict(zip(KEYS, key)))).all(axis=1)
                        & complete["algorithm"].isin(references)]
        if len(refs) < len(set(references)):  # the better of them needs every one of them
            refs = refs.iloc[:0]
        for candidate in candidates:
            mine = frame[(frame["algorithm"] == candidate) & frame["complete"]]
            row = dict(zip(KEYS, key), candidate=candidate)
            for column in COMPARED:
                best = refs[column].min() if len(refs) else float("nan")
                row[f"best_{column}"] = best
                row[f"best_{column}_by"] = (
                    refs.loc[refs[column].idxmin(), "algorithm"] if len(refs) else "")
                value = mine[column].iloc[0] if len(mine) else float("nan")
                row[column] = value
                row[f"{column}_ok"] = (
                    "-" if pd.isna(best) or pd.isna(value) else ("yes" if value <= best else "no"))
            rows.append(row)
    return pd.DataFrame(rows)


def verdicts_markdown(table):
    fmts = {c: fmt for c, _, fmt in FIGURES}
    heads = " | ".join(f"{h}: best ref / candidate / at most?"
                       for c, h, _ in FIGURES if c in COMPARED)
    lines = [f"| dataset | eps | candidate | {heads} |", "|" + "---|" * (3 + len(COMPARED))]
    for row in table.to_dict("records"):
        cells = []
        for column in COMPARED:
            fmt = fmts[column]
            best = "" if pd.isna(row[f"best_{column}"]) else (
                fmt.format(row[f"best_{column}"]) + f" ({row[f'best_{column}_by']})")
            mine = "" if pd.isna(row[column]) else fmt.format(row[column])
            cells.append(f"{best} / {mine} / {row[f'{column}_ok']}")
        lines.append(f"| {row['dataset']} | {row['epsilon']:g} | {row['candidate']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def seed_wins(df, candidates, references=("fem", "aim")):
    """Per setting, candidate and reference: seeds where both ran ok, and per figure the
    number of those seeds where the candidate's value is at most the reference's."""
    ok = df[df["status"] == "ok"]
    rows = []
    for key, frame in ok.groupby(KEYS, sort=True):
        for candidate in candidates:
            mine = frame[frame["algorithm"] == candidate].set_index("seed")
            for reference in references:
                theirs = frame[frame["algorithm"] == reference].set_index("seed")
                seeds = mine.index.intersection(theirs.index)
                row = dict(zip(KEYS, key), candidate=candidate, reference=reference,
                           seeds=len(seeds))
                for column in COMPARED:
                    row[column] = int((mine.loc[seeds, column]
                                       <= theirs.loc[seeds, column]).sum())
                rows.append(row)
    return pd.DataFrame(rows)


def seed_wins_markdown(table):
    heads = " | ".join(f"{h}: seeds at most" for c, h, _ in FIGURES if c in COMPARED)
    lines = [f"| dataset | eps | candidate | reference | {heads} |",
             "|" + "---|" * (4 + len(COMPARED))]
    for row in table.to_dict("records"):
        cells = " | ".join(f"{row[c]} / {row['seeds']}" for c in COMPARED)
        lines.append(f"| {row['dataset']} | {row['epsilon']:g} | {row['candidate']} | "
                     f"{row['reference']} | {cells} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+",
                        help="runner CSVs, read together in this order: a row of a later file "
                             "replaces earlier rows with the same (dataset, epsilon, "
                             "algorithm, seed)")
    parser.add_argument("--candidates", nargs="*", default=[])
    parser.add_argument("--references", nargs="+", default=["fem", "aim"])
    parser.add_argument("--seeds", type=int, default=5, help="runs a complete setting has")
    parser.add_argument("--plots", metavar="DIR", default=None,
                        help="write bar plots of max error and mean TVD per table here")
    args = parser.parse_args(argv)
    runs = read_runs(args.csv)
    if args.plots:
        Path(args.plots).mkdir(parents=True, exist_ok=True)
        for eps in sorted(runs["epsilon"].unique()):
            for figure in ("sample_max_error", "sample_mean_tvd"):
                path = Path(args.plots) / f"{figure.replace('sample_', '')}_eps{eps:g}.png"
                plot_by_dataset(runs, eps, figure, path, title=f"small generated tables, "
                                f"epsilon = {eps:g} (mean and sd over seeds)")
                print(path, file=sys.stderr)
    stats = setting_stats(runs, args.seeds)
    print(stats_markdown(stats))
    if args.candidates:
        print(verdicts_markdown(verdicts(stats, args.candidates, args.references)))
        print(seed_wins_markdown(seed_wins(runs, args.candidates, args.references)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
