"""Argument checks shared by the privacy modules: types and ranges, with clear messages."""

import math
import numbers

import numpy as np

METHODS = ("cks", "classic")


def check_real(value, name, *, low=None, low_inclusive=True, high=None,
               high_inclusive=False, allow_inf=False):
    """Return ``value`` as a float after checking its type and range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {value!r} of type "
            f"{type(value).__name__}."
        )
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}.")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        op = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {op} {high}, got {value!r}.")
    return value


def check_count(count):
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral):
        raise TypeError(
            f"count must be a positive integer, got {count!r} of type "
            f"{type(count).__name__}."
        )
    count = int(count)
    if count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}.")
    return count


def check_method(method):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}.")


def check_delta(delta):
    return check_real(delta, "delta", low=0.0, low_inclusive=False, high=1.0)
