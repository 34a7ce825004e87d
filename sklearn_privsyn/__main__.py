"""``python -m sklearn_privsyn``: the ``privsyn`` command (see :mod:`sklearn_privsyn.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
