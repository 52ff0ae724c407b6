"""Cost models of tilings on devices: whether a tiling is legal on a device (each broken
rule a :class:`Rejection`) and how long it runs (an :class:`Estimate`).

``estimate`` holds the result types every backend returns. A backend is chosen by the
device's kind (:mod:`hlo_indexing.devices`).
"""

from hlo_indexing.lazy import lazy_exports

_EXPORTS = {
    "Rejection": "hlo_indexing.cost_model.estimate",
    "Estimate": "hlo_indexing.cost_model.estimate",
    "BreakdownItem": "hlo_indexing.cost_model.estimate",
    "Assessment": "hlo_indexing.cost_model.estimate",
    "ConstraintCheck": "hlo_indexing.cost_model.estimate",
    "CandidateEstimates": "hlo_indexing.cost_model.estimate",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
