"""``assay.integrations.inspect_ai.grounded_claims``: assay's learned checker scoring a real
inspect_ai evaluation (inspect's ``eval()`` with its ``mockllm`` provider), checked against
``assay bench run`` on the same answers and evidence."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra")  # in the dev extra

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.scorer import Score
from inspect_ai.solver import generate

from assay.integrations.inspect_ai import evidence_items, grounded_claims
from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration, learned_p_errors
from tests.helpers.inspect_evals import inspect_dirs_in_tmp, mock_model

EVIDENCE = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    {"id": "height", "text": "The tower is 330 metres tall and was completed in 1889."},
]
ANSWERS = {
    # grounded: the evidence in other words
    "grounded": "The Eiffel Tower is in Paris. It was completed in 1889.",
    # a wrong city and a wrong year
    "ungrounded": "The Eiffel Tower is in Lyon. It was completed in 1925.",
    "empty": "",
}
PROMPTS = {name: f"Tell me about the Eiffel Tower ({name})." for name in ANSWERS}


@pytest.fixture(autouse=True, scope="module")
def _inspect_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with inspect_dirs_in_tmp(tmp_path_factory):
        yield


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    samples = [
        Sample(id=name, input=PROMPTS[name], metadata={"evidence": EVIDENCE}) for name in ANSWERS
    ]
    samples.append(Sample(id="no-evidence", input="Tell me about the Eiffel Tower."))
    reply = {prompt: ANSWERS[name] for name, prompt in PROMPTS.items()}
    task = Task(dataset=samples, solver=generate(), scorer=grounded_claims())
    (result,) = eval(
        task,
        model=mock_model("writer", lambda prompt: reply.get(prompt, "It is in Paris.")),
        log_dir=str(tmp_path_factory.mktemp("logs")),
        display="none",
        fail_on_error=False,  # the sample without evidence is an error of its own
    )
    assert result.status == "success"
    return result


def sample(log: EvalLog, sample_id: str) -> EvalSample:
    return next(s for s in log.samples or () if s.id == sample_id)


def test_scores_say_grounded_or_not_with_p_error_and_the_evidence_window(log: EvalLog) -> None:
    grounded = sample(log, "grounded").scores
    ungrounded = sample(log, "ungrounded").scores
    assert grounded is not None and ungrounded is not None
    good, bad = grounded["grounded_claims"], ungrounded["grounded_claims"]
    assert (good.value, bad.value) == ("C", "I")
    assert good.metadata is not None and bad.metadata is not None
    assert good.metadata["p_error"] < 0.5 <= bad.metadata["p_error"]
    assert bad.explanation is not None
    first = bad.explanation.splitlines()[0]
    assert first.startswith(f"p_error {bad.metadata['p_error']:.3f} (not grounded: threshold 0.5")
    # each claim is named with the window of evidence it was matched to and what it lacks
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad.explanation
    assert "evidence window: 'The Eiffel Tower is a wrought-iron lattice tower in Paris" in (
        bad.explanation
    )
    assert "not in the evidence: Lyon" in bad.explanation
    claims = bad.metadata["claims"]
    assert [c["claim"] for c in claims] == [
        "The Eiffel Tower is in Lyon.",
        "It was completed in 1925.",
    ]
    assert "1889" in claims[1]["evidence_window"]
    # a passage's own id is kept; plain strings are numbered from 1
    supported = good.metadata["claims"]
    assert [c["supporting_ids"] for c in supported] == [["1"], ["height"]]
    # inspect's accuracy over the scored samples: one grounded of two
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 0.5


def test_what_cannot_be_scored_is_left_unscored_not_counted_wrong(log: EvalLog) -> None:
    empty = sample(log, "empty")
    assert not empty.scores or "grounded_claims" not in empty.scores
    info = [e for e in empty.events if e.event == "info"]
    assert any("no score: the answer states no claim" in str(e.data) for e in info)
    missing = sample(log, "no-evidence")
    assert missing.error is not None
    assert "metadata.evidence: missing: the sample gives no evidence passages" in (
        missing.error.message
    )


def test_p_error_is_what_the_bench_gives_the_same_answer(log: EvalLog, tmp_path: Path) -> None:
    evidence = [
        {"evidence_id": "1", "text": EVIDENCE[0]},
        {"evidence_id": "height", "text": EVIDENCE[1]["text"]},  # type: ignore[index]
    ]
    names = ("grounded", "ungrounded")
    bench = learned_p_errors(
        tmp_path,
        evidence,
        {name: PROMPTS[name] for name in names},
        {name: ANSWERS[name] for name in names},
    )
    for name in ("grounded", "ungrounded"):
        scores = sample(log, name).scores
        assert scores is not None
        score = scores["grounded_claims"]
        assert score.metadata is not None
        assert score.metadata["p_error"] == bench[name]


def test_a_calibration_gives_the_operating_point(log: EvalLog, tmp_path: Path) -> None:
    path = learned_calibration(tmp_path)
    fitted = read_calibration(path)
    names = ("grounded", "ungrounded")
    samples = [Sample(id=n, input=PROMPTS[n], metadata={"evidence": EVIDENCE}) for n in names]
    reply = {PROMPTS[name]: ANSWERS[name] for name in names}
    task = Task(dataset=samples, solver=generate(), scorer=grounded_claims(calibration=str(path)))
    (calibrated,) = eval(
        task,
        model=mock_model("writer", lambda prompt: reply[prompt]),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    for name in names:
        raw = _score(log, name)
        score = _score(calibrated, name)
        meta = score.metadata or {}
        assert meta["raw_p_error"] == (raw.metadata or {})["p_error"]
        assert meta["p_error"] == pytest.approx(float(fitted.apply([meta["raw_p_error"]])[0]))
        assert meta["threshold"] == fitted.threshold
        assert meta["calibration"] == fitted.fingerprint()
        assert score.value == ("C" if meta["p_error"] < fitted.threshold else "I")
        assert "(calibrated; the checker's own" in (score.explanation or "")


def _score(log: EvalLog, name: str) -> Score:
    scores = sample(log, name).scores
    assert scores is not None
    return scores["grounded_claims"]


def test_a_threshold_and_a_calibration_are_not_both_given() -> None:
    with pytest.raises(ValueError, match="not both"):
        grounded_claims(threshold=0.3, calibration="c.json")


def test_a_threshold_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        grounded_claims(threshold=1.5)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ([], "metadata.evidence: expected the evidence passages"),
        ({"text": "a dict, not a list"}, "metadata.evidence: expected the evidence passages"),
        (
            ["fine", {"title": "no text"}],
            "metadata.evidence[1].text: expected a passage object with a 'text' (or "
            "'page_content', 'content')",
        ),
        (["fine", 7], "metadata.evidence[1]: expected a string or an object with a 'text'"),
        (
            [{"node": {"text": "a node", "url": 7}, "score": 0.5}],
            "metadata.evidence[0].node.url: expected a string, got int",
        ),
    ],
)
def test_evidence_of_another_shape_is_refused_naming_the_item(value: object, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        evidence_items(value)
