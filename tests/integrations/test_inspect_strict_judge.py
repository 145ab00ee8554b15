"""``assay.integrations.inspect_ai.strict_judge``: assay's judge protocol as an inspect_ai scorer,
in inspect's own ``eval()`` (its ``mockllm`` provider writing the outputs): valid replies are
scores that keep the protocol's rules, invalid ones leave the sample unscored with the reason;
the judge is assay's stub (its judge replies, a flawed one now and then) and the embedded
SmolLM2 behind a real ``llama_cpp.server`` on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra")  # in the dev extra

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.solver import generate

from assay.integrations.inspect_ai import strict_judge
from assay.judge.protocol import DIMENSION_KEYS, Thresholds, verdict_for
from assay.judge.run import JudgeRunConfig
from assay.model import ModelOptions
from tests.helpers.inspect_evals import inspect_dirs_in_tmp, mock_model
from tests.helpers.reset_proxy import reset_proxy

ANSWER = "Apples, pears and plums are fruits that grow on trees."
SAMPLES = 24  # the stub flaws about one first reply in six


@pytest.fixture(autouse=True, scope="module")
def _inspect_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with inspect_dirs_in_tmp(tmp_path_factory):
        yield


def _samples(count: int) -> list[Sample]:
    return [
        Sample(
            id=f"fruit-{i}",
            input=f"Name three fruits that grow on trees, in one sentence ({i}).",
            metadata={"constraints": ["exactly one sentence"], "intent": "a short list"},
        )
        for i in range(count)
    ]


def _eval(scorer: object, count: int, logs: Path) -> EvalLog:
    task = Task(dataset=_samples(count), solver=generate(), scorer=scorer)
    (log,) = eval(
        task,
        model=mock_model("writer", lambda prompt: ANSWER),
        log_dir=str(logs),
        display="none",
    )
    assert log.status == "success"
    return log


def _info(sample: EvalSample) -> list[str]:
    """The sample's info events (a long one is stored as an attachment, read back here)."""
    resolved = resolve_sample_attachments(sample)
    return [str(event.data) for event in resolved.events if event.event == "info"]


def _value(sample: EvalSample) -> dict[str, int]:
    assert sample.scores is not None
    value = sample.scores["strict_judge"].value
    assert isinstance(value, dict)
    return {key: int(number) for key, number in value.items()}


def _check_protocol(sample: EvalSample) -> None:
    """A scored sample keeps the protocol: the sum, the verdict's thresholds, quotes found."""
    assert sample.scores is not None
    score = sample.scores["strict_judge"]
    assert score.metadata is not None
    value = _value(sample)
    dimensions = {key: value[key] for key in DIMENSION_KEYS}
    assert all(number in (0, 1, 2) for number in dimensions.values())
    assert value["overall_score"] == sum(dimensions.values())
    assert score.answer == verdict_for(dimensions, Thresholds())
    assert all(item["quote"] in ANSWER for item in score.metadata["evidence"])


def test_valid_replies_score_and_invalid_ones_leave_the_sample_unscored(tmp_path: Path) -> None:
    log = _eval(strict_judge("stub/judge"), SAMPLES, tmp_path)
    scored = [s for s in log.samples or () if s.scores and "strict_judge" in s.scores]
    unscored = [s for s in log.samples or () if not s.scores or "strict_judge" not in s.scores]
    assert scored and unscored  # the stub's flawed replies are rejected, never scored 0
    for sample in scored:
        _check_protocol(sample)
        assert sample.scores is not None
        assert sample.scores["strict_judge"].metadata["attempts"] == 1  # type: ignore[index]
    for sample in unscored:
        (reason,) = [i for i in _info(sample) if "assay judge: no score" in i]
        assert "invalid after 1 ask: flags " in reason
    assert log.results is not None
    means = {s.name: s.metrics["mean"].value for s in log.results.scores}
    assert set(means) == {*DIMENSION_KEYS, "overall_score"}
    overall = [_value(s)["overall_score"] for s in scored]
    assert means["overall_score"] == pytest.approx(sum(overall) / len(scored))


def test_a_second_ask_shows_the_judge_its_problems(tmp_path: Path) -> None:
    """The stub answers every re-ask cleanly: with two asks, every sample is scored, and the
    samples whose first reply was flawed took two."""
    log = _eval(
        strict_judge("stub/judge", config=JudgeRunConfig(max_attempts=2)), SAMPLES, tmp_path
    )
    attempts = []
    for sample in log.samples or ():
        _check_protocol(sample)
        assert sample.scores is not None and sample.scores["strict_judge"].metadata is not None
        attempts.append(sample.scores["strict_judge"].metadata["attempts"])
    assert set(attempts) == {1, 2}


def test_the_embedded_model_judges_through_a_real_server(llama_server: str, tmp_path: Path) -> None:
    with reset_proxy(llama_server) as base_url:
        options = ModelOptions(base_url=base_url, api_key="unused", cache=False)
        log = _eval(strict_judge("openai/smollm2", options), 2, tmp_path)
    # exact constrained decoding (the server takes the sample's own schema): replies are valid
    assert any(s.scores and "strict_judge" in s.scores for s in log.samples or ())
    for sample in log.samples or ():
        if sample.scores and "strict_judge" in sample.scores:
            _check_protocol(sample)
            assert sample.scores["strict_judge"].metadata["judge"] == "openai/smollm2"  # type: ignore[index]
        else:
            (reason,) = [i for i in _info(sample) if "assay judge: no score" in i]
            assert "invalid after 1 ask" in reason or "the judge call failed" in reason
