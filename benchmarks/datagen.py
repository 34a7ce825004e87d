"""Generated tables on a public schema: now ``sklearn_privsyn.benchmark.generated``.

Kept so that the scripts here, and their commands in the notes, keep working.
"""

from sklearn_privsyn.benchmark.generated import (  # noqa: F401
    bayes_net_table,
    latent_class_table,
    load_domain,
    with_dominant_values,
)
