"""Shared fixtures.

The paper's integer-coded datasets live in ``../shared/datasets`` beside the
checkout on developer machines and in CI, but not in a user's clone: tests that
need them use the ``shared_datasets`` fixture, which skips with a reason when
the folder is absent. The bundled data in ``sklearn_privsyn/data`` covers the
same code paths.
"""

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = Path(
    os.environ.get("PRIVSYN_SHARED_DATASETS", _REPO.parent / "shared" / "datasets")
)


@pytest.fixture(scope="session")
def shared_datasets():
    """Path to ``../shared/datasets``; skips the test when it is absent."""
    if not (SHARED_DATASETS / "adult.csv").is_file():
        pytest.skip(
            f"shared datasets not found at {SHARED_DATASETS} (they sit beside the "
            "checkout in CI; set PRIVSYN_SHARED_DATASETS to point elsewhere)"
        )
    return SHARED_DATASETS
