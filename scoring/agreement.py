"""Agreement between readers: moved to scoring.stats.agreement.

Kept so that ``from scoring.agreement import ...`` goes on working (the Django app
and the benches import it); new code imports scoring.stats.agreement."""

from scoring.stats.agreement import (
    ALPHA_FLOOR,
    LEVELS,
    MIN_ITEMS,
    NUMERIC_LEVELS,
    TOO_FEW_ITEMS,
    WEIGHTS,
    Agreement,
    Figure,
    Ratings,
    agreement,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)

__all__ = [
    "ALPHA_FLOOR",
    "LEVELS",
    "MIN_ITEMS",
    "NUMERIC_LEVELS",
    "TOO_FEW_ITEMS",
    "WEIGHTS",
    "Agreement",
    "Figure",
    "Ratings",
    "agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
]
