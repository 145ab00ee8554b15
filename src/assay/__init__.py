"""assay: auditable evaluation of language-model outputs.

Two jobs sit on one model layer (:mod:`assay.model`), one run layer (:mod:`assay.runs`) and one
metrics library (:mod:`assay.metrics`):

- the judge protocol (:mod:`assay.judge`): strict LLM-as-judge scoring with validation and
  valid/invalid archives;
- the verifier benchmark (:mod:`assay.verify`): generate -> verify -> revise pipelines on
  grounded QA with citations.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report.export import load_run as load_run

# The package version, read by the build (pyproject's dynamic version) and by run logs.
__version__ = "0.1.0"

__all__ = ["__version__", "load_run"]


def __getattr__(name: str) -> Any:
    # `assay.load_run` without importing the run and report stacks at `import assay`
    if name == "load_run":
        from .report.export import load_run

        return load_run
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
