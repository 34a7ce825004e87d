"""What the HiGHS back-ends share: a silent ``Highs`` instance, the thread scheduler, options.

Both exact back-ends (:mod:`.highs` through highspy, :mod:`.pulp_highs` through
PuLP) import these from here, so neither reaches into the other.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

__all__ = ["DEFAULT_HIGHS_OPTIONS", "check_highs_params", "new_highs", "use_thread_count"]

_BANNER_LOCK = threading.Lock()
_BANNER_SHOWN = False


def new_highs(verbose=False):
    """A ``highspy.Highs`` instance, silent unless ``verbose``.

    HiGHS prints its banner to the C-level stdout when the first instance of
    the process is created, before any option can be set; the file descriptor
    is redirected for that one construction.
    """
    global _BANNER_SHOWN
    import highspy

    with _BANNER_LOCK:
        if _BANNER_SHOWN or verbose:
            _BANNER_SHOWN = True
            h = highspy.Highs()
        else:
            _BANNER_SHOWN = True
            try:
                sys.stdout.flush()
            except (OSError, ValueError, AttributeError):
                pass
            saved = os.dup(1)
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.close(devnull)
                h = highspy.Highs()
            finally:
                os.dup2(saved, 1)
                os.close(saved)
    h.setOptionValue("output_flag", bool(verbose))
    return h


_THREADS_LOCK = threading.Lock()
_THREADS_IN_USE = None


def use_thread_count(threads):
    """Prepare HiGHS's process-wide thread scheduler for ``threads`` threads.

    HiGHS sets up one scheduler per process at its first run; a later run
    asking for another thread count ends with model status "Not Set". The
    scheduler is reset whenever the count changes.
    """
    global _THREADS_IN_USE
    import highspy

    with _THREADS_LOCK:
        if _THREADS_IN_USE is not None and threads != _THREADS_IN_USE:
            highspy.Highs.resetGlobalScheduler(True)
        _THREADS_IN_USE = threads


#: HiGHS options applied before the user's ``options``. Measured on ADULT-sized
#: problems (benchmarks/bench_oracle.py): probing dominates presolve time on
#: these models (one-hot blocks make large clique tables) without paying off,
#: and HiGHS's primal heuristics and restarts are redundant given the
#: coordinate-ascent start; together these make solves 2-5x faster.
DEFAULT_HIGHS_OPTIONS = {
    "presolve_rule_off": 1 << 15,  # probing
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "mip_allow_restart": False,
}


def check_highs_params(oracle):
    """Validate an exact HiGHS oracle's ``options``, ``time_limit``, ``mip_gap`` and ``threads``."""
    options = getattr(oracle, "options", None)
    if options is not None:
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict of HiGHS options; got {type(options).__name__}.")
        import highspy

        probe = new_highs(False)
        for key, value in options.items():
            if probe.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise ValueError(f"HiGHS rejected option {key}={value!r}.")
    tl = oracle.time_limit
    if tl is not None and not (isinstance(tl, (int, float)) and tl > 0):
        raise ValueError(f"time_limit must be a positive number of seconds or None; got {tl!r}.")
    gap = oracle.mip_gap
    if gap is not None and not (isinstance(gap, (int, float)) and gap >= 0):
        raise ValueError(f"mip_gap must be a non-negative relative gap or None; got {gap!r}.")
    th = oracle.threads
    if th is not None and not (isinstance(th, (int, np.integer)) and th >= 1):
        raise ValueError(f"threads must be a positive int or None; got {th!r}.")
