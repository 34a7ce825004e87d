"""The benchmark references (HDMM-style answers, zeros, resampling): now ``sklearn_privsyn.benchmark.baselines``.

Kept so that the scripts here, and their commands in the notes, keep working.
"""

from sklearn_privsyn.benchmark.baselines import (  # noqa: F401
    HDMMBaseline,
    ResampleBaseline,
    ZeroBaseline,
    project_to_simplex,
)
