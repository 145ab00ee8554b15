"""assay: auditable evaluation of language-model outputs.

Two jobs sit on one model layer (:mod:`assay.model`), one run layer (:mod:`assay.runs`) and one
metrics library (:mod:`assay.metrics`):

- the judge protocol (:mod:`assay.judge`): strict LLM-as-judge scoring with validation and
  valid/invalid archives;
- the verifier benchmark (:mod:`assay.verify`): generate -> verify -> revise pipelines on
  grounded QA with citations.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("assay")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
