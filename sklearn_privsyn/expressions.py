"""Arithmetic formulas over columns: the ``"expression"`` kind of derived column.

A column that is a formula of several others (a loan's monthly installment of
its amount, rate and term) is declared as text, such as
``"loan_amount * r / (1 - (1 + r) ** -term)"``. The text is read by Python's
:mod:`ast` and evaluated by walking its tree over numpy arrays. Only numbers,
names of columns, ``+ - * / // % **``, a sign, parentheses and the functions
of :data:`FUNCTIONS_OF_ONE` and :data:`FUNCTIONS_OF_TWO` are accepted;
anything else (an attribute, a subscript, a comparison, a call of another
name) is an error, so a domain file can never run code. A column whose name
is not a Python identifier is written between backticks::

    `capital-gain` - `capital-loss`

Examples
--------
>>> import numpy as np
>>> from sklearn_privsyn.expressions import Expression
>>> gain = Expression("`capital-gain` - loss / 2")
>>> gain.names
('capital-gain', 'loss')
>>> gain.evaluate({"capital-gain": np.array([10.0, 4.0]), "loss": np.array([2.0, np.nan])})
array([ 9., nan])
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from numbers import Real

import numpy as np

__all__ = ["FUNCTIONS", "FUNCTIONS_OF_ONE", "FUNCTIONS_OF_TWO", "Expression", "quoted"]

#: The functions of one number a derived ``"apply"`` takes, by name.
FUNCTIONS = {
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "exp": np.exp, "sqrt": np.sqrt, "square": np.square,
}
#: The functions of one number a formula may call: those and ``abs``.
FUNCTIONS_OF_ONE = {**FUNCTIONS, "abs": np.abs}
#: Functions of two numbers, element by element.
FUNCTIONS_OF_TWO = {"min": np.minimum, "max": np.maximum}

_BINARY = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
           ast.Div: np.true_divide, ast.FloorDiv: np.floor_divide, ast.Mod: np.mod,
           ast.Pow: np.power}
_UNARY = {ast.USub: np.negative, ast.UAdd: np.positive}
_QUOTED = re.compile(r"`([^`]+)`")
_PLACEHOLDER = "__privsyn_column_{}__"


def quoted(column):
    """The column's name as a formula writes it (between backticks), or None if it cannot.

    A formula names text columns; a name holding a backtick cannot be written.

    Examples
    --------
    >>> quoted("capital-gain"), quoted("a`b"), quoted(3)
    ('`capital-gain`', None, None)
    """
    if not isinstance(column, str) or "`" in column:
        return None
    return f"`{column}`"


@dataclass(frozen=True)
class Expression:
    """A formula over named columns, checked when made.

    Parameters
    ----------
    text : str
        The formula (names of columns, numbers, ``+ - * / // % **``, parentheses,
        :data:`FUNCTIONS_OF_ONE` and ``min``/``max`` of two); a name that is not an
        identifier between backticks.

    Attributes
    ----------
    names : tuple of str
        The columns the formula reads, in order of first appearance.

    Raises
    ------
    ValueError
        If the text is not such a formula (the message says what is not allowed).
    """

    text: str
    names: tuple = field(init=False, compare=False)
    _tree: object = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(f"a formula must be non-empty text; got {self.text!r}.")
        quoted = {}

        def placeholder(match):
            return quoted.setdefault(match.group(1), _PLACEHOLDER.format(len(quoted)))

        source = _QUOTED.sub(placeholder, self.text)
        if "`" in source:
            raise ValueError(f"formula {self.text!r} has an unmatched backtick.")
        try:
            tree = ast.parse(source.strip(), mode="eval").body
        except SyntaxError:
            raise ValueError(f"formula {self.text!r} is not a valid formula.") from None
        unquote = {v: k for k, v in quoted.items()}
        names = []
        _check(tree, self.text, lambda name: names.append(unquote.get(name, name)))
        object.__setattr__(self, "_tree", (tree, unquote))
        object.__setattr__(self, "names", tuple(dict.fromkeys(names)))

    def evaluate(self, columns):
        """The formula over ``columns`` (``{name: float array}``), as a float array.

        Arithmetic as numpy's: a missing operand gives a missing value, and
        so do a division by zero or a logarithm of a negative number (``nan`` or
        ``inf``; the caller decides what a non-finite value means).
        """
        tree, unquote = self._tree
        with np.errstate(all="ignore"):
            out = _evaluate(tree, lambda name: columns[unquote.get(name, name)])
            return np.asarray(out, dtype=float)


def _check(node, text, on_name):
    """Raise ``ValueError`` on a node a formula may not hold; call ``on_name`` on names."""
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, Real) or isinstance(node.value, bool):
            raise ValueError(f"formula {text!r}: {node.value!r} is not a number.")
    elif isinstance(node, ast.Name):
        on_name(node.id)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left, text, on_name)
        _check(node.right, text, on_name)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        _check(node.operand, text, on_name)
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords
          and (node.func.id in FUNCTIONS_OF_ONE and len(node.args) == 1
               or node.func.id in FUNCTIONS_OF_TWO and len(node.args) == 2)):
        for arg in node.args:
            _check(arg, text, on_name)
    elif isinstance(node, ast.Call):
        raise ValueError(
            f"formula {text!r} calls a function it may not: the functions are "
            f"{sorted(FUNCTIONS_OF_ONE)} of one number and {sorted(FUNCTIONS_OF_TWO)} of two."
        )
    else:
        raise ValueError(
            f"formula {text!r} holds {type(node).__name__!r}: a formula holds numbers, column "
            "names, + - * / // % **, parentheses and functions only."
        )


def _evaluate(node, value_of):
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return value_of(node.id)
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, value_of),
                                      _evaluate(node.right, value_of))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, value_of))
    function = FUNCTIONS_OF_ONE.get(node.func.id) or FUNCTIONS_OF_TWO[node.func.id]
    return function(*(_evaluate(arg, value_of) for arg in node.args))
