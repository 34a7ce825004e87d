"""References for the benchmark grid that are not synthesizers: HDMM-style answers, zeros, resampling.

They follow the synthesizers' fit/attribute conventions closely enough for
the benchmark runner to treat them alike, but they release *answers*
(``answers_``, one per positive workload query, fractions of rows), not records.

HDMM-style baseline (``HDMMBaseline``)
--------------------------------------
What the paper's authors compared against (``reference-implementation.md``):
every workload marginal measured with Gaussian noise, identity strategy, least
squares reconstruction, no strategy optimisation. (Their prefix strategy for
100-valued attributes is not reproduced: identity everywhere.)

**Sensitivity.** Neighbouring tables differ by replacing one row (bounded DP;
``n`` is public). Replacing row ``x`` by ``x'`` changes a marginal's vector of
*counts* by ``-1`` in the cell of ``x`` and ``+1`` in the cell of ``x'`` when
the two cells differ, and not at all when they coincide. Its L2 sensitivity is
therefore ``sqrt(1**2 + 1**2) = sqrt(2)`` (L1: 2). Answers here are fractions
of rows (counts divided by the public ``n``), so the sensitivity is
``sqrt(2) / n`` per marginal. (Under add/remove-one neighbours it would be 1.)

**Budget.** The zCDP budget ``rho`` (from ``epsilon`` and ``delta = 1/n**2``
by :func:`~sklearn_privsyn.privacy.epsilon_to_rho`) is split evenly over the
``m`` marginals: each is released with i.i.d. ``N(0, sigma**2)`` noise,
``sigma = (sqrt(2)/n) / sqrt(2 rho / m) = sqrt(m / rho) / n``, costing
``rho / m``; zCDP composes additively, so the total is exactly ``rho``. (This
equals one Gaussian mechanism on the concatenation of all marginals, whose L2
sensitivity is ``sqrt(2 m) / n``.)

**Reconstruction.** With the identity strategy each marginal is measured once
and directly, so the least-squares estimate of a marginal from its own
measurement is the noisy marginal itself (``projection="none"``, the authors'
baseline). We do *not* solve the global least-squares problem over the full
data vector, which would average the lower-order sub-marginals shared by
overlapping marginals and lower the noise somewhat. Optional
post-processing (no privacy cost):

* ``"clip"``: negative cells set to 0, then each marginal rescaled to sum 1;
* ``"simplex"``: each marginal replaced by its Euclidean projection onto the
  probability simplex, i.e. least squares under the constraints that the
  marginal is a distribution (``p >= 0``, ``sum p = 1``).

All-zeros (``ZeroBaseline``)
----------------------------
Answers every query with 0 and spends nothing: its max error is the largest
cell of the workload, the floor any useful method must beat.

Resample of the real rows (``ResampleBaseline``, **not private**)
----------------------------------------------------------------
``n`` rows drawn with replacement from the real table, answered like the
rows a synthesizer's ``sample(n)`` returns: the error that drawing ``n`` rows
alone costs, even from a perfect model of the data. A reference from the
other side (nothing private can be expected to beat it), with no privacy at
all: ``epsilon_`` is infinite and no ledger is kept.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, clone

from sklearn_privsyn.privacy import (
    PrivacyLedger,
    epsilon_to_rho,
    gaussian_mechanism,
    gaussian_sigma,
)
from sklearn_privsyn.simplex import project_to_simplex
from sklearn_privsyn.workload import QueryWorkload

__all__ = ["HDMMBaseline", "ResampleBaseline", "ZeroBaseline", "project_to_simplex"]


def _fit_workload(workload, X):
    workload = QueryWorkload(k=3) if workload is None else clone(workload)
    return workload.fit(X)


class HDMMBaseline(BaseEstimator):
    """The authors' HDMM-style baseline: Gaussian noise on every marginal.

    See the module docstring for the sensitivity, budget split and
    reconstruction.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of (epsilon, delta)-DP.
    delta : float, default=None
        ``None`` means ``1 / n**2``.
    workload : QueryWorkload, default=None
        Cloned and fitted on ``X``.
    projection : {"none", "clip", "simplex"}, default="none"
        Post-processing of each noisy marginal.
    conversion : {"cks", "classic"}, default="cks"
        (epsilon, delta) to zCDP conversion.
    random_state : int or None, default=None
        Seed of the noise.

    Attributes
    ----------
    answers_ : ndarray of shape (n_queries,)
        Released answers, one per positive workload query (fractions).
    sigma_ : float
        Noise standard deviation on fractions (``sqrt(m / rho) / n``).
    rho_, delta_, epsilon_, ledger_, workload_
        As on the synthesizers.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1] * 50, "b": [0, 0, 1, 1] * 25})
    >>> base = HDMMBaseline(epsilon=1.0, workload=QueryWorkload(domain={"a": 2, "b": 2}, k=1),
    ...                     random_state=0).fit(X)
    >>> base.answers_.shape, bool(abs(base.ledger_.rho_spent - base.rho_) < 1e-12)
    ((4,), True)
    """

    def __init__(self, *, epsilon=1.0, delta=None, workload=None, projection="none",
                 conversion="cks", random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.projection = projection
        self.conversion = conversion
        self.random_state = random_state

    def fit(self, X, y=None):
        if self.projection not in ("none", "clip", "simplex"):
            raise ValueError(
                f"projection must be 'none', 'clip' or 'simplex'; got {self.projection!r}."
            )
        workload = _fit_workload(self.workload, X)
        records = workload.encode(X)
        n = records.shape[0]
        delta = self.delta if self.delta is not None else 1.0 / n**2
        rho = epsilon_to_rho(self.epsilon, delta, method=self.conversion)
        offsets = workload.marginal_offsets_
        m = len(offsets) - 1
        sensitivity = math.sqrt(2.0) / n  # per marginal, fractions, replace-one
        rho_each = rho / m
        sigma = gaussian_sigma(sensitivity, rho_each)
        ledger = PrivacyLedger(rho)
        ledger.charge("gaussian_mechanism", rho_each, count=m)
        rng = np.random.default_rng(self.random_state)

        # PRIVATE: true marginals, released only through the Gaussian mechanism.
        noisy = gaussian_mechanism(workload.answer_codes(records), sensitivity, sigma, rng)

        if self.projection != "none":
            for j in range(m):
                cells = slice(offsets[j], offsets[j + 1])
                if self.projection == "simplex":
                    noisy[cells] = project_to_simplex(noisy[cells])
                else:
                    clipped = np.maximum(noisy[cells], 0.0)
                    total = clipped.sum()
                    size = offsets[j + 1] - offsets[j]
                    noisy[cells] = clipped / total if total > 0 else 1.0 / size

        self.workload_ = workload
        self.answers_ = noisy
        self.sigma_ = float(sigma)
        self.rho_ = float(rho)
        self.delta_ = float(delta)
        self.ledger_ = ledger
        self.epsilon_ = ledger.epsilon(delta, method=self.conversion)
        self.n_rounds_ = m  # one measurement per marginal
        return self


class _ReferenceBaseline(BaseEstimator):
    """The parameters of the reference baselines, which spend no budget."""

    def __init__(self, *, epsilon=1.0, delta=None, workload=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.random_state = random_state


class ZeroBaseline(_ReferenceBaseline):
    """Answers every workload query with 0, spending no privacy budget.

    Parameters
    ----------
    epsilon : float, default=1.0
        Ignored (kept so the grid can pass it); nothing is spent.
    delta : float, default=None
        Recorded as ``delta_`` (``1 / n**2`` when None).
    workload : QueryWorkload, default=None
        Cloned and fitted on ``X`` (for the number of queries only).
    random_state : ignored

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 1]})
    >>> ZeroBaseline(workload=QueryWorkload(domain={"a": 2}, k=1)).fit(X).answers_.tolist()
    [0.0, 0.0]
    """

    def fit(self, X, y=None):
        workload = _fit_workload(self.workload, X)
        n = len(X)
        self.workload_ = workload
        self.answers_ = np.zeros(workload.n_queries_)
        self.delta_ = float(self.delta if self.delta is not None else 1.0 / n**2)
        self.ledger_ = PrivacyLedger(0.0)
        self.rho_ = 0.0
        self.epsilon_ = 0.0
        return self


class ResampleBaseline(_ReferenceBaseline):
    """Answers of ``n`` real rows drawn with replacement: not private, a reference only.

    Parameters
    ----------
    epsilon : float, default=1.0
        Ignored (kept so the grid can pass it); nothing here is private.
    delta : float, default=None
        Recorded as ``delta_`` (``1 / n**2`` when None).
    workload : QueryWorkload, default=None
        Cloned and fitted on ``X``.
    random_state : int or None, default=None
        Seeds the draw (``numpy.random.default_rng``).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 0, 0, 0]})
    >>> base = ResampleBaseline(workload=QueryWorkload(domain={"a": 2}, k=1)).fit(X)
    >>> base.answers_.tolist(), base.epsilon_
    ([1.0, 0.0], inf)
    """

    def fit(self, X, y=None):
        workload = _fit_workload(self.workload, X)
        n = len(X)
        rows = np.random.default_rng(self.random_state).integers(n, size=n)
        self.workload_ = workload
        self.sample_ = X.iloc[rows]  # real rows: the runner measures them like sample(n)
        self.answers_ = workload.answer(self.sample_)
        self.delta_ = float(self.delta if self.delta is not None else 1.0 / n**2)
        self.epsilon_ = math.inf
        return self
