"""Each column's shares, corrected where every measured marginal says they are off.

A projection onto records with non-negative weights fits the positive noise of
cells whose true count is near zero and cannot follow the negative noise, so
mass leaks from a column's common values to its rare ones. On ADULT (the
paper's workload, ``epsilon = 1``) the model held a capital gain of 0 on 89.7%
of its rows where the real table has 91.9%; on GSSvocab a value missing on
0.3% of the rows was missing on 1.5% of the model's rows, beside years and
answers no real row holds it with.

Every measured marginal holding a column gives an unbiased estimate of the
column's shares: its noisy cells summed over the other columns, whose noise
adds up. :func:`one_way_estimates` combines them by inverse variance. Most
values of the model agree with these (noisier) estimates; a value above its
estimate by more than a Bonferroni bound (``z`` sd, at level ``ALPHA`` over
every value of every column) is corrected: :func:`calibrated_shares` sets it
to the estimate and scales the column's other values to the rest
(:func:`calibration_targets`). AdaptiveProjection then continues its records'
fit with the far-off values' shares as extra targets
(``_fitting.refit_to_shares``), so that the measurements place the mass taken
off them; :func:`calibrate_weights` rakes the records to the shares instead
(iterative proportional fitting), which moves every other value's records in
proportion and piles the mass on the large cells where the excess came from
many small ones (the LOANS schema at 64 marginals, eps 1: max error 0.0070 ->
0.0166). It reads the noisy measurements only: post-processing, no budget.
"""

from statistics import NormalDist

import numpy as np

from .._sampling import column_shares, rake

__all__ = ["ALPHA", "calibrate_weights", "calibrated_shares", "calibration_targets",
           "one_way_estimates", "with_missing_shares"]

#: With every model share right, no value is corrected with probability at least 1 - ALPHA.
ALPHA = 0.05


def one_way_estimates(measurements, variances, marginals, offsets, sizes):
    """Each column's shares from every measured marginal holding it, with their sd.

    Parameters
    ----------
    measurements, variances : ndarray of shape (n_cells,)
        The noisy answers of the marginals and their noise variances.
    marginals : sequence of tuple of int
        The measured marginals (attribute indices), in the answers' order.
    offsets : ndarray of shape (n_marginals + 1,)
        Where each marginal's cells begin (C order within a marginal).
    sizes : sequence of int
        Number of codes of each attribute.

    Returns
    -------
    estimates : list of (tuple of (ndarray, float) or None)
        Per attribute, the inverse-variance mean of its marginals' sums (not
        clipped: unbiased) and its noise sd; None for an attribute no
        marginal holds.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.5, -0.03, 0.52, 0.01])  # one 2 x 2 marginal
    >>> (a, sd_a), (b, sd_b) = one_way_estimates(y, np.full(4, 1e-4), [(0, 1)],
    ...                                          np.array([0, 4]), [2, 2])
    >>> a.round(3).tolist(), b.round(3).tolist(), round(sd_a, 4)
    ([0.47, 0.53], [1.02, -0.02], 0.0141)
    """
    total = [np.zeros(s) for s in sizes]
    precision = np.zeros(len(sizes))
    for j, marginal in enumerate(marginals):
        shape = [sizes[a] for a in marginal]
        cells = np.asarray(measurements[offsets[j]:offsets[j + 1]], float).reshape(shape)
        noise = np.asarray(variances[offsets[j]:offsets[j + 1]], float).reshape(shape)
        for i, a in enumerate(marginal):
            others = tuple(k for k in range(len(marginal)) if k != i)
            # one precision for the sum vector: its values' mean variance (equal noise: exact)
            weight = 1.0 / float(np.mean(noise.sum(axis=others)))
            total[a] += weight * cells.sum(axis=others)
            precision[a] += weight
    return [(total[a] / precision[a], float(precision[a] ** -0.5)) if precision[a] > 0
            else None for a in range(len(sizes))]


def _far_off(model, estimate, sd, z):
    """The values whose model share is more than ``z`` sd above its estimate."""
    return model - estimate > z * sd


def calibrated_shares(model, estimate, sd, z):
    """``model``'s shares with each value more than ``z * sd`` above ``estimate`` set to it.

    The values set take the estimate (clipped at zero); the others keep their
    proportions and fill the rest. None when no value is that far above.

    Only values above are corrected: the leak puts the excess on a few rare
    values, and takes it from the common ones spread over many cells of the
    marginals, each of them fitted; lifting a common value's records in bulk
    (ADULT's capital gain of 0, 89.7% against an estimate of 91.6%) moves its
    largest cells by the same 2% (max error 0.0047 -> 0.02 on the paper's
    workload).

    Examples
    --------
    >>> import numpy as np
    >>> calibrated_shares(np.array([0.88, 0.1, 0.02]), np.array([0.89, 0.108, 0.002]),
    ...                   0.002, 4.0).round(3).tolist()
    [0.896, 0.102, 0.002]
    """
    far = _far_off(model, estimate, sd, z)
    if not far.any():
        return None
    shares = np.where(far, np.clip(estimate, 0.0, None), 0.0)
    shares = np.minimum(shares, 1.0)
    rest = model[~far].sum()
    if rest > 0:
        shares[~far] = model[~far] * max(1.0 - shares[far].sum(), 0.0) / rest
    return shares / shares.sum()


def calibration_targets(records, weights, estimates, sizes, alpha=ALPHA):
    """Per column, the calibrated shares, the values set and the estimate's sd (or None).

    ``estimates`` as :func:`one_way_estimates` returns them; a value is off when its
    model share is more than ``z = Phi^-1(1 - alpha / V)`` sd above its estimate, ``V``
    the number of values of the columns estimated (:func:`calibrated_shares`).

    Examples
    --------
    >>> import numpy as np
    >>> records = np.array([[0], [1], [1]])
    >>> estimates = [(np.array([0.5, 0.5]), 0.01)]
    >>> [(shares.round(3).tolist(), off.tolist(), sd) for shares, off, sd in
    ...  calibration_targets(records, np.array([0.2, 0.5, 0.3]), estimates, [2])]
    [([0.5, 0.5], [False, True], 0.01)]
    """
    records = np.asarray(records)
    weights = np.asarray(weights, float)
    n_values = sum(sizes[a] for a, e in enumerate(estimates) if e is not None)
    z = NormalDist().inv_cdf(1.0 - alpha / max(n_values, 1))
    targets = []
    for a, estimate in enumerate(estimates):
        if estimate is None:
            targets.append(None)
            continue
        model = column_shares(records, weights, a, sizes[a])
        shares = calibrated_shares(model, *estimate, z)
        targets.append(None if shares is None
                       else (shares, _far_off(model, *estimate, z), estimate[1]))
    return targets


def with_missing_shares(targets, missing, estimates, records, weights, sizes):
    """``targets`` with each measured missing share held as well.

    A number that may be missing has its share of missing rows measured by the
    numbers' measurement (``missing``: attribute -> ``(share, sd)``, as
    ``AdaptiveProjection.number_missing_`` holds them by column), with the noise of
    one cell: more precise than the sums of the marginals' cells, and the records
    put a missing value on twice the rows it holds (GSSvocab, eps 1) without any
    value far enough off for :func:`calibration_targets`.
    The column's missing code (its last) is set to the inverse-variance mean of
    that share and of its estimate from ``estimates`` (both unbiased, from
    independent mechanisms), with that mean's sd; the column's other codes keep
    what ``targets`` has for them. Post-processing.

    Examples
    --------
    >>> import numpy as np
    >>> records = np.array([[0], [1]])
    >>> estimates = [(np.array([0.9, 0.1]), 0.03)]
    >>> [(shares.round(3).tolist(), off.tolist(), sd.round(4).tolist()) for shares, off, sd in
    ...  with_missing_shares([None], {0: (0.02, 0.01)}, estimates, records,
    ...                      np.array([0.9, 0.1]), [2])]
    [([0.9, 0.028], [False, True], [0.03, 0.0095])]
    """
    targets = list(targets)
    weights = np.asarray(weights, float)
    for a, (share, sd) in missing.items():
        estimate = estimates[a]
        if estimate is not None:
            precision = np.array([sd**-2.0, estimate[1] ** -2.0])
            share = float(precision @ [share, estimate[0][-1]]) / float(precision.sum())
            sd = float(precision.sum() ** -0.5)
        if targets[a] is None:
            model = column_shares(np.asarray(records), weights, a, sizes[a])
            other_sd = np.nan if estimate is None else estimate[1]
            targets[a] = (model, np.zeros(sizes[a], bool), np.full(sizes[a], other_sd))
        shares, off, sds = (np.array(t, dtype=dtype) for t, dtype
                            in zip(targets[a], (float, bool, float)))
        sds = np.broadcast_to(sds, shares.shape).copy()
        shares[-1], off[-1], sds[-1] = max(share, 0.0), True, sd
        targets[a] = (shares, off, sds)
    return targets


def calibrate_weights(records, weights, estimates, sizes, alpha=ALPHA):
    """``weights`` of ``records`` raked to each column's calibrated shares.

    The weights closest to ``weights`` in Kullback-Leibler divergence with the
    shares of :func:`calibration_targets`; returned as they are when no value is
    off. (AdaptiveProjection continues its fit against the far-off values' shares
    instead, ``_fitting.refit_to_shares``: raking moves every other value's records
    in proportion.)

    Examples
    --------
    >>> import numpy as np
    >>> records = np.array([[0], [1], [1]])
    >>> estimates = [(np.array([0.5, 0.5]), 0.01)]
    >>> calibrate_weights(records, np.array([0.2, 0.5, 0.3]), estimates, [2]).round(3).tolist()
    [0.5, 0.312, 0.188]
    """
    weights = np.asarray(weights, float)
    targets = calibration_targets(records, weights, estimates, sizes, alpha)
    if all(t is None for t in targets):
        return weights
    return rake(np.asarray(records), sizes, [None if t is None else t[0] for t in targets],
                initial=weights)
