"""Privacy accounting in zero-concentrated differential privacy (zCDP).

Every estimator in this package spends its budget through a
:class:`PrivacyLedger` in units of zCDP's ``rho`` (Bun & Steinke 2016):
mechanisms compose by adding their ``rho``, and the total is converted to an
``(epsilon, delta)`` guarantee only at the end.

Conversions
    ``method="cks"`` is the exact conversion of Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020): a
    ``rho``-zCDP mechanism is ``(epsilon, delta)``-DP for

    .. math::

        \\delta = \\inf_{\\alpha > 1} \\frac{\\exp((\\alpha - 1)(\\alpha\\rho -
        \\epsilon))}{\\alpha - 1} \\left(1 - \\frac{1}{\\alpha}\\right)^\\alpha .

    ``method="classic"`` is the bound the paper uses (Bun & Steinke 2016),
    ``epsilon = rho + 2 sqrt(rho ln(1/delta))``. The CKS conversion allows more
    ``rho`` for the same ``(epsilon, delta)``.

Mechanisms
    The exponential mechanism with parameter ``epsilon`` is
    ``epsilon``-bounded-range and hence ``epsilon**2 / 8``-zCDP (Cesar & Rogers
    2021); the Gaussian mechanism with noise ``sigma`` on a query of L2
    sensitivity ``Delta`` is ``Delta**2 / (2 sigma**2)``-zCDP.
"""

import math
import numbers
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from scipy import optimize

from ._random import make_generator
from .exceptions import BudgetExceededError

__all__ = [
    "LedgerEntry",
    "PrivacyLedger",
    "cks_delta",
    "compose",
    "epsilon_to_rho",
    "exponential_mechanism",
    "exponential_mechanism_epsilon",
    "exponential_mechanism_rho",
    "gaussian_mechanism",
    "gaussian_mechanism_rho",
    "gaussian_sigma",
    "rho_to_epsilon",
    "split_budget",
    "worst_query_mechanism",
]

_METHODS = ("cks", "classic")

# Relative tolerance of the root finders.
_RTOL = 4 * np.finfo(float).eps
# Range of rho over which the CKS conversion is evaluated without overflow.
_RHO_MIN, _RHO_MAX = 1e-300, 1e100


# --------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------


def _check_real(value, name, *, low=None, low_inclusive=True, high=None,
                high_inclusive=False, allow_inf=False):
    """Return ``value`` as a float after checking its type and range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {value!r} of type "
            f"{type(value).__name__}."
        )
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}.")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}, got {value!r}.")
    return value


def _check_count(count):
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral):
        raise TypeError(
            f"count must be a positive integer, got {count!r} of type "
            f"{type(count).__name__}."
        )
    count = int(count)
    if count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}.")
    return count


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")


def _check_delta(delta):
    return _check_real(delta, "delta", low=0.0, low_inclusive=False, high=1.0)


# --------------------------------------------------------------------------
# Conversions between zCDP and (epsilon, delta)-DP
# --------------------------------------------------------------------------


def _softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


def _cks_log_delta(rho, epsilon):
    """Natural log of the CKS delta; ``rho``, ``epsilon`` validated, >= 0.

    With ``s = alpha - 1 = exp(t)`` the log of the CKS objective is

        f(s) = s((1 + s) rho - eps) - s log1p(1/s) - log1p(s),

    which is strictly convex in ``s`` (``f'' = 2 rho + 1/(s(s+1))``) with
    ``f(0+) = 0`` and derivative ``g(s) = (1 + 2s) rho - eps - log1p(1/s)``.
    The minimiser is the root of ``g``; it is bracketed in ``t = log s`` by

    * ``t_lo = min(0, eps - 3 rho) - 1``: there ``s <= 1`` and
      ``g < 3 rho - eps + t_lo <= -1``;
    * ``t_hi = log max(1, (eps + 1) / rho)``: there
      ``g >= rho + 2 s rho - eps - 1/s >= rho + eps + 1 > 0`` (twice the
      margin needed, so that it survives rounding when ``eps`` is huge).

    Any ``alpha`` gives a valid bound, so an inexact root only makes the
    returned delta larger (never unsafe). Outside ``[1e-300, 1e100]`` the
    computation would overflow or converge slowly; below, ``rho`` is rounded
    up to 1e-300 (delta increases with ``rho``), above, delta is reported as
    1; both are conservative.
    """
    if rho > _RHO_MAX:
        return 0.0
    if rho == 0.0 or math.isinf(epsilon):
        return -math.inf
    rho = max(rho, _RHO_MIN)
    log_rho = math.log(rho)

    def g(t):  # 2 exp(t) rho written so that it cannot overflow in the bracket
        return rho + 2.0 * math.exp(t + log_rho) - epsilon - _softplus(-t)

    t_lo = min(0.0, epsilon - 3.0 * rho) - 1.0
    t_hi = max(0.0, math.log1p(epsilon) - log_rho)
    g_lo, g_hi = g(t_lo), g(t_hi)
    if g_lo >= 0.0:  # only through rounding; any alpha gives a valid bound
        t = t_lo
    elif g_hi <= 0.0:
        t = t_hi
    else:
        t = float(optimize.brentq(g, t_lo, t_hi, xtol=1e-13, rtol=_RTOL, maxiter=2000))
    if t > 700.0:
        # Then eps >= 2 rho exp(700) > 1e4 and delta <= exp(-(eps - rho)^2 / (4 rho)),
        # which underflows.
        return -math.inf
    s = math.exp(t)
    log_delta = s * ((1.0 + s) * rho - epsilon) - s * _softplus(-t) - _softplus(t)
    return min(0.0, log_delta)


def cks_delta(rho, epsilon):
    """Delta at which ``rho``-zCDP implies ``(epsilon, delta)``-DP, by the CKS conversion.

    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
    Privacy" (NeurIPS 2020), Corollary 13:
    ``delta = inf_{alpha > 1} exp((alpha-1)(alpha rho - eps)) / (alpha-1) *
    (1 - 1/alpha)**alpha``. The objective is strictly convex in ``alpha``
    (in log form); the infimum is found as the root of its derivative in
    ``log(alpha - 1)``, and the result is capped at 1.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``>= 0`` (above ``1e100`` the result is 1).
    epsilon : float
        Target epsilon, ``>= 0`` (``inf`` gives 0).

    Returns
    -------
    delta : float
        In ``[0, 1]``; 0 when ``rho == 0``.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import cks_delta
    >>> round(cks_delta(0.5, 5.0), 8)
    2.9e-06
    >>> cks_delta(0.0, 1.0)
    0.0
    """
    rho = _check_real(rho, "rho", low=0.0, allow_inf=True)
    epsilon = _check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
    return math.exp(_cks_log_delta(rho, epsilon))


def _classic_epsilon(rho, log_inv_delta):
    return rho + 2.0 * math.sqrt(rho) * math.sqrt(log_inv_delta)


def _classic_rho(epsilon, log_inv_delta):
    # (sqrt(L + eps) - sqrt(L))**2, written without cancellation.
    root = epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))
    return root * root


def _step_to_safe(meets, x, safe):
    """The boundary point of ``meets`` nearest ``x``, on the side where it holds.

    ``meets`` is monotone along the line through ``x`` and ``safe`` and
    ``meets(safe)`` is true. Used to settle a root found by a solver to
    floating-point precision: if ``meets(x)`` fails, the result is the
    nearest point toward ``safe`` where it holds (so the conversion holds as
    computed); if it holds, the result moves away from ``safe`` as long as it
    keeps holding (so the conversion is as tight as it can be certified).
    """
    toward = 1.0 if safe > x else -1.0
    step = _RTOL * max(abs(x), 1e-300)
    if meets(x):
        good, bad = x, None
        while True:  # gallop away from safe while meets holds
            cand = x - toward * step
            if not meets(cand):
                bad = cand
                break
            good = cand
            step *= 2.0
            if step > abs(x) * 1e-6:  # far beyond any rounding error: stop
                return good
    else:
        bad, good = x, safe
        while True:  # gallop toward safe, then bisect
            cand = x + toward * step
            if (cand - safe) * toward >= 0:
                break
            if meets(cand):
                good = cand
                break
            bad = cand
            step *= 2.0
    while True:
        mid = 0.5 * bad + 0.5 * good
        if mid == bad or mid == good:
            return good
        if meets(mid):
            good = mid
        else:
            bad = mid


def rho_to_epsilon(rho, delta, method="cks"):
    """Epsilon at which a ``rho``-zCDP mechanism is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``>= 0`` (``inf`` gives ``inf``).
    delta : float
        Target delta, ``0 < delta < 1``.
    method : {"cks", "classic"}, default="cks"
        ``"cks"``: the smallest epsilon with ``cks_delta(rho, epsilon) <=
        delta`` (Canonne, Kamath & Steinke 2020), rounded up so that this
        holds in floating point (for ``rho > 1e100``, outside the range where
        it is evaluated, the classic value). ``"classic"``: ``rho + 2 sqrt(rho
        ln(1/delta))`` (Bun & Steinke 2016), the paper's conversion.

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import rho_to_epsilon
    >>> round(rho_to_epsilon(0.01, 1e-6, method="classic"), 6)
    0.753384
    >>> round(rho_to_epsilon(0.01, 1e-6), 6)
    0.621693
    """
    rho = _check_real(rho, "rho", low=0.0, allow_inf=True)
    delta = _check_delta(delta)
    _check_method(method)
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    log_inv_delta = -math.log(delta)
    if method == "classic" or rho > _RHO_MAX:  # classic: valid, and finite
        return _classic_epsilon(rho, log_inv_delta)

    log_delta = math.log(delta)

    def meets(eps):
        return math.exp(_cks_log_delta(rho, eps)) <= delta

    def excess(eps):  # strictly decreasing in eps
        return _cks_log_delta(rho, eps) - log_delta

    if meets(0.0):
        return 0.0
    hi = _classic_epsilon(rho, log_inv_delta)
    while not meets(hi):
        hi = 2.0 * hi + 1.0
    if excess(0.0) <= 0.0 or excess(hi) >= 0.0:  # rounding at the ends
        return float(_step_to_safe(meets, 0.0, hi))
    eps = float(optimize.brentq(excess, 0.0, hi, xtol=1e-300, rtol=_RTOL, maxiter=2000))
    return float(_step_to_safe(meets, eps, hi))


def epsilon_to_rho(epsilon, delta, method="cks"):
    """Largest ``rho`` such that ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, ``> 0`` and finite.
    delta : float
        Target delta, ``0 < delta < 1``.
    method : {"cks", "classic"}, default="cks"
        ``"classic"`` inverts ``epsilon = rho + 2 sqrt(rho ln(1/delta))`` in
        closed form, ``rho = (sqrt(ln(1/delta) + epsilon) -
        sqrt(ln(1/delta)))**2``. ``"cks"`` finds the ``rho`` with
        ``cks_delta(rho, epsilon) = delta`` by root finding on ``log(rho)``.
        Either way the result is rounded down so that converting it back
        meets the target in floating point (``cks_delta(rho, epsilon) <=
        delta``, resp. ``rho_to_epsilon(rho, delta, "classic") <= epsilon``).

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import epsilon_to_rho
    >>> delta = 1 / 48842**2
    >>> round(epsilon_to_rho(1.0, delta, method="classic"), 6)
    0.011317
    >>> round(epsilon_to_rho(1.0, delta), 6)
    0.01427
    """
    epsilon = _check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = _check_delta(delta)
    _check_method(method)
    log_inv_delta = -math.log(delta)
    classic = _classic_rho(epsilon, log_inv_delta)
    while _classic_epsilon(classic, log_inv_delta) > epsilon:
        classic = min(float(np.nextafter(classic, 0.0)), classic * (1.0 - 1e-15))
    if method == "classic" or classic > _RHO_MAX / 1e3:  # classic: valid, finite
        return classic

    def meets(rho):
        return math.exp(_cks_log_delta(rho, epsilon)) <= delta

    log_delta = math.log(delta)

    def excess(log_rho):  # strictly increasing in rho
        return _cks_log_delta(math.exp(log_rho), epsilon) - log_delta

    lo = math.log(max(classic, _RHO_MIN))
    while not meets(math.exp(lo)):
        lo -= 1.0
        if lo < math.log(_RHO_MIN):
            return 0.0  # cannot certify any positive rho in floating point
    hi = lo + 1.0
    while meets(math.exp(hi)):
        lo, hi = hi, hi + 1.0
    if excess(lo) >= 0.0 or excess(hi) <= 0.0:  # rounding at the ends
        return float(_step_to_safe(meets, math.exp(hi), math.exp(lo)))
    log_rho = float(optimize.brentq(excess, lo, hi, xtol=1e-300, rtol=_RTOL,
                                    maxiter=2000))
    return float(_step_to_safe(meets, math.exp(log_rho), math.exp(lo)))


# --------------------------------------------------------------------------
# Mechanisms
# --------------------------------------------------------------------------


def exponential_mechanism_rho(epsilon):
    """zCDP cost of the exponential mechanism with parameter ``epsilon``.

    An ``epsilon``-DP exponential mechanism is ``epsilon``-bounded-range and
    therefore ``epsilon**2 / 8``-zCDP: Cesar & Rogers, "Bounding,
    Concentrating, and Truncating: Unifying Privacy Loss Composition for Data
    Analytics" (ALT 2021). The paper charged ``epsilon**2 / 2`` (the bound
    for any ``epsilon``-DP mechanism), four times as much.

    Parameters
    ----------
    epsilon : float
        The mechanism's parameter as in :func:`exponential_mechanism`,
        ``>= 0`` and finite.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import exponential_mechanism_rho
    >>> exponential_mechanism_rho(0.2)
    0.005000000000000001
    """
    epsilon = _check_real(epsilon, "epsilon", low=0.0)
    return epsilon * epsilon / 8.0


def exponential_mechanism_epsilon(rho):
    """Largest exponential-mechanism parameter that costs at most ``rho`` zCDP.

    The inverse of :func:`exponential_mechanism_rho`, ``sqrt(8 rho)``, rounded
    down where needed so that ``exponential_mechanism_rho(result) <= rho``
    holds in floating point.

    Parameters
    ----------
    rho : float
        ``>= 0`` and finite.

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import exponential_mechanism_epsilon
    >>> exponential_mechanism_epsilon(0.005)
    0.19999999999999998
    """
    rho = _check_real(rho, "rho", low=0.0)
    epsilon = math.sqrt(8.0 * rho)
    while epsilon * epsilon / 8.0 > rho:
        epsilon = math.nextafter(epsilon, 0.0)
    return epsilon


def _check_mechanism(scores, name, epsilon, sensitivity, rng):
    """Validated arguments of an exponential mechanism: 1-d finite scores, parameters, rng."""
    epsilon = _check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    sensitivity = _check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
    rng = make_generator(rng, "rng")
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array, got shape {scores.shape}.")
    if not np.all(np.isfinite(scores)):
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise ValueError(f"{name} must be finite; {name}[{bad}] = {scores[bad]!r}.")
    return scores, epsilon, sensitivity, rng


def exponential_mechanism(scores, epsilon, sensitivity, rng):
    """Draw an index with probability proportional to ``exp(eps * score / (2 Delta))``.

    Sampling uses the Gumbel-max trick: the argmax of the scaled scores plus
    independent standard Gumbel noise has exactly the softmax distribution.
    The scores are shifted by their maximum before scaling, so there is no
    overflow however large ``epsilon * scores / sensitivity`` is; candidates
    whose probability underflows are never chosen.

    The cost is ``exponential_mechanism_rho(epsilon)`` zCDP when every score
    has sensitivity at most ``sensitivity``.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite utility of each candidate.
    epsilon : float
        Privacy parameter, ``> 0`` and finite.
    sensitivity : float
        Sensitivity of the scores, ``> 0`` and finite.
    rng : numpy.random.Generator, RandomState, int or None
        Source of randomness, normalised by the package's one rule
        (:func:`sklearn_privsyn._random.make_generator`).

    Returns
    -------
    index : int

    Examples
    --------
    >>> from sklearn_privsyn.privacy import exponential_mechanism
    >>> exponential_mechanism([0.1, 0.9, 0.2], epsilon=1e3, sensitivity=0.01, rng=0)
    1
    """
    scores, epsilon, sensitivity, rng = _check_mechanism(scores, "scores", epsilon,
                                                         sensitivity, rng)
    scale = epsilon / (2.0 * sensitivity)  # may be inf for extreme inputs
    # In place: workloads reach tens of millions of candidates, so the logits
    # and the noise are the only temporaries (16 bytes a candidate).
    with np.errstate(over="ignore", invalid="ignore"):
        logits = scores - scores.max()  # <= 0; -inf if the range overflows
        if math.isinf(scale):
            # exp(inf * gap) is 1 at the maxima and 0 elsewhere (no inf * 0 = nan)
            logits = np.where(logits == 0.0, 0.0, -np.inf)
        else:
            logits *= scale
    noise = rng.gumbel(size=scores.size)
    noise += logits
    return int(np.argmax(noise))


def worst_query_mechanism(errors, epsilon, sensitivity, rng):
    """The exponential mechanism over ``Q`` queries and their negations, scored by error.

    Candidate ``i < Q`` is query ``i`` with score ``errors[i]``; candidate
    ``Q + i`` is its negation with score ``-errors[i]`` (``errors`` is true
    minus synthetic answers, so a negation's error is the opposite). The draw
    has exactly the distribution of :func:`exponential_mechanism` on the
    ``2Q`` scores ``[errors, -errors]`` and the same cost,
    ``exponential_mechanism_rho(epsilon)`` zCDP when each error has
    sensitivity at most ``sensitivity``. It is sampled in two steps: query
    ``i`` with probability proportional to ``exp(s e_i) + exp(-s e_i)``
    (``s = epsilon / (2 sensitivity)``, inverse CDF on ``Q`` weights), then
    the sign, positive with probability ``1 / (1 + exp(-2 s e_i))``; this
    touches ``Q`` numbers instead of drawing ``2Q`` Gumbel variables.

    Parameters
    ----------
    errors : array-like of shape (Q,)
        Finite score of each query.
    epsilon, sensitivity, rng
        As in :func:`exponential_mechanism` (``sensitivity`` bounds each error's change).

    Returns
    -------
    index : int
        In ``0 .. 2Q - 1``; ``index >= Q`` is the negation of query ``index - Q``.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import worst_query_mechanism
    >>> worst_query_mechanism([0.0, -0.4, 0.1], epsilon=1e3, sensitivity=0.01, rng=0)
    4
    """
    errors, epsilon, sensitivity, rng = _check_mechanism(errors, "errors", epsilon,
                                                         sensitivity, rng)
    n_queries = errors.size
    scale = epsilon / (2.0 * sensitivity)
    size = np.abs(errors)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        gap = size - size.max()  # <= 0
        if math.isinf(scale):
            # all the mass on the largest |error|; the sign follows the error
            weights = (gap == 0.0).astype(float)
            p_positive = np.where(errors > 0, 1.0, np.where(errors < 0, 0.0, 0.5))
        else:
            # (exp(s e) + exp(-s e)) / exp(s max|e|) = exp(s (|e| - max|e|)) (1 + exp(-2 s |e|)),
            # between 1 and 2 at the largest |e|: nothing overflows
            gap *= scale
            weights = np.exp(gap, out=gap)
            size *= -scale  # then doubled: -2 * scale alone may overflow, and 0 * inf is nan
            size *= 2.0
            weights *= 1.0 + np.exp(size, out=size)
            p_positive = None
    cumulative = np.cumsum(weights)
    query = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    query = min(query, n_queries - 1)
    if p_positive is None:
        with np.errstate(over="ignore"):
            positive = 1.0 / (1.0 + math.exp(min(-scale * errors[query] * 2.0, 700.0)))
    else:
        positive = p_positive[query]
    return query if rng.random() < positive else n_queries + query


def gaussian_mechanism_rho(sensitivity, sigma):
    """zCDP cost of Gaussian noise: ``sensitivity**2 / (2 sigma**2)``.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the released vector, ``>= 0`` and finite.
    sigma : float
        Standard deviation of the noise, ``> 0`` and finite.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import gaussian_mechanism_rho
    >>> gaussian_mechanism_rho(1.0, 5.0)
    0.02
    """
    sensitivity = _check_real(sensitivity, "sensitivity", low=0.0)
    sigma = _check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    return sensitivity * sensitivity / (2.0 * sigma * sigma)


def gaussian_sigma(sensitivity, rho):
    """Smallest noise scale whose Gaussian mechanism costs at most ``rho`` zCDP.

    The inverse of :func:`gaussian_mechanism_rho`, ``sensitivity / sqrt(2
    rho)``, rounded up where needed so that ``gaussian_mechanism_rho(
    sensitivity, result) <= rho`` holds in floating point.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity, ``>= 0`` and finite.
    rho : float
        ``> 0`` and finite.

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import gaussian_sigma
    >>> gaussian_sigma(1.0, 0.02)
    5.0
    """
    sensitivity = _check_real(sensitivity, "sensitivity", low=0.0)
    rho = _check_real(rho, "rho", low=0.0, low_inclusive=False)
    sigma = sensitivity / math.sqrt(2.0 * rho)
    if sensitivity == 0.0:
        return sigma
    while sensitivity * sensitivity / (2.0 * sigma * sigma) > rho:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def gaussian_mechanism(values, sensitivity, sigma, rng):
    """Add i.i.d. ``N(0, sigma**2)`` noise to ``values``.

    The cost is ``gaussian_mechanism_rho(sensitivity, sigma)`` zCDP when the
    L2 sensitivity of ``values`` is at most ``sensitivity``.

    Parameters
    ----------
    values : array-like
        Finite true answers (any shape).
    sensitivity : float
        L2 sensitivity of ``values``, ``>= 0`` and finite (validated and
        documented here; the noise depends on ``sigma`` only).
    sigma : float
        Standard deviation of the noise, ``> 0`` and finite.
    rng : numpy.random.Generator, RandomState, int or None
        Source of randomness, normalised by the package's one rule
        (:func:`sklearn_privsyn._random.make_generator`).

    Returns
    -------
    noisy : ndarray of float, same shape as ``values``

    Examples
    --------
    >>> from sklearn_privsyn.privacy import gaussian_mechanism
    >>> gaussian_mechanism([0.5, 0.25], sensitivity=0.01, sigma=0.1, rng=0).shape
    (2,)
    """
    _check_real(sensitivity, "sensitivity", low=0.0)
    sigma = _check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    rng = make_generator(rng, "rng")
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError("values must be finite; got NaN or infinite entries.")
    return values + rng.normal(0.0, sigma, size=values.shape)


# --------------------------------------------------------------------------
# Composition and budget plans
# --------------------------------------------------------------------------


def _exact_total(charges):
    """``sum(rho * count)`` in exact rational arithmetic (floats are dyadic rationals)."""
    return sum((Fraction(rho) * count for rho, count in charges), Fraction(0))


def _round_up(value):
    """The smallest float ``>= value`` (a rational)."""
    out = float(value)
    if Fraction(out) < value:
        out = math.nextafter(out, math.inf)
    return out


def compose(charges):
    """Total zCDP of ``(rho, count)`` charges, ``sum(rho * count)``, rounded up.

    zCDP composes by addition. The sum is computed exactly (every float is a
    rational number) and rounded up to the next float, so it is never below
    the true total whatever the order or the number of charges, and, for a
    float ``budget``, ``compose(charges) <= budget`` holds exactly when the
    true total is within the budget. :class:`PrivacyLedger` adds its
    charges the same way.

    Parameters
    ----------
    charges : iterable of (float, int)
        Cost of one run and number of runs.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from sklearn_privsyn.privacy import compose
    >>> compose([(0.25, 2), (0.125, 4)])
    1.0
    >>> compose([(0.1 / 7, 7)]) > 0.1  # seven sevenths of 0.1 add up to more
    True
    """
    return _round_up(_exact_total(charges))


def split_budget(rho, counts, shares=None):
    """Per-run costs for parts of a plan whose total never exceeds ``rho``.

    Part ``i`` is a mechanism run ``counts[i]`` times at the same cost; it
    gets the share ``shares[i]`` of ``rho`` (equal shares by default), so
    its per-run cost is about ``rho * shares[i] / counts[i]``. The costs are
    then rounded down, together, until ``compose(zip(costs, counts)) <=
    rho``: their exact sum is within the budget, so the plan never asks the
    ledger for more than it holds, by any rounding. Turn a cost into a mechanism's
    parameter with :func:`exponential_mechanism_epsilon` or
    :func:`gaussian_sigma`, which round on the safe side too.

    Parameters
    ----------
    rho : float
        Budget to split, ``>= 0`` and finite.
    counts : sequence of int
        Runs of each part, each ``>= 1``.
    shares : sequence of float, default=None
        Non-negative weights of the parts (normalised to sum to one);
        ``None`` gives every part the same share.

    Returns
    -------
    costs : tuple of float
        One per-run cost per part.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import compose, split_budget
    >>> costs = split_budget(0.1, [3])  # three rounds of a tenth
    >>> costs[0] * 3 <= 0.1
    True
    >>> sel, meas = split_budget(0.1, [10, 10], shares=[0.3, 0.7])
    >>> compose([(sel, 10), (meas, 10)]) <= 0.1
    True
    """
    rho = _check_real(rho, "rho", low=0.0)
    counts = [_check_count(c) for c in counts]
    if not counts:
        raise ValueError("counts must name at least one part.")
    if shares is None:
        shares = [1.0] * len(counts)
    shares = [_check_real(w, "shares", low=0.0) for w in shares]
    if len(shares) != len(counts):
        raise ValueError(
            f"shares has {len(shares)} entries but counts has {len(counts)}."
        )
    total_share = math.fsum(shares)
    if total_share <= 0.0:
        raise ValueError("shares must not all be zero.")
    costs = [rho * (w / total_share) / c for w, c in zip(shares, counts)]
    shave = 1.0
    while compose(zip(costs, counts)) > rho:
        # a few ulps at a time: the first pass is off by rounding only
        shave *= 1.0 - 4.0 * np.finfo(float).eps
        costs = [rho * (w / total_share) / c * shave for w, c in zip(shares, counts)]
    return tuple(costs)


# --------------------------------------------------------------------------
# The ledger
# --------------------------------------------------------------------------


class LedgerEntry(NamedTuple):
    """``count`` charges of ``rho`` each by the mechanism named ``mechanism``."""

    mechanism: str
    rho: float
    count: int


class PrivacyLedger:
    """Running total of zCDP spent, which refuses to overspend.

    Charges compose by addition (zCDP composition). Charges of the same
    ``rho`` by the same mechanism are aggregated into one :class:`LedgerEntry`;
    entries keep the order in which they first appeared.

    Parameters
    ----------
    rho_budget : float, default=np.inf
        Total zCDP budget, ``>= 0``; ``inf`` records without a limit.

    Notes
    -----
    A charge is refused, with nothing recorded, when the new total
    (:func:`compose` of every entry) would exceed ``rho_budget``, by any
    amount: there is no slack for rounding. Plans that split the budget
    into equal parts should use :func:`split_budget`, whose parts fit by
    construction (``T`` charges of ``rho_budget / T`` can sum to a few ulps
    more than the budget, and are refused). :attr:`rho_spent` and
    :meth:`epsilon` report the amount actually charged, never the budget.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import PrivacyLedger
    >>> ledger = PrivacyLedger(rho_budget=0.1)
    >>> for _ in range(10):
    ...     ledger.charge("exponential", 0.01)
    >>> ledger.entries
    (LedgerEntry(mechanism='exponential', rho=0.01, count=10),)
    >>> ledger.can_afford(1e-6)
    False
    >>> ledger.rho_spent
    0.1
    >>> round(ledger.epsilon(1e-6), 4)
    2.1419
    """

    def __init__(self, rho_budget=np.inf):
        self._rho_budget = _check_real(rho_budget, "rho_budget", low=0.0,
                                       allow_inf=True)
        self._counts = {}  # (mechanism, rho) -> count, insertion-ordered
        self._exact_spent = Fraction(0)  # the true total; rho_spent rounds it up
        self._rho_spent = 0.0

    @property
    def rho_budget(self):
        """Total zCDP budget (float, possibly ``inf``)."""
        return self._rho_budget

    @property
    def rho_spent(self):
        """zCDP charged so far: the exact sum of the charges, rounded up (float)."""
        return self._rho_spent

    @property
    def rho_remaining(self):
        """The largest single charge the ledger still accepts (about ``rho_budget - rho_spent``).

        Rounded down where needed, so ``can_afford(rho_remaining)`` always holds.
        """
        if math.isinf(self._rho_budget):
            return math.inf
        remaining = max(0.0, float(Fraction(self._rho_budget) - self._exact_spent))
        while remaining > 0.0 and not self.can_afford(remaining):
            remaining = math.nextafter(remaining, 0.0)
        return remaining

    @property
    def entries(self):
        """Tuple of :class:`LedgerEntry`, in order of first charge."""
        return tuple(LedgerEntry(m, r, c) for (m, r), c in self._counts.items())

    def _total_with(self, rho, count):
        return self._exact_spent + _exact_total([(rho, count)])

    def _fits(self, total):
        return math.isinf(self._rho_budget) or total <= Fraction(self._rho_budget)

    def can_afford(self, rho, count=1):
        """Whether ``count`` charges of ``rho`` fit in the remaining budget.

        Parameters
        ----------
        rho : float
            Cost of one charge, ``>= 0`` and finite.
        count : int, default=1
            Number of charges, ``>= 1``.

        Returns
        -------
        affordable : bool
        """
        rho = _check_real(rho, "rho", low=0.0)
        count = _check_count(count)
        return self._fits(self._total_with(rho, count))

    def charge(self, mechanism, rho, count=1):
        """Record ``count`` runs of ``mechanism`` costing ``rho`` each.

        Parameters
        ----------
        mechanism : str
            Name of the mechanism, e.g. ``"exponential"``.
        rho : float
            zCDP cost of one run, ``>= 0`` and finite.
        count : int, default=1
            Number of runs, ``>= 1``.

        Raises
        ------
        BudgetExceededError
            If the exact total would exceed the budget by any amount; nothing
            is recorded.
        """
        if not isinstance(mechanism, str) or not mechanism:
            raise TypeError(
                f"mechanism must be a non-empty string, got {mechanism!r}."
            )
        rho = _check_real(rho, "rho", low=0.0)
        count = _check_count(count)
        total = self._total_with(rho, count)
        if not self._fits(total):
            raise BudgetExceededError(
                f"charging {count} x rho={rho!r} for {mechanism!r} would spend "
                f"rho={_round_up(total)!r}, more than the budget rho_budget="
                f"{self._rho_budget!r} (already spent {self._rho_spent!r})."
            )
        key = (mechanism, rho)
        self._counts[key] = self._counts.get(key, 0) + count
        self._exact_spent = total
        self._rho_spent = _round_up(total)

    def epsilon(self, delta, method="cks"):
        """Epsilon spent so far at ``delta``: ``rho_to_epsilon(rho_spent, delta, method)``.

        Parameters
        ----------
        delta : float
            ``0 < delta < 1``.
        method : {"cks", "classic"}, default="cks"
            See :func:`rho_to_epsilon`.

        Returns
        -------
        epsilon : float
        """
        return rho_to_epsilon(self._rho_spent, delta, method=method)

    def to_frame(self):
        """The entries as a DataFrame.

        Returns
        -------
        frame : pandas.DataFrame
            Columns ``mechanism``, ``rho``, ``count`` and ``total_rho``
            (``rho * count``), one row per entry.
        """
        import pandas as pd

        entries = self.entries
        frame = pd.DataFrame(
            {
                "mechanism": pd.Series([e.mechanism for e in entries], dtype="str"),
                "rho": np.array([e.rho for e in entries], dtype=float),
                "count": np.array([e.count for e in entries], dtype=np.int64),
            }
        )
        frame["total_rho"] = frame["rho"] * frame["count"]
        return frame

    def __repr__(self):
        parts = ", ".join(
            f"{m}: {c} x {r:.6g}" for (m, r), c in self._counts.items()
        )
        return (
            f"PrivacyLedger(rho_budget={self._rho_budget:.6g}, "
            f"rho_spent={self._rho_spent:.6g}, entries=[{parts}])"
        )
