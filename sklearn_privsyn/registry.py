"""The registry of synthesizers: one line per estimator, read by everything that lists them.

``import sklearn_privsyn``, the ``privsyn`` command (``--algorithm``), the demo,
the benchmark runner and the common tests (``tests/test_common.py``) all take
their list of synthesizers from here, so adding one is a module with a
:class:`~sklearn_privsyn._base.BaseSynthesizer` subclass plus one
:func:`register` call. Entries name their class by module path and class name
and import it only on use, so that reading the registry stays fast (smartnoise-synth's
``Synthesizer.create(name, ...)`` and scikit-learn's ``all_estimators()`` play the
same part there).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "CLI_ALGORITHMS",
    "SynthesizerEntry",
    "all_synthesizers",
    "create",
    "get_synthesizer",
    "register",
    "registered",
    "unregister",
]


def _frozen(params):
    return MappingProxyType(dict(params or {}))


@dataclass(frozen=True)
class SynthesizerEntry:
    """One registered synthesizer.

    Parameters
    ----------
    name : str
        The class name, as ``sklearn_privsyn`` exports it (``"FEM"``).
    module : str
        Dotted path of the module that defines it (``"sklearn_privsyn.fem"``).
    cli_name : str
        Its name for ``privsyn fit --algorithm`` and the benchmark runner
        (``"fem"``).
    description : str
        One line for listings.
    test_params : mapping, default={}
        Parameters for a fast fit on a tiny table (a few rows, two or three
        small columns): what the common tests use. Not meant to be accurate.
    demo_params : mapping, default={}
        Parameters the demo adds on the bundled Adult data, beyond the
        package defaults (to keep it under a minute).

    Examples
    --------
    >>> from sklearn_privsyn.registry import get_synthesizer
    >>> entry = get_synthesizer("fem")
    >>> entry.name, entry.module
    ('FEM', 'sklearn_privsyn.fem')
    >>> entry.load().__name__
    'FEM'
    """

    name: str
    module: str
    cli_name: str
    description: str
    test_params: Mapping = field(default_factory=dict)
    demo_params: Mapping = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "test_params", _frozen(self.test_params))
        object.__setattr__(self, "demo_params", _frozen(self.demo_params))

    def load(self):
        """The estimator class (imports its module)."""
        return getattr(importlib.import_module(self.module), self.name)

    def create(self, **params):
        """An instance with ``params``."""
        return self.load()(**params)


_REGISTRY: dict[str, SynthesizerEntry] = {}


def register(entry):
    """Add ``entry`` to the registry and return it.

    Raises
    ------
    ValueError
        If its ``name`` or ``cli_name`` is already registered.
    """
    if not isinstance(entry, SynthesizerEntry):
        raise TypeError(f"register takes a SynthesizerEntry; got {type(entry).__name__}")
    for other in _REGISTRY.values():
        if entry.name in (other.name, other.cli_name) or entry.cli_name in (other.name,
                                                                            other.cli_name):
            raise ValueError(f"a synthesizer named {entry.name!r} or {entry.cli_name!r} is "
                             f"already registered ({other.name}, {other.cli_name!r})")
    _REGISTRY[entry.name] = entry
    return entry


def unregister(name):
    """Remove the entry of ``name`` (class name or command-line name) and return it."""
    entry = get_synthesizer(name)
    del _REGISTRY[entry.name]
    return entry


@contextmanager
def registered(entry):
    """Register ``entry`` for the duration of a ``with`` block (for tests and plugins)."""
    register(entry)
    try:
        yield entry
    finally:
        _REGISTRY.pop(entry.name, None)


def all_synthesizers():
    """Every registered synthesizer, in registration order.

    Returns
    -------
    entries : tuple of SynthesizerEntry

    Examples
    --------
    >>> from sklearn_privsyn.registry import all_synthesizers
    >>> [e.cli_name for e in all_synthesizers()][:3]
    ['fem', 'sepfem', 'dualquery']
    """
    return tuple(_REGISTRY.values())


def get_synthesizer(name):
    """The entry of a synthesizer, by class name (``"FEM"``) or command-line name (``"fem"``).

    Raises
    ------
    ValueError
        If no synthesizer has that name; the message lists the names.
    """
    for entry in _REGISTRY.values():
        if name in (entry.name, entry.cli_name):
            return entry
    names = ", ".join(repr(e.cli_name) for e in _REGISTRY.values())
    raise ValueError(f"unknown synthesizer {name!r}; registered names are {names}")


def create(name, **params):
    """A synthesizer by name, with ``params``: ``create("fem", epsilon=1.0)``.

    Examples
    --------
    >>> from sklearn_privsyn.registry import create
    >>> create("DualQuery", epsilon=0.5).epsilon
    0.5
    """
    return get_synthesizer(name).create(**params)


class _ByCliName(Mapping):
    """Command-line name -> (module, class name), read from the registry at each access."""

    def __getitem__(self, cli_name):
        for entry in _REGISTRY.values():
            if entry.cli_name == cli_name:
                return entry.module, entry.name
        raise KeyError(cli_name)

    def __iter__(self):
        return iter([entry.cli_name for entry in _REGISTRY.values()])

    def __len__(self):
        return len(_REGISTRY)

    def __repr__(self):
        return f"CLI_ALGORITHMS({dict(self)!r})"


#: Live read-only view: command-line name -> (module, class name) of every registered
#: synthesizer (what ``privsyn fit --algorithm`` and the benchmark runner accept).
CLI_ALGORITHMS = _ByCliName()

_BRUTE = {"solver": "brute"}

for _entry in (
    SynthesizerEntry(
        "FEM", "sklearn_privsyn.fem", "fem",
        "follow-the-perturbed-leader against the exponential mechanism (Vietri et al. 2020)",
        test_params={**_BRUTE, "rounds": 2, "samples_per_round": 2},
        demo_params={"rounds": 100, "samples_per_round": 20},
    ),
    SynthesizerEntry(
        "SepFEM", "sklearn_privsyn.fem", "sepfem",
        "FEM with separable (per-attribute) perturbations (Vietri et al. 2020)",
        test_params={**_BRUTE, "rounds": 2, "samples_per_round": 2},
        demo_params={"rounds": 100, "samples_per_round": 20},
    ),
    SynthesizerEntry(
        "DualQuery", "sklearn_privsyn.dualquery", "dualquery",
        "multiplicative weights over queries, the oracle best-responds (Gaboardi et al. 2014)",
        test_params={**_BRUTE, "rounds": 2, "samples_per_round": 2},
    ),
    SynthesizerEntry(
        "DQRS", "sklearn_privsyn.dualquery", "dqrs",
        "DualQuery with rejection sampling (Vietri et al. 2020)",
        test_params={**_BRUTE, "rounds": 2, "samples_per_round": 2},
    ),
    SynthesizerEntry(
        "MWEM", "sklearn_privsyn.mwem", "mwem",
        "multiplicative weights over the full domain, the baseline (small domains only)",
        test_params={"rounds": 2},
    ),
    SynthesizerEntry(
        "AdaptiveProjection", "sklearn_privsyn.adaptive", "adaptive",
        "Gaussian measurements of the marginals projected onto records or a mixture of products",
        test_params={**_BRUTE, "rounds": 2, "max_iter": 10},
    ),
):
    register(_entry)
del _entry
