"""A benchmark row's subprocess: ``python -m sklearn_privsyn.benchmark.worker SPEC OUT``.

Runs the JSON spec with :func:`~sklearn_privsyn.benchmark.runner.execute` and
writes its row to ``OUT`` as JSON; the parent reads it, or records the
worker's exit or its time-out.
"""

import json
import sys


def main(argv=None):
    spec_json, out_path = (sys.argv[1:] if argv is None else argv)[:2]
    import numpy  # noqa: F401  (imports first, so base_rss_mb excludes only the run)
    import pandas  # noqa: F401

    import sklearn_privsyn.workload  # noqa: F401
    from sklearn_privsyn.benchmark.runner import execute, peak_rss_mb

    base = peak_rss_mb()
    row = execute(json.loads(spec_json), base_rss_mb=base)
    with open(out_path, "w") as handle:
        json.dump(row, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
