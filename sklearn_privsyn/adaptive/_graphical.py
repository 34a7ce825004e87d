"""A graphical model over measured marginals: junction tree, mirror descent, sampling.

The third representation of :class:`~sklearn_privsyn.AdaptiveProjection`'s
fit (beside weighted records and a mixture of products), used with adaptive
selection: the distribution

    p(x) = exp(sum_c theta_c(x_c)) / Z

with one table ``theta_c`` of log-potentials per measured marginal ``c`` (a
tuple of columns), fitted to the noisy answers ``y_c`` (variances ``var_c``)
by minimising the same inverse-variance objective as the other
representations,

    f = 1/2 sum_c sum_cells (mu_c - y_c)**2 / var_c,

over the marginals ``mu_c`` the model implies. Among all distributions with
given marginals on the measured sets, this family holds the one of maximum
entropy, so marginals never measured follow from the measured ones as
smoothly as they can (the estimator of Private-PGM, McKenna, Sheldon and
Miklau 2019, that AIM uses; this is our own code).

* **Inference.** The measured sets are the cliques of a graph on the
  columns; a greedy elimination order (each step removes the column whose
  neighbourhood has the fewest cells) triangulates it, and its maximal
  cliques, joined by a maximum spanning tree on their overlaps, form a
  junction tree. Sum-product message passing in log space (one pass up, one
  down) gives every junction-tree clique's marginal; the marginal of any
  other set of columns is a sum over the smallest subtree that holds it
  (``numpy.einsum``).
* **Fit.** Entropic mirror descent on the marginal polytope (a step on the
  log-potentials against the gradient of ``f`` with respect to the
  marginals), with a backtracking (Armijo) step size; warm-started when the
  model gains a marginal.
* **Structural zeros.** Cells given as zeros have log-potential ``-inf``:
  no sampled row ever holds them, whatever the fit does elsewhere.
* **Sampling.** Along the junction tree from its root: the root clique's
  cells by systematic allocation of ``n`` rows, each further clique's new
  columns given the values already drawn on its separator, by stratified
  uniforms within each separator value (so counts stay close to ``n``
  times the model's probabilities).

Everything here reads noisy answers and public sizes only: post-processing.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .._sampling import allocate_counts

__all__ = ["GraphicalModel", "junction_tree", "junction_tree_size", "junction_tree_sizes"]


def _logsumexp(a, axis=None):
    """``log(sum(exp(a)))`` over ``axis``; ``-inf`` where every term is ``-inf``."""
    peak = np.max(a, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - peak), axis=axis, keepdims=True)) + peak
    if axis is None:
        return float(out.reshape(()))
    return np.squeeze(out, axis=axis)


def _bits(mask):
    """The indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _mask(columns):
    """The bit mask of a set of column indices."""
    return sum(1 << int(a) for a in set(columns))


def _neighbour_masks(n, sets):
    """Each column's neighbours (a bit mask) in the graph whose cliques include ``sets``."""
    neighbours = [0] * n
    for s in sets:
        mask = _mask(s)
        for a in s:
            neighbours[a] |= mask
    return [m & ~(1 << a) for a, m in enumerate(neighbours)]


def _elimination_masks(sizes, neighbours):
    """The greedy elimination's cliques, as bit masks (the maximal cliques are among them).

    Each step eliminates the column whose clique (it and its remaining
    neighbours) has the fewest cells, the lowest index on a tie. The cells
    are exact integers, updated for the eliminated column's neighbours only
    and kept in a heap (entries of changed cells are skipped when popped), so
    the order depends on the graph alone; admissibility tries tens of
    thousands of graphs a fit.
    """
    neighbours = list(neighbours)
    n = len(sizes)
    cells = [sizes[u] * math.prod(sizes[b] for b in _bits(neighbours[u])) for u in range(n)]
    heap = [(c, u) for u, c in enumerate(cells)]
    heapq.heapify(heap)
    alive = (1 << n) - 1
    found = set()
    while alive:
        c, v = heapq.heappop(heap)
        if not alive >> v & 1 or c != cells[v]:
            continue  # an entry from before the column's cells changed
        around = neighbours[v] & alive
        for a in _bits(around):
            joined = around & ~neighbours[a] & ~(1 << a)
            cells[a] //= sizes[v]  # v leaves a's clique, v's other neighbours join it
            for b in _bits(joined):
                cells[a] *= sizes[b]
            neighbours[a] |= joined
            heapq.heappush(heap, (cells[a], a))
        found.add(around | 1 << v)
        alive &= ~(1 << v)
    return found


def _elimination_cliques(sizes, sets):
    """Maximal cliques of a triangulation of the graph whose cliques include ``sets``."""
    sizes = [int(s) for s in sizes]
    maximal = _maximal(_elimination_masks(sizes, _neighbour_masks(len(sizes), sets)))
    return [tuple(_bits(c)) for c in sorted(maximal, key=lambda c: (-c.bit_count(), _bits(c)))]


def _maximal(masks):
    """The masks of ``masks`` inside no other."""
    return [c for c in masks if not any(c != m and c & m == c for m in masks)]


def junction_tree(sizes, sets):
    """A junction tree whose cliques cover ``sets`` and every column.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of each column.
    sets : sequence of tuples of int
        Sets of columns that must lie inside one clique.

    Returns
    -------
    cliques : list of tuples of int
        Maximal cliques (sorted column tuples).
    parent : list of int
        Each clique's parent (-1 for the root, the largest clique).
    order : list of int
        The cliques in breadth-first order from the root.

    Examples
    --------
    >>> junction_tree([2, 3, 2], [(0, 1), (1, 2)])
    ([(0, 1), (1, 2)], [-1, 0], [0, 1])
    """
    sizes = [int(s) for s in sizes]
    cliques = _elimination_cliques(sizes, sets)
    k = len(cliques)
    edges = sorted((-len(set(cliques[i]) & set(cliques[j])), i, j)
                   for i in range(k) for j in range(i + 1, k))
    root_of = list(range(k))

    def find(x):
        while root_of[x] != x:
            root_of[x] = root_of[root_of[x]]
            x = root_of[x]
        return x

    adjacent = [[] for _ in range(k)]
    for _, i, j in edges:  # maximum spanning tree on overlaps (Kruskal)
        ri, rj = find(i), find(j)
        if ri != rj:
            root_of[ri] = rj
            adjacent[i].append(j)
            adjacent[j].append(i)
    cells = [math.prod(sizes[a] for a in c) for c in cliques]
    root = int(np.argmax(cells))
    parent, order, seen = [-1] * k, [root], {root}
    for u in order:
        for v in adjacent[u]:
            if v not in seen:
                seen.add(v)
                parent[v] = u
                order.append(v)
    return cliques, parent, order


def junction_tree_size(sizes, sets):
    """Total cells of the cliques of :func:`junction_tree` ``(sizes, sets)``.

    Examples
    --------
    >>> junction_tree_size([2, 3, 2], [(0, 1), (1, 2)])
    12
    """
    return junction_tree_sizes(sizes, sets, [()])[0]


def junction_tree_sizes(sizes, sets, extra):
    """:func:`junction_tree_size` of ``sets`` with each set of ``extra`` added in turn.

    Examples
    --------
    >>> junction_tree_sizes([2, 3, 2], [(0, 1)], [(1, 2), (0, 2), ()])
    [12, 10, 8]
    """
    sizes = [int(s) for s in sizes]
    base = _neighbour_masks(len(sizes), sets)
    out = []
    for e in extra:
        mask = _mask(e)
        neighbours = [m | mask & ~(1 << a) if mask >> a & 1 else m for a, m in enumerate(base)]
        maximal = _maximal(_elimination_masks(sizes, neighbours))
        out.append(sum(math.prod(sizes[a] for a in _bits(c)) for c in maximal))
    return out


def _einsum(operands, output):
    """``numpy.einsum`` in sublist form, columns relabelled 0, 1, ... (it takes labels < 52)."""
    labels = {}
    relabelled = []
    for k, item in enumerate(operands):
        relabelled.append([labels.setdefault(a, len(labels)) for a in item] if k % 2 else item)
    return np.einsum(*relabelled, [labels[a] for a in output], optimize="greedy")


def _shape(sizes, scope):
    return [sizes[a] for a in scope]


def _expand(table, scope, target, sizes):
    """``table`` over ``scope`` (sorted) as a view broadcastable over ``target`` (sorted superset)."""
    inside = set(scope)
    return table.reshape([sizes[a] if a in inside else 1 for a in target])


def _log_sum_to(table, scope, keep):
    axes = tuple(i for i, a in enumerate(scope) if a not in keep)
    return _logsumexp(table, axis=axes) if axes else table


class GraphicalModel:
    """``exp(sum_c theta_c(x_c)) / Z`` over measured marginals, fitted by mirror descent.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of each column.
    marginals : sequence of tuples of int
        The measured sets of columns (each gets a log-potential table).

    Attributes
    ----------
    marginals : list of tuples of int
        Sorted column tuples, in the order given (and added).
    theta : list of ndarray
        Log-potential tables, axes in each marginal's column order.
    cliques, parent, order : see :func:`junction_tree`

    Examples
    --------
    >>> import numpy as np
    >>> model = GraphicalModel([2, 2], [(0, 1)])
    >>> _ = model.fit([np.array([[0.5, 0.0], [0.0, 0.5]])], [np.full((2, 2), 1e4)],
    ...               max_iter=300)
    >>> np.round(model.marginal((0, 1)), 2).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """

    def __init__(self, sizes, marginals):
        self.sizes = [int(s) for s in sizes]
        self.marginals = []
        self.theta = []
        self._step = None
        for m in marginals:
            self._add(m)
        self._build()

    # -- structure -------------------------------------------------------------
    def _add(self, marginal):
        marginal = tuple(sorted(int(a) for a in marginal))
        if marginal in self.marginals:
            return False
        self.marginals.append(marginal)
        self.theta.append(np.zeros(_shape(self.sizes, marginal)))
        return True

    def add_marginal(self, marginal):
        """Give ``marginal`` a log-potential table (zeros) if it has none; rebuild the tree."""
        if self._add(marginal):
            self._build()

    def _build(self):
        self.cliques, self.parent, self.order = junction_tree(self.sizes, self.marginals)
        self.home = [next(i for i, c in enumerate(self.cliques) if set(m) <= set(c))
                     for m in self.marginals]
        self.separators = [
            tuple(sorted(set(c) & set(self.cliques[p]))) if p >= 0 else ()
            for c, p in zip(self.cliques, self.parent)
        ]
        self.children = [[] for _ in self.cliques]
        for i, p in enumerate(self.parent):
            if p >= 0:
                self.children[p].append(i)
        self._beliefs = None

    @property
    def size(self):
        """Total cells of the junction tree's cliques."""
        return sum(math.prod(_shape(self.sizes, c)) for c in self.cliques)

    def clear_zeros(self):
        """Undo :meth:`set_zeros`: every ``-inf`` log-potential back to 0."""
        self.theta = [np.where(np.isfinite(t), t, 0.0) for t in self.theta]
        self._beliefs = None

    def set_zeros(self, marginal, zeros):
        """Fix the cells ``zeros`` (boolean table) of ``marginal``'s log-potential at ``-inf``."""
        j = self.marginals.index(tuple(sorted(marginal)))
        self.theta[j] = np.where(zeros, -np.inf, np.where(np.isfinite(self.theta[j]),
                                                          self.theta[j], 0.0))
        self._beliefs = None

    # -- inference -------------------------------------------------------------
    def _log_beliefs(self, theta):
        """Normalised log-marginals of every junction-tree clique under ``theta``."""
        sizes = self.sizes
        potentials = [np.zeros(_shape(sizes, c)) for c in self.cliques]
        for m, table, h in zip(self.marginals, theta, self.home):
            potentials[h] = potentials[h] + _expand(table, m, self.cliques[h], sizes)
        upward = [None] * len(self.cliques)
        for i in reversed(self.order):
            for j in self.children[i]:
                potentials[i] = potentials[i] + _expand(upward[j], self.separators[j],
                                                        self.cliques[i], sizes)
            if self.parent[i] >= 0:
                upward[i] = _log_sum_to(potentials[i], self.cliques[i], set(self.separators[i]))
        beliefs = [None] * len(self.cliques)
        for i in self.order:
            belief = potentials[i]
            p = self.parent[i]
            if p >= 0:
                with np.errstate(invalid="ignore"):
                    down = _log_sum_to(beliefs[p], self.cliques[p], set(self.separators[i])) \
                        - upward[i]
                down = np.where(np.isnan(down), -np.inf, down)  # -inf - -inf: an empty value
                belief = belief + _expand(down, self.separators[i], self.cliques[i], sizes)
            total = _logsumexp(belief)
            if not np.isfinite(total):
                raise FloatingPointError("the structural zeros leave no possible row")
            beliefs[i] = belief - total
        return beliefs

    def _measured_marginals(self, beliefs):
        return [np.exp(_log_sum_to(beliefs[h], self.cliques[h], set(m)))
                for m, h in zip(self.marginals, self.home)]

    def _beliefs_now(self):
        if self._beliefs is None:
            self._beliefs = self._log_beliefs(self.theta)
        return self._beliefs

    def marginal(self, columns):
        """The model's marginal on ``columns``, axes in sorted column order."""
        columns = tuple(sorted(int(a) for a in columns))
        wanted = set(columns)
        beliefs = self._beliefs_now()
        for i, c in enumerate(self.cliques):
            if wanted <= set(c):
                return np.exp(_log_sum_to(beliefs[i], c, wanted))
        # the smallest subtree holding every wanted column: drop leaves that add none
        keep = set(range(len(self.cliques)))
        changed = True
        while changed and len(keep) > 1:
            changed = False
            for i in sorted(keep):
                near = [j for j in self.children[i] if j in keep]
                if self.parent[i] in keep:
                    near.append(self.parent[i])
                if len(near) == 1 and not ((set(self.cliques[i]) - set(self.cliques[near[0]]))
                                           & wanted):
                    keep.discard(i)
                    changed = True
        order = [i for i in self.order if i in keep]
        messages = {}
        for i in reversed(order):
            operands = [np.exp(beliefs[i]), list(self.cliques[i])]
            scope = set(self.cliques[i])
            for j in self.children[i]:
                if j in keep:
                    over, table = messages[j]
                    operands += [table, list(over)]
                    scope |= set(over)
            if i == order[0]:
                return _einsum(operands, list(columns))
            separator = self.separators[i]
            if separator:  # p(clique) / p(separator): the clique given its parent
                mass = np.exp(_log_sum_to(beliefs[i], self.cliques[i], set(separator)))
                with np.errstate(divide="ignore"):
                    operands += [np.where(mass > 0, 1.0 / mass, 0.0), list(separator)]
            over = sorted(set(separator) | (wanted & scope))
            messages[i] = (tuple(over), _einsum(operands, over))
        raise AssertionError("unreachable")  # pragma: no cover

    def answers(self, marginals):
        """The model's answers to every cell of ``marginals``, concatenated (C order)."""
        out = []
        for m in marginals:
            m = tuple(int(a) for a in m)
            table = self.marginal(m)
            # the cells' order follows the marginal's own column order
            order = np.argsort(np.argsort(m))
            out.append(np.transpose(table, order).ravel() if len(m) > 1 else table.ravel())
        return np.concatenate(out) if out else np.zeros(0)

    # -- fit -------------------------------------------------------------------
    def fit(self, targets, precisions, *, max_iter=100, tol=1e-6):
        """Mirror descent on ``1/2 sum precision * (mu - target)**2`` over the measured marginals.

        ``targets[j]`` and ``precisions[j]`` are tables shaped like
        ``theta[j]`` (``precision`` 0 where not measured). Stops after
        ``max_iter`` steps or when a step lowers the objective by less than
        ``tol`` times its value. Returns ``self``; ``objective_`` and
        ``n_iter_`` say how it ended.
        """
        targets = [np.asarray(t, dtype=float) for t in targets]
        precisions = [np.asarray(p, dtype=float) for p in precisions]

        def evaluate(theta):
            mus = self._measured_marginals(self._log_beliefs(theta))
            value, grads = 0.0, []
            for mu, y, w in zip(mus, targets, precisions):
                r = mu - y
                value += 0.5 * float(np.sum(w * r * r))
                grads.append(w * r)
            return value, grads, mus

        theta = [t.copy() for t in self.theta]
        value, grads, mus = evaluate(theta)
        it = 0
        step = self._step or 1.0 / max(float(np.max(w)) for w in precisions)
        for it in range(1, max_iter + 1):
            while True:
                trial = [t - step * g for t, g in zip(theta, grads)]
                new_value, new_grads, new_mus = evaluate(trial)
                # sufficient decrease for a mirror step (Armijo on the linearisation)
                decrease = sum(float(np.sum(g * (m - m2))) for g, m, m2 in zip(grads, mus, new_mus))
                if value - new_value >= 0.5 * decrease or step < 1e-300:
                    break
                step *= 0.5
            gain = value - new_value
            theta, value, grads, mus = trial, new_value, new_grads, new_mus
            step *= 1.5
            if gain <= tol * value:
                break
        self.theta = theta
        self._step = step
        self._beliefs = None
        self.objective_ = value
        self.n_iter_ = it
        return self

    # -- sampling --------------------------------------------------------------
    def sample(self, n, rng):
        """``n`` rows of codes drawn from the model, shape ``(n, n_columns)``."""
        sizes = self.sizes
        beliefs = self._beliefs_now()
        rows = np.zeros((n, len(sizes)), dtype=np.intp)
        for i in self.order:
            clique = self.cliques[i]
            p = np.exp(beliefs[i])
            separator = self.separators[i]
            if not separator:
                flat = p.ravel() / p.sum()
                cells = rng.permutation(np.repeat(np.arange(flat.size), allocate_counts(flat, n, rng)))
                for a, v in zip(clique, np.unravel_index(cells, _shape(sizes, clique))):
                    rows[:, a] = v
                continue
            new = [a for a in clique if a not in separator]
            axes = [clique.index(a) for a in separator] + [clique.index(a) for a in new]
            table = np.transpose(p, axes).reshape(math.prod(_shape(sizes, separator)), -1)
            given = np.ravel_multi_index(tuple(rows[:, a] for a in separator),
                                         _shape(sizes, separator))
            # stratified uniforms within each separator value, rows in random order
            shuffled = rng.permutation(n)
            shuffled = shuffled[np.argsort(given[shuffled], kind="stable")]
            group = given[shuffled]
            starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
            lengths = np.diff(np.r_[starts, n])
            rank = np.arange(n) - np.repeat(starts, lengths)
            u = np.empty(n)
            u[shuffled] = (rank + np.repeat(rng.uniform(size=len(starts)), lengths)) \
                / np.repeat(lengths, lengths)
            width = table.shape[1]
            mass = table.sum(axis=1)
            flat = np.cumsum(table.ravel())
            before = np.r_[0.0, flat][np.arange(table.shape[0]) * width]
            point = before[given] + u * mass[given]
            values = np.searchsorted(flat, point, side="right") - given * width
            values = np.clip(values, 0, width - 1)
            empty = mass[given] <= 0  # a separator value the model gives no mass: uniform
            values[empty] = np.minimum((u[empty] * width).astype(np.intp), width - 1)
            for a, v in zip(new, np.unravel_index(values, _shape(sizes, new))):
                rows[:, a] = v
        return rows
