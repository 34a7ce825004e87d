"""Optimisation oracles: the data player's best response in FEM, sepFEM, DualQuery, DQRS.

Every back-end maximises, over valid records ``x`` (one value per attribute,
one-hot encoded), ``sum_i w_i q_i(x) + <x, c>`` where each ``q_i`` is a
conjunction of one-hot literals or its negation, ``w_i >= 0`` and ``c`` is a
linear term (noise in FEM and sepFEM).

The oracle never sees the private data: it receives the public one-hot layout,
queries chosen by differentially private mechanisms and fresh noise. Whatever
it returns (an optimum, a timed-out incumbent, a heuristic record, the
fallback record, or even garbage) is post-processing of private outputs, so the
privacy guarantee holds whatever the oracle returns; only accuracy is at stake.

Back-ends (see :func:`get_oracle`):

* ``"highs"``: :class:`HighsOracle`, exact, highspy with one incrementally
  updated model per session (the fastest exact choice);
* ``"pulp"``: :class:`PulpHighsOracle`, exact, modelled with PuLP, solved by HiGHS;
* ``"heuristic"``: :class:`HeuristicOracle`, fast local search, not exact;
* ``"hybrid"``: :class:`HybridOracle`, the local search on every call and
  HiGHS on one call in 50, which replaces the answer when it is better and
  measures the heuristic's gap (FEM's and sepFEM's default);
* ``"brute"``: :class:`BruteForceOracle`, enumeration for tiny domains.

Failure semantics: a time-out returns the best record found (status
``"time_limit"``); a solver error or an invalid solution returns the
data-independent fallback record (per-attribute argmax of the linear term),
status ``"fallback"``, counted in the session's :class:`SolverStats`.
Malformed problems (wrong shapes, bad indices) raise ``ValueError``.
"""

import importlib

__all__ = [
    "ORACLE_NAMES",
    "STATUSES",
    "BruteForceOracle",
    "HeuristicOracle",
    "HighsOracle",
    "HybridOracle",
    "OneHotLayout",
    "Oracle",
    "OracleProblem",
    "OracleResult",
    "OracleSession",
    "PulpHighsOracle",
    "SolverStats",
    "get_oracle",
    "open_session",
]

# Public name -> module of this package that defines it. Imported on first use, so
# that reading ORACLE_NAMES (the command line does, to parse --solver) stays cheap.
_LAZY = {
    "STATUSES": "_base",
    "Oracle": "_base",
    "OracleProblem": "_base",
    "OracleResult": "_base",
    "OracleSession": "_base",
    "SolverStats": "_base",
    "OneHotLayout": "_base",
    "BruteForceOracle": "brute",
    "HeuristicOracle": "heuristic",
    "HighsOracle": "highs",
    "HybridOracle": "hybrid",
    "PulpHighsOracle": "pulp_highs",
    "open_session": "_session",
}

#: Back-end name -> its oracle class.
_ORACLES = {
    "highs": "HighsOracle",
    "pulp": "PulpHighsOracle",
    "heuristic": "HeuristicOracle",
    "hybrid": "HybridOracle",
    "brute": "BruteForceOracle",
}

#: Back-end names :func:`get_oracle` accepts.
ORACLE_NAMES = tuple(_ORACLES)


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(__all__) | set(globals()))


def get_oracle(spec="highs"):
    """Turn a back-end name or an oracle instance into an oracle.

    Parameters
    ----------
    spec : {"highs", "pulp", "heuristic", "hybrid", "brute"} or Oracle, default="highs"
        A name (default parameters) or an object with a ``session(layout,
        random_state)`` method, returned unchanged.

    Returns
    -------
    oracle : Oracle

    Examples
    --------
    >>> get_oracle("heuristic")
    HeuristicOracle(n_restarts=8)
    >>> get_oracle("gurobi")
    Traceback (most recent call last):
    ...
    ValueError: unknown oracle 'gurobi'; valid names are 'highs', 'pulp', 'heuristic', 'hybrid', 'brute', or pass an oracle instance.
    """
    if isinstance(spec, str):
        cls_name = _ORACLES.get(spec.lower())
        if cls_name is None:
            names = ", ".join(repr(k) for k in _ORACLES)
            raise ValueError(
                f"unknown oracle {spec!r}; valid names are {names}, or pass an oracle instance."
            )
        return __getattr__(cls_name)()
    if callable(getattr(spec, "session", None)):
        return spec
    raise TypeError(
        f"oracle must be one of {', '.join(repr(k) for k in _ORACLES)} or an object with a "
        f"session(layout, random_state) method; got {type(spec).__name__}."
    )
