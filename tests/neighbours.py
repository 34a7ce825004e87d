"""Brute force over replace-one neighbouring tables, shared by the privacy tests.

Costs checked here are computed from the definition (the privacy loss between
a table and each of its neighbours), never by re-typing the formula the
package uses.
"""

import numpy as np
import pandas as pd

from sklearn_privsyn import QueryWorkload


def domain_records(block_sizes):
    """Every record of the domain, in code space."""
    grids = np.stack(np.meshgrid(*[np.arange(b) for b in block_sizes], indexing="ij"), -1)
    return grids.reshape(-1, len(block_sizes))


def answer_sensitivity_by_brute_force(workload, n, query_ids, norm=2):
    """Largest change of the answers ``query_ids`` between any two neighbouring tables of n rows.

    Replacing one row ``old`` by ``new`` changes every answer (a fraction of
    rows) by ``(q(new) - q(old)) / n`` whatever the other rows are, so the
    maximum over all pairs of domain records is the maximum over all
    neighbouring tables.
    """
    records = domain_records(workload.layout_.block_sizes)
    answers = np.array([workload.answer_codes(r[None, :])[query_ids] for r in records])
    diffs = answers[:, None, :] - answers[None, :, :]
    return float(np.linalg.norm(diffs, ord=norm, axis=-1).max() / n) if norm == 2 else float(
        np.abs(diffs).max() / n)


def replace_one_neighbours(codes, block_sizes):
    """Every table that differs from ``codes`` (rows in code space) in one row."""
    values = domain_records(block_sizes)
    for i in range(len(codes)):
        for value in values:
            if np.array_equal(value, codes[i]):
                continue
            other = codes.copy()
            other[i] = value
            yield other


def dqrs_coin_gain_pairs(n):
    """Gain pairs ``(g, g')`` of one DQRS coin, by brute force over neighbouring tables.

    A coin sees the gain ``g = q(D) - q(x)`` of a query (a negation's gain is
    minus its query's) for a released record ``x``. The table has ``n`` rows
    of one 3-valued column, all 0 but the last: its 1-way marginal has a cell
    at ``(n - 1) / n``, the most extreme case the rows allow. Pairs cover
    every query, every record ``x`` and every replace-one neighbour ``D'``
    (both directions).
    """
    workload = QueryWorkload(domain={"a": 3}, k=1)
    X = pd.DataFrame({"a": [0] * (n - 1) + [1]})
    codes = workload.fit(X).encode(X)
    base = workload.answer_codes(codes)
    pairs = []
    for other in replace_one_neighbours(codes[[0, -1]], [3]):
        # rows 1..n-2 are copies of row 0: changing either of the two kinds of row suffices
        full = codes.copy()
        full[[0, -1]] = other
        answers = workload.answer_codes(full)
        for x in range(3):
            qx = workload.answer_codes(np.array([[x]]))
            g, g2 = base - qx, answers - qx
            pairs += [(g, g2), (-g, -g2), (g2, g), (-g2, -g)]
    g = np.concatenate([p[0] for p in pairs])
    g2 = np.concatenate([p[1] for p in pairs])
    return g, g2


def dqrs_coin_rho_by_brute_force(learning_rate, gamma, n, accounting="bounded_range"):
    """zCDP of one DQRS accept/reject coin from its privacy loss over neighbouring tables.

    The coin keeps with probability ``exp(eta (g - 1) - gamma)``. Bounded
    range: the largest spread between the two outcomes' losses ``w``, charged
    ``w**2 / 8``; pure: the largest loss ``eps``, charged ``eps**2 / 2``.
    """
    g, g2 = dqrs_coin_gain_pairs(n)
    p = np.exp(learning_rate * (g - 1) - gamma)
    p2 = np.exp(learning_rate * (g2 - 1) - gamma)
    keep_loss = np.log(p2) - np.log(p)
    reject_loss = np.log1p(-p2) - np.log1p(-p)
    if accounting == "pure":
        return float(np.abs(np.concatenate([keep_loss, reject_loss])).max() ** 2 / 2)
    return float(np.abs(keep_loss - reject_loss).max() ** 2 / 8)
