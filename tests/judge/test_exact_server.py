"""Exact decoding against a real OpenAI-compatible server (llama-cpp-python's, on loopback)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay.data.questions import load_outputs, load_questions
from assay.judge.archive import iter_archive, recheck_archive
from assay.judge.evalset import build_eval_set
from assay.judge.protocol import DecodingSettings
from assay.judge.run import JudgeRunConfig, run_judges
from assay.model import ModelOptions, get_model

from .helpers import write_questions

pytestmark = pytest.mark.slow

OUTPUTS = [
    ("A", 'A hash map stores "key" to value pairs.\n- Lookup is O(1) on average.\n- Café: ok!'),
    ("B", "A hash map maps keys to values. Collisions are chained. It resizes when full."),
]


def test_exact_schema_on_a_real_server_gives_valid_replies(
    llama_server: str, tmp_path: Path
) -> None:
    questions = write_questions(tmp_path / "questions.jsonl", [_question()])
    manifest = tmp_path / "outputs.jsonl"
    rows = [
        {
            "question_id": "Q1",
            "prompt_variant": variant,
            "target_model": "stub/target",
            "output_id": f"target/{variant}",
            "text": text,
        }
        for variant, text in OUTPUTS
    ]
    manifest.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    eval_set = build_eval_set(load_questions(questions), load_outputs(manifest))
    judge = get_model("openai/smollm2", ModelOptions(base_url=llama_server, cache=False))
    config = JudgeRunConfig(decoding=DecodingSettings(constrained="exact", max_tokens=64))

    async def go() -> None:
        try:
            await run_judges(eval_set, [judge], tmp_path / "run", config)
        finally:
            await judge.aclose()

    asyncio.run(go())
    records = [item.record for item in iter_archive(tmp_path / "run") if item.record is not None]
    assert len(records) == 2
    for record in records:
        assert record.decoding_mode == "exact", record.decoding_note
        assert record.valid, record.classification.problems()
        assert record.call is not None and record.call.finish_reason == "stop"
        assert (record.reply_budget or 0) > 64  # raised to the longest reply the schema admits
    assert recheck_archive(tmp_path / "run").consistent


def _question() -> dict[str, object]:
    return {
        "question_id": "Q1",
        "intent": "explain a data structure",
        "variants": {variant: {"prompt": "Explain a hash map briefly."} for variant, _ in OUTPUTS},
    }
