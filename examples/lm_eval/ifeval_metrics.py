"""lm-eval's own IFEval scoring, for ifeval_offline.yaml: lm-eval resolves ``!function`` names
in a task file against a module beside it, so this module only names lm-eval's functions."""

from lm_eval.tasks.ifeval.utils import agg_inst_level_acc, process_results

__all__ = ["agg_inst_level_acc", "process_results"]
