"""The grid of a benchmark: its config file, the runs it expands to, and their ids."""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import os
from pathlib import Path

from sklearn_privsyn.benchmark.protocol import ORDERS
from sklearn_privsyn.registry import CLI_ALGORITHMS

__all__ = ["ALGORITHMS", "expand_grid", "load_config", "run_id", "specs_from_config"]

#: name -> (module, class) of everything a grid can run: the references that
#: are not synthesizers, the smartnoise-synth peers, then every synthesizer of
#: the registry by its command-line name (a live view: new entries show up).
ALGORITHMS = collections.ChainMap({
    "hdmm": ("sklearn_privsyn.benchmark.baselines", "HDMMBaseline"),
    "zeros": ("sklearn_privsyn.benchmark.baselines", "ZeroBaseline"),
    "resample": ("sklearn_privsyn.benchmark.baselines", "ResampleBaseline"),
    "mst": ("sklearn_privsyn.benchmark.peers", "SmartNoisePeer"),
    "aim": ("sklearn_privsyn.benchmark.peers", "SmartNoisePeer"),
    "snmwem": ("sklearn_privsyn.benchmark.peers", "SmartNoisePeer"),
}, CLI_ALGORITHMS)

#: Keys a ``[[grid]]`` block (or ``[defaults]``) may hold.
GRID_KEYS = {"algorithms", "datasets", "epsilon", "k", "n_marginals", "seeds", "delta",
             "workload_seed", "data_dir", "params", "orders", "order_seed", "data_seed", "tstr"}
#: Keys of a config file besides its blocks.
CONFIG_KEYS = {"output", "plots", "n_jobs", "timeout", "isolation", "defaults", "grid"}

_KEY_FIELDS = ("algorithm", "estimator", "params", "dataset", "k", "n_marginals", "epsilon",
               "delta", "seed", "workload_seed")
# Part of the key only for a shuffled order, so rows run before orders existed keep their ids.
_ORDER_KEY_FIELDS = ("order", "order_seed")
# Part of the key only when not 0, so rows run before data seeds existed keep their ids.
_DATA_SEED_KEY = "data_seed"


def default_data_dir():
    """Where the paper's coded datasets are: ``$PRIVSYN_SHARED_DATASETS``, else ``../shared/datasets``."""
    return Path(os.environ.get("PRIVSYN_SHARED_DATASETS", Path("..") / "shared" / "datasets"))


def _as_list(value):
    if value is None:
        return [None]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _algorithm_entry(entry, extra_params=None):
    if isinstance(entry, str):
        entry = {"name": entry}
    entry = dict(entry)
    name = entry.get("name")
    if name is None:
        raise ValueError(f"algorithm entry {entry!r} has no 'name'")
    unknown = set(entry) - {"name", "label", "params", "python"}
    if unknown:
        raise ValueError(f"algorithm entry {entry!r}: unknown keys {sorted(unknown)}")
    params = dict((extra_params or {}).get(name, {}))
    params.update(entry.get("params", {}))
    return {"name": name, "label": entry.get("label", name), "params": params,
            "python": entry.get("python")}


def _dataset_entry(entry, base_dir):
    """(label, table): a dataset name, or a file table ``{name, path, domain}`` resolved."""
    if isinstance(entry, dict):
        unknown = set(entry) - {"name", "path", "domain"}
        if unknown or "path" not in entry:
            raise ValueError(
                f"a dataset table takes 'path' and optional 'name' and 'domain'; got {entry!r}")
        path = _resolve(entry["path"], base_dir)
        table = {"path": str(path)}
        if entry.get("domain") is not None:
            table["domain"] = str(_resolve(entry["domain"], base_dir))
        return str(entry.get("name", path.stem)), table
    name = str(entry)
    if _is_file_name(name):
        return name, {"path": str(_resolve(name, base_dir))}
    parts = name.split(":")
    if parts[0] == "generated" and len(parts) > 1 and Path(parts[1]).suffix:
        return name, {"schema": str(_resolve(parts[1], base_dir))}  # a path to a domain file
    return name, None


def _is_file_name(name):
    return name.lower().endswith((".csv", ".parquet", ".pq"))


def _resolve(path, base_dir):
    path = Path(path).expanduser()
    return path if path.is_absolute() or base_dir is None else Path(base_dir) / path


def _data_seed_value(value, seed):
    """The table's seed: an int, or ``"seed"`` for the run's own seed."""
    if value == "seed":
        return int(seed)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"data_seed must be an int or 'seed'; got {value!r}")
    return value


def _marginals_value(value):
    if value is None or value == "all":
        return None
    return int(value)


def expand_grid(block, defaults=None, extra_params=None, base_dir=None, data_dir=None):
    """Run specs (dicts) of one grid block: the product of its lists.

    Order: dataset, k, n_marginals, workload order, epsilon, seed, then
    algorithm (so the algorithms of one setting run one after the other).
    Relative paths (file tables, ``data_dir``) are taken from ``base_dir``
    (the config file's folder), else from the current directory. The coded
    datasets are read from the block's ``data_dir``, else ``data_dir``, else
    :func:`default_data_dir`.
    """
    block = {**(defaults or {}), **block}
    unknown = set(block) - GRID_KEYS
    if unknown:
        raise ValueError(f"unknown grid keys {sorted(unknown)}")
    if "algorithms" not in block or "epsilon" not in block:
        raise ValueError("a grid block needs 'algorithms' and 'epsilon'")
    params_by_name = {**(extra_params or {}), **block.get("params", {})}
    algorithms = [_algorithm_entry(a, params_by_name) for a in _as_list(block["algorithms"])]
    orders = _as_list(block.get("orders", ["drawn"]))
    if set(orders) - set(ORDERS):
        raise ValueError(f"orders must be among {ORDERS}; got {orders}")
    if block.get("data_dir") is not None:
        data_dir = _resolve(block["data_dir"], base_dir)
    elif data_dir is None:
        data_dir = default_data_dir()
    datasets = [_dataset_entry(d, base_dir) for d in _as_list(block.get("datasets", ["adult"]))]
    specs = []
    for (dataset, table), k, n_marg, order, eps, seed in itertools.product(
        datasets,
        _as_list(block.get("k", [3])),
        _as_list(block.get("n_marginals", [64])),
        orders,
        _as_list(block["epsilon"]),
        _as_list(block.get("seeds", [0])),
    ):
        for algo in algorithms:
            spec = {
                "algorithm": algo["label"],
                "estimator": algo["name"],
                "params": algo["params"],
                "dataset": dataset,
                "k": int(k),
                "n_marginals": _marginals_value(n_marg),
                "epsilon": float(eps),
                "delta": None if block.get("delta") is None else float(block["delta"]),
                "seed": int(seed),
                "workload_seed": int(block.get("workload_seed", 0)),
                "order": str(order),
                "order_seed": int(block.get("order_seed", 0)),
                "data_seed": _data_seed_value(block.get("data_seed", 0), seed),
                "data_dir": str(data_dir),
            }
            if table is not None:
                spec["table"] = table
            if algo["python"] is not None:  # another environment's interpreter runs it
                spec["python"] = str(Path(algo["python"]).expanduser())
            if not block.get("tstr", True):
                spec["tstr"] = False
            spec["run_id"] = run_id(spec)
            specs.append(spec)
    return specs


def canonical_params(params):
    """The estimator parameters of a run as canonical JSON (its ``params`` column)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def run_id(spec):
    """Short hash of the fields that identify a run (not paths, not timing)."""
    key = {f: spec[f] for f in _KEY_FIELDS}
    if spec.get("order", "drawn") != "drawn":
        key.update({f: spec[f] for f in _ORDER_KEY_FIELDS})
    if spec.get(_DATA_SEED_KEY, 0):
        key[_DATA_SEED_KEY] = spec[_DATA_SEED_KEY]
    key["params"] = canonical_params(spec["params"])
    return hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def load_config(path):
    """Read a TOML or JSON benchmark config.

    Returns the config as a dict (``output``, ``plots``, ``n_jobs``,
    ``timeout``, ``isolation``, ``defaults`` and the ``grid`` blocks), with
    ``base_dir``, the config file's folder, from which its relative paths
    are read.

    Raises
    ------
    ValueError
        If the file has no ``[[grid]]`` block or an unknown key.
    """
    path = Path(path)
    try:
        if path.suffix == ".toml":
            import tomllib

            with open(path, "rb") as handle:
                config = tomllib.load(handle)
        else:
            with open(path) as handle:
                config = json.load(handle)
    except FileNotFoundError:
        raise ValueError(f"no such config file: {path}") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError and json.JSONDecodeError
        raise ValueError(f"{path} is not a readable config file: {exc}") from None
    if not config.get("grid"):
        raise ValueError(f"{path} has no [[grid]] block")
    unknown = set(config) - CONFIG_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
    config["base_dir"] = str(path.resolve().parent)
    return config


def specs_from_config(config, data_dir=None):
    """Every run of a config's blocks, in order (see :func:`expand_grid`)."""
    defaults = config.get("defaults", {})
    specs = []
    for block in config["grid"]:
        specs.extend(expand_grid(block, defaults, base_dir=config.get("base_dir"),
                                 data_dir=data_dir))
    return specs


def config_path(config, key):
    """A path of the config (``output``, ``plots``), read from its folder; None if absent."""
    value = config.get(key)
    return None if value is None else _resolve(value, config.get("base_dir"))
