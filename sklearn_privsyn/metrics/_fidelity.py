"""Fidelity of synthetic rows to a real table, measured on the rows themselves.

These measures need no workload and no domain: they compare two DataFrames
with the same columns, as a user looking at the rows would.

* the total variation distance (TVD) of every column and of every pair of
  columns, numbers cut at deciles of the real column for this measure only;
* for every numeric column, the Kolmogorov-Smirnov distance between the real
  and synthetic values, and the difference between the real and synthetic
  share of the real column's most common value (its point mass, such as a
  capital gain of 0);
* the impossible-pair rate: the share of synthetic rows holding a pair of
  values of two discrete columns that no real row holds, beside the same rate
  for one half of the real rows against the other half (what sampling alone
  gives).

They read the real data: the figures are for the data owner, not for release.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._coders import is_number_dtype

__all__ = [
    "COMPARED_DIGITS",
    "DEFAULT_MAX_CATEGORIES",
    "FidelityReport",
    "column_kinds",
    "compared_values",
    "fidelity_report",
    "impossible_pair_rate",
    "ks_distance",
]

#: A numeric column with more distinct real values than this is a number (cut
#: at deciles for the TVDs, left out of the impossible pairs); the others are
#: discrete. The same threshold as domain drafting's.
DEFAULT_MAX_CATEGORIES = 20
#: Significant digits numbers are compared at (their deciles, KS distance and point masses): a
#: speed written 6.904679999999999 (6 knots times 1.15078, in binary) and one written
#: 6.90468 are one value.
COMPARED_DIGITS = 12


def column_kinds(real, *, max_categories=DEFAULT_MAX_CATEGORIES):
    """Whether each column of ``real`` is measured as a number or as discrete values.

    Parameters
    ----------
    real : DataFrame
        The real table.
    max_categories : int, default=20
        Numeric columns with more distinct (non-missing) values are numbers.

    Returns
    -------
    kinds : dict
        Column -> ``"number"`` or ``"discrete"``.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.metrics import column_kinds
    >>> column_kinds(pd.DataFrame({"a": range(30), "b": ["x"] * 30}))
    {'a': 'number', 'b': 'discrete'}
    """
    return {
        col: "number"
        if is_number_dtype(real[col].dtype) and real[col].nunique(dropna=True) > max_categories
        else "discrete"
        for col in real.columns
    }


def _numbers(frame, col, which):
    """A numeric column's values as compared (:func:`compared_values`)."""
    try:
        values = pd.to_numeric(frame[col], errors="raise").to_numpy(dtype=float,
                                                                    na_value=np.nan)
        return compared_values(values)
    except (TypeError, ValueError):
        raise ValueError(
            f"Column {col!r} of the {which} rows holds values that are not numbers, but the "
            "column is numeric in the real rows."
        ) from None


def _discrete_codes(columns):
    """Integer codes of several Series over the union of their values (missing: a value)."""
    values = pd.concat(columns, ignore_index=True).astype(object)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    out, start = [], 0
    for series in columns:
        out.append(codes[start:start + len(series)])
        start += len(series)
    return out, max(len(uniques), 1)


def decile_edges(real_values):
    """The distinct deciles of the real numbers (NaN ignored): the inner edges of the bins
    ``(e_{i-1}, e_i]`` that numbers are cut into for the fidelity measures."""
    finite = real_values[~np.isnan(real_values)]
    return np.unique(np.quantile(finite, np.linspace(0.1, 0.9, 9))) if finite.size else (
        np.zeros(0))


def _decile_codes(real_values, others):
    """Codes of numbers cut at the real deciles: bins ``(e_{i-1}, e_i]``, missing last."""
    inner = decile_edges(real_values)
    missing = len(inner) + 1
    out = []
    for values in (real_values, *others):
        codes = np.searchsorted(inner, values, side="left")
        out.append(np.where(np.isnan(values), missing, codes))
    return out, missing + 1


def _codes(real, synthetic, kinds):
    """Per column: (real codes, synthetic codes, number of codes)."""
    coded = {}
    for col, kind in kinds.items():
        if kind == "number":
            (r, s), size = _decile_codes(_numbers(real, col, "real"),
                                         [_numbers(synthetic, col, "synthetic")])
        else:
            (r, s), size = _discrete_codes([real[col], synthetic[col]])
        coded[col] = (r, s, size)
    return coded


def _tvd(real_codes, synthetic_codes, size):
    p = np.bincount(real_codes, minlength=size) / max(len(real_codes), 1)
    q = np.bincount(synthetic_codes, minlength=size) / max(len(synthetic_codes), 1)
    return 0.5 * float(np.abs(p - q).sum())


def compared_values(values):
    """Numbers rounded to ``COMPARED_DIGITS`` significant digits (missing values kept).

    Two numbers that differ only in the binary noise of a decimal are then equal.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.metrics import compared_values
    >>> a = compared_values([6 * 1.15078, 6.90468, 0.1 * 3, 0.0, -1.5e-7, np.nan])
    >>> bool(a[0] == a[1]), a[2:5].tolist(), bool(np.isnan(a[5]))
    (True, [0.3, 0.0, -1.5e-07], True)
    """
    x = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude = np.floor(np.log10(np.abs(x)))
    magnitude = np.clip(np.where(np.isfinite(magnitude), magnitude, 0.0), -280, 280)
    scale = 10.0 ** (COMPARED_DIGITS - 1 - magnitude)
    return np.round(x * scale) / scale


def ks_distance(a, b):
    """Kolmogorov-Smirnov distance of two samples of numbers (missing values left out).

    The largest gap between their empirical CDFs; ``nan`` when either has no value.
    Values are compared at ``COMPARED_DIGITS`` significant digits (:func:`compared_values`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.metrics import ks_distance
    >>> round(ks_distance(np.array([0.0, 0.0, 0.0, 5.0]), np.array([0.0, 1.0, 2.0, np.nan])), 4)
    0.4167
    """
    a, b = compared_values(a), compared_values(b)
    a, b = np.sort(a[~np.isnan(a)]), np.sort(b[~np.isnan(b)])
    if a.size == 0 or b.size == 0:
        return np.nan
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / a.size
    cdf_b = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(cdf_a - cdf_b)))


def _point_mass(real_values, synthetic_values):
    """(value, real share, synthetic share) of the real column's most common value."""
    finite = real_values[~np.isnan(real_values)]
    if finite.size == 0:
        return np.nan, np.nan, np.nan
    values, counts = np.unique(finite, return_counts=True)
    value = values[np.argmax(counts)]
    return (float(value), float(counts.max() / real_values.size),
            float(np.mean(synthetic_values == value)))


def _pair_keys(coded, a, b, which):
    return coded[a][which].astype(np.int64) * coded[b][2] + coded[b][which]


def _impossible_rows(coded, columns):
    """Boolean mask of the synthetic rows holding a pair of values no real row holds."""
    n_synthetic = len(next(iter(coded.values()))[1]) if coded else 0
    bad = np.zeros(n_synthetic, dtype=bool)
    for a, b in itertools.combinations(columns, 2):
        seen = np.unique(_pair_keys(coded, a, b, 0))
        bad |= ~np.isin(_pair_keys(coded, a, b, 1), seen)
    return bad


def impossible_pair_rate(real, synthetic, *, columns=None,
                         max_categories=DEFAULT_MAX_CATEGORIES):
    """Share of synthetic rows holding a pair of values that no real row holds.

    A pair is two values of two discrete columns (missing counts as a value);
    a synthetic row is impossible when any of its pairs never occurs in
    ``real``. Rows drawn from the real table itself score close to 0; one
    half of the real rows against the other half shows what sampling alone
    gives (:attr:`FidelityReport.reference_impossible_pair_rate`).

    Parameters
    ----------
    real, synthetic : DataFrame
        Tables with the same columns.
    columns : list, default=None
        The discrete columns to pair; ``None`` means every column that
        :func:`column_kinds` calls discrete.
    max_categories : int, default=20
        Passed to :func:`column_kinds`.

    Returns
    -------
    rate : float

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.metrics import impossible_pair_rate
    >>> real = pd.DataFrame({"sex": ["F", "M", "M"], "role": ["Wife", "Husband", "Child"]})
    >>> synthetic = pd.DataFrame({"sex": ["F", "F"], "role": ["Wife", "Husband"]})
    >>> impossible_pair_rate(real, synthetic)
    0.5
    """
    if columns is None:
        kinds = column_kinds(real, max_categories=max_categories)
        columns = [c for c, kind in kinds.items() if kind == "discrete"]
    coded = _codes(real, synthetic, {c: "discrete" for c in columns})
    if len(columns) < 2 or len(synthetic) == 0:
        return 0.0
    return float(_impossible_rows(coded, columns).mean())


@dataclass(frozen=True)
class FidelityReport:
    """The measures of :func:`fidelity_report`.

    Attributes
    ----------
    kinds : dict
        Column -> ``"number"`` or ``"discrete"``.
    tvd_1way : Series
        TVD of every column (numbers cut at real deciles).
    tvd_2way : Series
        TVD of every pair of columns, indexed by ``(a, b)``.
    ks : Series
        Kolmogorov-Smirnov distance of every numeric column's values.
    point_mass : DataFrame
        Per numeric column: the real column's most common ``value``, its
        ``real`` and ``synthetic`` shares of rows, and their absolute
        ``difference``.
    impossible_pair_rate : float
        Share of synthetic rows holding a pair of discrete values no real
        row holds.
    reference_impossible_pair_rate : float
        The same for one random half of the real rows against the other.
    """

    kinds: dict
    tvd_1way: pd.Series
    tvd_2way: pd.Series
    ks: pd.Series
    point_mass: pd.DataFrame
    impossible_pair_rate: float
    reference_impossible_pair_rate: float

    def summary(self):
        """The headline figures as a flat dict of floats (``nan`` where not defined).

        Keys: ``mean_tvd_1way``, ``mean_tvd_2way``, ``max_tvd_2way``,
        ``mean_ks``, ``max_ks``, ``max_point_mass_diff``,
        ``impossible_pair_rate``, ``reference_impossible_pair_rate``.
        """

        def stat(series, how):
            values = series.dropna()
            return float(getattr(values, how)()) if len(values) else float("nan")

        return {
            "mean_tvd_1way": stat(self.tvd_1way, "mean"),
            "mean_tvd_2way": stat(self.tvd_2way, "mean"),
            "max_tvd_2way": stat(self.tvd_2way, "max"),
            "mean_ks": stat(self.ks, "mean"),
            "max_ks": stat(self.ks, "max"),
            "max_point_mass_diff": stat(self.point_mass["difference"], "max"),
            "impossible_pair_rate": self.impossible_pair_rate,
            "reference_impossible_pair_rate": self.reference_impossible_pair_rate,
        }


def _check_tables(real, synthetic):
    for name, table in (("real", real), ("synthetic", synthetic)):
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"{name} must be a DataFrame; got {type(table).__name__}.")
        if len(table) == 0:
            raise ValueError(f"The {name} table has no rows.")
    missing = [c for c in real.columns if c not in synthetic.columns]
    if missing:
        raise ValueError(f"The synthetic rows lack the real table's columns {missing}.")


def fidelity_report(real, synthetic, *, max_categories=DEFAULT_MAX_CATEGORIES, random_state=0):
    """Compare synthetic rows with the real table they were made from.

    Parameters
    ----------
    real : DataFrame
        The real table.
    synthetic : DataFrame
        Synthetic rows with (at least) the real table's columns.
    max_categories : int, default=20
        Numeric columns with more distinct real values are numbers
        (:func:`column_kinds`).
    random_state : int, default=0
        Seed of the split of the real rows into two halves for
        ``reference_impossible_pair_rate``.

    Returns
    -------
    report : FidelityReport

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn.metrics import fidelity_report
    >>> rng = np.random.default_rng(0)
    >>> real = pd.DataFrame({"gain": np.where(rng.random(500) < 0.9, 0, rng.integers(1, 9999, 500)),
    ...                      "sex": rng.choice(["F", "M"], 500)})
    >>> synthetic = real.assign(gain=rng.integers(0, 9999, 500))
    >>> report = fidelity_report(real, synthetic)
    >>> report.point_mass.loc["gain", ["value", "real", "synthetic"]].round(2).tolist()
    [0.0, 0.88, 0.0]
    >>> report.summary()["impossible_pair_rate"]
    0.0
    """
    _check_tables(real, synthetic)
    synthetic = synthetic[list(real.columns)]
    kinds = column_kinds(real, max_categories=max_categories)
    coded = _codes(real, synthetic, kinds)
    columns = list(real.columns)
    tvd_1way = pd.Series({c: _tvd(*coded[c]) for c in columns}, dtype=float)
    pairs = list(itertools.combinations(columns, 2))
    tvd_2way = pd.Series(
        [_tvd(_pair_keys(coded, a, b, 0), _pair_keys(coded, a, b, 1), coded[a][2] * coded[b][2])
         for a, b in pairs],
        index=pd.MultiIndex.from_tuples(pairs) if pairs else None, dtype=float,
    )
    numeric = [c for c in columns if is_number_dtype(real[c].dtype)]
    values = {c: (_numbers(real, c, "real"), _numbers(synthetic, c, "synthetic"))
              for c in numeric}
    ks = pd.Series({c: ks_distance(*values[c]) for c in numeric}, dtype=float)
    point_mass = pd.DataFrame([_point_mass(*values[c]) for c in numeric], index=numeric,
                              columns=["value", "real", "synthetic"], dtype=float)
    point_mass["difference"] = (point_mass["real"] - point_mass["synthetic"]).abs()

    discrete = [c for c in columns if kinds[c] == "discrete"]
    rate = (float(_impossible_rows(coded, discrete).mean()) if len(discrete) > 1 else 0.0)
    order = np.random.default_rng(random_state).permutation(len(real))
    half = len(real) // 2
    first, second = real.iloc[order[:half]], real.iloc[order[half:]]
    reference = (impossible_pair_rate(first, second, columns=discrete)
                 if len(discrete) > 1 and half > 0 else 0.0)
    return FidelityReport(kinds=kinds, tvd_1way=tvd_1way, tvd_2way=tvd_2way, ks=ks,
                          point_mass=point_mass, impossible_pair_rate=rate,
                          reference_impossible_pair_rate=reference)
