"""How much of a WiCE claim's annotated support fits in a model verifier's evidence budget.

    python benchmarks/evidence_budget.py            # imports WiCE dev itself if needed

A model checker sees at most ``max_evidence_chars`` of evidence (6,000 by default), one snippet
per line in page order, as ``single_pass.evidence_text`` writes it. WiCE gives, for each claim,
the page sentences that support it (the union of its supporting sets, the records'
``gold_citations``). For every record with such an annotation whose page is longer than the
budget, this counts how often the prompt holds *all* of them and *some* of them, with the
single-pass checker's two cuts (``--claim-evidence-cut``): ``page_order``, the default, and
``relevance``, the snippets with the most IDF-weighted overlap with the claim (the learned
checker's index) that fit, shown in page order. No model is called.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from assay.data.grounded import load_records
from assay.data.records import GroundedQARecord
from assay.verify.checkers.single_pass import EvidenceCut, evidence_text

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "data" / "wice" / "claim_dev.jsonl"
IMPORTED = ROOT / "runs" / "real_data" / "data" / "wice.jsonl"
BUDGETS = (3000, 6000, 12000)


def prompt_ids(record: GroundedQARecord, budget: int, cut: EvidenceCut) -> set[str]:
    """The evidence ids whose line starts inside the prompt's evidence."""
    text = evidence_text(record.evidence, budget, record.answer or "", cut)
    return {line[1 : line.index("]")] for line in text.splitlines() if "]" in line}


def page_chars(record: GroundedQARecord) -> int:
    return len(evidence_text(record.evidence, 10**9))


def table(records: Sequence[GroundedQARecord]) -> str:
    annotated = [r for r in records if r.gold_citations]
    lines = [
        f"{len(records)} WiCE dev records, {len(annotated)} with annotated supporting sentences",
        "",
        "| budget (chars) | pages longer | all support in prompt: page order | relevance "
        "| some support in prompt: page order | relevance |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for budget in BUDGETS:
        long = [r for r in annotated if page_chars(r) > budget]
        cells = {"all_page": 0, "all_rel": 0, "some_page": 0, "some_rel": 0}
        for record in long:
            gold = {c.evidence_id for c in record.gold_citations}
            page = prompt_ids(record, budget, "page_order")
            relevant = prompt_ids(record, budget, "relevance")
            cells["all_page"] += gold <= page
            cells["all_rel"] += gold <= relevant
            cells["some_page"] += bool(gold & page)
            cells["some_rel"] += bool(gold & relevant)
        n = max(1, len(long))
        lines.append(
            f"| {budget:,} | {len(long)} | "
            + " | ".join(f"{v} ({100 * v / n:.0f}%)" for v in cells.values())
            + " |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=IMPORTED, help="WiCE as assay imports it")
    args = parser.parse_args(argv)
    if not args.data.exists():
        args.data.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "assay", "import", "wice", str(SOURCE), "--out"]
        subprocess.run([*command, str(args.data)], check=True)
    print(table(load_records(args.data).records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
