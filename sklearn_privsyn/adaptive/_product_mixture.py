"""Noisy marginal answers fitted by a mixture of product distributions.

The second representation of :class:`~sklearn_privsyn.AdaptiveProjection`'s
projection (the first, :func:`~sklearn_privsyn.adaptive.project`, is a mixture of
point records). A mixture of ``K`` product distributions has component
weights ``w`` on the simplex and, for each component ``k`` and column ``j``,
a categorical distribution ``p_k[j, .]`` over the column's codes. Its answer
to the cell ``(v_1, ..., v_r)`` of the marginal on columns ``(j_1, ..., j_r)``
is

    a(v) = sum_k w_k prod_i p_k[j_i, v_i],

and it is fitted to noisy answers ``y`` with variances ``var`` by minimising
the same inverse-variance weighted objective as the records projection,

    f = 1/2 sum_c (a_c - y_c)**2 / var_c

(cells with infinite variance, not measured, do not count), over softmax
logits of ``w`` and of every ``p_k[j, .]``, by L-BFGS with the analytic
gradient. It reads only the noisy answers: post-processing, free of privacy
cost. The model is smooth by construction: a cell far from every component's
mode gets a small product mass rather than all or nothing, and marginals that
were never measured inherit the components' structure. (RAP, Aydore et al.
2021, fits a related relaxed representation.)

Per marginal, the answers are an outer product over all but the last column
(``T``, shape ``(K, cells / s_last)``) times the last column's table, one
matrix product; the gradient runs the same chain backwards.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .._sampling import allocate_counts
from .._random import make_generator
from ._projection import MarginalCells, checked_targets

__all__ = ["ProductMixture", "ProductMixtureResult", "fit_product_mixture",
           "sample_product_mixture"]

# The start's 1-way estimates are mixed with this share of the uniform
# distribution, so that no value starts at a vanishing (flat-gradient) probability.
_START_UNIFORM = 0.1


@dataclass(frozen=True)
class ProductMixtureResult:
    """A fitted mixture of product distributions.

    Attributes
    ----------
    weights : ndarray of shape (n_components,)
        Component probabilities (positive, summing to one).
    tables : list of ndarray of shape (n_components, block_size)
        Per column, each component's distribution over its codes.
    objective : float
        ``1/2 sum_c (a_c - y_c)**2 / var_c`` at the end.
    start_objective : float
        The same at the start.
    n_iter : int
        L-BFGS iterations.
    stop_reason : str
        ``"converged"``, ``"max_iter"``, ``"time_limit"`` or the optimiser's message.
    seconds : float
        Wall-clock time.
    """

    weights: np.ndarray
    tables: list
    objective: float
    start_objective: float
    n_iter: int
    stop_reason: str
    seconds: float


def _softmax(logits):
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


class ProductMixture:
    """Fit a mixture of product distributions to noisy marginal answers.

    Keeps its parameters between calls, so that it can be continued with more
    measurements (adaptive rounds): call :meth:`update_targets` and
    :meth:`run` again. ``noisy`` and ``variances`` index the workload's cells
    followed by those of ``extra_marginals`` (tuples of attribute indices, see
    :class:`~sklearn_privsyn.adaptive.MarginalCells`).

    The start is data-independent given the noisy answers: every component
    starts at the 1-way distributions estimated from the measured marginals
    (inverse-variance average of their sums, clipped, mixed with
    ``_START_UNIFORM`` uniform), its logits perturbed by Gaussian noise of sd
    ``init_scale`` drawn from ``random_state``; the component weights start
    uniform.

    Parameters
    ----------
    workload : QueryWorkload
        A fitted workload; its cells are the answers' index.
    noisy : array-like of shape (n_cells,)
        Noisy answers (fractions of rows); ignored where not measured.
    variances : float or array-like of shape (n_cells,)
        Their noise variances; ``inf`` marks a cell that was not measured.
    n_components : int, default=32
        Number of product components ``K``.
    extra_marginals : sequence of tuples of int, default=()
        Marginals measured besides the workload's.
    init_scale : float, default=1.0
        Standard deviation of the start's logit perturbation.
    random_state : int, Generator or None, default=None
        Seed of the start's perturbation.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 0, 1, 1]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": 2}, k=2).fit(X)
    >>> fit = ProductMixture(wl, wl.answer(X), 1e-4, n_components=2, random_state=0).run()
    >>> np.round(fit.weights @ np.ones(2), 6).item()
    1.0
    >>> np.round(ProductMixture.answers_of(wl, fit.weights, fit.tables), 2).tolist()
    [0.5, 0.0, 0.0, 0.5]
    """

    def __init__(self, workload, noisy, variances, *, n_components=32, extra_marginals=(),
                 init_scale=1.0, random_state=None):
        index = MarginalCells(workload, extra_marginals)
        self.marginals = [tuple(int(a) for a in m) for m in index.marginals]
        self.offsets = index.offsets
        self.n_cells = index.n_cells
        self.sizes = [int(s) for s in index.sizes]
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.n_components = int(n_components)
        self.init_scale = float(init_scale)
        self.rng = make_generator(random_state)
        self.x = None
        self.update_targets(noisy, variances)

    # -- targets -----------------------------------------------------------------
    def update_targets(self, noisy, variances):
        """Set the noisy answers and their variances (``inf``: not measured)."""
        precision, self.target = checked_targets(noisy, variances, self.n_cells)
        self.precision = precision
        self._measured = [
            m for m in range(len(self.marginals))
            if np.any(precision[self.offsets[m]:self.offsets[m + 1]] > 0)
        ]

    def _one_way_estimates(self):
        """Per column, the inverse-variance average of the measured marginals' sums."""
        total = [np.zeros(s) for s in self.sizes]
        weight = [np.zeros(s) for s in self.sizes]
        for m in self._measured:
            cells = slice(self.offsets[m], self.offsets[m + 1])
            if not np.all(self.precision[cells] > 0):
                continue
            shape = [self.sizes[a] for a in self.marginals[m]]
            y = self.target[cells].reshape(shape)
            var = (1.0 / self.precision[cells]).reshape(shape)
            for i, a in enumerate(self.marginals[m]):
                axes = tuple(j for j in range(len(shape)) if j != i)
                precision = 1.0 / var.sum(axis=axes)
                total[a] += precision * y.sum(axis=axes)
                weight[a] += precision
        estimates = []
        for s, t, w in zip(self.sizes, total, weight):
            p = np.clip(np.divide(t, w, out=np.zeros(s), where=w > 0), 0.0, None)
            p = p / p.sum() if p.sum() > 0 else np.full(s, 1.0 / s)
            estimates.append((1.0 - _START_UNIFORM) * p + _START_UNIFORM / s)
        return estimates

    def _start(self):
        K = self.n_components
        logits = np.concatenate([np.log(p) for p in self._one_way_estimates()])
        theta = logits[None, :] + self.init_scale * self.rng.standard_normal((K, len(logits)))
        return np.concatenate([np.zeros(K), theta.ravel()])

    # -- parameters --------------------------------------------------------------
    def _unpack(self, x):
        K = self.n_components
        theta = x[K:].reshape(K, -1)
        tables = [_softmax(theta[:, self.starts[a]:self.starts[a + 1]])
                  for a in range(len(self.sizes))]
        return _softmax(x[:K]), tables

    @property
    def weights(self):
        """Component weights of the current fit."""
        return self._unpack(self._x())[0]

    @property
    def tables(self):
        """Per column, the components' distributions in the current fit."""
        return self._unpack(self._x())[1]

    def _x(self):
        if self.x is None:
            self.x = self._start()
        return self.x

    @staticmethod
    def _marginal_answers(weights, tables, attrs):
        """Answers of one marginal, C order, and the outer products ``T`` on the way."""
        T = weights[:, None] * tables[attrs[0]]
        if len(attrs) == 1:
            return T.sum(axis=0), [T]
        chain = [T]
        for a in attrs[1:-1]:
            T = (T[:, :, None] * tables[a][:, None, :]).reshape(len(weights), -1)
            chain.append(T)
        return (T.T @ tables[attrs[-1]]).ravel(), chain

    @staticmethod
    def answers_of(workload, weights, tables):
        """Answers of the workload's cells under the mixture ``(weights, tables)``.

        Parameters
        ----------
        workload : QueryWorkload
            A fitted workload.
        weights : ndarray of shape (n_components,)
            Component probabilities.
        tables : list of ndarray of shape (n_components, block_size)
            Per column, each component's distribution.

        Returns
        -------
        answers : ndarray of shape (n_queries_,)
        """
        return ProductMixture._answers(weights, tables, workload.marginal_set_.marginals)

    @staticmethod
    def _answers(weights, tables, marginals):
        """Answers of every cell of ``marginals``, concatenated in their order."""
        return np.concatenate([
            ProductMixture._marginal_answers(weights, tables, tuple(int(a) for a in m))[0]
            for m in marginals
        ])

    def answers(self):
        """Answers of the current mixture on every cell, shape ``(n_cells,)``."""
        weights, tables = self._unpack(self._x())
        return self._answers(weights, tables, self.marginals)

    # -- objective and gradient ----------------------------------------------------
    def _objective_gradient(self, x):
        weights, tables = self._unpack(x)
        g_weights = np.zeros_like(weights)
        g_tables = [np.zeros_like(t) for t in tables]
        value = 0.0
        for m in self._measured:
            attrs = self.marginals[m]
            cells = slice(self.offsets[m], self.offsets[m + 1])
            answers, chain = self._marginal_answers(weights, tables, attrs)
            difference = answers - self.target[cells]
            residual = self.precision[cells] * difference
            value += 0.5 * float(residual @ difference)
            if len(attrs) == 1:
                G = np.broadcast_to(residual, chain[0].shape)
            else:
                last = attrs[-1]
                R = residual.reshape(-1, self.sizes[last])
                g_tables[last] += chain[-1] @ R
                G = (R @ tables[last].T).T  # d f / d T, (K, cells / s_last)
                for i in range(len(attrs) - 2, 0, -1):
                    G3 = G.reshape(len(weights), -1, self.sizes[attrs[i]])
                    g_tables[attrs[i]] += np.einsum("kij,ki->kj", G3, chain[i - 1])
                    G = np.einsum("kij,kj->ki", G3, tables[attrs[i]])
            g_tables[attrs[0]] += weights[:, None] * G
            g_weights += (G * tables[attrs[0]]).sum(axis=1)
        # back through the softmaxes
        g_phi = weights * (g_weights - g_weights @ weights)
        g_theta = np.concatenate([
            t * (g - (g * t).sum(axis=1, keepdims=True)) for t, g in zip(tables, g_tables)
        ], axis=1)
        return value, np.concatenate([g_phi, g_theta.ravel()])

    def objective(self):
        """``f = 1/2 sum_c precision_c (a_c - y_c)**2`` of the current mixture."""
        return self._objective_gradient(self._x())[0]

    # -- the fit -------------------------------------------------------------------
    def run(self, *, max_iter=500, tol=1e-9, time_limit=None, progress=None):
        """L-BFGS from the current parameters (the seeded start on the first call).

        Stops after ``max_iter`` iterations, when the objective's relative
        decrease falls below ``tol``, or after ``time_limit`` seconds (the
        last iterate is kept). ``progress(iteration, objective)`` is called
        after every iteration. Returns a :class:`ProductMixtureResult`.
        """
        t0 = time.perf_counter()
        x0 = self._x()
        start_value = self._objective_gradient(x0)[0]
        state = {"it": 0, "timed_out": False}

        def callback(intermediate_result):
            state["it"] += 1
            if progress is not None:
                progress(state["it"], float(intermediate_result.fun))
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                state["timed_out"] = True
                raise StopIteration

        result = minimize(self._objective_gradient, x0, jac=True, method="L-BFGS-B",
                          callback=callback,
                          options={"maxiter": int(max_iter), "ftol": float(tol), "gtol": 0.0,
                                   "maxcor": 20})
        value = float(result.fun)
        if value <= start_value:
            self.x = result.x
        else:  # never worse than the start
            value = start_value
        if state["timed_out"]:
            reason = "time_limit"
        elif result.nit >= max_iter:
            reason = "max_iter"
        elif result.success:
            reason = "converged"
        else:
            reason = str(result.message)
        weights, tables = self._unpack(self.x)
        return ProductMixtureResult(
            weights=weights, tables=tables, objective=value, start_objective=float(start_value),
            n_iter=int(result.nit), stop_reason=reason, seconds=time.perf_counter() - t0,
        )


def fit_product_mixture(workload, noisy, variances, *, n_components=32, max_iter=500,
                        tol=1e-9, time_limit=None, init_scale=1.0, random_state=None):
    """A mixture of product distributions whose answers best fit noisy answers.

    Minimises ``1/2 sum_c (a_c - y_c)**2 / var_c`` over mixtures of
    ``n_components`` product distributions (see :class:`ProductMixture`).
    Post-processing: it reads only ``noisy`` and ``variances``, never data,
    so answers from any mechanism can be turned into a distribution to draw
    rows from (:func:`sample_product_mixture`).

    Parameters
    ----------
    workload : QueryWorkload
        A fitted workload; its cells are the answers' index.
    noisy : array-like of shape (n_queries_,)
        Noisy answers of the workload's cells (fractions of rows).
    variances : float or array-like of shape (n_queries_,)
        Their noise variances; ``inf`` marks a cell that was not measured.
    n_components : int, default=32
        Number of product components.
    max_iter : int, default=500
        L-BFGS iterations at most.
    tol : float, default=1e-9
        Stop when the objective's relative decrease is below ``tol``.
    time_limit : float, default=None
        Seconds; the last iterate is returned when exceeded.
    init_scale : float, default=1.0
        Standard deviation of the start's logit perturbation.
    random_state : int, Generator or None, default=None
        Seed of the start.

    Returns
    -------
    result : ProductMixtureResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 1, 1]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": 2}, k=2).fit(X)
    >>> fit = fit_product_mixture(wl, wl.answer(X), 1e-4, n_components=4, random_state=0)
    >>> answers = ProductMixture.answers_of(wl, fit.weights, fit.tables)
    >>> np.round(answers, 2).tolist()
    [0.25, 0.25, 0.0, 0.5]
    >>> sample_product_mixture(fit.weights, fit.tables, 3, random_state=0).shape
    (3, 2)
    """
    mixture = ProductMixture(workload, noisy, variances, n_components=n_components,
                             init_scale=init_scale, random_state=random_state)
    return mixture.run(max_iter=max_iter, tol=tol, time_limit=time_limit)


def sample_product_mixture(weights, tables, n_samples, random_state=None):
    """Draw records from a mixture of products: a component, then each column independently.

    Component counts are ``n_samples * weights`` rounded up or down at random
    (systematic sampling, as the records representation's rows are); each
    row's columns are then drawn independently from its component's tables,
    and the rows are shuffled.

    Parameters
    ----------
    weights : ndarray of shape (n_components,)
        Component probabilities.
    tables : list of ndarray of shape (n_components, block_size)
        Per column, each component's distribution over its codes.
    n_samples : int
        Number of records.
    random_state : int, Generator or None, default=None
        Seed of the draw.

    Returns
    -------
    records : ndarray of shape (n_samples, n_columns)
        Codes.

    Examples
    --------
    >>> import numpy as np
    >>> tables = [np.array([[1.0, 0.0], [0.0, 1.0]])]
    >>> sample_product_mixture(np.array([0.5, 0.5]), tables, 4, random_state=0).sum()
    np.int64(2)
    """
    rng = make_generator(random_state)
    counts = allocate_counts(weights, int(n_samples), rng)
    component = np.repeat(np.arange(len(weights)), counts)
    component = component[rng.permutation(len(component))]
    records = np.empty((len(component), len(tables)), dtype=np.intp)
    for j, table in enumerate(tables):
        cumulative = np.cumsum(table, axis=1)[component]
        u = rng.uniform(size=(len(component), 1)) * cumulative[:, -1:]
        records[:, j] = np.minimum((cumulative < u).sum(axis=1), table.shape[1] - 1)
    return records
