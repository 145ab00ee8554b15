"""The assertion promptfoo runs (`type: python`, `value: file://assay_grounded.py`): assay's
learned checker, from the assay installed in promptfoo's Python (PROMPTFOO_PYTHON)."""

from assay.integrations.promptfoo import get_assert

__all__ = ["get_assert"]
