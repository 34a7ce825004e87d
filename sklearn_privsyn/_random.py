"""One place that turns a ``random_state`` into a ``numpy.random.Generator``.

The package's one rule, for an estimator's ``random_state`` and a
mechanism's ``rng`` alike: ``None`` draws fresh OS entropy, an int seeds
``numpy.random.default_rng``, a ``numpy.random.RandomState`` is drawn from
once (so that it advances, as in scikit-learn) and a ``Generator`` is used as
it is; anything else is a ``TypeError`` naming the parameter. (The one place
that keeps a ``RandomState`` is ``QueryWorkload``'s random choice of
marginals, which reproduces the paper's selection draw for draw.)
"""

from numbers import Integral

import numpy as np


def make_generator(random_state, name="random_state"):
    """Turn a scikit-learn style ``random_state`` into a ``numpy.random.Generator``.

    ``None`` gives fresh OS entropy, an int seeds the generator, a
    ``RandomState`` is drawn from (so that it advances, as scikit-learn does),
    and a ``Generator`` is used as it is.

    Examples
    --------
    >>> from sklearn_privsyn._random import make_generator
    >>> bool(make_generator(0).integers(10) == make_generator(0).integers(10))
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, (Integral, np.integer))
        and not isinstance(random_state, (bool, np.bool_))
    ):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    raise TypeError(
        f"{name} must be None, an int seed, a RandomState or a numpy.random.Generator; "
        f"got {random_state!r}."
    )


def uniform(rng, size):
    """Uniform draws on ``[0, 1)`` from a ``Generator`` or a ``RandomState`` (what ``decode``
    takes), as each draws them."""
    if isinstance(rng, np.random.Generator):
        return rng.random(size)
    return rng.random_sample(size)
