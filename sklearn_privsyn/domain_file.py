"""The domain file: a column's public domain as JSON, read into workload keywords.

A domain file is a JSON object with one entry per column, in the order in
which marginals are enumerated. An entry is

* an int ``m``: the column holds integer codes ``0 .. m - 1`` (the paper's
  format), or ``{"size": m}``;
* a list of values, or ``{"values": [...]}``;
* ``{"bounds": [lo, hi], "bins": b}``: numbers cut into ``b`` equal-width
  bins on public bounds (``b`` may be a list of bin edges; default 10). Such
  an entry may add ``"points": [v, ...]``, exact values with codes of their
  own (point masses, e.g. a capital gain of 0), and ``"step": s``, the
  spacing of the values (synthetic values are multiples of it; integer
  columns have step 1), and ``"cuts": [c, ...]``, values where a bin must
  begin (the boundaries of a column derived from it, such as the ages where
  an age group changes), and ``"clock": true``, a time of day written HHMM
  (``517`` for 5:17), modelled in minutes (:mod:`sklearn_privsyn.clock`),
  ``"scale": "log"``, bins and fine cells equal in ``log(x - lo + c)`` (amounts
  mostly small and sometimes thousands of times larger; ``"log-bins"``: the
  bins alone, the fine cells equal-width), and ``"decimals": d``, how
  many decimals its synthetic values are written with
  (:mod:`sklearn_privsyn.decimals`; a derived number may say it too). See
  ``docs/numbers.rst``;
* ``{"derived": {"of": source, ...}}``: a public function of another column
  (a ``"map"`` of its values, ``"ranges"`` of them, ``"intervals"``, ``"apply"``,
  ``"floordiv"``, ``"mod"``, a ``"sum"`` of several, maybe a time of day, or an
  ``"expression"``, a formula), computed from the synthetic source instead of modelled; see
  :mod:`sklearn_privsyn.derived` and ``docs/derived.rst``.

An object entry may also say

* ``"day_of": "month"`` (or ``["year", "month"]``) on a day of the month:
  the day must exist in its month (no February 30), which the synthetic rows
  keep (:mod:`sklearn_privsyn.dates`);
* ``"at_most": bound`` (or a list) on a number: it never exceeds the column
  ``bound`` names, maybe plus or minus a number (``"Age - 18"``), times a
  positive one (``"8.7 * air_time"``) or taken from a number (``"64 - experience"``:
  the sum is at most 64); the synthetic rows keep it (:mod:`sklearn_privsyn.order_rules`);
* ``"at_least": bound`` (or a list), the same from below (``"12 - experience"``);
* ``"exactly_when": {"value": v, "column": other, "values": [w, ...]}``: the
  column holds ``v`` exactly when ``other`` holds one of the ``w``; the
  synthetic rows keep it (:mod:`sklearn_privsyn.value_rules`); with
  ``"between": [lo, hi]`` (and maybe ``"missing": true``) in place of
  ``"values"``, exactly when the number ``other`` is within them (or missing);
* ``"equal_when": {"column": other, "when": c, "values": [v, ...]}`` on a
  number: it equals the number ``other`` on the rows where ``c`` holds one of
  the ``v``; decoding sets it so (:mod:`sklearn_privsyn.equal_when`);
* ``"only_when"``, the same shape as ``"exactly_when"`` (or a list): the column holds ``v`` only
  when ``other`` holds one of the ``w``; kept the same way; with
  ``"between": [lo, hi]`` in place of ``"values"``, only when the number
  ``other`` is within ``lo`` and ``hi``; with ``"missing": true`` in place of
  ``"values"`` (both keys), exactly (only) when ``other`` is missing;
* ``"missing": true``: the column may hold missing values (empty cells); it
  gets a missing code, and synthetic rows may miss it. Columns without it
  may not;
* ``"other": value`` (with ``"values"`` only): the listed value that values
  outside the list are encoded as, e.g. ``"Other"``;
* ``"read_from_data": true``: the mark
  :func:`~sklearn_privsyn.domain_draft.draft_domain` puts on what it read
  from the data, which is not covered by the privacy guarantee.

:func:`workload_params` turns a file, its parsed JSON or a drafted domain
into :class:`~sklearn_privsyn.QueryWorkload` keyword arguments; the command
line goes through the same functions.
"""

from __future__ import annotations

import json
import os
import warnings

from .domain_draft import MARK
from .exceptions import PrivacyLeakWarning

__all__ = [
    "all_numbers",
    "declared_rules",
    "dump_domain",
    "parse_domain",
    "read_domain",
    "warn_read_from_data",
    "workload_kwargs",
    "workload_params",
]

# An object entry has exactly one of these keys, which sets its kind ...
_KINDS = ("size", "values", "bounds", "derived")
# ... and may add these (besides MARK and "missing").
_RULES = ("at_most", "at_least", "exactly_when", "only_when", "equal_when")
_EXTRA_KEYS = {"size": _RULES, "values": ("other", "day_of", *_RULES),
               "bounds": ("bins", "points", "step", "cuts", "clock", "scale", "day_of", "decimals",
                          *_RULES),
               "derived": ("decimals", *_RULES)}


def read_domain(path):
    """Read a domain JSON file (see :mod:`sklearn_privsyn.domain_file`).

    Parameters
    ----------
    path : str or path-like
        The JSON file.

    Returns
    -------
    params : dict
        As :func:`parse_domain` returns.

    Raises
    ------
    ValueError
        If the file is missing, not JSON, or an entry is malformed; the
        message names the file and the column.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from sklearn_privsyn.domain_file import read_domain
    >>> path = os.path.join(tempfile.mkdtemp(), "domain.json")
    >>> with open(path, "w") as f:
    ...     json.dump({"a": 3, "b": ["x", "y"], "c": {"bounds": [0, 1], "bins": 4}}, f)
    >>> params = read_domain(path)
    >>> params["columns"], params["domain"], params["bounds"], params["bins"]
    (['a', 'b', 'c'], {'a': 3, 'b': ['x', 'y']}, {'c': (0.0, 1.0)}, {'c': 4})
    """
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except OSError as exc:
        raise ValueError(f"cannot read domain file {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"domain file {path} is not valid JSON: {exc}") from None
    return parse_domain(raw, f"domain file {path}")


def dump_domain(domain):
    """The text of a domain file, one line per column, so that it reads as a list to review.

    Parameters
    ----------
    domain : dict
        ``{column: entry}``, e.g. the output of
        :func:`~sklearn_privsyn.domain_draft.draft_domain`.

    Returns
    -------
    text : str
        JSON that :func:`read_domain` reads back.

    Examples
    --------
    >>> from sklearn_privsyn.domain_file import dump_domain
    >>> print(dump_domain({"a": {"values": ["x", "y"], "missing": True}, "b": 3}), end="")
    {
      "a": {"values": ["x", "y"], "missing": true},
      "b": 3
    }
    """
    lines = [f"  {json.dumps(col)}: {json.dumps(entry)}" for col, entry in domain.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _same(a, b):
    """JSON equality: 1, 1.0 and true are different values in a list of values."""
    return json.dumps(a) == json.dumps(b)


def _entry_kind(where, spec):
    """(kind, spec without MARK, marked) of one object entry; ValueError on bad keys."""
    mark = spec.get(MARK, False)
    if not isinstance(mark, bool):
        raise ValueError(f"{where}: {MARK!r} must be true or false; got {mark!r}")
    spec = {key: value for key, value in spec.items() if key != MARK}
    kinds = [k for k in _KINDS if k in spec]
    if len(kinds) != 1:
        raise ValueError(
            f"{where}: an object entry needs exactly one of \"size\", \"values\", "
            f"\"bounds\" or \"derived\"; got keys {sorted(spec)}"
        )
    kind = kinds[0]
    allowed = {kind, "missing", *_EXTRA_KEYS[kind]}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        if "other" in unknown:
            raise ValueError(
                f"{where}: \"other\" needs the column's \"values\" listed (numbers outside "
                "their bounds are clipped instead)"
            )
        raise ValueError(
            f"{where}: an entry with {kind!r} takes only {sorted(allowed - {kind})} besides "
            f"{MARK!r}; got keys {sorted(spec)}"
        )
    missing = spec.get("missing", False)
    if not isinstance(missing, bool):
        raise ValueError(f"{where}: \"missing\" must be true or false; got {missing!r}")
    if kind == "derived" and "missing" in spec:
        raise ValueError(f"{where}: a derived column is missing exactly where its source is; "
                         "it takes no \"missing\"")
    return kind, spec, mark


def _check_values(where, values):
    if not isinstance(values, list):
        raise ValueError(f"{where}: \"values\" must be a list; got {values!r}")
    if not values:
        raise ValueError(f"{where}: the list of values is empty")
    if any(isinstance(v, (list, dict)) or v is None for v in values):
        raise ValueError(f"{where}: values must be strings or numbers; got {values!r}")
    if len({json.dumps(v) for v in values}) != len(values):
        raise ValueError(f"{where}: the list of values has duplicates")


def _check_size(where, size):
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{where}: domain size must be an int of at least 1; got {size!r}")


def _check_bounds(where, spec):
    lo_hi = spec["bounds"]
    if (
        not isinstance(lo_hi, list)
        or len(lo_hi) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in lo_hi)
        or not lo_hi[0] < lo_hi[1]
    ):
        raise ValueError(f"{where}: bounds must be [lo, hi] with lo < hi; got {lo_hi!r}")
    n_bins = spec.get("bins", 10)
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, list)) or (
        isinstance(n_bins, int) and n_bins < 1
    ):
        raise ValueError(f"{where}: bins must be a positive int or a list of edges; got {n_bins!r}")
    step = spec.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float))
                             or not step > 0):
        raise ValueError(f"{where}: step must be a positive number; got {step!r}")
    points = _number_list(where, spec, "points")
    if points is not None:
        if len(set(points)) != len(points):
            raise ValueError(f"{where}: the list of points has duplicates")
        if any(not lo_hi[0] <= v <= lo_hi[1] for v in points):
            raise ValueError(f"{where}: points must lie within the bounds {lo_hi!r}")
    cuts = _number_list(where, spec, "cuts")
    if cuts is not None and any(not lo_hi[0] < v < lo_hi[1] for v in cuts):
        raise ValueError(f"{where}: cuts must lie strictly inside the bounds {lo_hi!r}")
    if not isinstance(spec.get("clock", False), bool):
        raise ValueError(f"{where}: \"clock\" must be true or false; got {spec['clock']!r}")
    if spec.get("scale", "linear") not in ("linear", "log", "log-bins"):
        raise ValueError(f"{where}: \"scale\" must be \"linear\", \"log\" or \"log-bins\"; "
                         f"got {spec['scale']!r}")
    if spec.get("scale", "linear") != "linear" and spec.get("clock", False):
        raise ValueError(f"{where}: a clock (a time of day) has no log scale")
    return (float(lo_hi[0]), float(lo_hi[1])), n_bins, points, step, cuts


def _number_list(where, spec, key):
    """``spec[key]``, a list of numbers (booleans are not), or None when absent."""
    values = spec.get(key)
    if values is not None and (not isinstance(values, list) or any(
        isinstance(v, bool) or not isinstance(v, (int, float)) for v in values
    )):
        raise ValueError(f"{where}: {key} must be a list of numbers; got {values!r}")
    return values


def parse_domain(raw, source="the domain"):
    """Check a domain (the parsed JSON of a domain file, or a drafted one) and split it.

    Parameters
    ----------
    raw : dict
        ``{column: entry}``, entries as :mod:`sklearn_privsyn.domain_file`
        describes.
    source : str, default="the domain"
        How error messages name the domain (e.g. the file).

    Returns
    -------
    params : dict
        ``"columns"`` (the entries' order), ``"domain"`` (sizes and lists of
        values), ``"bounds"``, ``"bins"``, ``"points"``, ``"steps"``, ``"cuts"``
        ``"clocks"`` and ``"log_scale"`` (binned numbers), ``"days_of_month"``, ``"derived"``
        (column -> its declaration), ``"at_most"``, ``"at_least"``, ``"exactly_when"``,
        ``"equal_when"`` and
        ``"only_when"`` (column -> its rules), ``"missing"``
        (the columns declared missable), ``"other"`` (column -> its catch-all
        value) and ``"read_from_data"`` (the marked columns).

    Raises
    ------
    ValueError
        If an entry is malformed; the message names the column and the problem.

    Examples
    --------
    >>> from sklearn_privsyn.domain_file import parse_domain
    >>> params = parse_domain({
    ...     "a": {"values": ["x", "y", "Other"], "other": "Other", "missing": True},
    ...     "b": {"size": 2, "read_from_data": True}})
    >>> params["domain"], params["missing"], params["other"], params["read_from_data"]
    ({'a': ['x', 'y', 'Other'], 'b': 2}, ['a'], {'a': 'Other'}, ['b'])
    """
    if not isinstance(raw, dict) or not raw:
        raise ValueError(
            f"{source} must hold a non-empty JSON object {{column: size, values "
            "or {\"bounds\": [lo, hi], \"bins\": n}}"
        )
    params = {"columns": list(raw), "domain": {}, "bounds": {}, "bins": {}, "points": {},
              "steps": {}, "cuts": {}, "clocks": [], "log_scale": {}, "days_of_month": {},
              "derived": {}, "decimals": {},
              "at_most": {}, "at_least": {}, "exactly_when": {}, "only_when": {},
              "equal_when": {}, "missing": [], "other": {},
              "read_from_data": []}
    for col, spec in raw.items():
        where = f"{source}, column {col!r}"
        if isinstance(spec, bool) or not isinstance(spec, (int, list, dict)):
            raise ValueError(
                f"{where}: expected a size, a list of values or an object; got {spec!r}"
            )
        if not isinstance(spec, dict):
            spec = {"size": spec} if isinstance(spec, int) else {"values": spec}
        kind, spec, marked = _entry_kind(where, spec)
        if marked:
            params["read_from_data"].append(col)
        if spec.get("missing", False):
            params["missing"].append(col)
        if "day_of" in spec:
            of = spec["day_of"]
            if not (isinstance(of, str) or isinstance(of, list) and len(of) == 2
                    and all(isinstance(c, str) for c in of)):
                raise ValueError(f"{where}: \"day_of\" must be the month's column or [year, "
                                 f"month]; got {of!r}")
            params["days_of_month"][col] = of
        for key in _RULES:
            if key in spec:
                params[key][col] = spec[key]
        if "decimals" in spec:
            from .decimals import MAX_DECIMALS, is_decimal_count  # numpy: not at start

            count = spec["decimals"]
            if not is_decimal_count(count):
                raise ValueError(f"{where}: \"decimals\" must be a whole number from 0 to "
                                 f"{MAX_DECIMALS}; got {count!r}")
            params["decimals"][col] = count
        if kind == "size":
            _check_size(where, spec["size"])
            params["domain"][col] = spec["size"]
        elif kind == "values":
            values = spec["values"]
            _check_values(where, values)
            params["domain"][col] = values
            if "other" in spec:
                if not any(_same(spec["other"], v) for v in values):
                    raise ValueError(
                        f"{where}: \"other\" must be one of the column's values; got "
                        f"{spec['other']!r}"
                    )
                params["other"][col] = spec["other"]
        elif kind == "derived":
            params["derived"][col] = spec["derived"]
        else:
            bounds, n_bins, points, step, cuts = _check_bounds(where, spec)
            params["bounds"][col], params["bins"][col] = bounds, n_bins
            if points:
                params["points"][col] = points
            if step is not None:
                params["steps"][col] = step
            if cuts:
                params["cuts"][col] = cuts
            if spec.get("clock", False):
                params["clocks"].append(col)
            if spec.get("scale", "linear") != "linear":
                params["log_scale"][col] = "bins" if spec["scale"] == "log-bins" else "all"
    from .derived import parse_derived  # numpy: not at the command line's start

    try:
        parse_derived(params["derived"], params["columns"])
        declared_rules(params)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    return params


def declared_rules(params):
    """The order rules, then the value rules, that :func:`parse_domain`'s output declares.

    Raises ``ValueError`` naming the column of a malformed rule.
    """
    from .equal_when import parse_equal_when  # numpy: not at the command line's start
    from .order_rules import parse_at_least, parse_at_most
    from .value_rules import parse_value_rules

    return (parse_at_most(params["at_most"], params["columns"])
            + parse_at_least(params.get("at_least", {}), params["columns"])
            + parse_value_rules(params["exactly_when"], params["only_when"], params["columns"])
            + parse_equal_when(params.get("equal_when", {}), params["columns"]))


def all_numbers(values):
    """Whether a column's listed values are all numbers (or booleans).

    The command line then reads the column's cells as numbers; otherwise as
    text, so that the workload gets its values as text too.
    """
    return all(isinstance(v, (int, float)) for v in values)


def workload_kwargs(params):
    """QueryWorkload keywords from :func:`parse_domain`'s output (no warning)."""
    domain, other = {}, {}
    for col, spec in params["domain"].items():
        text = isinstance(spec, list) and not all_numbers(spec)
        domain[col] = [str(v) for v in spec] if text else spec
        if col in params["other"]:
            other[col] = str(params["other"][col]) if text else params["other"][col]
    return {
        "domain": domain,
        "bounds": params["bounds"] or None,
        "bins": params["bins"] or 10,
        "handle_missing": list(params["missing"]) or "error",
        "other": other or None,
        "points": dict(params.get("points", {})) or None,
        "steps": dict(params.get("steps", {})) or None,
        "cuts": dict(params.get("cuts", {})) or None,
        "clocks": list(params.get("clocks", [])) or None,
        "log_scale": _log_scale(params.get("log_scale", {})),
        "days_of_month": dict(params.get("days_of_month", {})) or None,
        "derived": {col: _derived_kwargs(spec, params["domain"])
                    for col, spec in params.get("derived", {}).items()} or None,
        "decimals": dict(params.get("decimals", {})) or None,
        "at_most": dict(params.get("at_most", {})) or None,
        "at_least": dict(params.get("at_least", {})) or None,
        "exactly_when": dict(params.get("exactly_when", {})) or None,
        "only_when": dict(params.get("only_when", {})) or None,
        "equal_when": dict(params.get("equal_when", {})) or None,
    }


def _log_scale(scales):
    """The workload's ``log_scale``: a list when every scale is whole, else a dict."""
    if all(kind == "all" for kind in scales.values()):
        return list(scales) or None
    return dict(scales)


def _derived_kwargs(spec, domain):
    """A derived entry as the command line's table holds it: text where the cells are text."""
    spec = dict(spec)
    source_domain = domain.get(spec["of"]) if isinstance(spec["of"], str) else None
    if "map" in spec:  # (booleans count as numbers: all_numbers)
        pairs = _pairs(spec["map"])
        if isinstance(source_domain, list) and not all_numbers(source_domain):
            pairs = [[str(k), v] for k, v in pairs]
        if not all_numbers([v for _, v in pairs]):
            pairs = [[k, str(v)] for k, v in pairs]
        spec["map"] = pairs
    elif "ranges" in spec and isinstance(source_domain, list) and not all_numbers(
            source_domain):
        ranges = spec["ranges"]
        triples = ([[k, *v] for k, v in ranges.items()] if isinstance(ranges, dict)
                   else ranges)
        spec["ranges"] = [[str(k), lo, hi] for k, lo, hi in triples]
    elif "intervals" in spec and not all_numbers(spec["intervals"]["labels"]):
        spec["intervals"] = {"cuts": spec["intervals"]["cuts"],
                             "labels": [str(v) for v in spec["intervals"]["labels"]]}
    return spec


def _pairs(mapping):
    return [list(p) for p in (mapping.items() if isinstance(mapping, dict) else mapping)]


def derived_values(spec):
    """The values a derived column's declaration can give (a map's values or the
    intervals' labels), or None for arithmetic (any number): how the command line reads
    its cells."""
    if "map" in spec:
        return [v for _, v in _pairs(spec["map"])]
    if "intervals" in spec:
        return list(spec["intervals"]["labels"])
    return None


def warn_read_from_data(params, source="the domain", stacklevel=2):
    """Warn (PrivacyLeakWarning) naming the columns marked ``read_from_data``, if any."""
    if params["read_from_data"]:
        warnings.warn(
            f"The domain of columns {params['read_from_data']} is marked {MARK!r} in "
            f"{source}: it is not covered by the privacy guarantee until you replace it "
            "with public knowledge and delete the mark.",
            PrivacyLeakWarning,
            stacklevel=stacklevel + 1,
        )


def workload_params(domain):
    """:class:`~sklearn_privsyn.QueryWorkload` keyword arguments from a domain file.

    Parameters
    ----------
    domain : str, path-like or dict
        A domain JSON file, its parsed content, or the output of
        :func:`~sklearn_privsyn.domain_draft.draft_domain`.

    Returns
    -------
    kwargs : dict
        ``domain``, ``bounds``, ``bins``, ``handle_missing`` (the columns
        declared ``"missing"``, or ``"error"`` for none), ``other``,
        ``points``, ``steps``, ``cuts``, ``clocks``, ``log_scale``, ``days_of_month``,
        ``derived``, ``decimals``, ``at_most``, ``at_least``, ``exactly_when``,
        ``only_when`` and ``equal_when``. Lists of values that are not all numbers become
        text, as the command line reads a CSV file.

    Warns
    -----
    PrivacyLeakWarning
        Naming the columns whose entries are still marked ``read_from_data``.

    Raises
    ------
    ValueError
        If the file cannot be read or an entry is malformed; the message
        names the column and the problem.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import QueryWorkload
    >>> from sklearn_privsyn.domain_file import workload_params
    >>> kwargs = workload_params({
    ...     "city": {"values": ["Paris", "Rome", "Other"], "other": "Other"},
    ...     "age": {"bounds": [0, 100], "bins": 4, "missing": True}})
    >>> kwargs["handle_missing"], kwargs["other"]
    (['age'], {'city': 'Other'})
    >>> X = pd.DataFrame({"city": ["Paris", "Oslo"], "age": [31.0, None]})
    >>> QueryWorkload(**kwargs, k=2).fit(X).encode(X).tolist()
    [[0, 1], [2, 4]]
    """
    if isinstance(domain, dict):
        params, source = parse_domain(domain), "the domain"
    elif isinstance(domain, (str, os.PathLike)):
        params, source = read_domain(domain), f"domain file {domain}"
    else:
        raise TypeError(
            f"domain must be a path or a dict; got {type(domain).__name__}."
        )
    warn_read_from_data(params, source)
    return workload_kwargs(params)
