"""Privacy verification: the mechanisms actually run match the ledger, and a statistical audit.

1. Accounting. tests/test_fem.py, test_dualquery.py and test_mwem.py check
   each ledger total against the paper's formulas. Here we check the other
   half: every mechanism a fit actually runs is recorded (by wrapping it) and
   its parameters, sensitivity and count must be those the ledger charged
   for, and the sensitivity the mechanisms assume (``1 / n`` for every query
   answer) is checked by brute force over all replace-one neighbours.
2. Audit. On a tiny domain, many runs on two neighbouring datasets lower-bound
   the privacy loss that the output reveals, by Clopper-Pearson bounds on the
   probability of a distinguishing event:
   ``eps_lower = log((p_low(E | D) - delta) / p_up(E | D'))``. It must stay
   below the claimed epsilon, and the same audit must catch a deliberately
   broken mechanism (its sensitivity understated, so it uses a larger epsilon
   than it is charged for).

Persistence of private data (no real row, count or answer in a pickled
estimator) is tested in tests/test_persistence.py.
"""

import itertools
import math
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import sklearn_privsyn.dualquery as dualquery_module
import sklearn_privsyn.fem as fem_module
import sklearn_privsyn.mwem as mwem_module
from sklearn_privsyn import DQRS, FEM, MWEM, DualQuery, QueryWorkload, SepFEM
from neighbours import dqrs_coin_rho_by_brute_force
from sklearn_privsyn.privacy import (
    PrivacyLedger,
    epsilon_to_rho,
    exponential_mechanism,
    gaussian_mechanism,
)

# ---------------------------------------------------------------------- helpers


def clopper_pearson(k, n, alpha):
    """One-sided (1 - alpha) lower and upper Clopper-Pearson bounds of a binomial p."""
    low = 0.0 if k == 0 else stats.beta.ppf(alpha, k, n - k + 1)
    high = 1.0 if k == n else stats.beta.ppf(1 - alpha, k + 1, n - k)
    return low, high


def epsilon_lower_bound(k_more, k_less, n, delta=0.0, alpha=0.025):
    """Lower bound on epsilon from an event seen ``k_more`` / ``k_less`` times in ``n`` runs.

    (epsilon, delta)-DP implies ``P(E | D) <= exp(epsilon) P(E | D') + delta``
    for every event, so with probability ``>= 1 - 2 alpha``
    ``epsilon >= log((p_low(D) - delta) / p_up(D'))``.
    """
    p_low, _ = clopper_pearson(k_more, n, alpha)
    _, p_up = clopper_pearson(k_less, n, alpha)
    if p_low <= delta:
        return -math.inf
    return math.log((p_low - delta) / p_up)


def toy(n=40, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(3, size=n)
    X = pd.DataFrame({"a": a, "b": (a + rng.integers(2, size=n)) % 3,
                      "c": rng.choice(["x", "y"], size=n)})
    return X, QueryWorkload(domain={"a": 3, "b": 3, "c": ["x", "y"]}, k=2)


# ---------------------------------------------------------------------- 1. accounting


def test_every_query_answer_has_sensitivity_one_over_n():
    # all replace-one neighbours of a small table, by brute force
    X, workload = toy(n=12)
    workload.fit(X)
    records = workload.encode(X)
    n = len(records)
    base = workload.answer_codes(records)
    worst = 0.0
    for i in range(n):
        for value in itertools.product(range(3), range(3), range(2)):
            other = records.copy()
            other[i] = value
            worst = max(worst, np.abs(workload.answer_codes(other) - base).max())
    assert worst == pytest.approx(1 / n)


# Every private estimator, configured small and fast. Adding an estimator to the
# package means adding one entry here: the guarantee, ledger and replay tests below
# then cover it. ``params`` are passed on top of the workload and the solver.
ESTIMATORS = {
    "FEM": lambda **kw: FEM(samples_per_round=2, solver="brute", **kw),
    "SepFEM": lambda **kw: SepFEM(samples_per_round=2, solver="brute", **kw),
    "FEM-measure": lambda **kw: FEM(samples_per_round=2, measure_share=0.2, solver="brute",
                                    **kw),
    "DualQuery": lambda **kw: DualQuery(samples_per_round=3, solver="brute", **kw),
    "DQRS": lambda **kw: DQRS(samples_per_round=3, solver="brute", **kw),
    "DQRS-pure": lambda **kw: DQRS(samples_per_round=3, gamma=0.5, rejection_accounting="pure",
                                   solver="brute", **kw),
    "MWEM": lambda **kw: MWEM(selection_share=0.3, **kw),
}


def dqrs_coin_rho(args, est, n):
    """One coin: by brute force over neighbouring tables, or the paper's Lemma for "pure"."""
    _, _, eta, gamma, _ = args
    if est.rejection_accounting == "pure":
        return max(eta / n, eta / (gamma * n)) ** 2 / 2  # looser than the brute force
    return dqrs_coin_rho_by_brute_force(eta, gamma, n)


class Mechanism:
    """How to audit one kind of data-reading random step from its call's arguments.

    ``ledger``: the ledger entry name it must be charged under; ``runs`` and
    ``rho``: how many runs the call is and the zCDP of one (independent
    formulas); ``private``: the argument that carries data, with the bound the
    call claims on its change between neighbours (``norm`` is ``inf`` or 2).
    """

    def __init__(self, ledger, runs, rho, private, bound, norm):
        self.ledger, self.runs, self.rho = ledger, runs, rho
        self.private, self.bound, self.norm = private, bound, norm


def _em_rho(epsilon):
    return epsilon**2 / 8  # bounded range (Cesar and Rogers 2021)


# Every function through which a fit may turn private data into a random output.
MECHANISMS = {
    exponential_mechanism: Mechanism(
        "exponential_mechanism", runs=lambda a, est, n: 1,
        rho=lambda a, est, n: _em_rho(a[1]),
        private=lambda a: a[0], bound=lambda a, n: a[2], norm=np.inf),
    gaussian_mechanism: Mechanism(
        "gaussian_mechanism", runs=lambda a, est, n: 1,
        rho=lambda a, est, n: a[1] ** 2 / (2 * a[2] ** 2),
        private=lambda a: np.ravel(a[0]), bound=lambda a, n: a[1], norm=2),
    dualquery_module._draw: Mechanism(
        "exponential_mechanism", runs=lambda a, est, n: a[3],
        rho=lambda a, est, n: _em_rho(a[1]),
        private=lambda a: a[0], bound=lambda a, n: a[2], norm=np.inf),
    dualquery_module._keep: Mechanism(
        "rejection_sampling", runs=lambda a, est, n: len(a[0]),
        rho=dqrs_coin_rho,
        private=lambda a: a[1], bound=lambda a, n: 1.0 / n, norm=np.inf),
}


class Recorder:
    """Wraps a mechanism: records every call's arguments (copied) and output.

    Given ``replay`` (another Recorder's outputs), it still runs the mechanism,
    so that the random generator advances exactly as before, but returns the
    recorded output instead.
    """

    def __init__(self, func, replay=None):
        self.func, self.replay = func, replay
        self.calls, self.outputs = [], []

    def __call__(self, *args, **kwargs):
        assert not kwargs, "mechanisms are called positionally"
        self.calls.append(tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a
                                for a in args))
        out = self.func(*args)
        if self.replay is not None:
            out = self.replay.outputs[len(self.calls) - 1]
        self.outputs.append(out)
        return out


def record_mechanisms(monkeypatch, replay=None):
    """Wrap every registered mechanism wherever the package imported it."""
    recorders = {
        func: Recorder(func, None if replay is None else replay[func]) for func in MECHANISMS
    }
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "sklearn_privsyn":
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, Recorder):  # wrapped by an earlier call
                value = value.func
            if callable(value) and value in recorders:
                monkeypatch.setattr(module, attr, recorders[value])
    return recorders


def ledger_totals(est):
    frame = est.ledger_.to_frame()
    return {m: (int(g["count"].sum()), g["total_rho"].sum())
            for m, g in frame.groupby("mechanism")}


def neighbour(X, row, value):
    other = X.copy()
    other.iloc[row] = value
    return other


# ---------------------------------------------------------------------- 0. the guarantee


@pytest.mark.parametrize("conversion", ["cks", "classic"])
def test_fem_schedule_never_ends_above_the_target(conversion):
    # 2,100 (eps, delta, T) settings of FEM's schedule: T rounds at the planned
    # per-round cost, summed exactly, never exceed rho, and the epsilon reported
    # for them never exceeds the target, not even by an ulp
    from sklearn_privsyn.privacy import exponential_mechanism_rho, rho_to_epsilon

    checked = 0
    for epsilon, delta in itertools.product(np.geomspace(0.01, 10, 21),
                                            [1e-10, 1e-8, 1e-6, 1 / 48842**2, 1e-3]):
        epsilon = float(epsilon)
        rho = epsilon_to_rho(epsilon, delta, method=conversion)
        for rounds in [None, 1, 2, 3, 7, 10, 49, 100, 354, 1000, 4321]:
            est = FEM(epsilon=epsilon, rounds=rounds)
            est.rho_ = rho  # what fit sets before planning
            eps0, T = est._schedule(48842 if rounds is None else 1000, 2 * 458996)
            spent = sum(Fraction(exponential_mechanism_rho(eps0)) * T for _ in [0])
            assert spent <= Fraction(rho)
            ledger = PrivacyLedger(rho)
            ledger.charge("exponential_mechanism", exponential_mechanism_rho(eps0), T)
            assert rho_to_epsilon(ledger.rho_spent, delta, method=conversion) <= epsilon
            checked += 1
    assert checked == 21 * 5 * 11


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fits_never_spend_above_the_target(name, epsilon, seed):
    X, workload = toy(seed=seed)
    est = ESTIMATORS[name](epsilon=epsilon, workload=workload, random_state=seed).fit(X)
    exact = sum(Fraction(e.rho) * e.count for e in est.ledger_.entries)
    assert exact <= Fraction(est.rho_)
    assert est.ledger_.rho_spent <= est.rho_
    assert est.epsilon_ <= epsilon


# ---------------------------------------------------------------------- 1. accounting (cont.)


NEIGHBOURS = [(0, (2, 0, "y")), (17, (0, 2, "x"))]


def audit_ledger(make, monkeypatch):
    """Fit ``make()`` on the toy data and on two neighbours, recording every mechanism.

    Returns ``(expected, totals, worst, same_output)``:

    1. ``expected`` vs ``totals``: each call's cost from its own arguments by
       the formulas in MECHANISMS, summed per ledger entry name, and what the
       ledger holds;
    2. ``worst``: the neighbours are fitted with every mechanism's output
       replayed from the first fit, so the private argument of each call
       differs only through the changed row; ``worst`` is the largest ratio
       of that change to the bound the call claims (its ``sensitivity``, or
       ``1 / n`` for the coins);
    3. ``same_output``: whether, under that replay, the neighbours' fits return
       exactly the first fit's records, weights and ledger, i.e. the data
       reaches the output only through the recorded mechanisms.
    """
    X, workload = toy()
    n = len(X)
    first = record_mechanisms(monkeypatch)
    est = make(epsilon=1.0, workload=workload, random_state=3).fit(X)
    expected = {}
    for func, recorder in first.items():
        spec = MECHANISMS[func]
        for args in recorder.calls:
            runs = spec.runs(args, est, n)
            if runs:
                count, total = expected.get(spec.ledger, (0, 0.0))
                expected[spec.ledger] = (count + runs, total + runs * spec.rho(args, est, n))
    worst, same_output = 0.0, True
    for row, value in NEIGHBOURS:
        again = record_mechanisms(monkeypatch, replay=first)
        other = make(epsilon=1.0, workload=workload, random_state=3).fit(neighbour(X, row, value))
        for func, recorder in again.items():
            spec = MECHANISMS[func]
            assert len(recorder.calls) == len(first[func].calls)
            for args, args_d in zip(recorder.calls, first[func].calls):
                change = np.linalg.norm(
                    np.asarray(spec.private(args), float) - np.asarray(spec.private(args_d), float),
                    ord=spec.norm)
                worst = max(worst, change / spec.bound(args_d, n))
        same_output &= (np.array_equal(other.records_, est.records_)
                        and np.array_equal(other.weights_, est.weights_)
                        and other.ledger_.entries == est.ledger_.entries)
    return expected, ledger_totals(est), worst, same_output


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_data_reading_step_is_charged_and_nothing_else_reads_data(name, monkeypatch):
    expected, totals, worst, same_output = audit_ledger(ESTIMATORS[name], monkeypatch)
    assert expected and set(totals) == set(expected)
    for mechanism, (count, total) in expected.items():
        assert totals[mechanism] == (count, pytest.approx(total, rel=1e-9))
    assert worst <= 1 + 1e-12
    assert worst > 0.5  # the neighbours do move the private inputs
    assert same_output


def test_ledger_audit_catches_an_undercharged_mechanism(monkeypatch):
    # FEM charging the pure-DP-to-zCDP eps^2/2 by mistake would be safe; charging
    # half the bounded-range cost is not, and the totals disagree
    monkeypatch.setattr(fem_module, "exponential_mechanism_rho", lambda e: e * e / 16)
    expected, totals, _, _ = audit_ledger(ESTIMATORS["FEM"], monkeypatch)
    count, total = expected["exponential_mechanism"]
    assert totals["exponential_mechanism"][0] == count
    assert totals["exponential_mechanism"][1] != pytest.approx(total, rel=1e-3)


def test_ledger_audit_catches_an_understated_sensitivity(monkeypatch):
    # the estimator tells the mechanism half the true sensitivity of its scores
    import sklearn_privsyn.privacy as privacy_module

    monkeypatch.setattr(fem_module, "exponential_mechanism",
                        lambda s, e, d, r: privacy_module.exponential_mechanism(s, e, d / 2, r))
    _, _, worst, _ = audit_ledger(ESTIMATORS["FEM"], monkeypatch)
    assert worst == pytest.approx(2.0)


def test_ledger_audit_catches_an_unaccounted_read(monkeypatch):
    # output that also depends on the data outside the mechanisms (here: how many
    # records FEM keeps, from the true data) is caught by the replay
    real = fem_module.FEM._fit_records

    def leaky(self, records, rng):
        synthetic, weights = real(self, records, rng)
        keep = 1 + int(records[:, 0].sum()) % 3
        return synthetic[:keep], weights[:keep]

    monkeypatch.setattr(fem_module.FEM, "_fit_records", leaky)
    _, _, _, same_output = audit_ledger(ESTIMATORS["FEM"], monkeypatch)
    assert not same_output


# ---------------------------------------------------------------------- 2. audit


def understated_sensitivity(factor):
    """A broken exponential mechanism: it divides the sensitivity it is told by ``factor``,
    so it runs with ``factor`` times the epsilon that is charged."""

    def broken(scores, epsilon, sensitivity, rng):
        return exponential_mechanism(scores, epsilon, sensitivity / factor, rng)

    return broken


def audit_exponential_mechanism(mechanism, epsilon, trials, seed=0):
    """Candidate 0 of 20: all scores 0 on D; on the neighbour D' candidate 0 gains
    Delta and every other loses Delta (each score moves by the sensitivity
    Delta = 1/10). The event "candidate 0 is picked" has probability 1/20 on D
    and e^(eps/2) / (e^(eps/2) + 19 e^(-eps/2)) on D'."""
    delta_s = 0.1
    scores_d = np.zeros(20)
    scores_d2 = np.full(20, -delta_s)
    scores_d2[0] = delta_s
    rng = np.random.default_rng(seed)
    k_d = sum(mechanism(scores_d, epsilon, delta_s, rng) == 0 for _ in range(trials))
    k_d2 = sum(mechanism(scores_d2, epsilon, delta_s, rng) == 0 for _ in range(trials))
    return epsilon_lower_bound(k_d2, k_d, trials)


def test_exponential_mechanism_audit_passes_and_catches_a_broken_mechanism():
    claimed = 2.0
    honest = audit_exponential_mechanism(exponential_mechanism, claimed, 6000)
    # the event's true loss is log(20 e / (e + 19 / e)) = 1.72
    assert 1.3 < honest < claimed
    broken = audit_exponential_mechanism(understated_sensitivity(2), claimed, 6000)
    assert broken > claimed


AUDIT_N = 10
AUDIT_S = 10


def fem_audit_counts(n_runs, claimed, first_seed=0):
    """Runs of FEM (one round) on D (ten zeros) and D' (one row replaced by a one).

    One binary column and its 1-way marginal: queries q0 = [a=0], q1 = [a=1] and
    their negations. With an almost noiseless data player (noise_scale=1e-9,
    which is post-processing), round 0's records all take the value favoured by
    the uniformly drawn first query. When that value is 0, every score is 0 on
    D, and on D' the queries favouring 0 score -1/n and the others +1/n, so the
    mechanism picks a query favouring 0 with probability 1/2 on D and
    sigmoid(-eps0) on D'. Round 1 then outputs ten zeros if it did (else each
    record is 0 or 1 by a fair tie-break). The event E: round 0 and round 1
    are all zeros.
    """
    workload = QueryWorkload(domain={"a": 2}, k=1)
    D = pd.DataFrame({"a": [0] * AUDIT_N})
    D2 = pd.DataFrame({"a": [1] + [0] * (AUDIT_N - 1)})
    est = FEM(epsilon=claimed, workload=workload, rounds=1, samples_per_round=AUDIT_S,
              keep=1.0, noise_scale=1e-9, solver="brute")
    counts = []
    for data in (D, D2):
        k = 0
        for seed in range(first_seed, first_seed + n_runs):
            records = est.set_params(random_state=seed).fit(data).records_.ravel()
            assert len(records) == 2 * AUDIT_S
            k += int(not records.any())
        counts.append(k)
    return counts


def run_fem_audit(n_runs, monkeypatch):
    claimed = 2.0
    delta = 1 / AUDIT_N**2
    k_d, k_d2 = fem_audit_counts(n_runs, claimed)
    honest = epsilon_lower_bound(k_d, k_d2, n_runs, delta)
    assert honest < claimed
    monkeypatch.setattr(fem_module, "exponential_mechanism", understated_sensitivity(4))
    k_d, k_d2 = fem_audit_counts(n_runs, claimed, first_seed=10**6)
    broken = epsilon_lower_bound(k_d, k_d2, n_runs, delta)
    assert broken > claimed
    return honest, broken


def test_fem_end_to_end_audit(monkeypatch):
    # 4 x 400 fits, about 25 s. With claimed epsilon 2 (delta = 1/n^2 = 0.01)
    # FEM's single round runs at eps0 = 1.56: the event's true loss is
    # log(0.53 / (sigmoid(-1.56) + sigmoid(1.56) / 1024)) = 1.06. Understating the
    # sensitivity 4x makes it 5.2, which 400 runs bound above 2 with probability
    # above 0.99 (checked by simulating the binomial counts).
    honest, broken = run_fem_audit(400, monkeypatch)
    assert 0.0 < honest


@pytest.mark.slow
def test_fem_end_to_end_audit_many_runs(monkeypatch, request):
    # about 100 s: runs only when selected with -m slow
    if "slow" not in (request.config.getoption("markexpr") or "").replace("not slow", ""):
        pytest.skip("slow audit (4 x 2000 fits); run with -m slow")
    honest, broken = run_fem_audit(2000, monkeypatch)
    assert 0.5 < honest < 1.06 and broken > 3.0
