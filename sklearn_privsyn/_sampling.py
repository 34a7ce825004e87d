"""Turning a weighted set of records into rows: how many copies of each."""

import numpy as np

__all__ = ["allocate_counts"]


def allocate_counts(weights, n_samples, rng):
    """Split ``n_samples`` rows among records in proportion to ``weights``.

    Each record gets ``floor(n * w)`` rows and the remainder is spread by
    systematic sampling, so every count is ``n * w`` rounded up or down and the
    expected count is exactly ``n * w``. This has far less variance than
    drawing rows independently, so a sample keeps the fitted answers closely.

    Examples
    --------
    >>> import numpy as np
    >>> allocate_counts([0.5, 0.25, 0.25], 8, np.random.default_rng(0)).tolist()
    [4, 2, 2]
    """
    expected = n_samples * np.asarray(weights, dtype=float)
    counts = np.floor(expected).astype(np.int64)
    remainder = expected - counts
    missing = n_samples - int(counts.sum())
    if missing > 0:
        cumulative = np.cumsum(remainder)
        points = rng.uniform() + np.arange(missing)
        picked = np.searchsorted(cumulative, points, side="right")
        picked = np.minimum(picked, len(counts) - 1)
        np.add.at(counts, picked, 1)
    return counts
