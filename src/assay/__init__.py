"""assay: auditable evaluation of language-model outputs.

Two jobs sit on one model layer (:mod:`assay.model`), one run layer (:mod:`assay.runs`) and one
metrics library (:mod:`assay.metrics`):

- the judge protocol (:mod:`assay.judge`): strict LLM-as-judge scoring with validation and
  valid/invalid archives;
- the verifier benchmark (:mod:`assay.verify`): generate -> verify -> revise pipelines on
  grounded QA with citations.

``assay.check_grounding(answer, evidence)`` is the model-free grounding check as one call
(:mod:`assay.integrations.grounding`); ``assay.load_run(DIR)`` reads a run's results.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .integrations.grounding import Grounding as Grounding
    from .integrations.grounding import acheck_grounding as acheck_grounding
    from .integrations.grounding import check_grounding as check_grounding
    from .report.export import BenchRun as BenchRun
    from .report.export import JudgeDrawsRun as JudgeDrawsRun
    from .report.export import JudgeRun as JudgeRun
    from .report.export import RobustnessRun as RobustnessRun
    from .report.export import load_run as load_run

# The package version, read by the build (pyproject's dynamic version) and by run logs.
__version__ = "0.1.0"

__all__ = [
    "BenchRun",
    "Grounding",
    "JudgeDrawsRun",
    "JudgeRun",
    "RobustnessRun",
    "__version__",
    "acheck_grounding",
    "check_grounding",
    "load_run",
]
_FROM_EXPORT = {
    "BenchRun",
    "JudgeDrawsRun",
    "JudgeRun",
    "RobustnessRun",
    "load_run",
}  # what load_run returns, to narrow it by
_FROM_GROUNDING = {"Grounding", "acheck_grounding", "check_grounding"}


def __getattr__(name: str) -> Any:
    # `assay.load_run` and `assay.check_grounding` without importing the run, report and
    # checker stacks at `import assay`
    if name in _FROM_EXPORT:
        from .report import export

        return getattr(export, name)
    if name in _FROM_GROUNDING:
        from .integrations import grounding

        return getattr(grounding, name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
