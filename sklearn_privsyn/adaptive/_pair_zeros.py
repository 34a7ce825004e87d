"""Structural zeros of pairs of columns, read off the measured marginals (post-processing).

Real tables hold pairs of values that never occur together: an age of 35 in the
age group "18-29", a husband who is female, a departure hour that is not the
hour of the departure time. Fitted to noisy answers, weighted records put a
little mass on such pairs: a record is chosen for the many cells it fits, and
the few cells of an impossible pair cost the least-squares objective almost
nothing when their mass is spread over many records (a few percent of the
rows, in the end, as on GSSvocab's age and age group).

Every measured marginal of two or more columns implies a noisy table of each
pair of its columns (the sum over the others, with the summed noise
variance); the tables of a pair from all marginals that hold it are averaged
with inverse-variance weights. A cell of that table is a *structural zero*
when it tests as empty at half the cells' threshold (below ``z / 2`` noise
sd: the tables hold many cells, and at ``z`` sd a real cell of 2 to 3 sd
passes for empty one time in four; on the development suite's cps1988 the cells
it took for empty held 6% of the rows) while the independence of the two columns (the
product of the table's own margins) would put at least ``2 z`` sd of mass
there (a significant gap below what the margins predict, so a small cell of
two rare values is not one), and the pair's table is known at
least as precisely as a single measured cell holding the pair (a pair seen
only through a marginal whose third column has 40 values has a table four
to seven times noisier than a cell, where a real cell of 0.01 can test
empty). A real cell wrongly taken for a zero then holds no more than the
zero test of the cells already accepts to lose. Records that hold a
structural zero are dropped before the final re-weighting.

Reads only the noisy answers and their public variances.
"""

import itertools

import numpy as np

__all__ = ["pair_tables", "records_holding", "structural_pair_zeros"]


def pair_tables(index, target, precision):
    """``{(a, b): (estimate, sd, cell_sd)}``: each pair's table from the marginals holding it.

    Parameters
    ----------
    index : MarginalCells
        The cells of the measured marginals.
    target, precision : ndarray of shape (n_cells,)
        Noisy answers and their precisions (0 where not measured).

    Returns
    -------
    tables : dict
        Column pair ``a < b`` -> (inverse-variance weighted estimate, its sd),
        arrays of shape ``(sizes[a], sizes[b])``, and the smallest noise sd of a
        measured cell holding the pair.
    """
    sums = {}
    for m, columns in enumerate(index.marginals):
        if len(columns) < 2:
            continue
        # a marginal's cells are contiguous, in C order over its columns
        cells = slice(int(index.offsets[m]), int(index.offsets[m + 1]))
        sizes = [int(index.sizes[a]) for a in columns]
        cell_precision = precision[cells].reshape(sizes)
        if np.any(cell_precision <= 0):
            continue
        variance, answer = 1.0 / cell_precision, target[cells].reshape(sizes)
        cell_sd = float(np.sqrt(variance.min()))
        for i, j in itertools.combinations(range(len(columns)), 2):
            rest = tuple(x for x in range(len(columns)) if x not in (i, j))
            table, table_variance = answer.sum(axis=rest), variance.sum(axis=rest)
            pair = (columns[i], columns[j])
            if pair[0] > pair[1]:
                pair, table, table_variance = pair[::-1], table.T, table_variance.T
            weight = 1.0 / table_variance
            if pair in sums:
                sums[pair][0] += weight * table
                sums[pair][1] += weight
                sums[pair][2] = min(sums[pair][2], cell_sd)
            else:
                sums[pair] = [weight * table, weight, cell_sd]
    return {pair: (weighted / weight, 1.0 / np.sqrt(weight), cell_sd)
            for pair, (weighted, weight, cell_sd) in sums.items()}


def structural_pair_zeros(index, target, precision, z):
    """``{(a, b): bool table}``: cells that test empty and far below independence.

    A cell is a structural zero when its estimate is below ``z / 2`` sd, the
    product of its table's margins is at least ``2 z`` sd, and the table's sd
    is at most that of a measured cell holding the pair.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn import QueryWorkload
    >>> from sklearn_privsyn.adaptive._projection import MarginalCells
    >>> X = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 0, 1, 1]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": 2}, k=2).fit(X)
    >>> index = MarginalCells(wl)
    >>> answers = np.array([0.5, 0.0, 0.0, 0.5])   # a == b in every row
    >>> zeros = structural_pair_zeros(index, answers, np.full(4, 1e4), 2.0)
    >>> zeros[(0, 1)].astype(int).tolist()
    [[0, 1], [1, 0]]
    """
    zeros = {}
    for pair, (estimate, sd, cell_sd) in pair_tables(index, target, precision).items():
        positive = np.maximum(estimate, 0.0)
        total = positive.sum()
        if total <= 0:
            continue
        independent = np.outer(positive.sum(axis=1), positive.sum(axis=0)) / total
        found = (estimate < 0.5 * z * sd) & (independent >= 2.0 * z * sd) & (sd <= cell_sd)
        if found.any():
            zeros[pair] = found
    return zeros


def records_holding(records, zeros):
    """Whether each record holds a pair of values of ``zeros``."""
    held = np.zeros(len(records), dtype=bool)
    for (a, b), table in zeros.items():
        held |= table[records[:, a], records[:, b]]
    return held
