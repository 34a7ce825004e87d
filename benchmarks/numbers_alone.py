"""The numbers' fine measurement alone, on real tables: what its noise leaves in the values.

A fit first measures its binned numbers finely (:mod:`sklearn_privsyn.numbers`: point
masses, bins of similar mass, the shape inside each bin) with a share of the budget. How
close can the rows' numbers come, whatever the rest of the fit does? Here that measurement
runs alone: AdaptiveProjection, on the default workload of ``privsyn fit`` (every
``k = 3``-way marginal under the cell budget), stops right after it, and each refined
number decodes the real rows' own codes. The values then differ from the real ones only by
what the measurement's noise left; a whole fit adds the error of the codes themselves.

Per number and noise draw: the KS distance, the difference of the most common value's
share, and the real share on common values (at least ``COMMON`` of the present rows) that no
drawn value equals. Printed per table, budget, share and ``--split-alpha``: the mean over
draws of the mean and max KS over the numbers, of the largest point-mass difference and of
the mean share never drawn, with the sd over draws.

``--share`` compares shares of the budget (``auto``: what a default fit spends; 0: no fine
measurement, values drawn uniformly in equal-width bins: the tilt a whole fit gives them,
``sklearn_privsyn.bin_tilts``, comes after the model and is not applied here).
``--split-alpha`` sets ``sklearn_privsyn.numbers.SPLIT_ALPHA`` (the chance that noise splits
any pair of equal children of a tree level) for the run: the way its default was chosen.

Tables are those of ``benchmarks/real_tables.py`` (prepared in the same ``--cache``).

Usage::

    python benchmarks/numbers_alone.py --tables loans attrition --eps 1 --share auto 0.5 0.95
    python benchmarks/numbers_alone.py --tables adult wage --eps 1 0.1 --split-alpha 0.05 0.2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: A value is common with at least this share of a number's present rows.
COMMON = 0.005


def _share(text):
    return text if text == "auto" else float(text)


class _Measured(Exception):
    """Raised where a fit would go on from the numbers' measurement to the workload; holds
    the workload with the refined coders and the share spent (the fit forgets them)."""

    def __init__(self, workload, share):
        super().__init__("measured")
        self.workload, self.share = workload, share


def _numbers_only_class():
    from sklearn_privsyn import AdaptiveProjection

    class NumbersOnly(AdaptiveProjection):
        """AdaptiveProjection stopped after the numbers' measurement (this benchmark only)."""

        def _fit_records(self, data, rng):
            raise _Measured(self.workload_, self.number_share_)

    return NumbersOnly


def column_figures(real, drawn):
    """(KS, point-mass difference, real share on common values never drawn) of one number."""
    from sklearn_privsyn.metrics import compared_values, ks_distance

    r, s = compared_values(real), compared_values(drawn)
    values, counts = np.unique(r, return_counts=True)
    top = values[np.argmax(counts)]
    point = abs(counts.max() / r.size - float(np.mean(s == top)))
    common = counts >= COMMON * r.size
    lost = float(counts[common & ~np.isin(values, s)].sum() / r.size)
    return ks_distance(r, s), point, lost


def numbers_alone(frame, workload, epsilon, share, draw):
    """Per binned number: its figures when the real rows' codes are decoded after the
    measurement with noise draw ``draw`` (the fit measures a clone of ``workload``)."""
    from sklearn_privsyn.decimals import round_columns

    estimator = _numbers_only_class()(workload=workload, epsilon=epsilon,
                                       number_share=share, random_state=draw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            estimator.fit(frame)
        except _Measured as measured:
            fitted, spent = measured.workload, measured.share
        else:  # the fit always reaches _fit_records
            raise RuntimeError("the fit ended before its numbers were measured")
    rng = np.random.default_rng(draw)
    rows = []
    for coder in fitted.encoder_.coders:
        edges = getattr(coder, "edges", None)  # a binned number's coder has bin edges
        if edges is None or edges[-1] <= edges[0]:
            continue
        present = frame[coder.name].dropna()
        if present.empty:
            continue
        drawn = pd.DataFrame({coder.name: np.asarray(coder.decode(coder.encode(present), rng),
                                                     dtype=float)})
        # declared decimals, as the rows of sample() have them
        drawn = round_columns(drawn, fitted.decimals_)[coder.name]
        ks, point, lost = column_figures(present.to_numpy(dtype=float), drawn.to_numpy())
        rows.append({"column": coder.name, "ks": ks, "point_mass": point, "never_drawn": lost,
                     "share": spent})
    return rows


def summary(frame):
    """Mean (sd over draws) of each draw's mean / max KS, largest point mass, never drawn."""
    keys = ["table", "epsilon", "share", "split_alpha"]
    per_draw = frame.groupby(keys + ["draw"]).agg(
        mean_ks=("ks", "mean"), max_ks=("ks", "max"), point_mass=("point_mass", "max"),
        never_drawn=("never_drawn", "mean"), spent=("spent_share", "first"),
        numbers=("column", "size"))
    out = per_draw.groupby(keys).agg(["mean", "std"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    keep = [c for c in out.columns if not c.startswith(("spent_std", "numbers_std"))]
    return out[keep].round(4)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=["adult"])
    parser.add_argument("--eps", nargs="+", type=float, default=[1.0])
    parser.add_argument("--share", nargs="+", type=_share, default=["auto"])
    parser.add_argument("--split-alpha", nargs="+", type=float, default=[None],
                        help="sklearn_privsyn.numbers.SPLIT_ALPHA for the run (default: as is)")
    parser.add_argument("--draws", type=int, default=5, help="noise draws (seeds 0, 1, ...)")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "privsyn-real"))
    parser.add_argument("--out", default=None, help="write the per-number rows to this CSV")
    args = parser.parse_args(argv)

    import sklearn_privsyn.numbers as numbers
    from real_tables import prepare, short_name
    from sklearn_privsyn.cell_budget import budgeted_workload
    from sklearn_privsyn.domain_file import read_domain
    from sklearn_privsyn.table_files import read_table

    default_alpha = numbers.SPLIT_ALPHA
    rows = []
    for table in args.tables:
        data, domain = prepare(table, Path(args.cache))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a drafted domain is read from the data
            params = read_domain(domain)
        frame, _ = read_table(data, params)
        workload, _ = budgeted_workload(params, frame, random_state=0)  # privsyn fit's default
        for epsilon in args.eps:
            for share in args.share:
                for alpha in args.split_alpha:
                    numbers.SPLIT_ALPHA = default_alpha if alpha is None else alpha
                    try:
                        for draw in range(args.draws):
                            for row in numbers_alone(frame, workload, epsilon, share, draw):
                                spent = row.pop("share")
                                rows.append({"table": short_name(table), "epsilon": epsilon,
                                             "share": str(share),
                                             "split_alpha": numbers.SPLIT_ALPHA,
                                             "draw": draw, "spent_share": spent, **row})
                    finally:
                        numbers.SPLIT_ALPHA = default_alpha
    result = pd.DataFrame(rows)
    if args.out:
        result.to_csv(args.out, index=False)
    if result.empty:
        print("no binned number in these tables")
        return 0
    pd.set_option("display.width", 200)
    print(summary(result).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
