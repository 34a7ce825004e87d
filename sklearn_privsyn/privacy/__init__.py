"""Privacy accounting in zero-concentrated differential privacy (zCDP).

Every estimator in this package spends its budget through a
:class:`PrivacyLedger` in units of zCDP's ``rho`` (Bun & Steinke 2016):
mechanisms compose by adding their ``rho``, and the total is converted to an
``(epsilon, delta)`` guarantee only at the end.

Conversions
    ``method="cks"`` is the exact conversion of Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020): a
    ``rho``-zCDP mechanism is ``(epsilon, delta)``-DP for

    .. math::

        \\delta = \\inf_{\\alpha > 1} \\frac{\\exp((\\alpha - 1)(\\alpha\\rho -
        \\epsilon))}{\\alpha - 1} \\left(1 - \\frac{1}{\\alpha}\\right)^\\alpha .

    ``method="classic"`` is the bound the paper uses (Bun & Steinke 2016),
    ``epsilon = rho + 2 sqrt(rho ln(1/delta))``. The CKS conversion allows more
    ``rho`` for the same ``(epsilon, delta)``.

Mechanisms
    The exponential mechanism with parameter ``epsilon`` is
    ``epsilon``-bounded-range and hence ``epsilon**2 / 8``-zCDP (Cesar & Rogers
    2021); the Gaussian mechanism with noise ``sigma`` on a query of L2
    sensitivity ``Delta`` is ``Delta**2 / (2 sigma**2)``-zCDP.
"""

from . import _composition, _conversions, _mechanisms
from ._composition import LedgerEntry, PrivacyLedger, compose, split_budget
from ._conversions import cks_delta, epsilon_to_rho, rho_to_epsilon
from ._mechanisms import (
    acceptance_probabilities,
    exponential_mechanism,
    exponential_mechanism_draws,
    exponential_mechanism_epsilon,
    exponential_mechanism_rho,
    gaussian_mechanism,
    gaussian_mechanism_rho,
    gaussian_sigma,
    number_histogram,
    rejection_coins,
    rejection_step_rho,
    worst_query_mechanism,
)

__all__ = sorted([*_composition.__all__, *_conversions.__all__, *_mechanisms.__all__])
