"""Render the quality report's plots on the bundled UCI Adult data, for the docs' gallery.

DQRS at epsilon = 1 on 32 random 3-way marginals of the bundled Adult table
(public domain, seed 0); the synthetic rows are ``sample(n)``'s. Writes
``docs/gallery/*.png`` and the whole page to ``report.html`` (not committed).

Run it from the repository root with ``python examples/report_gallery.py`` (about
half a minute on two cores; needs matplotlib: ``pip install -e '.[report]'``).
"""

import argparse
from pathlib import Path

from sklearn_privsyn import DQRS, QueryWorkload
from sklearn_privsyn.datasets import adult_public_domain, load_adult
from sklearn_privsyn.metrics import workload_error
from sklearn_privsyn.report import (
    column_distributions,
    columns_figure,
    pair_tvd,
    pair_tvd_figure,
    tvd_histogram_figure,
    write_report,
)

GALLERY = Path(__file__).resolve().parents[1] / "docs" / "gallery"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outdir", type=Path, default=GALLERY)
    parser.add_argument("--page", type=Path, default=Path("report.html"))
    parser.add_argument("--dpi", type=int, default=60)
    args = parser.parse_args(argv)

    real = load_adult()
    workload = QueryWorkload(**adult_public_domain(), k=3, n_marginals=32, random_state=0)
    estimator = DQRS(epsilon=1.0, workload=workload, random_state=0).fit(real)
    synthetic = estimator.sample(len(real), random_state=0)
    fitted = estimator.workload_

    args.outdir.mkdir(parents=True, exist_ok=True)
    figures = {
        "columns": columns_figure(column_distributions(fitted, real, synthetic)),
        "pair_tvd": pair_tvd_figure(pair_tvd(fitted, real, synthetic)),
        "tvd_histogram": tvd_histogram_figure(
            workload_error(fitted, real, synthetic).per_marginal_tvd
        ),
    }
    for name, fig in figures.items():
        path = args.outdir / f"{name}.png"
        fig.savefig(path, dpi=args.dpi, bbox_inches="tight")
        print("wrote", path)
    write_report(args.page, real, synthetic, estimator=estimator, target="income")
    print("wrote", args.page)


if __name__ == "__main__":
    main()
