"""What multi-seed benchmarks share (the paper's workload, orders, figures): now ``sklearn_privsyn.benchmark.protocol``.

Kept so that the scripts here, and their commands in the notes, keep working.
"""

from sklearn_privsyn.benchmark.protocol import (  # noqa: F401
    FIGURES,
    ORDERS,
    fit_and_measure,
    in_order,
    paper_workload,
    sample_error,
    summary_lines,
)
