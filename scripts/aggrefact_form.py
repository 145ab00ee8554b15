#!/usr/bin/env python3
"""Write the grounded-QA datasets of ../shared/data in LLM-AggreFact's form (one row per claim:
``dataset``, ``doc``, ``claim``, ``label`` with 1 = supported), as JSON lines or CSV.

    python scripts/aggrefact_form.py --out /tmp/as_aggrefact.jsonl
    assay import aggrefact /tmp/as_aggrefact.jsonl --out /tmp/agg.jsonl
    assay bench run --data /tmp/agg.jsonl --pattern entailment --verifier learned --out_dir /tmp/r
    assay bench summarize /tmp/r --by meta.dataset

Each record's evidence becomes one document: WiCE's page sentences joined by spaces (or by
newlines, ``--wice-join newline``), ExpertQA's cited passages and HaluEval's knowledge separated
by blank lines; ExpertQA's citation markers are taken out of the claims. Scored through
``assay import aggrefact``, the same claims should score as they do through the datasets' own
importers: docs/importers.md compares the two. The rows go to ``--out`` only; the data stays in
../shared/data.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from assay.data.citations import strip_citations
from assay.data.importers import import_grounded
from assay.data.records import GroundedQARecord

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SPLITS = {  # LLM-AggreFact's name for the dataset (HaluEval is not in the benchmark)
    "ExpertQA": ("expertqa", "expertqa/domain_val.jsonl"),
    "Wice": ("wice", "wice/claim_dev.jsonl"),
    "HaluEval": ("halueval", "halueval/qa_one-turn_data.json"),
}
JOINS = {"space": " ", "newline": "\n"}
COLUMNS = ("dataset", "doc", "claim", "label")


def aggrefact_rows(data_dir: Path, wice_join: str = " ") -> Iterator[dict[str, object]]:
    """One LLM-AggreFact row per record of the three shared datasets."""
    for name, (importer, relative) in SPLITS.items():
        join = wice_join if importer == "wice" else "\n\n"
        for record in import_grounded(importer, data_dir / relative).records:
            yield _row(name, record, join)


def _row(name: str, record: GroundedQARecord, join: str) -> dict[str, object]:
    return {
        "dataset": name,
        "doc": join.join(e.text for e in record.evidence),
        "claim": strip_citations(record.answer or ""),  # the benchmark's claims carry no markers
        "label": 0 if record.gold_error else 1,
    }


def write_rows(path: Path, rows: Iterator[dict[str, object]]) -> int:
    written = list(rows)
    with path.open("w", encoding="utf-8", newline="") as handle:
        if path.suffix == ".csv":
            writer = csv.DictWriter(handle, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(written)
        else:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in written)
    return len(written)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help=".jsonl, or .csv for CSV")
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA)
    parser.add_argument("--wice-join", choices=sorted(JOINS), default="space")
    args = parser.parse_args(argv)
    count = write_rows(args.out, aggrefact_rows(args.data_dir, JOINS[args.wice_join]))
    print(f"wrote {count} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
