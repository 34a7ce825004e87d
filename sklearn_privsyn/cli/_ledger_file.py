"""A fitted estimator's privacy spent as a JSON file (``privsyn fit --ledger``), and back."""

import json

from ._errors import CLIError

__all__ = ["read_ledger", "write_ledger"]


def write_ledger(estimator, path):
    """The fitted estimator's privacy spent as JSON, for ``privsyn report --ledger``."""
    ledger = estimator.ledger_
    payload = {
        "estimator": type(estimator).__name__,
        "epsilon": estimator.epsilon_,
        "delta": estimator.delta_,
        "rho_budget": ledger.rho_budget,
        "rho_spent": ledger.rho_spent,
        "entries": [{"mechanism": e.mechanism, "rho": e.rho, "count": e.count}
                    for e in ledger.entries],
    }
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
    except OSError as exc:
        raise CLIError(f"cannot write {path}: {exc.strerror or exc}") from None


def read_ledger(path):
    """(PrivacyLedger, delta) rebuilt by charging every entry of a ledger JSON file."""
    from ..privacy import PrivacyLedger

    try:
        with open(path, encoding="utf-8") as f:
            payload = json.load(f)
        ledger = PrivacyLedger(payload["rho_budget"])
        for entry in payload["entries"]:
            ledger.charge(entry["mechanism"], entry["rho"], entry["count"])
        return ledger, payload["delta"]
    except OSError as exc:
        raise CLIError(f"cannot read ledger file {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CLIError(f"ledger file {path} is not a ledger written by privsyn fit "
                       f"--ledger: {exc!r}") from None
