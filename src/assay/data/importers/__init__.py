"""Importers: public benchmark files -> assay's own input formats.

``IMPORTERS`` is the whole table, written out here (no registration by import side effects).
Each grounded-QA importer (:class:`GroundedImporter`) reads one split of its dataset (SRC is
any file of that format) and returns verify-only :class:`~assay.data.records.GroundedQARecord`
values plus an :class:`ImportReport` of what it kept and skipped and why. A file of another
shape fails with one :class:`~assay.errors.InputError` naming the file, the line and the field.
The table importer (:class:`TableImporter`) reads a file of any shape into the same records, by
the fields the user names. The IFEval importer (:class:`JudgeSetImporter`) turns prompts,
responses and IFEval's own labels into the judge protocol's question set and outputs manifest
plus a ground-truth labels file.
The inspect_ai, promptfoo and lm-eval importers (:class:`LogImporter`) turn eval logs, results
files and samples files, the outputs a model already wrote under those tools, into a question
set and an outputs manifest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from . import (
    aggrefact,
    deepeval_datasets,
    expertqa,
    halueval,
    ifeval,
    inspect_logs,
    lm_eval_samples,
    promptfoo_results,
    ragas_datasets,
    table,
    wice,
)
from ._common import GroundedImport, ImportReport, refuse_empty
from ._labels import LabelField
from .ifeval import IFEvalImport, IFEvalSources
from .inspect_logs import InspectImport
from .lm_eval_samples import IFEVAL_FOLDER, IFEVAL_LAYOUT_NAMES, IFEvalFiles, LmEvalImport
from .promptfoo_results import PromptfooImport
from .table import TableMapping


@dataclass(frozen=True)
class GroundedImporter:
    """A grounded-QA dataset: what its SRC file is, how labels map, and the converter."""

    name: str
    summary: str
    source: str  # what SRC is, with the file name of the split in ../shared/data
    label_convention: str
    convert: Callable[[Path], GroundedImport]
    # for a dataset without labels of its own: the converter that reads a field the user names
    # as the label (``--error-field`` / ``--grounded-field``)
    convert_labelled: Callable[[Path, LabelField], GroundedImport] | None = None


@dataclass(frozen=True)
class TableImporter:
    """A table of the user's own (JSON lines, a JSON array, CSV): the fields that hold the
    answer, the evidence and the rest are named on the command line (:class:`TableMapping`)."""

    name: str
    summary: str
    source: str
    label_convention: str
    convert: Callable[[Path, TableMapping, LabelField | None], GroundedImport]


@dataclass(frozen=True)
class JudgeSetImporter:
    """Judge data: prompts, a model's responses and programmatic labels -> a question set, an
    outputs manifest and a labels file."""

    name: str
    summary: str
    source: str
    label_convention: str
    convert: Callable[[IFEvalSources], IFEvalImport]


@dataclass(frozen=True)
class LogImporter:
    """Another tool's logs of model outputs (several files) -> a question set and an outputs
    manifest, judged as they are."""

    name: str
    summary: str
    source: str
    label_convention: str
    convert: Callable[[Sequence[Path]], InspectImport | PromptfooImport | LmEvalImport]
    metavar: str = "LOG"  # what the command line calls one of the files


Importer = GroundedImporter | TableImporter | JudgeSetImporter | LogImporter


IMPORTERS: dict[str, Importer] = {
    "expertqa": GroundedImporter(
        name="expertqa",
        summary="ExpertQA claims with human support labels -> one verify-only record per claim",
        source="an ExpertQA JSONL split, e.g. expertqa/domain_val.jsonl",
        label_convention=expertqa.LABEL_CONVENTION,
        convert=expertqa.import_expertqa,
    ),
    "wice": GroundedImporter(
        name="wice",
        summary="WiCE claims with evidence sentences -> one verify-only record per claim",
        source="a WiCE claim (or subclaim) JSONL split, e.g. wice/claim_dev.jsonl",
        label_convention=wice.LABEL_CONVENTION,
        convert=wice.import_wice,
    ),
    "halueval": GroundedImporter(
        name="halueval",
        summary="HaluEval QA, dialogue or summarization -> two verify-only records per row "
        "(right, hallucinated)",
        source="a HaluEval task file in JSON lines (qa_data.json, dialogue_data.json, "
        "summarization_data.json), e.g. halueval/qa_one-turn_data.json",
        label_convention=halueval.LABEL_CONVENTION,
        convert=halueval.import_halueval,
    ),
    "aggrefact": GroundedImporter(
        name="aggrefact",
        summary="LLM-AggreFact claims with their grounding documents (eleven source datasets) "
        "-> one verify-only record per claim, meta.dataset = the source",
        source="an LLM-AggreFact split exported as JSON lines or CSV, e.g. aggrefact_test.jsonl "
        "(not in ../shared/data)",
        label_convention=aggrefact.LABEL_CONVENTION,
        convert=aggrefact.import_aggrefact,
    ),
    "deepeval": GroundedImporter(
        name="deepeval",
        summary="deepeval datasets (EvaluationDataset.save_as: json, jsonl or csv) of goldens or "
        "test cases with an actual_output -> one verify-only record per row, evidence = "
        "retrieval_context (else context)",
        source="a dataset file deepeval wrote with EvaluationDataset.save_as (.json, .jsonl or "
        ".csv)",
        label_convention=deepeval_datasets.LABEL_CONVENTION,
        convert=deepeval_datasets.import_deepeval,
        convert_labelled=deepeval_datasets.import_deepeval,
    ),
    "ragas": GroundedImporter(
        name="ragas",
        summary="ragas evaluation datasets and evaluate() results -> one verify-only record "
        "per single-turn sample (answer = response, evidence = retrieved_contexts), metric "
        "scores in meta.ragas",
        source="a ragas EvaluationDataset written by to_jsonl or to_csv, or an evaluate() "
        "result written by result.to_pandas().to_csv(...) or .to_json(..., orient='records', "
        "lines=True)",
        label_convention=ragas_datasets.LABEL_CONVENTION,
        convert=ragas_datasets.import_ragas,
        convert_labelled=ragas_datasets.import_ragas,
    ),
    "table": TableImporter(
        name="table",
        summary="a table of your own (JSON lines, a JSON array of objects or CSV, gzip or not) "
        "-> one verify-only record per row, from the fields --answer, --evidence (and "
        "--question, --reference, --id, --group) name; every other field in meta",
        source="a JSON lines, JSON or CSV file (.csv, .csv.gz) of answers with their evidence "
        "passages, e.g. a RAG application's log",
        label_convention=table.LABEL_CONVENTION,
        convert=table.import_table,
    ),
    "ifeval": JudgeSetImporter(
        name="ifeval",
        summary="IFEval prompts + one model's responses + IFEval's own labels -> a judge "
        "question set, an outputs manifest and ground-truth labels",
        source="IFEval's input_data.jsonl",
        label_convention=ifeval.LABEL_CONVENTION,
        convert=ifeval.import_ifeval,
    ),
    "inspect": LogImporter(
        name="inspect",
        summary="inspect_ai eval logs (.eval or .json) -> a judge question set (one question "
        "per sample, one variant per epoch) and an outputs manifest (the log's model as the "
        "target model)",
        source="inspect_ai eval logs of finished runs (needs the inspect extra)",
        label_convention=inspect_logs.LABEL_CONVENTION,
        convert=inspect_logs.import_inspect_logs,
    ),
    "promptfoo": LogImporter(
        name="promptfoo",
        summary="promptfoo results files (promptfoo eval -o results.json) -> a judge question "
        "set (one question per test case, one variant per prompt) and an outputs manifest (each "
        "provider as a target model)",
        source="promptfoo results files in JSON, written by promptfoo eval -o FILE.json",
        label_convention=promptfoo_results.LABEL_CONVENTION,
        convert=promptfoo_results.import_promptfoo_results,
        metavar="RESULTS",
    ),
    "lm-eval": LogImporter(
        name="lm-eval",
        summary="lm-evaluation-harness samples files (lm_eval --log_samples) -> a judge question "
        "set (one question per document, one variant per generation task) and an outputs "
        "manifest (the run's model as the target model); IFEval documents also in IFEval's "
        "layout for assay instructions",
        source="lm-eval samples files, samples_<task>_<timestamp>.jsonl, with the "
        "results_<timestamp>.json lm-eval writes beside them",
        label_convention=lm_eval_samples.LABEL_CONVENTION,
        convert=lm_eval_samples.import_lm_eval_samples,
        metavar="SAMPLES",
    ),
}


def import_grounded(name: str, source: Path) -> GroundedImport:
    """Import ``source`` with the grounded-QA importer ``name`` (expertqa, wice, halueval,
    aggrefact, deepeval, ragas)."""
    importer = IMPORTERS.get(name)
    if isinstance(importer, TableImporter):
        raise ConfigError(
            "the table importer reads the fields you name: call "
            "table.import_table(path, TableMapping.parse(answer=..., evidence=...))"
        )
    if not isinstance(importer, GroundedImporter):
        names = ", ".join(n for n, i in IMPORTERS.items() if isinstance(i, GroundedImporter))
        raise ConfigError(f"no grounded-QA importer named {name!r} (choose from {names})")
    return importer.convert(source)


__all__ = [
    "IFEVAL_FOLDER",
    "IFEVAL_LAYOUT_NAMES",
    "IMPORTERS",
    "GroundedImport",
    "GroundedImporter",
    "IFEvalFiles",
    "IFEvalImport",
    "IFEvalSources",
    "ImportReport",
    "Importer",
    "InspectImport",
    "JudgeSetImporter",
    "LabelField",
    "LmEvalImport",
    "LogImporter",
    "PromptfooImport",
    "TableImporter",
    "TableMapping",
    "import_grounded",
    "refuse_empty",
]
