"""Importers: public benchmark files -> assay's own input formats.

``IMPORTERS`` is the whole table, written out here (no registration by import side effects).
Each grounded-QA importer reads one split of its dataset (SRC is any file of that format) and
returns verify-only :class:`~assay.verify.types.GroundedQARecord` values plus an
:class:`ImportReport` of what it kept and skipped and why. A file of another shape fails with one
:class:`~assay.errors.InputError` naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import expertqa, halueval, wice
from ._common import GroundedImport, ImportReport


@dataclass(frozen=True)
class Importer:
    """One dataset: what its SRC file is, how labels map, and the function that converts it."""

    name: str
    summary: str
    source: str  # what SRC is, with the file name of the split in ../shared/data
    label_convention: str
    convert: Callable[[Path], GroundedImport]


IMPORTERS: dict[str, Importer] = {
    "expertqa": Importer(
        name="expertqa",
        summary="ExpertQA claims with human support labels -> one verify-only record per claim",
        source="an ExpertQA JSONL split, e.g. expertqa/domain_val.jsonl",
        label_convention=expertqa.LABEL_CONVENTION,
        convert=expertqa.import_expertqa,
    ),
    "wice": Importer(
        name="wice",
        summary="WiCE claims with evidence sentences -> one verify-only record per claim",
        source="a WiCE claim (or subclaim) JSONL split, e.g. wice/claim_dev.jsonl",
        label_convention=wice.LABEL_CONVENTION,
        convert=wice.import_wice,
    ),
    "halueval": Importer(
        name="halueval",
        summary="HaluEval QA -> two verify-only records per question (right, hallucinated)",
        source="a HaluEval QA file in JSON lines, e.g. halueval/qa_one-turn_data.json",
        label_convention=halueval.LABEL_CONVENTION,
        convert=halueval.import_halueval,
    ),
}

__all__ = ["IMPORTERS", "GroundedImport", "ImportReport", "Importer"]
