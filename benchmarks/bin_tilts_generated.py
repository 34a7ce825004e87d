"""Tilted against uniform draws inside bins, on generated numbers: how far from the values.

Where a fit measures no shape inside a number's bins, ``sample()`` draws a value inside its
bin from a linear density tilted by the neighbouring bins' shares
(:mod:`sklearn_privsyn.bin_tilts`); before, uniformly. Here each generated column (shapes
users bring: falling, skewed, humped, flat, bimodal, counts) is cut into equal-width bins
over its range, the bins' shares are the real ones plus Gaussian noise of sd ``noise`` (the
model's error; 0 is the shares themselves), and the values drawn inside the bins, uniformly
and tilted, are compared with the column's own by the KS distance.

Usage::

    python benchmarks/bin_tilts_generated.py --out benchmarks/notes/bin_tilts_generated.csv
"""

import argparse
import sys

import numpy as np
import pandas as pd

from sklearn_privsyn.bin_tilts import bin_tilts, tilted_uniform
from sklearn_privsyn.metrics import ks_distance

#: name -> values from a Generator and a size.
SHAPES = {
    "exponential": lambda g, n: g.exponential(1.0, n),
    "lognormal": lambda g, n: g.lognormal(0.0, 0.8, n),
    "gamma(2)": lambda g, n: g.gamma(2.0, 1.0, n),
    "normal": lambda g, n: g.normal(0.0, 1.0, n),
    "uniform": lambda g, n: g.uniform(0.0, 1.0, n),
    "beta(2, 5)": lambda g, n: g.beta(2.0, 5.0, n),
    "beta(0.5, 0.5)": lambda g, n: g.beta(0.5, 0.5, n),
    "two humps": lambda g, n: np.where(g.random(n) < 0.6, g.normal(0, 1, n), g.normal(4, 0.7, n)),
    "poisson(3)": lambda g, n: g.poisson(3.0, n).astype(float),
    "poisson(30)": lambda g, n: g.poisson(30.0, n).astype(float),
}


def draws(values, bins, noise, rng):
    """(uniform, tilted) values drawn inside the bins of ``values`` with noisy shares."""
    integer = np.all(values == np.round(values))
    lo, hi = values.min(), values.max()
    edges = np.linspace(lo - 0.5, hi + 0.5, bins + 1) if integer else np.linspace(lo, hi, bins + 1)
    codes = np.clip(np.searchsorted(edges, values, "right") - 1, 0, bins - 1)
    shares = np.bincount(codes, minlength=bins) / len(values)
    noisy = np.clip(shares + rng.normal(0.0, noise, bins), 0.0, None)
    noisy = noisy / noisy.sum() if noisy.sum() > 0 else np.full(bins, 1.0 / bins)
    drawn = rng.choice(bins, size=len(values), p=noisy)
    u = rng.random(len(values))
    out = []
    for t in (u, tilted_uniform(bin_tilts(noisy, edges)[drawn], u)):
        if integer:  # the whole numbers inside the bin, by their rank (as the coders draw)
            first, count = np.ceil(edges[drawn]), np.ceil(edges[drawn + 1]) - np.ceil(edges[drawn])
            out.append(first + np.minimum(np.floor(t * count), count - 1))
        else:
            out.append(edges[drawn] + t * (edges[drawn + 1] - edges[drawn]))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--bins", type=int, nargs="+", default=[10])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.01, 0.03])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rows = []
    for name, make in SHAPES.items():
        for bins in args.bins:
            for noise in args.noise:
                for seed in range(args.seeds):
                    rng = np.random.default_rng(seed)
                    values = make(rng, args.n)
                    uniform, tilted = draws(values, bins, noise, rng)
                    rows.append({"shape": name, "bins": bins, "noise": noise, "seed": seed,
                                 "ks_uniform": ks_distance(values, uniform),
                                 "ks_tilted": ks_distance(values, tilted)})
    frame = pd.DataFrame(rows)
    if args.out:
        frame.to_csv(args.out, index=False)
    table = frame.groupby(["shape", "bins", "noise"])[["ks_uniform", "ks_tilted"]].mean()
    table["ratio"] = table["ks_tilted"] / table["ks_uniform"]
    pd.set_option("display.width", 160)
    print(table.round(4).to_string())
    ratio = np.exp(np.log(frame["ks_tilted"] / frame["ks_uniform"]).groupby(frame["noise"]).mean())
    print("geometric mean ratio, tilted / uniform, by noise:", ratio.round(3).to_dict())
    return 0


if __name__ == "__main__":
    sys.exit(main())
