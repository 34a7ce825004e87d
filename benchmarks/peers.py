"""Adapters for optional peer synthesizers (smartnoise-synth's MST, AIM and MWEM).

``smartnoise-synth`` (import name ``snsynth``) is *not* a dependency of
sklearn-privsyn: it is imported lazily, inside ``fit``, and when it is
missing ``fit`` raises :class:`PeerNotInstalled`, which the benchmark runner
records as an error row ("not installed") without stopping the grid. Install
it in a separate environment (it pins its own numpy/pandas/torch stack)::

    pip install smartnoise-synth

Each adapter fits the peer on the integer-coded table with every column
declared categorical, samples ``n`` rows, and answers the workload on those
rows (``answers_``, fractions of rows), so its error is measured exactly like
the synthesizers'. Caveat recorded in the results: smartnoise's categorical
transformer learns each column's categories from the data (it does not take
our public domain), which is outside the privacy guarantee; the measured
accuracy is unaffected. The peers' own accounting is trusted: ``rho_`` and
the ledger are not available, ``epsilon_`` is the requested epsilon.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone

from sklearn_privsyn.workload import QueryWorkload

__all__ = ["PeerNotInstalled", "SmartNoisePeer", "snsynth_available"]


class PeerNotInstalled(ImportError):
    """The optional peer library is not installed."""


def snsynth_available():
    """Whether ``snsynth`` (smartnoise-synth) can be imported."""
    try:
        import snsynth  # noqa: F401
    except ImportError:
        return False
    return True


class SmartNoisePeer(BaseEstimator):
    """A smartnoise-synth synthesizer measured on our workload.

    Parameters
    ----------
    synth : {"mst", "aim", "mwem"}, default="mst"
        Name passed to ``snsynth.Synthesizer.create``.
    epsilon : float, default=1.0
    delta : float, default=None
        ``None`` means ``1 / n**2``; passed to peers that take a delta.
    workload : QueryWorkload, default=None
        Cloned and fitted on ``X``; used only to measure the sample.
    options : dict, default=None
        Extra keyword arguments for ``Synthesizer.create`` (e.g.
        ``{"degree": 3}`` for AIM, ``{"split_factor": 3}`` for MWEM).
    random_state : int or None, default=None
        Seeds numpy's global generator before fitting (the peers draw from it).

    Examples
    --------
    >>> peer = SmartNoisePeer(synth="mst", epsilon=1.0)
    >>> peer.synth
    'mst'
    """

    def __init__(self, *, synth="mst", epsilon=1.0, delta=None, workload=None,
                 options=None, random_state=None):
        self.synth = synth
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.options = options
        self.random_state = random_state

    def fit(self, X, y=None):
        try:
            from snsynth import Synthesizer
        except ImportError as exc:
            raise PeerNotInstalled(
                f"smartnoise-synth is not installed (needed for peer {self.synth!r}): "
                "pip install smartnoise-synth"
            ) from exc
        workload = QueryWorkload(k=3) if self.workload is None else clone(self.workload)
        workload.fit(X)
        n = len(X)
        delta = self.delta if self.delta is not None else 1.0 / n**2
        kwargs = dict(self.options or {})
        if self.synth in ("mst", "aim"):
            kwargs.setdefault("delta", delta)
        if self.random_state is not None:
            np.random.seed(self.random_state)
        model = Synthesizer.create(self.synth, epsilon=float(self.epsilon), **kwargs)
        model.fit(X, categorical_columns=list(X.columns), preprocessor_eps=0.0)
        sample = model.sample(n)
        sample = sample[list(X.columns)].astype(np.int64)
        self.workload_ = workload
        self.answers_ = workload.answer(sample)
        self.sample_ = sample  # the runner's train-on-synthetic rows
        self.delta_ = float(delta)
        self.epsilon_ = float(self.epsilon)
        self.model_ = model
        return self
