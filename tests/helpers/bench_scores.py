"""What ``assay bench run --verifier learned`` gives given answers: the p_error an integration
(the inspect scorer, the promptfoo assertion) must equal for the same answer and evidence."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.cli import main
from assay.report.export import BenchRun, load_run


def learned_p_errors(
    tmp_path: Path,
    evidence: Sequence[Mapping[str, str]],
    questions: Mapping[str, str],
    answers: Mapping[str, str],
) -> dict[str, float | None]:
    """Each answer's p_error from a real bench run (entailment pattern, learned checker), by
    name; ``evidence`` items have ``evidence_id`` and ``text``; an answer named
    ``ungrounded`` is labelled erroneous, the others not."""
    data = tmp_path / "answers.jsonl"
    lines = [
        {"id": name, "question": questions[name], "gold_answer": "", "evidence": list(evidence),
         "answer": answer, "gold_error": name == "ungrounded"}
        for name, answer in answers.items()
    ]  # fmt: skip
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    argv = [
        "bench", "run", "--data", str(data), "--pattern", "entailment",
        "--verifier", "learned", "--out_dir", str(tmp_path / "run"),
    ]  # fmt: skip
    assert main(argv) == 0
    run = load_run(tmp_path / "run")
    assert isinstance(run, BenchRun)
    return {result.id: result.verifier_score for result in run.results}


LABELLED = Path(__file__).resolve().parents[2] / "examples" / "grounded_qa_labelled.jsonl"


def learned_calibration(tmp_path: Path, *verifier: str) -> Path:
    """A calibration file ``assay bench calibrate`` fits on a real dev run (the project's 71
    labelled examples, entailment pattern, the learned checker unless ``verifier`` names
    another: ``"--verifier", "lexical"``)."""
    run = tmp_path / "dev_run"
    argv = [
        "bench", "run", "--data", str(LABELLED), "--pattern", "entailment", "--out_dir",
        str(run), "--no-report", "--no-progress", "--n-resamples", "20",
        *(verifier or ("--verifier", "learned")),
    ]  # fmt: skip
    assert main(argv) == 0
    path = tmp_path / "calibration.json"
    assert main(["bench", "calibrate", str(run), "--out", str(path)]) == 0
    return path
