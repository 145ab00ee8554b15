"""Fixtures of the judge tests: a question set, outputs, and an aligned evaluation set."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.data.questions import load_outputs, load_questions
from assay.judge.evalset import EvalSet, build_eval_set

from .helpers import write_manifest, write_questions


@pytest.fixture
def questions_path(tmp_path: Path) -> Path:
    return write_questions(tmp_path / "questions.jsonl")


@pytest.fixture
def manifest_path(tmp_path: Path) -> Path:
    return write_manifest(tmp_path / "outputs.jsonl", ["stub/a", "stub/b"])


@pytest.fixture
def eval_set(questions_path: Path, manifest_path: Path) -> EvalSet:
    return build_eval_set(load_questions(questions_path), load_outputs(manifest_path))
