"""The mechanisms that read private data, and their zCDP costs.

Every random step of a fit that reads private data is one of the functions
here (``tests/test_privacy_audit.py`` wraps exactly these); each cost function
derives a mechanism's zCDP from its parameters.
"""

import math

import numpy as np

from .._random import make_generator
from ._checks import check_real

__all__ = [
    "acceptance_probabilities",
    "exponential_mechanism",
    "exponential_mechanism_draws",
    "exponential_mechanism_epsilon",
    "exponential_mechanism_rho",
    "gaussian_mechanism",
    "gaussian_mechanism_rho",
    "gaussian_sigma",
    "number_histogram",
    "rejection_coins",
    "rejection_step_rho",
    "worst_query_mechanism",
]


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
    epsilon = check_real(epsilon, "epsilon", low=0.0)
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
    rho = check_real(rho, "rho", low=0.0)
    epsilon = math.sqrt(8.0 * rho)
    while epsilon * epsilon / 8.0 > rho:
        epsilon = math.nextafter(epsilon, 0.0)
    return epsilon


def _check_mechanism(scores, name, epsilon, sensitivity, rng):
    """Validated arguments of an exponential mechanism: 1-d finite scores, parameters, rng."""
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_inclusive=False)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_inclusive=False)
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
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
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
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0)
    rho = check_real(rho, "rho", low=0.0, low_inclusive=False)
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
    return _gaussian_noise(values, sensitivity, sigma, rng)


def number_histogram(counts, sensitivity, sigma, rng):
    """The numbers' measurement: :func:`gaussian_mechanism` under a name of its own.

    Adds i.i.d. ``N(0, sigma**2)`` noise to the tree-histogram and
    exact-value counts of the binned numeric columns
    (:func:`sklearn_privsyn.numbers.measure_numbers`), so that the ledger
    (``"number_histogram"``) and its audit tell this measurement apart from
    the synthesizers' own. The cost is ``gaussian_mechanism_rho(sensitivity,
    sigma)`` zCDP when the L2 sensitivity of ``counts`` is at most
    ``sensitivity``.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import number_histogram
    >>> number_histogram([0.5, 0.25, 0.25], sensitivity=0.02, sigma=0.1, rng=0).shape
    (3,)
    """
    return _gaussian_noise(counts, sensitivity, sigma, rng)


def _gaussian_noise(values, sensitivity, sigma, rng):
    check_real(sensitivity, "sensitivity", low=0.0)
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    rng = make_generator(rng, "rng")
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError("values must be finite; got NaN or infinite entries.")
    noisy = rng.normal(0.0, sigma, size=values.shape)
    noisy += values  # in place: two vectors of the values' size at most, not three
    return noisy


def exponential_mechanism_draws(scores, epsilon, sensitivity, size, rng):
    """``size`` independent exponential-mechanism draws (DualQuery's and DQRS's query player).

    Index ``i`` with probability proportional to ``exp(epsilon * scores[i] /
    (2 sensitivity))``. Each draw costs ``exponential_mechanism_rho(epsilon)``
    when the scores have sensitivity at most ``sensitivity``. Inverse-CDF
    sampling: the same distribution as the Gumbel-max
    :func:`exponential_mechanism`, at ``O(m + size log m)`` instead of
    ``O(m size)``.

    Parameters
    ----------
    scores : array-like of shape (m,)
        Finite scores (private: they depend on the data).
    epsilon : float
        Parameter of each draw.
    sensitivity : float
        Largest change of any score between neighbouring tables.
    size : int
        Number of draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    indices : ndarray of intp, shape (size,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.privacy import exponential_mechanism_draws
    >>> exponential_mechanism_draws([0.0, 50.0], 1.0, 1.0, 4, np.random.default_rng(0)).tolist()
    [1, 1, 1, 1]
    """
    if size == 0:
        return np.empty(0, dtype=np.intp)
    log_weights = np.asarray(scores, dtype=float) * (epsilon / (2.0 * sensitivity))
    p = np.exp(log_weights - log_weights.max())
    cdf = np.cumsum(p)
    u = rng.uniform(0.0, cdf[-1], size=size)
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(p) - 1).astype(np.intp)


def acceptance_probabilities(gains, learning_rate, gamma):
    """DQRS keep probabilities ``exp(eta (g - 1) - gamma)`` for gains ``g`` in ``[-1, 1]``.

    They equal ``Qhat^{t+1}_q / Q^t_q`` in the paper's Algorithm 4 and are at
    most ``exp(-gamma) < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.privacy import acceptance_probabilities
    >>> acceptance_probabilities(np.array([1.0, -1.0]), 0.5, 0.1).round(4).tolist()
    [0.9048, 0.3329]
    """
    gains = np.asarray(gains, dtype=float)
    return np.exp(learning_rate * (gains - 1.0) - gamma)


def rejection_coins(sample, gains, learning_rate, gamma, rng):
    """DQRS's accept/reject steps: a boolean mask over ``sample``, one coin each.

    Element ``q`` of ``sample`` is kept with probability
    :func:`acceptance_probabilities` of ``gains[q]``. Each coin costs
    :func:`rejection_step_rho` when every gain moves by at most ``1 / n``
    between neighbouring tables (the gains are private).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.privacy import rejection_coins
    >>> rejection_coins(np.array([0, 1, 0]), np.array([1.0, -1.0]), 0.5, 0.1,
    ...                 np.random.default_rng(0)).tolist()
    [True, True, True]
    """
    p = acceptance_probabilities(np.asarray(gains)[sample], learning_rate, gamma)
    return rng.random(len(sample)) < p


def rejection_step_rho(learning_rate, gamma, n, accounting="bounded_range"):
    """zCDP cost of one DQRS accept/reject step.

    A reused query ``q`` is kept with probability
    ``p = exp(eta (g - 1) - gamma)`` where ``g = q(D) - q(x^t)`` lies in
    ``[-1, 1]`` and moves by at most ``1 / n`` between neighbours, so
    ``log p`` lies in ``[-2 eta - gamma, -gamma]`` and moves by at most
    ``eta / n``.

    ``accounting="pure"`` is the paper's Lemma (Rejection Sampling Privacy):
    the step is ``epsilon``-DP with ``epsilon = max(eta / n, eta / (gamma n))``,
    and ``epsilon``-DP implies ``epsilon**2 / 2`` zCDP (Bun and Steinke 2016).

    ``accounting="bounded_range"`` (default) is tighter and equally rigorous.
    The step has two outcomes whose privacy losses ``log(p/p')`` and
    ``log((1-p)/(1-p'))`` have opposite signs, so the loss lies in an interval
    of width ``|logit(p) - logit(p')|``. As ``d logit(p) / d log p = 1 / (1 - p)``
    increases with ``p``, the width is largest with ``log p`` at the top of its
    range:

    ``w = eta/n + log(1 - exp(-gamma - eta/n)) - log(1 - exp(-gamma))``.

    The step is therefore ``w``-bounded-range and ``w**2 / 8`` zCDP (Cesar and
    Rogers 2021, the lemma that also gives the exponential mechanism's
    ``epsilon**2 / 8``). Since ``w ~ (eta / n) / (1 - exp(-gamma))``, this is
    about a quarter of the pure-DP charge when ``gamma`` is small.

    Examples
    --------
    >>> from sklearn_privsyn.privacy import rejection_step_rho
    >>> round(rejection_step_rho(0.1, 0.05, 1000, "pure") * 1e6, 4)
    2.0
    >>> round(rejection_step_rho(0.1, 0.05, 1000) * 1e6, 4)
    0.5245
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0; got {gamma!r}")
    a = learning_rate / n
    if accounting == "pure":
        eps = max(a, learning_rate / (gamma * n))
        return eps * eps / 2.0
    if accounting == "bounded_range":
        width = a + math.log(-math.expm1(-gamma - a)) - math.log(-math.expm1(-gamma))
        return width * width / 8.0
    raise ValueError(
        f"accounting must be 'bounded_range' or 'pure'; got {accounting!r}"
    )
