"""Generated tables on a public schema, for choosing defaults without touching the evaluation sets.

Defaults tuned on the data we report would leak (and flatter) those results,
so hyperparameter rules are chosen on tables drawn from a latent-class model
that only borrows a public schema (domain sizes) from a ``*-domain.json`` file.

Each row picks one of ``n_classes`` latent classes; given the class, every
column is drawn independently from a Dirichlet-distributed categorical, with
ordered columns given smooth, peaked profiles as binned numeric columns have.
Low-order marginals are then correlated and skewed, much like census data.
"""

import json

import numpy as np
import pandas as pd

__all__ = ["bayes_net_table", "latent_class_table", "load_domain", "with_dominant_values"]


def latent_class_table(domain, n_rows, *, n_classes=8, concentration=0.3, random_state=0):
    """A DataFrame of integer codes with the given ``{column: size}`` domain."""
    rng = np.random.default_rng(random_state)
    class_weights = rng.dirichlet(np.full(n_classes, 2.0))
    classes = rng.choice(n_classes, size=n_rows, p=class_weights)
    columns = {}
    for name, size in domain.items():
        table = np.empty((n_classes, size))
        for c in range(n_classes):
            if size > 20:
                # ordered, binned numeric column: a peak plus a heavy spike at a point
                grid = np.arange(size)
                centre, width = rng.uniform(0, size), rng.uniform(0.03, 0.3) * size
                profile = np.exp(-0.5 * ((grid - centre) / width) ** 2) + 1e-3
                spike = rng.integers(size)
                profile[spike] += rng.uniform(0, 3) * profile.sum()
                table[c] = profile / profile.sum()
            else:
                table[c] = rng.dirichlet(np.full(size, concentration))
        cumulative = np.cumsum(table[classes], axis=1)
        draws = (cumulative < rng.uniform(size=(n_rows, 1))).sum(axis=1)
        columns[name] = np.minimum(draws, size - 1)
    return pd.DataFrame(columns)


def load_domain(path):
    """The ``{column: size}`` domain of a ``*-domain.json`` file (a public schema)."""
    with open(path) as handle:
        return json.load(handle)


def with_dominant_values(X, domain, *, share=0.6, low=0.5, high=0.97, random_state=0):
    """Give some columns one value that most rows share, as census columns have.

    Each column, with probability ``share``, gets a value (chosen uniformly)
    that replaces the row's value in a fraction of rows drawn from
    ``U(low, high)``: zero capital gains, a majority race or country. Latent-class
    tables alone have no column where one value holds 90% of the rows, and
    such columns are what makes 3-way cells of mass 0.5 and more common.
    """
    rng = np.random.default_rng(random_state)
    X = X.copy()
    for name, size in domain.items():
        if rng.random() < share:
            mass = rng.uniform(low, high)
            hit = rng.random(len(X)) < mass
            X.loc[hit, name] = int(rng.integers(size))
    return X


def bayes_net_table(domain, n_rows, *, max_parents=2, concentration=0.3, random_state=0,
                    rows_random_state=None):
    """A DataFrame of integer codes drawn from a random Bayesian network.

    Unlike :func:`latent_class_table`, not a mixture of product distributions:
    the columns are put in a random order and each is drawn from a seeded
    conditional table given up to ``max_parents`` columns drawn before it
    (their number uniform in ``0..max_parents``). Each parent configuration
    gets its own distribution: a Dirichlet draw for columns of at most 20
    values, and for wider (binned numeric) columns a smooth peak at a random
    centre plus a spike, as in :func:`latent_class_table`.

    ``random_state`` draws the network (order, parents, tables) and, unless
    ``rows_random_state`` is given, the rows too; with it, the rows come from
    their own stream, so that chunks of one table can be drawn separately (the
    same network, ``rows_random_state`` one per chunk).
    """
    rng = np.random.default_rng(random_state)
    row_rng = rng if rows_random_state is None else np.random.default_rng(rows_random_state)
    names = list(domain)
    order = rng.permutation(len(names))
    codes = np.zeros((n_rows, len(names)), dtype=np.int64)
    drawn = []
    for j in order:
        size = int(domain[names[j]])
        n_parents = min(int(rng.integers(max_parents + 1)), len(drawn))
        parents = rng.choice(drawn, size=n_parents, replace=False) if n_parents else []
        config = np.zeros(n_rows, dtype=np.int64)
        n_configs = 1
        for p in parents:
            config = config * int(domain[names[p]]) + codes[:, p]
            n_configs *= int(domain[names[p]])
        if size > 20:
            grid = np.arange(size)
            centre = rng.uniform(0, size, size=(n_configs, 1))
            width = rng.uniform(0.03, 0.3, size=(n_configs, 1)) * size
            table = np.exp(-0.5 * ((grid - centre) / width) ** 2) + 1e-3
            spikes = rng.integers(size, size=n_configs)
            table[np.arange(n_configs), spikes] += rng.uniform(0, 3, n_configs) * table.sum(axis=1)
            table /= table.sum(axis=1, keepdims=True)
        else:
            table = rng.dirichlet(np.full(size, concentration), size=n_configs)
        cumulative = np.cumsum(table[config], axis=1)
        draws = (cumulative < row_rng.uniform(size=(n_rows, 1))).sum(axis=1)
        codes[:, j] = np.minimum(draws, size - 1)
        drawn.append(j)
    return pd.DataFrame({name: codes[:, j] for j, name in enumerate(names)})
