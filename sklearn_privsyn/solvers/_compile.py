"""Problem preprocessing shared by the back-ends (internal)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._base import OracleProblem


@dataclass
class CompiledProblem:
    """Queries in canonical form: at most one literal per attribute.

    A query with two different values of one attribute can never be satisfied:
    it is a constant (0 if positive, 1 if negated) and is dropped here, its
    weight going to ``constant``. Duplicate literals are merged.

    Attributes
    ----------
    keep : (m',) indices into the original problem's queries that remain.
    attr, code, col : (m', kmax) attribute, code and one-hot column of each
        literal, padded with -1 (``valid`` marks real entries).
    sign : (m',) +1 for positive queries, -1 for negated ones.
    weights : (m',) weights of the kept queries.
    constant : objective constant: weights of negated queries (``w (1 - conj)
        = w - w conj``) and of constant queries equal to 1.
    """

    keep: np.ndarray
    attr: np.ndarray
    code: np.ndarray
    col: np.ndarray
    valid: np.ndarray
    sign: np.ndarray
    weights: np.ndarray
    constant: float
    n_literals: np.ndarray


def compile_problem(problem: OracleProblem) -> CompiledProblem:
    layout = problem.layout
    lit = problem.literals
    m = lit.shape[0]
    kmax = lit.shape[1] if lit.ndim == 2 else 0
    if m == 0 or kmax == 0:
        empty = np.zeros((0, max(kmax, 1)), dtype=np.intp)
        return CompiledProblem(
            np.zeros(0, dtype=np.intp), empty, empty, empty, empty.astype(bool),
            np.zeros(0), np.zeros(0), 0.0, np.zeros(0, dtype=np.intp),
        )
    # sort literals so that equal columns are adjacent and padding comes last
    key = np.where(lit < 0, np.iinfo(np.intp).max, lit)
    srt = np.sort(key, axis=1)
    dup = np.zeros_like(srt, dtype=bool)
    dup[:, 1:] = srt[:, 1:] == srt[:, :-1]
    pad = srt == np.iinfo(np.intp).max
    srt = np.where(dup | pad, -1, srt)
    # move padding to the end again
    order = np.argsort(srt < 0, axis=1, kind="stable")
    col = np.take_along_axis(srt, order, axis=1)
    valid = col >= 0
    safe = np.maximum(col, 0)
    attr = np.where(valid, layout.attribute_of[safe], -1)
    code = np.where(valid, layout.code_of[safe], -1)
    # contradiction: two different columns of one attribute (columns are
    # sorted, so same-attribute literals are adjacent)
    contra = np.any(valid[:, 1:] & (attr[:, 1:] == attr[:, :-1]), axis=1)
    neg = problem.negated
    w = problem.weights
    constant = float(w[neg].sum())  # negated: w (1 - conj) = w - w conj
    keep = np.flatnonzero(~contra)
    sign = np.where(neg[keep], -1.0, 1.0)
    n_lit = valid[keep].sum(axis=1)
    return CompiledProblem(
        keep=keep,
        attr=attr[keep],
        code=code[keep],
        col=col[keep],
        valid=valid[keep],
        sign=sign,
        weights=w[keep].astype(float),
        constant=constant,
        n_literals=n_lit,
    )


def candidate_columns(problem: OracleProblem, comp: CompiledProblem) -> np.ndarray:
    """Mask of one-hot columns that some optimal record may use.

    A value in no positive query ("free" value) can be replaced by the free
    value of its attribute with the largest linear coefficient without losing
    objective: positive queries cannot lose a satisfied literal and negated
    queries can only lose one. So every free value whose coefficient is not
    above that attribute's best value appearing in no query at all is dropped.
    (When an attribute has no value outside all queries, nothing is dropped.)
    """
    layout = problem.layout
    d = layout.n_features
    in_pos = np.zeros(d, dtype=bool)
    in_any = np.zeros(d, dtype=bool)
    active = comp.weights > 0
    if comp.col.size:
        cols_any = comp.col[active][comp.valid[active]]
        in_any[cols_any] = True
        pos = active & (comp.sign > 0)
        in_pos[comp.col[pos][comp.valid[pos]]] = True
    keep = np.ones(d, dtype=bool)
    lin = problem.linear
    for a, (s, b) in enumerate(zip(layout.starts, layout.block_sizes)):
        untouched = ~in_any[s:s + b]
        if not untouched.any():
            continue
        block = lin[s:s + b]
        best = int(np.flatnonzero(untouched)[np.argmax(block[untouched])])
        free = ~in_pos[s:s + b]
        drop = free & (block <= block[best])
        drop[best] = False
        keep[s:s + b] = ~drop
    return keep
