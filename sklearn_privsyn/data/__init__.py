"""Data files shipped with sklearn-privsyn (UCI Adult, with its licence)."""
