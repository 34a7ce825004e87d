"""Optional peer synthesizers (smartnoise-synth's MST, AIM and MWEM), measured like ours.

``smartnoise-synth`` (import name ``snsynth``) is *not* a dependency of
sklearn-privsyn: it is imported lazily, inside ``fit``, and when it is
missing ``fit`` raises :class:`PeerNotInstalled`, which the benchmark runner
records as an error row ("not installed") without stopping the grid. It
pins its own numpy/pandas/torch stack, so install it in a separate
environment together with this package::

    python3 -m venv peers-venv
    peers-venv/bin/pip install smartnoise-synth -e .

The adapter encodes the table with the workload (every column's codes:
categories, bins of numbers, missing codes, as ``privsyn fit`` encodes it),
fits the peer on the codes with every column categorical, samples ``n`` rows
of codes and decodes them back to values (:meth:`QueryWorkload.decode`), so
the peer's rows are measured exactly like a synthesizer's ``sample(n)``.
Caveat recorded in the results: smartnoise's categorical transformer learns
each column's categories from the codes present in the data (it does not
take the public domain), which is outside its privacy guarantee; the
measured accuracy is unaffected. The peers' own accounting is trusted:
``rho_`` and the ledger are not available, ``epsilon_`` is the requested
epsilon.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone

from sklearn_privsyn.workload import QueryWorkload

__all__ = ["PEERS", "PeerNotInstalled", "SmartNoisePeer", "snsynth_available"]

#: The runner's peer names -> smartnoise-synth's synthesizer names.
PEERS = {"mst": "mst", "aim": "aim", "snmwem": "mwem"}


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
        Cloned and fitted on ``X``: it encodes the table for the peer, decodes
        the peer's rows and measures them.
    options : dict, default=None
        Extra keyword arguments for ``Synthesizer.create`` (e.g.
        ``{"degree": 3}`` for AIM, ``{"split_factor": 3}`` for MWEM).
    random_state : int or None, default=None
        Seeds numpy's global generator before fitting (the peers draw from it)
        and the decoding of numbers inside their bins.

    Attributes
    ----------
    sample_ : DataFrame
        The peer's ``n`` rows, decoded to the values and dtypes of ``X``.
    answers_ : ndarray of shape (n_queries,)
        The workload's answers on ``sample_``.

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
        columns = [str(c) for c in X.columns]
        codes = pd.DataFrame(workload.encode(X), columns=columns)
        n = len(X)
        delta = self.delta if self.delta is not None else 1.0 / n**2
        kwargs = dict(self.options or {})
        if self.synth in ("mst", "aim"):
            kwargs.setdefault("delta", delta)
        if self.random_state is not None:
            np.random.seed(self.random_state)
        model = Synthesizer.create(self.synth, epsilon=float(self.epsilon), **kwargs)
        model.fit(codes, categorical_columns=columns, preprocessor_eps=0.0)
        sampled = model.sample(n)[columns].to_numpy(dtype=np.int64)
        sample = workload.decode(sampled, random_state=self.random_state)
        sample.columns = X.columns
        self.workload_ = workload
        self.sample_ = sample
        self.answers_ = workload.answer(sample)
        self.delta_ = float(delta)
        self.epsilon_ = float(self.epsilon)
        self.model_ = model
        return self
