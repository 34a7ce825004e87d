"""Derived columns: a column that is a public function of another, computed after sampling.

Real tables hold the same fact twice: an education and its years of
schooling, an age and its age band, a clock time and its hour, a wage and its
logarithm. A synthesizer that models both columns spends budget on the second
and, drawing each value on its own, breaks the relation in some rows. A
*derived* column is declared as a function of one *source* column; the
synthesizers never read it (it is not encoded, measured or modelled) and
:meth:`~sklearn_privsyn.QueryWorkload.decode` computes it from the synthetic
source, so every synthetic row keeps the relation exactly.

The functions (``spec`` is the declaration, as in ``QueryWorkload(derived=)``
and a domain file's ``"derived"`` entry):

* ``{"of": a, "map": {value: derived value, ...}}`` (or a list of pairs):
  a lookup over the listed values of ``a`` (every listed value needs one);
* ``{"of": a, "ranges": {value: [lo, hi], ...}}`` (or a list of ``[value, lo,
  hi]``): a number nearly fixed by the listed value of ``a`` (a loan's
  interest rate by its sub-grade, within a cent), drawn uniformly within
  the value's range (whole numbers for an integer column; written with the
  column's decimals, :mod:`sklearn_privsyn.decimals`);
* ``{"of": a, "intervals": {"cuts": [c1, ..., ck], "labels": [l0, ..., lk]}}``:
  ``l0`` below ``c1``, ``li`` on ``[ci, ci+1)``, ``lk`` from ``ck`` on (an age
  band of an age);
* ``{"of": a, "apply": f}`` with ``f`` one of
  :data:`~sklearn_privsyn.expressions.FUNCTIONS` (``"log"``, ...);
* ``{"of": a, "floordiv": d}`` and ``{"of": a, "mod": d}``: ``floor(a / d)``
  and ``a - d * floor(a / d)`` (the hour and minute of a clock time 1545);
* ``{"of": [a, b, ...], "expression": text}``: a formula of its sources
  (:mod:`sklearn_privsyn.expressions`; a loan's installment of its amount, rate
  and term), missing where it is not a finite number; a source may itself
  be derived (computed first);
* ``{"of": [a, b, ...], "sum": [wa, wb, ...]}``: ``wa * a + wb * b + ...``,
  a column of several sources (a clock time 1545 of its hour and minute:
  ``{"of": ["hour", "minute"], "sum": [100, 1]}``). With ``"clock": m``
  (``m`` 0 or 2400, how midnight is written) the sum is a number of minutes
  written as a time of day HHMM, modulo a day, and sources declared clocks
  (``clocks=``, :mod:`sklearn_privsyn.clock`) count in minutes: a departure
  time of its scheduled time and its delay, ``{"of": ["sched_dep_time",
  "dep_delay"], "sum": [1, 1], "clock": 2400}``. With ``"missing": 0`` a
  missing source counts as 0: a survey's score of its items, an unanswered
  item adding nothing (the GSS's ``sumnat`` of its eighteen spending items,
  each -1, 0, 1 or not asked).

A derived value is missing where a source is (but for a sum with
``"missing": 0``). The declaration is public
knowledge like the rest of the domain: nothing about the derived column's
values is read, so it costs no budget; the derived column keeps its dtype
from the table the workload was fitted on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from numbers import Real

import numpy as np
import pandas as pd

from ._coders import BinnedCoder, CategoryCoder, CodeCoder, series_of_dtype
from ._number_spec import float_values
from .clock import MIDNIGHTS, hhmm_to_minutes, minutes_to_hhmm
from .expressions import FUNCTIONS, Expression

__all__ = ["FUNCTIONS", "KINDS", "DerivedColumn", "check_not_declared", "check_sources",
           "implied_cuts", "parse_derived", "split_derived"]

#: The kinds of derived column, each the key of its declaration.
KINDS = ("map", "ranges", "intervals", "apply", "floordiv", "mod", "sum", "expression")
#: The kinds whose sources are several columns (a list in ``"of"``).
SEVERAL_SOURCES = ("sum", "expression")


@dataclass(frozen=True)
class DerivedColumn:
    """One derived column: ``name`` is ``kind`` of column ``source``.

    ``keys`` and ``values`` are the map's pairs (``"map"``), the listed values
    and their ``(lo, hi)`` (``"ranges"``) or the cuts and labels
    (``"intervals"``); ``argument`` is the function's name
    (``"apply"``), the divisor (``"floordiv"``, ``"mod"``), the weights
    (``"sum"``) or the :class:`~sklearn_privsyn.expressions.Expression`
    (``"expression"``; the source of these two is a tuple of columns); ``clock`` how a sum
    written as a time of day writes midnight (None: a plain sum); ``missing_zero``
    whether a sum counts a missing source as 0 (``"missing": 0``);
    ``clock_sources`` the sources that are clocks (read in minutes); ``dtype``
    the column's dtype in the fitted table (None until fitted).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.derived import parse_derived
    >>> hour = parse_derived({"hour": {"of": "time", "floordiv": 100}}, ["time", "hour"])["hour"]
    >>> hour.compute(pd.DataFrame({"time": [545, 1530, None]})).tolist()
    [5.0, 15.0, nan]
    """

    name: object
    source: object
    kind: str
    keys: tuple = ()
    values: tuple = ()
    argument: object = None
    clock: object = None
    missing_zero: bool = False
    clock_sources: tuple = ()
    dtype: object = None

    @property
    def sources(self):
        """The source columns, as a tuple (several for ``"sum"`` and ``"expression"``)."""
        return tuple(self.source) if self.kind in SEVERAL_SOURCES else (self.source,)

    def compute(self, frame, rng=None):
        """The derived values of the rows of ``frame`` (missing where a source is).

        ``rng`` (a Generator) draws the values of ``"ranges"``; the other kinds are exact.
        """
        if self.kind == "sum":
            return self._sum(frame)
        if self.kind == "expression":
            out = self.argument.evaluate({c: float_values(frame[c]) for c in self.source})
            out[~np.isfinite(out)] = np.nan
            return self._as_column(out, np.isnan(out), frame.index)
        source = frame[self.source]
        isna = source.isna().to_numpy()
        if self.kind == "ranges":
            return self._in_ranges(source, isna, rng)
        if self.kind in ("map", "intervals"):
            if self.kind == "map":  # a value outside the map gives a missing one
                at = self._key_positions(source)
                isna = isna | (at < 0)
            else:
                x = float_values(source)
                at = np.searchsorted(np.asarray(self.keys, dtype=float), np.where(isna, 0.0, x),
                                     side="right")
            out = np.asarray(self.values, dtype=object)[np.where(isna, 0, at)]
            if not isna.any() and all(isinstance(v, (Real, np.generic)) for v in self.values):
                out = np.asarray(out.tolist())  # numbers (or booleans): a numeric array
        else:
            x = np.where(isna, 0.0, float_values(source))
            with np.errstate(all="ignore"):
                if self.kind == "apply":
                    out = FUNCTIONS[self.argument](x)
                elif self.kind == "floordiv":
                    out = np.floor(x / self.argument)
                else:
                    out = x - self.argument * np.floor(x / self.argument)
        return self._as_column(out, isna, source.index)

    def _key_positions(self, source):
        """Position of each source value among ``keys`` (-1 where it is none of them)."""
        return pd.Index(list(self.keys), dtype=object).get_indexer(source.to_numpy(dtype=object))

    def _in_ranges(self, source, isna, rng):
        if rng is None:
            raise ValueError(f"derived[{self.name!r}] draws its values within ranges: "
                             "compute it with a random generator (decode does).")
        at = self._key_positions(source)
        isna = isna | (at < 0)
        lo, hi = (np.asarray([r[i] for r in self.values], dtype=float)[np.where(isna, 0, at)]
                  for i in (0, 1))
        u = rng.random(len(source))
        if isinstance(self.dtype, np.dtype) and self.dtype.kind in "iu":
            lo, hi = np.ceil(lo), np.floor(hi)
            out = np.minimum(lo + np.floor(u * (hi - lo + 1)), hi)
        else:
            out = lo + u * (hi - lo)
        return self._as_column(out, isna, source.index)

    def _sum(self, frame):
        values = [float_values(frame[c]) for c in self.source]
        values = [hhmm_to_minutes(v) if c in self.clock_sources else v
                  for c, v in zip(self.source, values)]
        if self.missing_zero:
            values = [np.nan_to_num(v, nan=0.0) for v in values]
        out = sum(w * v for w, v in zip(self.argument, values))
        if self.clock is not None:
            out = minutes_to_hhmm(np.round(out), wrap=self.clock)
        return self._as_column(out, np.isnan(out), frame.index)

    def _as_column(self, out, isna, index):
        if out.dtype.kind == "f":
            out = out + 0.0  # no -0.0 (a CSV writes it as "-0.0")
        has_na = bool(isna.any())
        if has_na:
            out = out.astype(object) if out.dtype == object else out.astype(float)
            out[isna] = None if out.dtype == object else np.nan
        if self.dtype is None:
            return pd.Series(out, index=index)
        if has_na or isinstance(self.dtype, pd.CategoricalDtype) or out.dtype == object:
            series = series_of_dtype(out, self.dtype, has_na)
        else:
            integer = isinstance(self.dtype, np.dtype) and self.dtype.kind in "iu"
            series = series_of_dtype(np.round(out) if integer else out, self.dtype, False)
        series.index = index
        return series

    def check_sources(self, coders):
        """Raise ``ValueError`` if a fitted source column (``{name: coder}``) cannot feed it.

        A derived source (a formula's) has no coder: its own column checks it.
        """
        for source in self.sources:
            if self.kind != "expression" or source in coders:
                self._check_source(source, coders[source])

    def _check_source(self, source, coder):
        where = f"derived[{self.name!r}]"
        if self.kind in ("map", "ranges"):
            if isinstance(coder, BinnedCoder):
                raise ValueError(
                    f"{where} maps the values of {source!r}, a binned number: declare "
                    "its values in domain=, or use \"intervals\" (cuts and labels)."
                )
            listed = (coder.categories if isinstance(coder, CategoryCoder)
                      else np.arange(coder.n_values))
            keys = pd.Index(list(self.keys), dtype=object)
            unmapped = int((keys.get_indexer(np.asarray(listed, dtype=object)) < 0).sum())
            if unmapped:
                raise ValueError(
                    f"{where} gives no value for {unmapped} of the {len(listed)} values of "
                    f"{source!r}: map every value of the source's domain."
                )
            return
        if isinstance(coder, CategoryCoder):
            try:
                bounds = np.asarray(coder.categories, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{where} needs a number column; {source!r} holds listed values "
                    "that are not numbers."
                ) from None
        elif isinstance(coder, CodeCoder):
            bounds = np.array([0.0, coder.n_values - 1.0])
        else:
            bounds = np.asarray([coder.edges[0], coder.edges[-1]], dtype=float)
        if self.kind == "apply":
            with np.errstate(all="ignore"):
                image = FUNCTIONS[self.argument](bounds)
            if not np.all(np.isfinite(image)):
                raise ValueError(
                    f"{where} applies {self.argument!r} to {source!r}, whose domain "
                    f"holds numbers where {self.argument!r} is not a finite number."
                )


def split_derived(X, workload):
    """``workload.derived`` checked, with the columns' dtypes; ``X`` without them; the cuts.

    A derived column is never read: only its dtype (the schema, public) is kept.
    The cuts are ``workload.cuts`` with those of :func:`implied_cuts`.
    """
    derived = parse_derived(workload.derived, X.columns)
    check_not_declared(derived, workload)
    clocks = set(workload.clocks or ())
    fitted = {c: replace(d, dtype=X[c].dtype,
                         clock_sources=tuple(s for s in d.sources if s in clocks))
              for c, d in derived.items()}
    return (fitted, (X.drop(columns=list(fitted)) if fitted else X),
            implied_cuts(fitted, workload, X))


def implied_cuts(derived, workload, X):
    """``workload.cuts`` and, for a binned source without cuts of its own, where its
    derived column changes (an interval function's cuts, a quotient's multiples of its
    divisor), so that no bin of the source straddles one.

    Only inside the source's declared bounds, on its step (whole numbers for an integer
    column), at most ``MAX_CUTS`` of them, and not with explicit bin edges. Public, as the
    declaration: the derived column's pairs with the other columns are then measured
    through the source's bins as well as the column itself would be.
    """
    from .domain_draft import MAX_CUTS

    cuts = dict(workload.cuts or {})
    bounds, steps = workload.bounds or {}, workload.steps or {}
    edges = workload.bins if isinstance(workload.bins, dict) else {}
    for column in derived.values():
        source = column.source
        if (column.kind not in ("intervals", "floordiv") or source in cuts
                or source not in bounds or np.ndim(edges.get(source, 0)) == 1):
            continue
        lo, hi = (float(b) for b in bounds[source])
        if column.kind == "intervals":
            implied = np.asarray(column.keys, dtype=float)
        else:
            implied = column.argument * np.arange(math.floor(lo / column.argument) + 1,
                                                  math.ceil(hi / column.argument))
        step = steps.get(source, 1 if pd.api.types.is_integer_dtype(X[source].dtype) else None)
        implied = [float(c) for c in implied if lo < c < hi
                   and (step is None or float(c / step).is_integer())]
        if 0 < len(implied) <= MAX_CUTS:
            cuts[source] = implied
    return cuts or None


def check_sources(derived, coders):
    """Raise ``ValueError`` if a fitted source column cannot feed its derived column."""
    by_name = {c.name: c for c in coders}
    for column in derived.values():
        column.check_sources(by_name)


def parse_derived(derived, columns):
    """Check ``derived`` (``{column: spec}``) against the table's ``columns``.

    Returns ``{column: DerivedColumn}`` (dtype not yet set), in ``columns``'
    order but for a formula, which comes after the derived columns it reads.
    Raises ``ValueError`` naming the column on a malformed spec, an unknown
    column, a source that is itself derived (allowed to a formula) or formulas
    that read each other in a circle.
    """
    if derived is None:
        return {}
    if not isinstance(derived, Mapping):
        raise ValueError(f"derived must be a dict {{column: spec}}; got {type(derived).__name__}.")
    columns = list(columns)
    unknown = [c for c in derived if c not in columns]
    if unknown:
        raise ValueError(f"derived names columns not in X: {unknown}. X has columns {columns}.")
    parsed = {}
    for name in [c for c in columns if c in derived]:
        parsed[name] = _parse_one(name, derived[name], columns, derived)
    return _sources_first(parsed)


def _sources_first(parsed):
    """``parsed`` in an order that computes every derived source before its formula."""
    ordered, waiting = {}, dict(parsed)
    while waiting:
        ready = [name for name, column in waiting.items()
                 if all(s in ordered or s not in parsed for s in column.sources)]
        if not ready:
            raise ValueError(f"derived columns {list(waiting)} read each other in a circle: "
                             "a formula's derived sources must come from other columns.")
        for name in ready:
            ordered[name] = waiting.pop(name)
    return ordered


def _parse_one(name, spec, columns, derived):
    where = f"derived[{name!r}]"
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where} must be a dict such as {{'of': column, 'map': {{...}}}}; "
                         f"got {spec!r}.")
    kinds = [k for k in KINDS if k in spec]
    extra = sorted(set(spec) - {"of", "clock", "missing", *KINDS}, key=str)
    if len(kinds) != 1 or "of" not in spec or extra:
        raise ValueError(
            f"{where} needs 'of' (the source column) and exactly one of {list(KINDS)}; "
            f"got keys {sorted(spec, key=str)}."
        )
    source, kind, argument = spec["of"], kinds[0], spec[kinds[0]]
    if "clock" in spec and kind != "sum":
        raise ValueError(f"{where}: 'clock' goes with a 'sum' only (a time of day of "
                         "several columns).")
    if "missing" in spec and (kind != "sum" or "clock" in spec or not _is_number(
            spec["missing"]) or spec["missing"] != 0):
        raise ValueError(f"{where}: 'missing' is 0 (a missing source counts as 0) and goes "
                         "with a 'sum' without 'clock' only.")
    if kind == "expression":
        return _parse_expression(name, where, source, argument, columns)
    if kind == "sum":
        parsed = _parse_sum(name, where, source, argument, columns, derived)
        if "clock" not in spec:
            return replace(parsed, missing_zero="missing" in spec)
        if not _is_number(spec["clock"]) or spec["clock"] not in MIDNIGHTS:
            raise ValueError(f"{where}: 'clock' is how midnight is written, one of "
                             f"{list(MIDNIGHTS)}; got {spec['clock']!r}.")
        return replace(parsed, clock=int(spec["clock"]))
    _check_source_name(where, name, source, columns, derived)
    if kind == "map":
        pairs = list(argument.items()) if isinstance(argument, Mapping) else argument
        if (not isinstance(pairs, (list, tuple)) or not pairs
                or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs)):
            raise ValueError(f"{where}: 'map' must be a non-empty dict or list of "
                             "[source value, derived value] pairs.")
        keys = [p[0] for p in pairs]
        if len(pd.Index(keys, dtype=object).unique()) != len(keys):
            raise ValueError(f"{where}: 'map' gives a source value twice.")
        return DerivedColumn(name, source, kind, tuple(keys), tuple(p[1] for p in pairs))
    if kind == "ranges":
        return _parse_ranges(name, where, source, argument)
    if kind == "intervals":
        if not isinstance(argument, Mapping) or set(argument) != {"cuts", "labels"}:
            raise ValueError(f"{where}: 'intervals' must be {{'cuts': [...], 'labels': [...]}}.")
        cuts, labels = argument["cuts"], argument["labels"]
        if (not isinstance(cuts, (list, tuple)) or not cuts
                or not all(_is_number(c) for c in cuts)
                or not np.all(np.isfinite(np.asarray(cuts, dtype=float)))
                or not np.all(np.diff(np.asarray(cuts, dtype=float)) > 0)):
            raise ValueError(f"{where}: 'cuts' must be increasing finite numbers.")
        if not isinstance(labels, (list, tuple)) or len(labels) != len(cuts) + 1:
            raise ValueError(f"{where}: 'labels' needs one label more than 'cuts' "
                             f"({len(cuts) + 1}).")
        return DerivedColumn(name, source, kind, tuple(float(c) for c in cuts), tuple(labels))
    if kind == "apply":
        if argument not in FUNCTIONS:
            raise ValueError(f"{where}: 'apply' must be one of {sorted(FUNCTIONS)}; "
                             f"got {argument!r}.")
        return DerivedColumn(name, source, kind, argument=argument)
    if not _is_number(argument) or not np.isfinite(argument) or argument <= 0:
        raise ValueError(f"{where}: {kind!r} must be a positive number; got {argument!r}.")
    return DerivedColumn(name, source, kind, argument=argument)


def _parse_ranges(name, where, source, argument):
    triples = ([[k, *v] if isinstance(v, (list, tuple)) else [k, v]
                for k, v in argument.items()] if isinstance(argument, Mapping) else argument)
    if (not isinstance(triples, (list, tuple)) or not triples
            or not all(isinstance(t, (list, tuple)) and len(t) == 3
                       and _is_number(t[1]) and _is_number(t[2])
                       and np.isfinite(t[1]) and np.isfinite(t[2]) and t[1] <= t[2]
                       for t in triples)):
        raise ValueError(f"{where}: 'ranges' must be a non-empty dict {{value: [lo, hi]}} or "
                         "list of [value, lo, hi], with finite numbers lo <= hi.")
    keys = [t[0] for t in triples]
    if len(pd.Index(keys, dtype=object).unique()) != len(keys):
        raise ValueError(f"{where}: 'ranges' gives a source value twice.")
    return DerivedColumn(name, source, "ranges", tuple(keys),
                         tuple((float(t[1]), float(t[2])) for t in triples))


def _parse_expression(name, where, sources, text, columns):
    sources = [sources] if isinstance(sources, str) else sources
    if (not isinstance(sources, (list, tuple)) or not sources
            or not all(isinstance(s, str) for s in sources) or len(set(sources)) != len(sources)):
        raise ValueError(f"{where}: an 'expression' takes its source column or a list of "
                         "distinct source columns in 'of', named by text.")
    for source in sources:
        if source == name or source not in columns:
            raise ValueError(f"{where}: its source {source!r} must be another column of X.")
    try:
        expression = Expression(text)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if set(expression.names) != set(sources):
        raise ValueError(f"{where}: the formula reads columns {list(expression.names)}; "
                         f"'of' must list exactly those (it lists {list(sources)}).")
    return DerivedColumn(name, tuple(sources), "expression", argument=expression)


def _check_source_name(where, name, source, columns, derived):
    if source not in columns:
        raise ValueError(f"{where}: its source {source!r} is not a column of X.")
    if source == name or source in derived:
        raise ValueError(f"{where}: its source {source!r} must be a column that is not "
                         "itself derived.")


def _parse_sum(name, where, sources, weights, columns, derived):
    if (not isinstance(sources, (list, tuple)) or len(sources) < 2
            or len(set(map(str, sources))) != len(sources)):
        raise ValueError(f"{where}: a 'sum' takes a list of two or more distinct source "
                         "columns in 'of'.")
    for source in sources:
        _check_source_name(where, name, source, columns, derived)
    if (not isinstance(weights, (list, tuple)) or len(weights) != len(sources)
            or not all(_is_number(w) and np.isfinite(w) for w in weights)):
        raise ValueError(f"{where}: 'sum' must be a list of one finite number a source "
                         f"({len(sources)}).")
    return DerivedColumn(name, tuple(sources), "sum", argument=tuple(weights))


def _is_number(value):
    return isinstance(value, Real) and not isinstance(value, bool)


def check_not_declared(derived, workload):
    """Raise naming a derived column that also has a domain of its own or a marginal."""
    for param in ("domain", "bounds", "bins", "other", "points", "steps", "cuts", "clocks",
                  "log_scale"):
        spec = getattr(workload, param)
        declared = [c for c in derived if isinstance(spec, (dict, list, tuple)) and c in spec]
        if declared:
            raise ValueError(
                f"{param} declares derived columns {declared}: a derived column is computed "
                "from its source and has no domain of its own."
            )
    marginals = getattr(workload, "marginals", None) or ()
    named = [c for c in derived if any(c == m or isinstance(m, (list, tuple)) and c in m
                                       for m in marginals)]
    if named:
        raise ValueError(
            f"marginals name derived columns {named}: a derived column is computed from its "
            "source, never measured; a marginal of its source measures it."
        )
