"""The only place the package imports scikit-learn's private API.

``_fit_context`` (validates ``_parameter_constraints`` on ``fit``) and the
constraint classes of ``sklearn.utils._param_validation`` are what scikit-learn's
own estimators use, but they are private and may move between releases.
``setup.cfg`` therefore bounds scikit-learn to the releases tested, and
``tests/test_sklearn_private_api.py`` fails, naming what moved, when an
installed release no longer provides them as used here.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
)

__all__ = ["HasMethods", "Interval", "InvalidParameterError", "StrOptions", "fit_context"]

#: ``sklearn.base._fit_context``: decorates ``fit`` to validate the parameters.
fit_context = _fit_context
