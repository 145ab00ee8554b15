"""``scripts/factcheckgpt_to_aggrefact.py`` on a response of the published Factcheck-Bench
shape: one row per claim with passages, grounded only when a passage completely supports it,
claims without passages or with mismatched stances counted and left out, and the rows imported
by ``assay import aggrefact``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assay.data.importers import import_grounded

from ..conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "factcheckgpt_to_aggrefact.py"
RESPONSE = {
    "prompt": "Who was the oldest justice on the US supreme court in 1980?",
    "response": "In 1980 it was Douglas. He was born in 1898.",
    "sentences": {
        "sentence1": {
            "claims": ["Douglas was the oldest justice in 1980.", "Douglas wrote books."],
            "auto_evidence": [
                ["Brennan was the oldest justice in 1980.", "Douglas retired in 1975."],
                [],
            ],
            "stance_claim_autoEvid": [["refute", "partially-support"], []],
        },
        "sentence2": {
            "claims": ["Douglas was born in 1898.", "Douglas was born in Minnesota."],
            "auto_evidence": [
                ["Douglas (1898-1980) was a jurist.", "He served from 1939.", "A photo."],
                ["Douglas was born in Maine, Minnesota."],
            ],
            "stance_claim_autoEvid": [
                ["completely-support", "irrelevant", "irrelevant"],
                ["completely-support", "irrelevant"],  # two stances for one passage
            ],
        },
    },
}


def test_claims_become_rows_grounded_only_by_complete_support(tmp_path: Path) -> None:
    source = tmp_path / "factcheck-GPT-benchmark.jsonl"
    source.write_text(json.dumps(RESPONSE) + "\n\n", encoding="utf-8")
    out = tmp_path / "rows.jsonl"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(source), "--out", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["claim"], r["label"]) for r in rows] == [
        ("Douglas was the oldest justice in 1980.", 0),  # refuted and partial: an error
        ("Douglas was born in 1898.", 1),
    ]
    assert rows[1]["doc"] == "Douglas (1898-1980) was a jurist.\n\nHe served from 1939.\n\nA photo."
    assert {r["dataset"] for r in rows} == {"FactCheck-GPT"}
    assert {r["group"] for r in rows} == {RESPONSE["prompt"]}  # one answer, one cluster
    printed = done.stdout
    assert "FactCheck-GPT: 2 claims of 1 responses (grounded 1, error 1)" in printed
    assert "left out: no passages: 1" in printed
    assert "left out: stances do not match passages: 1" in printed
    assert "stance partially-support: 1" in printed
    imported = import_grounded("aggrefact", out)
    assert [r.gold_error for r in imported.records] == [True, False]
    assert len(imported.records[1].evidence) == 3  # one item per passage
    assert len({r.cluster for r in imported.records}) == 1


def test_a_line_that_is_not_a_response_stops_the_script(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(RESPONSE) + "\n" + json.dumps({"prompt": "x"}) + "\n")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(source), "--out", str(tmp_path / "rows.jsonl")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert f"{source}:2: expected a response with 'sentences'" in done.stderr


def test_a_line_that_is_not_json_or_of_another_shape_gives_one_located_error(
    tmp_path: Path,
) -> None:
    broken_sentence = {"prompt": "x", "sentences": {"sentence1": {"claims": "one claim"}}}
    for second_line, message in [
        ('{"prompt": "x", "sentences"', "not a JSON line"),
        (json.dumps(broken_sentence), "field 'sentences.sentence1.claims': not a list"),
    ]:
        source = tmp_path / "bad.jsonl"
        source.write_text(json.dumps(RESPONSE) + "\n" + second_line + "\n")
        done = subprocess.run(
            [sys.executable, str(SCRIPT), str(source), "--out", str(tmp_path / "rows.jsonl")],
            capture_output=True,
            text=True,
        )
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert done.stderr.startswith(f"{source}:2: {message}")
