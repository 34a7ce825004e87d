"""A number's log scale: bins and fine cells equal in log(x - lo + c) (sklearn_privsyn._number_spec).

Here: the edges and their inverse, the fine grid's cells, the ledger (the
scale costs nothing; the sensitivity of log cells is checked by brute force in
tests/test_numbers.py), the rows of a long-tailed column with and without it,
a log scale of the bins alone, the domain file, the drafter, the command line
and the errors.
"""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn.cli import main
from sklearn_privsyn._number_spec import (LOG_SPAN, cut_edges, from_log_scale, log_offset,
                                          to_log_scale)
from sklearn_privsyn._scale_draft import (MIN_ERROR, MIN_GAIN, draft_log_scale, spread_error,
                                          tilted_error)
from sklearn_privsyn.domain_draft import MARK, draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_params
from sklearn_privsyn.numbers import NumberGrid, plan_numbers


def owed(n=5000, seed=0):
    """Amounts owed: half of the rows 0, the rest log-normal over four decades; a group."""
    rng = np.random.default_rng(seed)
    amount = np.where(rng.random(n) < 0.5, 0, np.round(np.exp(rng.normal(5, 1.5, n))))
    return pd.DataFrame({"amount": np.minimum(amount, 200000).astype(np.int64),
                         "group": rng.choice(["a", "b"], n)})


def incomes(n=3000, seed=0):
    """Monthly incomes: log-normal over two decades, well above 0."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"income": np.round(np.exp(rng.normal(8.5, 0.7, n))).astype(np.int64)})


def owed_workload(log_scale=None):
    return QueryWorkload(bounds={"amount": (0, 200000)}, domain={"group": ["a", "b"]},
                         points={"amount": [0]}, log_scale=log_scale, k=2)


def ks(a, b):
    return stats.ks_2samp(np.asarray(a, float), np.asarray(b, float)).statistic


# ------------------------------------------------------------------ edges


@pytest.mark.parametrize("lo, hi", [(0.0, 199308.0), (835000.0, 2.57e9), (-43.0, 1301.0),
                                    (0.5, 3.5)])
def test_log_edges_are_equal_on_the_log_scale_and_keep_the_bounds(lo, hi):
    edges = cut_edges(lo, hi, 8, [], None, log=True)
    assert edges[0] == lo and edges[-1] == hi and len(edges) == 9
    c = max((hi - lo) / LOG_SPAN, lo)  # above a positive lower bound, log(x) itself
    assert log_offset(lo, hi) == pytest.approx(c) and log_offset(lo, hi, 1.0) >= 1.0
    widths = np.diff(np.log(edges - lo + c))
    np.testing.assert_allclose(widths, math.log((hi - lo + c) / c) / 8, rtol=1e-9)
    if lo > 0:  # each edge a fixed multiple of the one before
        np.testing.assert_allclose(edges[1:] / edges[:-1], (hi / lo) ** (1 / 8), rtol=1e-9)
    back = from_log_scale(to_log_scale(edges, lo, hi), lo, hi)
    np.testing.assert_allclose(back, edges, rtol=1e-12, atol=1e-9 * (hi - lo))


@pytest.mark.parametrize("lo, hi, n_bins", [(0.0, 2.3e6, 10), (-43.0, 1301.0, 9),
                                            (0.0, 20.0, 4)])
def test_log_bins_alone_are_an_octave_each_above_the_bounds_span_over_2_to_the_bins(
        lo, hi, n_bins):
    edges = cut_edges(lo, hi, n_bins, [], None, log="bins")
    assert edges[0] == lo and edges[-1] == hi and len(edges) == n_bins + 1
    c = (hi - lo) / 2**n_bins
    ratios = (edges[1:] - lo + c) / (edges[:-1] - lo + c)
    np.testing.assert_allclose(ratios, (2**n_bins + 1) ** (1 / n_bins), rtol=1e-9)
    assert ratios[0] == pytest.approx(2.0, rel=0.1)
    # a lower bound above the offset keeps log(x), as with the bins and cells together
    np.testing.assert_array_equal(cut_edges(1000.0, 5000.0, 6, [], None, log="bins"),
                                  cut_edges(1000.0, 5000.0, 6, [], None, log=True))


def test_log_bins_of_a_column_from_0_spend_few_bins_below_its_values():
    # incomes bounded by 0 and 2.3 million, nearly all above 5,000: sixteen octaves in
    # ten bins put four bins below 3,000, where no row is; an octave a bin puts one
    x = incomes(seed=3).income.to_numpy(float) * 10
    edges = cut_edges(0.0, 2.3e6, 10, [], None, log="bins")
    assert np.quantile(x, 0.005) > 5000 and x.max() < 2.3e6
    assert np.sum(edges < 3000) == 2  # 0 and one more edge
    assert np.sum(cut_edges(0.0, 2.3e6, 10, [], None, log=True) < 3000) == 5
    assert np.histogram(x, edges)[0].astype(bool).sum() >= 6


def test_log_edges_of_a_step_are_multiples_of_it_and_keep_every_cut():
    edges = cut_edges(0.0, 199308.0, 30, [1000.0], 1.0, log=True)
    assert np.all(edges == np.round(edges)) and np.all(np.diff(edges) > 0)
    assert 1000.0 in edges
    # the first cells are narrower than the step: they merge, never empty
    assert len(edges) - 1 < 31


# ------------------------------------------------------------------ the fine grid


def test_a_log_grid_puts_every_value_in_the_cell_of_its_edges():
    grid = NumberGrid.of("x", 0.0, 199308.0, None, 7, log=True)
    assert grid.log and not grid.exact
    edges = grid.leaf_edges()
    rng = np.random.default_rng(0)
    values = np.r_[edges, rng.uniform(0, 199308.0, 2000), np.exp(rng.uniform(0, 12, 2000))]
    values = np.clip(values, 0.0, 199308.0)
    leaf = grid.leaf_of(values)
    assert np.all(edges[leaf] <= values)
    inside = leaf < grid.n_leaves - 1
    assert np.all(values[inside] < edges[leaf[inside] + 1])
    counts = grid.counts(values)
    assert counts[0] == len(values) and counts[2**7 - 1:2**8 - 1].sum() == len(values)


def test_the_log_scale_spends_exactly_what_equal_width_cells_spend():
    X = owed(2000)
    fits = [AdaptiveProjection(epsilon=1.0, workload=owed_workload(s), random_state=0).fit(X)
            for s in (None, ["amount"])]
    charges = [[(e.mechanism, e.rho, e.count) for e in f.ledger_.entries] for f in fits]
    assert charges[0] == charges[1]
    assert fits[1].ledger_.rho_spent <= fits[1].rho_


# ------------------------------------------------------------------ the rows


@pytest.mark.parametrize("number_share", ["auto", 0.0])
def test_a_long_tailed_column_on_a_log_scale_keeps_its_shape(number_share):
    # equal-width cells of 200,000 / 2**L put every non-zero amount in the first
    # one; drawn uniformly there, the amounts are no longer small
    X = owed()
    rows = {}
    for scale in (None, ["amount"]):
        est = AdaptiveProjection(epsilon=1.0, workload=owed_workload(scale),
                                 number_share=number_share, random_state=0).fit(X)
        rows[bool(scale)] = est.sample(len(X), random_state=1)["amount"]
    assert ks(X["amount"], rows[False]) > 0.1
    assert ks(X["amount"], rows[True]) < 0.05
    for synthetic in rows.values():
        assert synthetic.dtype == X["amount"].dtype
        assert synthetic.between(0, 200000).all()
        assert abs((synthetic == 0).mean() - (X["amount"] == 0).mean()) < 0.03


def test_log_bins_shape_the_rows_only_where_no_fine_grid_is_measured():
    X = incomes()
    bounds = {"income": (int(X.income.min()), int(X.income.max()))}
    rows = {}
    for share in (0.0, "auto"):
        for scale in (None, {"income": "bins"}):
            wl = QueryWorkload(bounds=bounds, log_scale=scale, k=1)
            est = AdaptiveProjection(epsilon=1.0, workload=wl, number_share=share,
                                     random_state=0).fit(X)
            rows[share, bool(scale)] = est.sample(len(X), random_state=1)
    # no fine grid: 10 equal-width bins of 3,000 put 55% of the incomes in the first two
    assert ks(X["income"], rows[0.0, False]["income"]) > 0.1
    assert ks(X["income"], rows[0.0, True]["income"]) < 0.05
    # a fine grid re-cuts the bins at private quantiles: the drafted bins play no part
    pd.testing.assert_frame_equal(rows["auto", False], rows["auto", True])
    for synthetic in rows.values():
        assert synthetic["income"].dtype == X["income"].dtype
        assert synthetic["income"].between(*bounds["income"]).all()


def test_the_command_line_drafts_and_fits_log_bins(tmp_path, capsys):
    X = incomes().assign(amount=owed(3000)["amount"])
    data, domain, out = tmp_path / "t.csv", tmp_path / "d.json", tmp_path / "s.csv"
    X.to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        assert main(["domain", str(data), "-o", str(domain)]) == 0
        drafted = json.loads(domain.read_text())
        assert drafted["income"]["scale"] == "log-bins" and drafted["amount"]["scale"] == "log"
        assert ("numbers binned on a log scale: income (its bins), amount"
                in capsys.readouterr().err)
        assert main(["fit", str(data), "--domain", str(domain), "--epsilon", "1",
                     "--seed", "0", "-o", str(out)]) == 0
    rows = pd.read_csv(out)
    assert list(rows.columns) == list(X.columns) and len(rows) == len(X)
    assert rows["income"].between(*drafted["income"]["bounds"]).all()


def test_the_workload_bins_of_a_log_scale_are_equal_on_it():
    wl = owed_workload(["amount"]).fit(owed(200))
    edges = wl.bin_edges_["amount"]
    np.testing.assert_array_equal(edges, cut_edges(0.0, 200000.0, 10, [], 1.0, log=True))


# ------------------------------------------------------------------ domain file and drafts


def test_a_log_scale_in_a_domain_file_reaches_the_workload():
    domain = {"amount": {"bounds": [0, 200000], "points": [0], "scale": "log"},
              "group": ["a", "b"]}
    assert parse_domain(domain)["log_scale"] == {"amount": "all"}
    params = workload_params(domain)
    assert params["log_scale"] == ["amount"]
    assert workload_params({"amount": {"bounds": [0, 200000]}})["log_scale"] is None
    wl = QueryWorkload(**params, k=2).fit(owed(200))
    assert wl.encoder_.coders[0].log is True


def test_a_log_scale_of_the_bins_alone_keeps_the_fine_cells_equal_width():
    X = incomes()
    bounds = [int(X.income.min()), int(X.income.max())]
    domain = {"income": {"bounds": bounds, "scale": "log-bins"}}
    assert parse_domain(domain)["log_scale"] == {"income": "bins"}
    params = workload_params(domain)
    assert params["log_scale"] == {"income": "bins"}
    wl = QueryWorkload(**params, k=1).fit(X)
    coder = wl.encoder_.coders[0]
    assert coder.log == "bins"
    np.testing.assert_array_equal(wl.bin_edges_["income"],
                                  cut_edges(*map(float, bounds), 10, [], 1.0, log="bins"))
    # the fine grid's cells: equal-width, where "log" puts them on the log scale
    grid = plan_numbers([coder], len(X), 1.0, 0.5, 1).grids[0]
    assert not grid.log and not grid.exact
    np.testing.assert_allclose(np.diff(grid.leaf_edges()), (bounds[1] - bounds[0]) / grid.n_leaves)
    whole = QueryWorkload(bounds={"income": bounds}, log_scale=["income"], k=1).fit(X)
    assert plan_numbers(list(whole.encoder_.coders), len(X), 1.0, 0.5, 1).grids[0].log
    # a dict's "all" is the list's scale
    same = QueryWorkload(bounds={"income": bounds}, log_scale={"income": "all"}, k=1).fit(X)
    assert same.encoder_.coders[0].log is True


def test_the_drafter_gives_the_bins_alone_a_log_scale_where_only_they_need_it():
    X = incomes()
    x = X.income.to_numpy(float)
    lo, hi = x.min(), x.max()
    # 64 equal-width cells are fine for it; its 10 equal-width bins, tilted, are not
    fine = (spread_error(x, np.linspace(lo, hi, 65)),
            spread_error(x, cut_edges(lo, hi, 64, [], 1.0, log=True)))
    coarse = (tilted_error(x, np.linspace(lo, hi, 11)),
              tilted_error(x, cut_edges(lo, hi, 10, [], 1.0, log="bins")))
    assert not (fine[0] >= MIN_ERROR and fine[1] * MIN_GAIN <= fine[0])
    assert coarse[0] >= MIN_ERROR and coarse[1] * MIN_GAIN <= coarse[0]
    domain = {"income": {"bounds": [int(lo), int(hi)], "bins": 10}}
    draft_log_scale(X, domain, MARK)
    assert domain["income"] == {"bounds": [int(lo), int(hi)], "bins": 10, "scale": "log-bins",
                                MARK: True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        assert draft_domain(X)["income"]["scale"] == "log-bins"
    # evenly spread values keep the linear scale on both
    even = pd.DataFrame({"income": np.linspace(1000, 20000, 3000).round()})
    domain = {"income": {"bounds": [1000, 20000], "bins": 10}}
    draft_log_scale(even, domain, MARK)
    assert "scale" not in domain["income"]


def test_a_tilt_spreads_a_falling_bin_closer_than_a_flat_draw():
    rng = np.random.default_rng(1)
    x = rng.exponential(1.0, 5000)
    edges = np.linspace(0.0, x.max(), 11)
    assert tilted_error(x, edges) < spread_error(x, edges)
    # one bin holding every value: no neighbour, no tilt
    assert tilted_error(x, edges[[0, -1]]) == pytest.approx(spread_error(x, edges[[0, -1]]))


@pytest.mark.parametrize("entry, match", [
    ({"bounds": [0, 10], "scale": "exp"},
     'column \'x\': "scale" must be "linear", "log" or "log-bins"'),
    ({"values": [1, 2], "scale": "log"}, "column 'x': an entry with 'values' takes only"),
])
def test_a_bad_scale_in_a_domain_file_names_the_column(entry, match):
    with pytest.raises(ValueError, match=match):
        parse_domain({"x": entry})


def test_the_drafter_gives_a_long_tail_a_log_scale_and_marks_it():
    rng = np.random.default_rng(0)
    X = owed().assign(even=rng.uniform(0, 1000, 5000).round(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
    assert draft["amount"]["scale"] == "log" and draft["amount"][MARK]
    assert "scale" not in draft["even"]


def test_spread_error_is_what_the_drafter_compares():
    x = owed()["amount"].to_numpy(float)
    x = x[x > 0]
    linear = spread_error(x, np.linspace(0, 200000, 65))
    log = spread_error(x, cut_edges(0.0, 200000.0, 64, [], None, log=True))
    assert linear >= MIN_ERROR and log < linear / 4
    domain = {"amount": {"bounds": [0, 200000]}}
    draft_log_scale(pd.DataFrame({"amount": x}), domain, MARK)
    assert domain["amount"] == {"bounds": [0, 200000], "scale": "log", MARK: True}
    # a declared scale is the user's: never replaced
    domain = {"amount": {"bounds": [0, 200000], "scale": "linear"}}
    draft_log_scale(pd.DataFrame({"amount": x}), domain, MARK)
    assert domain["amount"] == {"bounds": [0, 200000], "scale": "linear"}


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("log_scale, match", [
    (["nope"], r"log_scale names columns not in X: \['nope'\]"),
    ({"nope": "bins"}, r"log_scale names columns not in X: \['nope'\]"),
    ({"amount": "cells"}, r'log_scale\[\'amount\'\] must be "all" or "bins"; got \'cells\''),
    (["group"], r"log_scale\['group'\] applies to binned numbers only"),
])
def test_a_bad_log_scale_names_the_column(log_scale, match):
    with pytest.raises(ValueError, match=match):
        owed_workload(log_scale).fit(owed(100))


def test_a_clock_has_no_log_scale():
    X = pd.DataFrame({"dep_time": [517, 1230, 2359, 5]})
    wl = QueryWorkload(bounds={"dep_time": (0, 2400)}, clocks=["dep_time"],
                       log_scale=["dep_time"], k=1)
    with pytest.raises(ValueError, match="clocks names column 'dep_time', which is in "
                                         "log_scale: a time of day has no log scale"):
        wl.fit(X)
    with pytest.raises(ValueError, match="column 'dep_time': a clock .* has no log scale"):
        parse_domain({"dep_time": {"bounds": [0, 2400], "clock": True, "scale": "log"}})
