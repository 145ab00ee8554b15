"""assay: auditable evaluation of language-model outputs.

Two jobs sit on one model layer (:mod:`assay.model`), one run layer (:mod:`assay.runs`) and one
metrics library (:mod:`assay.metrics`):

- the judge protocol (:mod:`assay.judge`): strict LLM-as-judge scoring with validation and
  valid/invalid archives;
- the verifier benchmark (:mod:`assay.verify`): generate -> verify -> revise pipelines on
  grounded QA with citations.
"""

# The package version, read by the build (pyproject's dynamic version) and by run logs.
__version__ = "0.1.0"

__all__ = ["__version__"]
