#!/usr/bin/env python3
"""Turn the long-form QA annotations of Chen et al., "Understanding Retrieval Augmentation for
Long-Form Question Answering" (2023; github.com/timchen0618/LFQA-Verification, the source of
LLM-AggreFact's LFQA set) into LLM-AggreFact rows, one per answer sentence.

    python scripts/lfqa_to_aggrefact.py --docs data/docs/docs-webgpt.json --annotations \
        data/annotations/annotations-{webgpt,gpt3_wdoc,alpaca_wdoc}.json --out lfqa_rows.jsonl
    assay import aggrefact lfqa_rows.jsonl --out lfqa.jsonl
    assay bench run --data lfqa.jsonl --pattern entailment --verifier learned --out_dir runs/lfqa
    assay bench summarize runs/lfqa --by meta.dataset

An annotation file holds, per question, the answer's sentences and three annotators' labels for
each (``supported``, ``partially``, ``not_supported``) against the documents the answer was
written from; a docs file holds those documents per question (the WebGPT documents serve the
WebGPT, GPT-3 and Alpaca answers). Each annotation file's rows are named after it
(``annotations-gpt3_wdoc.json`` -> ``LFQA-gpt3_wdoc``) unless ``--name`` says otherwise.
Questions are matched by their text (the two files number them differently). The document is
the question's documents' texts separated by blank lines. A sentence is grounded (label 1)
when at least two of its three annotators call it ``supported``, an error (label 0) otherwise
(``--label all`` asks all three), as LLM-AggreFact counts partial support as no support. Both
files may be a JSON array (as published) or JSON lines. Questions without documents (none in
the docs file, or only empty ones) are reported and left out. A file of another shape (the
two files swapped, an item without ``question``) is one error naming the file, the item and
the field, not a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

SUPPORTED = "supported"
LABELS = frozenset({"supported", "partially", "not_supported"})


def read_objects(path: Path) -> list[dict[str, Any]]:
    """A JSON array of objects, or JSON lines of objects."""
    text = path.read_text(encoding="utf-8")
    data: list[Any]
    if text.lstrip().startswith("["):
        data = json.loads(text)
    else:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    objects = [item for item in data if isinstance(item, dict)]
    if len(objects) != len(data):
        raise SystemExit(f"{path}: expected JSON objects")
    return objects


# the fields each item needs, and those of its entries (docs' documents, annotations' sentences)
DOCS_FIELDS = (("question", "docs"), "docs", ("text",))
ANNOTATION_FIELDS = (("question", "annotations"), "annotations", ("labels", "answer"))


def check_shape(items: list[dict[str, Any]], path: Path, fields: tuple[Any, ...]) -> None:
    """Stop at the first item (or entry of it) that lacks a field this script reads."""
    own, entries, entry_fields = fields
    for index, item in enumerate(items):
        where = f"{path}: item {index} field"
        _require(item, own, where, "")
        if not isinstance(item[entries], list):
            raise SystemExit(f"{where} '{entries}': expected a list")
        for number, entry in enumerate(item[entries]):
            if not isinstance(entry, dict):
                raise SystemExit(f"{where} '{entries}[{number}]': expected an object")
            _require(entry, entry_fields, where, f"{entries}[{number}].")


def _require(item: dict[str, Any], fields: Sequence[str], where: str, prefix: str) -> None:
    for name in fields:
        if name not in item:
            have = ", ".join(sorted(item))
            raise SystemExit(f"{where} '{prefix}{name}': missing (the item has: {have})")


def documents_by_question(docs: list[dict[str, Any]]) -> dict[str, str]:
    return {
        _key(item["question"]): "\n\n".join(d["text"].strip() for d in item["docs"] if d["text"])
        for item in docs
    }


def rows(
    annotations: list[dict[str, Any]], documents: dict[str, str], name: str, need: int
) -> Iterator[dict[str, object]]:
    for item in annotations:
        doc = documents.get(_key(item["question"]))
        if not doc:
            continue
        for entry in item["annotations"]:
            labels = entry["labels"]
            unknown = set(labels) - LABELS
            if unknown:
                raise SystemExit(f"{item['questionid']}: unknown labels {sorted(unknown)}")
            supported = sum(label == SUPPORTED for label in labels) >= need
            yield {"dataset": name, "doc": doc, "claim": entry["answer"], "label": int(supported)}


def _key(question: str) -> str:
    return " ".join(question.split()).lower()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--annotations", type=Path, nargs="+", required=True)
    parser.add_argument("--docs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--name", help="the rows' dataset name (default: from each file's name)")
    parser.add_argument("--label", choices=["majority", "all"], default="majority")
    args = parser.parse_args(argv)
    docs = read_objects(args.docs)
    check_shape(docs, args.docs, DOCS_FIELDS)
    documents = documents_by_question(docs)
    need = 2 if args.label == "majority" else 3
    with args.out.open("w", encoding="utf-8") as handle:
        for path in args.annotations:
            annotations = read_objects(path)
            check_shape(annotations, path, ANNOTATION_FIELDS)
            name = args.name or _name(path)
            written = list(rows(annotations, documents, name, need))
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in written)
            # no entry in the docs file, or only empty documents: rows() leaves both out
            missing = sum(not documents.get(_key(item["question"])) for item in annotations)
            labels = Counter("grounded" if row["label"] else "error" for row in written)
            print(
                f"{name}: {len(written)} sentences of {len(annotations) - missing} questions "
                f"(grounded {labels['grounded']}, error {labels['error']}); "
                f"{missing} questions without documents left out"
            )
    print(f"wrote {args.out}")
    return 0


def _name(path: Path) -> str:
    return "LFQA-" + path.stem.removeprefix("annotations-")


if __name__ == "__main__":
    sys.exit(main())
