"""Clock times (sklearn_privsyn.clock): HHMM numbers modelled in minutes since midnight.

Here: the map between HHMM and minutes, a workload's clock column (bins that are
spans of time, points and cuts given as HHMM, every decoded value a time of day,
errors that name the column and no value), the numbers' measurement counting in
minutes, synthetic rows of a fitted estimator, derived times of day (a sum
written as a clock), the domain file and the drafter.
"""

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.cli import main
from sklearn_privsyn.clock import hhmm_to_minutes, is_hhmm, minutes_to_hhmm
from sklearn_privsyn.derived import parse_derived
from sklearn_privsyn.domain_draft import MIN_CLOCK_VALUES, draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_params
from sklearn_privsyn.number_measurement import NumberGrid, number_counts

# tables with columns left undeclared learn their domains: not the point here
pytestmark = pytest.mark.filterwarnings("ignore::sklearn_privsyn.PrivacyLeakWarning")

ALL_HHMM = np.array([h * 100 + m for h in range(24) for m in range(60)] + [2400], dtype=float)


def flights(n=3000, seed=0):
    """Scheduled departures (hour, minute, and the two as one number HHMM), a delay, the
    departure (a time of day: the schedule plus the delay, midnight written 2400), and an
    arrival clock with missing values."""
    rng = np.random.default_rng(seed)
    hour = rng.choice([6, 8, 9, 17, 18, 21, 23], n)
    minute = rng.choice([0, 5, 15, 30, 45, 59], n)
    delay = np.round(rng.exponential(20, n) - 5).astype(float)
    delay[rng.random(n) < 0.05] = np.nan
    departure = minutes_to_hhmm(60 * hour + minute + delay, wrap=2400)
    arrival = minutes_to_hhmm(60 * hour + minute + rng.integers(40, 400, n), wrap=2400)
    arrival[rng.random(n) < 0.03] = np.nan
    # as in nycflights13, the schedule comes before its hour and minute: the drafter derives
    # it from them
    return pd.DataFrame({"sched": 100 * hour + minute, "delay": delay, "dep_time": departure,
                         "arr_time": arrival, "hour": hour, "minute": minute})


def test_hhmm_and_minutes_are_one_bijection_over_the_day():
    minutes = hhmm_to_minutes(ALL_HHMM)
    assert minutes.tolist() == list(range(1441))
    assert minutes_to_hhmm(minutes).tolist() == ALL_HHMM.tolist()
    assert is_hhmm(ALL_HHMM).all()
    assert not is_hhmm([60, 1299, 2401, -1, 12.5, np.nan]).any()


@pytest.mark.parametrize("minutes, wrap, expected", [
    (1460, 2400, 20), (0, 2400, 2400), (1440, 2400, 2400), (0, 0, 0), (1440, 0, 0),
    (-10, 0, 2350), (317, None, 517), (1440, None, 2400),
])
def test_a_wrapped_clock_takes_minutes_modulo_a_day(minutes, wrap, expected):
    assert minutes_to_hhmm(np.array([minutes], dtype=float), wrap=wrap)[0] == expected


def test_a_clock_is_binned_in_minutes_and_decodes_times_of_day():
    X = pd.DataFrame({"t": [5, 959, 1000, 1230, 2359, 2400]})
    wl = QueryWorkload(bounds={"t": (0, 2400)}, bins={"t": 24}, clocks=["t"], k=1).fit(X)
    assert wl.bin_edges_["t"].tolist() == list(range(0, 1441, 60))  # one bin an hour
    assert wl.encode(X)[:, 0].tolist() == [0, 9, 10, 12, 23, 23]
    assert wl.get_feature_names_out()[9] == "t_[09:00, 10:00)"
    codes = np.repeat(np.arange(24), 200)[:, None]
    out = wl.decode(codes, random_state=0)
    assert out["t"].dtype == X["t"].dtype
    assert is_hhmm(out["t"]).all()
    hours = out["t"].to_numpy() // 100
    assert np.array_equal(np.minimum(hours, 23), codes[:, 0])  # each value inside its hour
    # as numbers, the same bounds cut at 100-wide bins, and draw 5:65 as often as 5:15
    plain = QueryWorkload(bounds={"t": (0, 2400)}, bins={"t": 24}, k=1).fit(X)
    assert not is_hhmm(plain.decode(codes, random_state=0)["t"]).all()


def test_a_clocks_points_cuts_and_edges_are_given_as_hhmm():
    X = pd.DataFrame({"t": [600.0, 1200.0, 1330.0, np.nan]})
    wl = QueryWorkload(bounds={"t": (0, 2400)}, bins={"t": 4}, points={"t": [1200]},
                       cuts={"t": [1330]}, clocks=["t"], handle_missing=["t"], k=1).fit(X)
    assert wl.points_["t"].tolist() == [720.0]
    assert wl.cuts_["t"].tolist() == [810.0]
    assert 810.0 in wl.bin_edges_["t"]
    assert wl.encode(X)[1, 0] == wl.encoder_.coders[0].n_bins  # 12:00 is the point
    decoded = wl.decode(wl.encode(X), random_state=0)["t"]
    assert decoded[1] == 1200 and np.isnan(decoded[3])
    edges = QueryWorkload(bins={"t": [0, 630, 2400]}, clocks=["t"], handle_missing=["t"],
                          k=1).fit(X).bin_edges_["t"]
    assert edges.tolist() == [0.0, 390.0, 1440.0]


def test_get_params_and_clone_carry_clocks():
    wl = QueryWorkload(clocks=["t"], bounds={"t": (0, 2400)})
    assert clone(wl).get_params()["clocks"] == ["t"]


@pytest.mark.parametrize("kwargs, match", [
    ({"bounds": {"t": (0, 2500)}}, r"Column 't' is declared a clock .* its bounds hold"),
    ({"bounds": {"t": (0, 2400)}, "points": {"t": [1275]}}, r"'t' .* its points hold"),
    ({"domain": {"t": [5, 1230]}}, r"clocks names column 't', which is in domain"),
    ({"bounds": {"t": (1200, 1203)}, "bins": {"t": 10}},
     r"Bin 1 \[1200.3, 1200.6\) of clock 't' contains no whole minute"),
    ({"bounds": {"t": (0, 2400)}, "clocks": ["t", "nope"]}, r"clocks names columns not in X"),
])
def test_bad_clock_declarations_name_the_column(kwargs, match):
    kwargs = {"clocks": ["t"], **kwargs}
    with pytest.raises(ValueError, match=match):
        QueryWorkload(k=1, **kwargs).fit(pd.DataFrame({"t": [5, 1230]}))


def test_a_value_that_is_no_time_of_day_is_an_error_naming_the_column_not_the_value():
    wl = QueryWorkload(bounds={"t": (0, 2400)}, clocks=["t"], k=1).fit(
        pd.DataFrame({"t": [5, 1230]}))
    with pytest.raises(ValueError, match=r"Column 't' is declared a clock") as info:
        wl.encode(pd.DataFrame({"t": [5, 1261]}))
    assert "1261" not in str(info.value)
    strict = QueryWorkload(bounds={"t": (600, 1800)}, clocks=["t"], clip=False, k=1)
    with pytest.raises(ValueError, match=r"'t' has values outside its bounds \[600, 1800\]"):
        strict.fit(pd.DataFrame({"t": [700, 1230, 2130]}))
    with pytest.raises(ValueError, match="binned as numeric"):
        QueryWorkload(clocks=["t"], k=1).fit(pd.DataFrame({"t": ["5:00", "12:30"]}))


def test_the_numbers_measurement_counts_a_clock_in_minutes():
    frame = pd.DataFrame({"t": [0.0, 59.0, 100.0, 2359.0, 2400.0, np.nan]})
    grid = replace(NumberGrid.of("t", 0.0, 1440.0, 1.0, 10), clock=True)
    minutes = np.array([0.0, 59.0, 60.0, 1439.0, 1440.0])
    assert np.array_equal(number_counts([grid], frame), grid.counts(minutes))
    with pytest.raises(ValueError, match="declared a clock"):
        number_counts([grid], pd.DataFrame({"t": [75.0]}))


def test_synthetic_rows_of_a_fitted_estimator_hold_times_of_day():
    X = flights()[["hour", "delay", "arr_time"]]
    wl = QueryWorkload(domain={"hour": [6, 8, 9, 17, 18, 21, 23]},
                       bounds={"delay": (-10, 200), "arr_time": (0, 2400)}, clocks=["arr_time"],
                       handle_missing=["delay", "arr_time"], k=2)
    model = AdaptiveProjection(epsilon=1.0, workload=wl, random_state=0).fit(X)
    assert "number_histogram" in [e.mechanism for e in model.ledger_.entries]
    rows = model.sample(3000, random_state=1)
    times = rows["arr_time"].dropna()
    assert len(times) > 2000 and is_hhmm(times).all()
    # the shape of the real times is kept, not spread over the day: no departure lands
    # between 1:00 and 5:59 in the real table, and (nearly) none does in the rows
    real_night = X["arr_time"].between(100, 559).mean()
    assert abs(times.between(100, 559).mean() - real_night) < 0.05


def test_a_derived_time_of_day_is_a_sum_in_minutes_written_as_a_clock():
    X = flights()
    spec = {"of": ["hour", "minute", "delay"], "sum": [60, 1, 1], "clock": 2400}
    column = parse_derived({"dep_time": spec}, X.columns)["dep_time"]
    computed = column.compute(X)
    assert np.array_equal(computed, X["dep_time"], equal_nan=True)
    assert computed[X["delay"].isna()].isna().all()
    # a clock source counts in minutes (here the arrival itself, the delay weighs 0)
    wl = QueryWorkload(
        domain={"hour": [6, 8, 9, 17, 18, 21, 23], "minute": [0, 5, 15, 30, 45, 59]},
        bounds={"delay": (-10, 200), "arr_time": (0, 2400)}, clocks=["arr_time"],
        handle_missing=["delay", "arr_time"], k=1,
        derived={"dep_time": {"of": ["arr_time", "delay"], "sum": [1, 0], "clock": 0}})
    wl.fit(X)
    assert wl.derived_["dep_time"].clock_sources == ("arr_time",)
    out = wl.decode(wl.encode(X), random_state=0)
    shown = out["arr_time"].to_numpy()
    expected = np.where(shown == 2400, 0, shown)  # the same time, midnight written 0
    expected[out["delay"].isna().to_numpy()] = np.nan  # missing where a source is
    assert np.array_equal(out["dep_time"], expected, equal_nan=True)


@pytest.mark.parametrize("spec, match", [
    ({"of": "hour", "floordiv": 1, "clock": 2400}, "'clock' goes with a 'sum' only"),
    ({"of": ["hour", "minute"], "sum": [60, 1], "clock": 100}, "one of \\[0, 2400\\]"),
    ({"of": ["hour", "minute"], "sum": [60, 1], "clock": True}, "how midnight is written"),
])
def test_bad_derived_clocks_are_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_derived({"dep_time": spec}, flights().columns)


def test_a_clock_cannot_be_derived():
    wl = QueryWorkload(clocks=["dep_time"], k=1,
                       derived={"dep_time": {"of": ["hour", "minute"], "sum": [100, 1]}})
    with pytest.raises(ValueError, match=r"clocks declares derived columns \['dep_time'\]"):
        wl.fit(flights())


def test_a_domain_file_declares_clocks():
    params = parse_domain({"t": {"bounds": [0, 2400], "bins": 24, "clock": True},
                           "u": {"bounds": [0, 10]}})
    assert params["clocks"] == ["t"]
    kwargs = workload_params({"t": {"bounds": [0, 2400], "clock": True}})
    assert kwargs["clocks"] == ["t"]
    assert workload_params({"t": {"bounds": [0, 2400]}})["clocks"] is None


@pytest.mark.parametrize("entry, match", [
    ({"bounds": [0, 2400], "clock": "yes"}, "\"clock\" must be true or false"),
    ({"values": [5, 10], "clock": True}, "takes only"),
])
def test_bad_clock_entries_in_a_domain_file(entry, match):
    with pytest.raises(ValueError, match=match):
        parse_domain({"t": entry})


def test_the_drafter_finds_clocks_and_times_of_day_that_are_sums():
    X = flights(n=4000)
    X["count"] = np.random.default_rng(1).integers(0, 2401, len(X))  # whole, up to 2400
    X["few"] = np.random.default_rng(2).choice([100, 230, 1015, 1230, 1745], len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X, max_categories=5)
    assert draft["arr_time"]["clock"] is True
    assert draft["dep_time"] == {"derived": {"of": ["hour", "minute", "delay"],
                                             "sum": [60, 1, 1], "clock": 2400},
                                 "read_from_data": True}
    assert "clock" not in draft["count"]
    assert "clock" not in draft["delay"]
    assert MIN_CLOCK_VALUES > 5 and "clock" not in draft["few"]


def test_the_drafter_takes_a_clock_column_as_the_source_of_a_later_one():
    X = flights(n=4000)
    X["sched"] = minutes_to_hhmm(np.random.default_rng(3).integers(0, 1440, len(X)))
    X["dep"] = minutes_to_hhmm(hhmm_to_minutes(X["sched"]) + X["delay"], wrap=0)
    X = X.drop(columns=["hour", "minute", "dep_time"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
    assert draft["sched"]["clock"] is True
    assert draft["dep"]["derived"] == {"of": ["sched", "delay"], "sum": [1, 1], "clock": 0}
    params = workload_params(draft)
    wl = QueryWorkload(**params, k=1).fit(X)
    out = wl.decode(wl.encode(X), random_state=0)
    assert is_hhmm(out["dep"].dropna()).all() and is_hhmm(out["sched"]).all()


def test_the_command_line_fits_clocks_end_to_end(tmp_path, capsys):
    X = flights(n=1500)
    data, domain, out = tmp_path / "f.csv", tmp_path / "d.json", tmp_path / "s.csv"
    X.to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["domain", str(data), "-o", str(domain)]) == 0
        drafted = json.loads(domain.read_text())
        assert drafted["arr_time"]["clock"] is True and "derived" in drafted["dep_time"]
        assert "times of day written HHMM (clocks): arr_time;" in capsys.readouterr().err
        assert main(["fit", str(data), "--domain", str(domain), "--epsilon", "1",
                     "--seed", "0", "-o", str(out)]) == 0
    rows = pd.read_csv(out)
    assert list(rows.columns) == list(X.columns)
    assert is_hhmm(rows["arr_time"].dropna()).all() and is_hhmm(rows["dep_time"].dropna()).all()
    kept = rows.dropna(subset=["delay"])
    assert np.array_equal(kept["dep_time"], minutes_to_hhmm(
        60 * kept["hour"] + kept["minute"] + kept["delay"], wrap=2400))


@pytest.mark.parametrize("share, derived", [(0.005, True), (0.03, False)])
def test_a_time_of_day_present_where_a_source_is_missing_in_few_rows_is_still_derived(
        share, derived):
    # diverted flights: an arrival time and no arrival delay (0.2% of nycflights13)
    X = flights(n=4000)
    X["sched_arr"] = minutes_to_hhmm(np.random.default_rng(4).integers(0, 1440, len(X)))
    X["arr"] = minutes_to_hhmm(hhmm_to_minutes(X["sched_arr"]) + X["delay"], wrap=2400)
    no_delay = np.flatnonzero(X["delay"].isna())[: int(share * len(X))]
    X.loc[no_delay, "arr"] = 1200.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
    assert ("derived" in draft["arr"]) is derived
    if derived:
        assert draft["arr"]["derived"] == {"of": ["sched_arr", "delay"], "sum": [1, 1],
                                           "clock": 2400}


def test_a_time_missing_where_its_sources_are_present_is_never_derived():
    X = flights(n=4000)
    X.loc[X.index[:3], "dep_time"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
    assert "derived" not in draft["dep_time"] and draft["dep_time"]["clock"] is True
