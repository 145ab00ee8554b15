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
    from .report.export import BenchRun as BenchRun
    from .report.export import JudgeRun as JudgeRun
    from .report.export import load_run as load_run

# The package version, read by the build (pyproject's dynamic version) and by run logs.
__version__ = "0.1.0"

__all__ = ["BenchRun", "JudgeRun", "__version__", "load_run"]
_FROM_EXPORT = {"BenchRun", "JudgeRun", "load_run"}  # what load_run returns, to narrow it by


def __getattr__(name: str) -> Any:
    # `assay.load_run` without importing the run and report stacks at `import assay`
    if name in _FROM_EXPORT:
        from .report import export

        return getattr(export, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
