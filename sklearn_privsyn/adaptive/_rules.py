"""AdaptiveProjection's rules: how many rounds, which representation, and their constants.

Every rule here reads public quantities only (the number of rows, the
budget, the workload's marginals and the table's width), so choosing a
schedule or a representation costs no privacy. The constants were chosen on
the development suite of real tables and generated tables together
(``docs/algorithms/adaptive.rst``, ``benchmarks/notes/selection.md``).
"""

import itertools
import math
from statistics import NormalDist

import numpy as np

__all__ = [
    "ALL_AT_ONCE_NOISE",
    "BUDGET_MARGIN",
    "GRAPHICAL_ITER_FACTOR",
    "GRAPHICAL_MAX_CELLS",
    "GRAPHICAL_ZERO_TEST",
    "HOLD_BOOST",
    "HOLD_FALSE_CELLS",
    "HOLD_PASSES",
    "HOLD_RECORDS_PER_CELL",
    "MAX_ROUNDS_PER_COLUMN",
    "PRODUCTS_COLUMNS",
    "PRODUCT_ITER_FACTOR",
    "REDUNDANT_ALL_AT_ONCE_NOISE",
    "SELECTION_NOISE",
    "SPARSE_REDUNDANCY",
    "WIDE_INNER_QP_ITER",
    "WIDE_MARGINALS",
    "ZERO_MAX_MASS",
    "ZERO_TEST",
    "adaptive_default_representation",
    "adaptive_default_rounds",
    "all_at_once_sd",
    "hold_threshold",
    "pair_zeros_apply",
    "structural_zeros",
    "workload_pairs",
    "workload_redundancy",
]

# Charges are planned this fraction below their share of the budget, so that
# rounding in sigma -> rho can never push the ledger's total over the budget.
BUDGET_MARGIN = 1e-9

# zero_test="auto" with every marginal measured at once: answers below 2 noise sd
# count as zero in the final re-weighting (chosen on generated tables, see the docs).
ZERO_TEST = 2.0

# Records fitted to every marginal at once: a cell the fit misses by more than
# hold_threshold(N) noise sd (one such cell expected among N measured cells, were the
# fit the truth) is held to its measurement in a last re-fit (benchmarks/notes/wide.md).
HOLD_FALSE_CELLS = 1.0
# A held cell's precision is multiplied by HOLD_BOOST (its answer held to a tenth of its
# noise sd; 10 left ACS's cell 5 sd off), in HOLD_PASSES re-fits at most. Each held cell
# is a constraint on the records' weights: with more cells off than one per
# HOLD_RECORDS_PER_CELL records, the support is short, not a few cells pulled, and no
# (more) cell is held (LOANS schema, 376 records: holding its 32 raised the 2-way TVD
# 11%, its 3 furthest raised the max error).
HOLD_BOOST = 100.0
HOLD_PASSES = 2
HOLD_RECORDS_PER_CELL = 100

# representation="products": L-BFGS iterations of the final fit per unit of
# max_iter (each adaptive round's intermediate fit, warm-started from the
# previous round's, runs max_iter iterations).
PRODUCT_ITER_FACTOR = 5

# Records' Frank-Wolfe on workloads of at least WIDE_MARGINALS marginals re-weights
# by WIDE_INNER_QP_ITER accelerated steps an iteration (warm), then 300 at the end:
# a step costs n_records * n_marginals, and 300 a step made ACS-schema fits with
# 4,096 marginals spend most of their time there (benchmarks/notes/wide.md).
# Smaller workloads (the paper's 64 marginals) keep 300 an iteration.
WIDE_MARGINALS = 1024
WIDE_INNER_QP_ITER = 30

#: Largest number of columns of a table that is not wide: up to it the default
#: representation may be the mixture of products (adaptive_default_representation);
#: above it the rounds rule counts every workload as sparse (adaptive_default_rounds),
#: and records fitted at once keep the records that hold structural zeros of pairs
#: (pair_zeros_apply).
PRODUCTS_COLUMNS = 32

#: Largest per-cell noise sd at which the default measures every marginal at
#: once when the workload's marginals share few pairs of columns (redundancy at
#: most SPARSE_REDUNDANCY; see adaptive_default_rounds): every marginal is then
#: measured as precisely as an adaptive round would measure one (SELECTION_NOISE).
ALL_AT_ONCE_NOISE = 0.018

#: The same when they share many (every 3-way marginal of a table, say).
REDUNDANT_ALL_AT_ONCE_NOISE = 0.003

#: Largest workload redundancy (workload_redundancy) counted as sparse.
SPARSE_REDUNDANCY = 3.0

#: Per-cell noise sd each adaptive round's measurement is planned for: the
#: default plans floor((1 - selection_share) rho (n SELECTION_NOISE)**2) rounds.
SELECTION_NOISE = 0.018

#: At most this many planned rounds per column (AIM's 16 d, the 1-way
#: marginals' d included).
MAX_ROUNDS_PER_COLUMN = 15

#: Largest junction tree (total cells of its cliques) the graphical model may
#: grow to; a round may take a marginal only while the tree stays below this
#: times the share of the budget spent so far (small models first, as in AIM).
GRAPHICAL_MAX_CELLS = 1_000_000

# representation="graphical": mirror-descent steps of the final fit per unit of
# max_iter (each adaptive round's refit, warm-started, runs max_iter steps).
GRAPHICAL_ITER_FACTOR = 5

# zero_test="auto" with the graphical model: a cell of a measured marginal of two
# or more columns whose noisy answer is below 2 noise sd is a structural zero, when
# 2 sd is at most ZERO_MAX_MASS (so a real cell wrongly zeroed holds little).
GRAPHICAL_ZERO_TEST = 2.0
ZERO_MAX_MASS = 0.01
# A value whose every cell of a marginal tests empty keeps its cells beside the most
# common combinations of the other columns, those holding this share of their noisy mass
# (a rare country beside the common races and occupations): each kept cell is one more
# that the fit fills with positive noise.
ZERO_KEPT_MASS = 0.9


def all_at_once_sd(n, rho, n_marginals):
    """Per-cell noise sd when ``n_marginals`` marginals share ``rho`` (sensitivity sqrt(2)/n each)."""
    return math.sqrt(n_marginals / rho) / n


def workload_redundancy(marginals):
    """How many of the workload's marginals hold each pair of columns, on average.

    The mean, over the pairs of columns that some marginal holds, of the
    number of marginals holding the pair: about 2 for 64 random 3-way
    marginals of 14 columns, ``d - 2`` for every 3-way marginal of ``d``
    columns; 0 when no marginal holds two columns. Public: it reads the
    workload's marginals only.

    Examples
    --------
    >>> workload_redundancy([(0, 1, 2), (0, 1, 3)])
    1.2
    >>> workload_redundancy([(0,), (1,)])
    0.0
    """
    counts = _pair_counts(marginals)
    return float(np.mean(list(counts.values()))) if counts else 0.0


def workload_pairs(marginals):
    """How many pairs of columns the workload's marginals hold (public: the marginals only).

    Examples
    --------
    >>> workload_pairs([(0, 1, 2), (0, 1, 3)])
    5
    """
    return len(_pair_counts(marginals))


def _pair_counts(marginals):
    """``{(a, b): number of marginals holding columns a and b}``."""
    counts = {}
    for m in marginals:
        for pair in itertools.combinations(sorted(set(int(a) for a in m)), 2):
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def adaptive_default_rounds(n, rho, n_marginals, n_columns=None, redundancy=0.0, *,
                            selection_share=0.1):
    """Rounds of measurement: 1 (all at once), ``T >= 2`` (adaptive selection) or 0 (1-way only).

    Measuring all ``M`` marginals at once gives every cell Gaussian noise of
    standard deviation ``sigma_all = sqrt(M / rho) / n``. The rule:

    1. **Everything at once** (1) while ``sigma_all`` is at most
       ``ALL_AT_ONCE_NOISE`` (0.018, the noise an adaptive round is planned
       for: every marginal is then measured as precisely as a round would
       measure one) for a workload whose marginals share few pairs of
       columns (``redundancy`` at most ``SPARSE_REDUNDANCY``, 3: a random
       subset of the 3-way marginals; and any workload of a table of more
       than ``PRODUCTS_COLUMNS`` (32) columns, whose workloads are always a
       small subset of its 3-way marginals), or at most
       ``REDUNDANT_ALL_AT_ONCE_NOISE`` (0.003) when they share many (every
       3-way marginal: the redundancy is ``d - 2``). Measured at once, a
       redundant workload pays for each pair of columns many times over;
       selection pays once for the pairs that carry structure.
    2. Otherwise **adaptive selection** planned for
       ``T = min(floor((1 - selection_share) rho (n SELECTION_NOISE)**2) - d,
       MAX_ROUNDS_PER_COLUMN d)`` rounds after the 1-way marginals of the
       ``d = n_columns`` columns: the number of rounds whose measurements
       would each have noise ``SELECTION_NOISE`` (0.018) a cell, counting the
       1-way marginals as ``d`` of them, capped as AIM caps its rounds at
       ``16 d``. Annealing then spends the budget in fewer, more precise
       rounds where the data allow (:mod:`._selection`).
    3. **The 1-way marginals only** (0) when that leaves fewer than 2 rounds:
       the whole budget cannot measure the 1-way marginals and two more at
       that noise.

    Only public quantities enter: ``n`` (public under replace-one
    neighbours), ``rho``, the number of marginals, of columns and the
    workload's redundancy (:func:`workload_redundancy`). Without
    ``n_columns`` the rule never selects (1 or 0).

    The constants were chosen on the development suite of real tables
    (``../shared/datasets/REAL.md``) and generated tables together (see
    ``docs/algorithms/adaptive.rst`` and ``benchmarks/notes/selection.md``).

    Parameters
    ----------
    n : int
        Number of rows.
    rho : float
        zCDP budget.
    n_marginals : int
        Number of workload marginals ``M``.
    n_columns : int, default=None
        Number of columns ``d``.
    redundancy : float, default=0.0
        :func:`workload_redundancy` of the workload's marginals.
    selection_share : float, default=0.1
        Share of each round's budget spent on the selection.

    Returns
    -------
    rounds : int

    Examples
    --------
    >>> adaptive_default_rounds(48842, 0.000167, 64, 14, 2.1)  # ADULT, 64 marginals, eps 0.1
    1
    >>> adaptive_default_rounds(48842, 0.0143, 455, 15, 13.0)  # raw Adult, every 3-way, eps 1
    225
    >>> adaptive_default_rounds(3000, 0.000256, 165, 11, 9.0)  # 3,000 rows, eps 0.1
    0
    >>> adaptive_default_rounds(50000, 0.0142, 4096, 80, 3.9)  # 80 columns, 4,096 marginals
    1
    """
    sparse = redundancy <= SPARSE_REDUNDANCY or (n_columns or 0) > PRODUCTS_COLUMNS
    limit = ALL_AT_ONCE_NOISE if sparse else REDUNDANT_ALL_AT_ONCE_NOISE
    if all_at_once_sd(n, rho, n_marginals) <= limit:
        return 1
    if n_columns is None:
        return 0
    units = math.floor((1.0 - selection_share) * rho * (n * SELECTION_NOISE) ** 2)
    rounds = min(units - int(n_columns), MAX_ROUNDS_PER_COLUMN * int(n_columns))
    return int(rounds) if rounds >= 2 else 0


def adaptive_default_representation(n, rho, n_marginals, rounds, products_noise=0.005,
                                    n_columns=None, products_columns=None, n_pairs=None):
    """The representation fitted: graphical model, mixture of products or weighted records.

    With adaptive selection (``rounds >= 2``) it is the graphical model
    (:class:`~sklearn_privsyn.adaptive.GraphicalModel`): a few marginals are
    measured, and the maximum-entropy model over them infers the others
    (on the development suite it had lower mean error and TVD than records
    or products after the same selection; ``benchmarks/notes/selection.md``).
    With every marginal measured at once (``rounds == 1``) each cell has
    noise of standard deviation ``sigma_all = sqrt(M / rho) / n``. When
    ``sigma_all`` is at least ``products_noise`` the noisy answers are fitted
    by a mixture of product distributions, otherwise (little noise, or
    adaptive rounds) by weighted records. Only public quantities enter.
    Chosen on generated tables (latent-class and Bayesian-network tables,
    with and without dominant values; ``benchmarks/bench_adaptive.py --data
    generated --generator ... --representation records products``): measured
    all at once, the mixture of products had 15-42% lower mean error than
    the records at every noise level, and as low a max error (within the
    seeds' spread) at ``sigma_all`` of 0.0085 and above, but 1.8 to 3.6
    times the records' at 0.0014 (48,842 rows, ``epsilon = 1``), where the
    records fit the large cells that a few products cannot; in adaptive
    rounds (few marginals measured) the records had the lower max error in
    11 of 12 settings. With only the 1-way marginals measured
    (``rounds == 0``) it is products: one product distribution, the
    independence model.

    The table's width enters too: a mixture of a few products is a
    latent-class model, one pattern of dependence a component, and on wide
    tables with many dependent column pairs it cannot hold them all. With
    more than ``products_columns`` columns (``PRODUCTS_COLUMNS``, 32) the
    records are used where everything is measured at once: on a
    Bayesian-network table on the 80-column ACS schema (50,000 rows, 4,096
    marginals measured at once at ``sigma_all = 0.0107``) the products missed
    cells of small, precisely measured marginals by up to 0.17, three times
    the noise floor (32 components: 0.14), where the records ended at 0.083
    (``benchmarks/notes/wide.md``). ``n_columns=None`` leaves width out.

    What the mixture cannot hold is the dependence of many column pairs, so
    a wide table whose workload holds few pairs (``n_pairs``, from
    :func:`workload_pairs`) gets the products as a narrow table does: at
    most as many pairs as a table of ``products_columns`` columns has
    (``32 * 31 / 2 = 496``), so that no narrow table's choice changes. On the
    LOANS schema (48 columns, 50,000 rows, 64 marginals holding 171 pairs,
    ``epsilon = 0.1``, ``sigma_all = 0.015``, five seeds) the records stopped
    after five Frank-Wolfe iterations at max error 0.067, mean per-marginal
    TVD 0.897, where the products had 0.044 and 0.787
    (``benchmarks/notes/wide.md``).

    Parameters
    ----------
    n : int
        Number of rows.
    rho : float
        zCDP budget.
    n_marginals : int
        Number of workload marginals ``M``.
    rounds : int
        Rounds of measurement (0: 1-way marginals only, 1: every marginal at once).
    products_noise : float, default=0.005
        Smallest ``sigma_all`` at which products are used.
    n_columns : int, default=None
        Number of columns of the table (None: width is not considered).
    products_columns : int, default=None
        Largest number of columns at which products are used
        (None: ``PRODUCTS_COLUMNS``).
    n_pairs : int, default=None
        Column pairs the workload's marginals hold (:func:`workload_pairs`);
        a wider table holding at most ``products_columns * (products_columns
        - 1) / 2`` of them counts as narrow. None: not considered.

    Returns
    -------
    representation : {"records", "products", "graphical"}

    Examples
    --------
    >>> adaptive_default_representation(48842, 0.000167, 64, 1)
    'products'
    >>> adaptive_default_representation(48842, 0.0143, 64, 1)
    'records'
    >>> adaptive_default_representation(7000, 0.000221, 64, 3)
    'graphical'
    >>> adaptive_default_representation(48842, 0.000167, 64, 1, n_columns=80)
    'records'
    >>> adaptive_default_representation(48842, 0.000167, 64, 1, n_columns=80, n_pairs=190)
    'products'
    """
    if rounds >= 2:
        return "graphical"
    if rounds == 0:
        return "products"
    limit = PRODUCTS_COLUMNS if products_columns is None else products_columns
    narrow = (n_columns is None or n_columns <= limit
              or (n_pairs is not None and n_pairs <= limit * (limit - 1) // 2))
    if rounds == 1 and narrow and all_at_once_sd(n, rho, n_marginals) >= products_noise:
        return "products"
    return "records"


def structural_zeros(noisy, sd, z, max_mass=ZERO_MAX_MASS):
    """Cells of a measured marginal that the graphical model fixes at zero.

    A cell whose noisy answer is below ``z`` noise sd cannot be told from
    an empty cell by a one-sided test at that level. It is fixed at zero
    (no synthetic row will hold it) only where ``z`` sd is at most
    ``max_mass``: a real cell wrongly zeroed then holds little mass, while
    at a thin budget, where small real cells are below ``z`` sd too, the
    fit keeps them. In a table of two or more columns, a value whose every
    cell tests empty keeps the cells beside the most common combinations of
    the other columns (those holding ``ZERO_KEPT_MASS`` of their noisy mass):
    the test removes combinations, never a value (a value held by 3% of the
    rows, spread over ten bins of another column, has every cell below 2 sd
    of a precise 2-way measurement, and zeroed they would leave it out of
    every row, whatever its 1-way share), and a rare value is not spread over
    rare combinations, each filled by the fit with positive noise. Reads only
    noisy answers and their public sd.

    Examples
    --------
    >>> import numpy as np
    >>> structural_zeros(np.array([0.5, 0.001, 0.499]), 0.001, 2.0).tolist()
    [False, True, False]
    >>> structural_zeros(np.array([0.5, 0.001, 0.499]), 0.01, 2.0).tolist()
    [False, False, False]
    >>> table = np.array([[0.2, 0.001, 0.1], [0.006, 0.001, 0.007], [0.2, 0.3, 0.001]])
    >>> structural_zeros(table, 0.004, 2.0).astype(int).tolist()  # the second value stays
    [[0, 1, 0], [0, 0, 0], [0, 0, 1]]
    >>> table = np.array([[0.6, 0.3, 0.02], [0.001, 0.002, 0.0], [0.04, 0.02, 0.017]])
    >>> structural_zeros(table, 0.004, 2.0).astype(int).tolist()  # beside the common two
    [[0, 0, 0], [0, 0, 1], [0, 0, 0]]
    """
    noisy = np.asarray(noisy, dtype=float)
    sd = np.broadcast_to(np.asarray(sd, dtype=float), noisy.shape)
    zeros = (noisy < z * sd) & (z * sd <= max_mass)
    if zeros.ndim < 2:
        return zeros
    kept = np.zeros_like(zeros)
    for axis in range(zeros.ndim):
        others = tuple(a for a in range(zeros.ndim) if a != axis)
        empty = zeros.all(axis=others)
        if empty.any():
            common = _common(np.clip(noisy, 0.0, None).sum(axis=axis))
            kept |= np.expand_dims(empty, others) & np.expand_dims(common, axis)
    return zeros & ~kept


def _common(mass):
    """The fewest cells of ``mass`` (largest first) holding ``ZERO_KEPT_MASS`` of it."""
    flat = mass.ravel()
    order = np.argsort(-flat, kind="stable")
    total = flat.sum()
    count = 1 if total <= 0 else int(np.searchsorted(np.cumsum(flat[order]),
                                                     ZERO_KEPT_MASS * total)) + 1
    common = np.zeros(flat.size, dtype=bool)
    common[order[:count]] = True
    return common.reshape(mass.shape)


def pair_zeros_apply(n_columns):
    """Whether records fitted at once drop those holding a structural zero of a pair.

    On tables of at most ``PRODUCTS_COLUMNS`` columns (see
    :mod:`sklearn_privsyn.adaptive._pair_zeros`). Wider, a few thousand
    records carry thousands of pairs each, and the records dropped take mass
    the re-weighting cannot put back: on the ACS schema (80 columns, 4,096
    marginals, eps 1, seed 0) the mean per-marginal TVD rose from 0.118 to
    0.157 and the mean error from 1.6e-4 to 2.2e-4, for impossible pairs
    0.33 -> 0.26.

    Examples
    --------
    >>> pair_zeros_apply(15), pair_zeros_apply(80)
    (True, False)
    """
    return n_columns <= PRODUCTS_COLUMNS


def hold_threshold(n_cells):
    """Noise sd beyond which a fit's cell is held to its measurement (two-sided).

    ``Phi^-1(1 - HOLD_FALSE_CELLS / (2 n_cells))``: were the fit the truth, that
    many of ``n_cells`` measured cells would lie further from their noisy answers
    (in expectation).

    Examples
    --------
    >>> round(hold_threshold(5_892_396), 2)
    5.23
    """
    return NormalDist().inv_cdf(1.0 - HOLD_FALSE_CELLS / (2.0 * max(int(n_cells), 1)))
