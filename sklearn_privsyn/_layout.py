"""Records in code space and their one-hot image: the value type the data layer and the solvers share.

A *record* is one row in code space, one integer per attribute (``0 <= code <
block_sizes[a]``); :class:`OneHotLayout` maps records to one-hot columns and
back. The workload (``_table.py``, ``marginals.py``) builds it from the public
domain; the oracles (``sklearn_privsyn.solvers``, which re-exports it) optimise
over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["OneHotLayout", "readonly"]


def readonly(array):
    """``array`` as an ndarray that cannot be written to."""
    array = np.asarray(array)
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class OneHotLayout:
    """One-hot layout of records: one block of columns per attribute.

    A record in code space has one integer per attribute, ``0 <= code <
    block_sizes[a]``; its one-hot image sets column ``starts[a] + code`` of
    each block to 1.

    Parameters
    ----------
    block_sizes : sequence of int
        Number of values of each attribute, each at least 1.

    Examples
    --------
    >>> layout = OneHotLayout((3, 2))
    >>> layout.n_features, layout.starts.tolist()
    (5, [0, 3])
    >>> layout.to_onehot([[2, 0]]).astype(int).tolist()
    [[0, 0, 1, 1, 0]]
    >>> layout.from_onehot(layout.to_onehot([[2, 0], [0, 1]])).tolist()
    [[2, 0], [0, 1]]
    """

    block_sizes: tuple[int, ...]

    def __post_init__(self):
        sizes = tuple(self.block_sizes)
        if len(sizes) == 0:
            raise ValueError("OneHotLayout needs at least one attribute; got block_sizes=().")
        checked = []
        for a, size in enumerate(sizes):
            if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
                raise TypeError(
                    f"block_sizes[{a}] must be an int, got {size!r} of type {type(size).__name__}."
                )
            if size < 1:
                raise ValueError(f"block_sizes[{a}] must be >= 1, got {size}.")
            checked.append(int(size))
        object.__setattr__(self, "block_sizes", tuple(checked))

    @property
    def n_attributes(self) -> int:
        """Number of attributes (blocks)."""
        return len(self.block_sizes)

    @cached_property
    def n_features(self) -> int:
        """One-hot width ``d = sum(block_sizes)``."""
        return int(sum(self.block_sizes))

    @cached_property
    def starts(self) -> np.ndarray:
        """First one-hot column of each block, shape ``(n_attributes,)``."""
        sizes = np.asarray(self.block_sizes, dtype=np.intp)
        return readonly(np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp))

    @cached_property
    def attribute_of(self) -> np.ndarray:
        """Attribute of each one-hot column, shape ``(n_features,)``."""
        return readonly(
            np.repeat(np.arange(self.n_attributes, dtype=np.intp), self.block_sizes)
        )

    @cached_property
    def code_of(self) -> np.ndarray:
        """Code (value within its block) of each one-hot column."""
        return readonly(np.arange(self.n_features, dtype=np.intp) - self.starts[self.attribute_of])

    @cached_property
    def n_records(self) -> int:
        """Number of valid records, ``prod(block_sizes)`` (a Python int)."""
        out = 1
        for size in self.block_sizes:
            out *= size
        return out

    def check_records(self, records, name="records") -> np.ndarray:
        """Validate a table of records and return it as an ``(n, n_attributes)`` intp array."""
        arr = np.asarray(records)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.n_attributes:
            raise ValueError(
                f"{name} must have shape (n, {self.n_attributes}) (one code per attribute); "
                f"got shape {np.shape(records)}."
            )
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
                raise ValueError(f"{name} must hold integer codes.")
        arr = arr.astype(np.intp, copy=False)
        sizes = np.asarray(self.block_sizes, dtype=np.intp)
        bad = (arr < 0) | (arr >= sizes)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ValueError(
                f"{name}[{row}, {col}] = {arr[row, col]} is outside attribute {col}'s "
                f"codes 0..{sizes[col] - 1}."
            )
        return arr

    def to_onehot(self, records) -> np.ndarray:
        """One-hot image of records, a dense ``(n, n_features)`` bool array."""
        codes = self.check_records(records)
        out = np.zeros((codes.shape[0], self.n_features), dtype=bool)
        if codes.shape[0]:
            out[np.arange(codes.shape[0])[:, None], self.starts + codes] = True
        return out

    def from_onehot(self, onehot) -> np.ndarray:
        """Codes of one-hot rows; raises ``ValueError`` unless each block has exactly one 1.

        Entries within 1e-6 of 0 or 1 are accepted (solver output).
        """
        arr = np.asarray(onehot, dtype=float)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.n_features:
            raise ValueError(
                f"onehot must have shape (n, {self.n_features}); got shape {np.shape(onehot)}."
            )
        ones = np.abs(arr - 1.0) <= 1e-6
        zeros = np.abs(arr) <= 1e-6
        if not np.all(ones | zeros):
            row, col = np.argwhere(~(ones | zeros))[0]
            raise ValueError(f"onehot[{row}, {col}] = {arr[row, col]!r} is neither 0 nor 1.")
        counts = np.add.reduceat(ones.astype(np.intp), self.starts, axis=1)
        if np.any(counts != 1):
            row, att = np.argwhere(counts != 1)[0]
            raise ValueError(
                f"onehot[{row}] has {counts[row, att]} ones in attribute {att}'s block "
                "(exactly one expected)."
            )
        rows, cols = np.nonzero(ones)
        codes = np.empty((ones.shape[0], self.n_attributes), dtype=np.intp)
        codes[rows, self.attribute_of[cols]] = self.code_of[cols]
        return codes
