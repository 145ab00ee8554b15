"""Real run directories for the report tests, made through the CLI on stub models (judge) and
the model-free lexical checker (benchmark), with hostile text in model outputs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from assay.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
LABELLED_EXAMPLES = REPO_ROOT / "examples" / "grounded_qa_labelled.jsonl"
EXAMPLES = REPO_ROOT / "examples" / "grounded_qa.jsonl"
# each part sets window.__pwned if it ever runs
PAYLOAD = (
    "<script>window.__pwned = 'script'</script>"
    "<img src=x onerror=\"window.__pwned = 'img'\">"
    "<a href=\"javascript:window.__pwned='link'\">click me</a>"
    "</script><!-- \u2028"
)


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(args: list[str]) -> None:
    code = main(args)
    assert code == 0, f"assay {' '.join(args)} exited {code}"


@pytest.fixture(scope="session")
def judge_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two stub judges, cross and self, over outputs of which some carry the payload."""
    root = tmp_path_factory.mktemp("judge")
    questions = [
        {"question_id": q, "variants": {v: {"prompt": f"Answer {q} as variant {v}."} for v in "AB"}}
        for q in ("Q1", "Q2")
    ]
    outputs = [
        {
            "question_id": q,
            "prompt_variant": v,
            "target_model": t,
            "output_id": f"{t}/{q}/{v}",
            "text": f"- Hash maps store pairs.\n- Lookup is fast.\n- {PAYLOAD}"
            if q == "Q1"
            else f"Output of {t} for {q} {v}: [2, 3]",
        }
        for t in ("stub/a", "stub/b")
        for q in ("Q1", "Q2")
        for v in "AB"
    ]
    run = root / "run"
    # The stub's flaws are seeded by prompt and seed; seed 2 gives 3 invalid replies of 16.
    common = ["--judge", "stub/a", "--judge", "stub/b", "--mode", "both", "--seed", "2"]
    common += ["--out", str(run)]
    _cli(
        [
            "judge",
            "run",
            "--questions",
            str(_write_jsonl(root / "q.jsonl", questions)),
            "--outputs",
            str(_write_jsonl(root / "outputs.jsonl", outputs)),
            *common,
        ]
    )
    _cli(["judge", "analyze", str(run), "--resamples", "200"])
    return run


def hostile_record() -> dict[str, object]:
    """A labelled answer whose text and evidence carry the payload."""
    return {
        "id": "hostile::payload",
        "question": f"What does this page do? {PAYLOAD}",
        "gold_answer": "It shows text [cite:h1].",
        "evidence": [
            {
                "evidence_id": "h1",
                "title": "Payload",
                "text": f"Evidence text {PAYLOAD}",
                "source": "javascript:window.__pwned='source'",
                "meta": {"score": 0.42, "note": PAYLOAD},
            },
        ],
        "answer": f"The page shows text {PAYLOAD} [cite:h1].",
        "gold_error": True,
        "error_type": "unsupported_claim",
    }


@pytest.fixture(scope="session")
def bench_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's labelled examples plus one hostile record."""
    root = tmp_path_factory.mktemp("bench_data")
    rows = [json.loads(line) for line in LABELLED_EXAMPLES.read_text().splitlines() if line]
    return _write_jsonl(root / "data.jsonl", [*rows, hostile_record()])


def _bench(data: Path, run: Path, *options: str) -> Path:
    common = ["--out_dir", str(run), "--max_examples", "0", "--n-resamples", "200"]
    _cli(["bench", "run", "--data", str(data), *common, "--no-progress", *options])
    return run


@pytest.fixture(scope="session")
def bench_run(bench_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Entailment pattern with the lexical checker, verify-only mode: no model calls."""
    run = tmp_path_factory.mktemp("bench") / "run"
    return _bench(bench_data, run, "--pattern", "entailment", "--verifier", "lexical")


@pytest.fixture(scope="session")
def critique_run(bench_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Self-consistency on the same records, critiques from a stub model."""
    run = tmp_path_factory.mktemp("critique") / "run"
    options = ["--pattern", "self_consistency", "--critic", "stub/critic", "--n", "2"]
    options += ["--generator", "stub/gen"]  # the K samples the critique compares with
    return _bench(bench_data, run, *options, "--verifier", "lexical")


@pytest.fixture(scope="session")
def best_of_n_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generate mode on stub models: candidates, selection and revision are recorded."""
    root = tmp_path_factory.mktemp("best_of_n")
    run = root / "run"
    _cli(
        [
            "bench",
            "run",
            "--data",
            str(EXAMPLES),
            "--pattern",
            "best_of_n",
            "--n",
            "3",
            "--max_examples",
            "4",
            "--generator",
            "stub/gen",
            "--verifier",
            "lexical",
            "--out_dir",
            str(run),
            "--n-resamples",
            "50",
            "--no-progress",
        ]
    )
    return run
