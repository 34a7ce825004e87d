"""Conversions between zCDP and (epsilon, delta)-DP: the exact CKS bound and the classic one."""

import math

import numpy as np
from scipy import optimize

from ._checks import check_delta, check_method, check_real

__all__ = ["cks_delta", "epsilon_to_rho", "rho_to_epsilon"]

# Relative tolerance of the root finders.
_RTOL = 4 * np.finfo(float).eps
# Range of rho over which the CKS conversion is evaluated without overflow.
_RHO_MIN, _RHO_MAX = 1e-300, 1e100


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
    rho = check_real(rho, "rho", low=0.0, allow_inf=True)
    epsilon = check_real(epsilon, "epsilon", low=0.0, allow_inf=True)
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
    rho = check_real(rho, "rho", low=0.0, allow_inf=True)
    delta = check_delta(delta)
    check_method(method)
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
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    delta = check_delta(delta)
    check_method(method)
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
