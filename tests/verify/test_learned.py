"""The learned claim checker: its verdicts, its shipped weights (reproduced exactly by the
training script from ../shared/data) and its held-out quality on WiCE dev."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from assay.model import ModelOptions, get_model
from assay.verify.checkers.learned import (
    CHECKER_VERSION,
    FEATURE_NAMES,
    LearnedChecker,
    LearnedWeights,
    claim_features,
    shipped_weights,
)
from assay.verify.metering import MeteredModel
from assay.verify.patterns import PatternContext, PatternOutcome, PatternSettings, get_pattern
from assay.verify.types import Claim, Evidence

from ..conftest import REPO_ROOT, SHARED_DATA

EVIDENCE = (
    Evidence(
        evidence_id="e1",
        title="Harbour Bridge",
        text="The Harbour Bridge opened to traffic in 1932. Its main span is 503 metres long.",
    ),
    Evidence(evidence_id="e2", text="The bridge was designed by John Bradfield and is not tolled."),
    Evidence(evidence_id="e3", text="Ferries cross the harbour every twenty minutes."),
)


def _load_script() -> ModuleType:
    path = REPO_ROOT / "scripts" / "train_learned_checker.py"
    spec = importlib.util.spec_from_file_location("train_learned_checker", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return _load_script()


@pytest.fixture(scope="module")
def trained(script: ModuleType) -> Any:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the shared datasets are expected at {SHARED_DATA}")
    return script.train_shipped(SHARED_DATA)


def _check(text: str, cited: tuple[str, ...] = ()) -> tuple[str, float, tuple[str, ...]]:
    result = LearnedChecker().check_sync(Claim(text=text, cited_ids=cited), EVIDENCE)
    assert result.p_supported is not None
    return result.label, result.p_supported, result.supporting_ids


def test_the_experiments_script_reaches_the_padding_benchmark() -> None:
    """``learned_checker_experiments.py --flips`` scores each variant with bench_checker.py's
    padding attack, which it loads from benchmarks/ (with the sibling module it imports)."""
    # a fresh interpreter: other tests may have put benchmarks/ on this one's sys.path
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('experiments', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['experiments'] = module\n"
        "spec.loader.exec_module(module)\n"
        "bench = module._bench_checker()\n"
        "print(callable(bench._quality), callable(bench._padding))\n"
    )
    script = REPO_ROOT / "scripts" / "learned_checker_experiments.py"
    done = subprocess.run(
        [sys.executable, "-c", code, str(script)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]


def test_the_example_of_the_docs_prints_what_the_docs_say(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/learned-checker.md's first Python example, run as written: its output is quoted
    under it as comments (the figures a reader reproduces first)."""
    page = (REPO_ROOT / "docs" / "learned-checker.md").read_text(encoding="utf-8")
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    quoted = [
        line[2:].split("<-")[0].rstrip() for line in code.splitlines() if line.startswith("# ")
    ]
    assert len(quoted) == 5
    exec(compile(code, "learned-checker.md", "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.splitlines() == quoted


def test_the_explanations_the_docs_quote_are_the_checks() -> None:
    """docs/learned-checker.md, "What a check explains": the ``deciding_features`` it quotes for
    the wrong year of the first example, and the labels, probabilities and rationales of its
    three claims against one page (wrapped there; a rationale ending in "..." is a prefix)."""
    page = (REPO_ROOT / "docs" / "learned-checker.md").read_text(encoding="utf-8")
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "learned-checker.md", "exec"), namespace)
    quoted = re.search(
        r'e\.g\. `\(\("(\w+)", (-?[0-9.]+)\), \.\.\.\)` for (?:a|the) wrong year', page
    )
    assert quoted is not None
    wrong_year = Claim(text="The Harbour Bridge opened in 1957.", cited_ids=("e1",))
    check = LearnedChecker().check_sync(wrong_year, namespace["evidence"])
    assert check.deciding_features[0] == (quoted[1], float(quoted[2]))

    section = page.split("## What a check explains", 1)[1]
    source = re.search(r'against the page "([^"]+)"', section.replace("\n", " "))
    assert source is not None
    evidence = [Evidence(evidence_id="e1", text=source[1])]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    entries: list[dict[str, Any]] = []
    for line in block.splitlines():
        if not line.startswith("  "):
            if not entries or entries[-1]["label"] is not None:
                entries.append({"claim": line, "label": None, "rationale": []})
            else:
                entries[-1]["claim"] += " " + line
        elif entries[-1]["label"] is None:
            entries[-1]["label"] = line.strip()
        else:
            entries[-1]["rationale"].append(line.strip())
    assert len(entries) == 3
    for entry in entries:
        check = LearnedChecker().check_sync(Claim(text=entry["claim"]), evidence)
        assert f"{check.label} {check.p_supported:.3f}" == entry["label"]
        rationale = " ".join(entry["rationale"])
        if rationale.endswith("..."):
            assert check.rationale.startswith(rationale[: -len("...")]), entry["claim"]
        else:
            assert check.rationale == rationale, entry["claim"]


def test_a_claim_stated_in_the_evidence_is_supported_with_its_evidence() -> None:
    label, p, supporting = _check("The Harbour Bridge opened to traffic in 1932.", ("e1",))
    assert label == "supported" and p >= 0.6
    assert supporting == ("e1",)


def test_a_wrong_number_or_name_lowers_the_probability() -> None:
    _, right, _ = _check("The Harbour Bridge opened to traffic in 1932.")
    _, wrong_year, _ = _check("The Harbour Bridge opened to traffic in 1957.")
    _, wrong_name, _ = _check("The bridge was designed by Gustave Eiffel.")
    assert wrong_year < right and wrong_name < right
    assert _check("Tokyo hosts the largest fish market in Asia.")[0] == "unsupported"


def test_a_claim_drawing_on_two_snippets_cites_both() -> None:
    label, _, supporting = _check("The Harbour Bridge, designed by John Bradfield, opened in 1932.")
    assert label == "supported" and set(supporting) == {"e1", "e2"}


def test_async_check_matches_the_sync_one_and_names_its_source() -> None:
    claim = Claim(text="Ferries cross the harbour every twenty minutes.", cited_ids=("e3",))
    checker = LearnedChecker()
    result = asyncio.run(checker.check(claim, EVIDENCE))
    assert result == checker.check_sync(claim, EVIDENCE)
    assert result.checker == "learned" and result.probability_source == "learned"
    assert result.cited_supporting_ids == ("e3",)


def test_the_uncertain_band_lies_between_lower_and_upper() -> None:
    checker = LearnedChecker()
    assert checker.label_of(0.5) == "uncertain"
    assert checker.label_of(checker.weights.upper) == "supported"
    assert checker.label_of(checker.weights.lower) == "unsupported"


def test_features_are_bounded_and_named() -> None:
    vector = claim_features("The bridge is 503 metres long and never tolled.", EVIDENCE)
    assert len(vector.values) == len(FEATURE_NAMES)
    assert all(0.0 <= v <= 3.0 for v in vector.values)
    assert claim_features("", EVIDENCE).values == claim_features("", EVIDENCE).values


def _tail(text: str) -> float:
    values = dict(zip(FEATURE_NAMES, claim_features(text, EVIDENCE).values, strict=True))
    return values["missing_tail_max"]


def test_a_detail_the_evidence_lacks_at_the_end_of_a_claim_is_a_missing_tail() -> None:
    """The claim's last items the evidence lacks (a partial claim's added detail) count; the
    same words missing at the start or in the middle do not, nor a claim ending in found words."""
    assert _tail("The Harbour Bridge opened to traffic in 1932.") == 0.0
    ending = _tail("The Harbour Bridge opened to traffic in 1932 under Premier Lang.")
    assert ending > 0.0
    assert _tail("Under Premier Lang the Harbour Bridge opened to traffic in 1932.") == 0.0
    assert _tail("The Harbour Bridge opened under Premier Lang to traffic in 1932.") == 0.0
    # the heaviest item of the tail, as a share of the claim's weight: one more found word
    # before the tail only dilutes it
    longer = "The Harbour Bridge span opened to traffic in 1932 under Premier Lang."
    assert 0.0 < _tail(longer) < ending


def test_a_weights_file_for_other_features_is_refused() -> None:
    path = REPO_ROOT / "src/assay/verify/checkers/learned_weights.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["model"]["feature_names"] = data["model"]["feature_names"][:-1]
    with pytest.raises(ValueError, match="features"):
        LearnedWeights.from_json(data)


def test_the_training_script_reproduces_the_shipped_weights(
    script: ModuleType, trained: Any
) -> None:
    weights = trained.weights
    assert script.max_difference(weights, shipped_weights()) <= 1e-6
    document = trained.document
    shipped = json.loads(Path(script.DEFAULT_OUT).read_text(encoding="utf-8"))
    assert document["training"]["train_on"] == shipped["training"]["train_on"]
    assert set(document["training"]["train_on"]) == {"expertqa", "wice", "halueval"}
    assert shipped["version"] == CHECKER_VERSION


def test_the_training_script_writes_the_shipped_file_byte_for_byte(
    script: ModuleType, trained: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = Path(script.DEFAULT_OUT)
    assert script.weights_text(trained.document) == shipped.read_text(encoding="utf-8")
    assert script.check_shipped(shipped, trained) == 0
    assert "byte for byte" in capsys.readouterr().out
    # a change far below the old 1e-6 tolerance is still a different file
    document = json.loads(shipped.read_text(encoding="utf-8"))
    document["model"]["calibration"]["b"] += 1e-8
    edited = tmp_path / "learned_weights.json"
    edited.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    assert script.check_shipped(edited, trained) == 1
    assert "differs from the retrained weights" in capsys.readouterr().out


def test_held_out_wice_is_well_above_chance(script: ModuleType, trained: Any) -> None:
    wice = trained.corpus.examples["wice"]
    scores = script.score(wice, script.learned_scores(wice, shipped_weights()))
    assert scores.n == 349
    assert scores.auroc > 0.75
    assert scores.balanced_accuracy > 0.62


def test_grouped_folds_never_split_a_group(script: ModuleType) -> None:
    folds = {script.fold_of(f"g{i}", 5, 0) for i in range(200)}
    assert folds == set(range(5))
    assert script.fold_of("same", 5, 0) == script.fold_of("same", 5, 0)


def test_the_script_scores_answers_as_the_entailment_pattern_does(
    script: ModuleType, trained: Any
) -> None:
    """The held-out table is only honest if the script's answer score is the benchmark's."""
    examples = trained.corpus.examples["expertqa"][:12] + trained.corpus.examples["wice"][:4]
    expected = script.learned_scores(examples, shipped_weights())
    model = get_model("stub/gen", ModelOptions(cache=False), model_type=MeteredModel)
    context = PatternContext(
        generator=model, checker=LearnedChecker(), critic=model, settings=PatternSettings()
    )

    async def run_all() -> list[PatternOutcome]:
        try:
            return [await get_pattern("entailment").run(e.record, context) for e in examples]
        finally:
            await model.aclose()

    outcomes = asyncio.run(run_all())
    assert any(u.claim.cited_ids for e in examples for u in e.units)
    for outcome, p_error in zip(outcomes, expected, strict=True):
        assert outcome.mode == "verify_only" and outcome.p_error is not None
        assert outcome.p_error == pytest.approx(p_error, abs=2e-6)


def test_each_check_keeps_its_evidence_window_and_deciding_features() -> None:
    check = LearnedChecker().check_sync(
        Claim(text="The Harbour Bridge opened to traffic in 1957."), EVIDENCE
    )
    assert (
        check.evidence_window is not None and "opened to traffic in 1932" in check.evidence_window
    )
    names = [name for name, _ in check.deciding_features]
    assert names and set(names) <= set(FEATURE_NAMES)
    assert "numbers_missing_all_frac" in names
    assert "deciding:" in check.rationale


def test_appending_supported_filler_does_not_raise_an_unsupported_claim() -> None:
    checker = LearnedChecker()
    false = "The bridge was designed by Gustave Eiffel."
    padded = (
        false + " The Harbour Bridge opened to traffic in 1932. Its main span is 503 metres long."
    )
    alone = checker.check_sync(Claim(text=false), EVIDENCE)
    with_filler = checker.check_sync(Claim(text=padded), EVIDENCE)
    assert alone.label != "supported"
    assert with_filler.p_supported == alone.p_supported and with_filler.label == alone.label


def test_the_padding_flip_rate_on_real_unsupported_claims_is_zero(trained: Any) -> None:
    """Unsupported HaluEval and WiCE claims, each padded with two sentences of its own evidence:
    none may turn supported (the attack of arXiv 2411.16638)."""
    checker = LearnedChecker()
    flips = total = 0
    for name in ("halueval", "wice"):
        for example in trained.corpus.examples[name][:200]:
            record = example.record
            if example.supported or not record.answer:
                continue
            claim = Claim(text=record.answer)
            if checker.check_sync(claim, record.evidence).label == "supported":
                continue
            filler = " ".join(e.text for e in record.evidence[:2])[:600]
            answer = record.answer.rstrip(" .")  # the filler comes as sentences of their own
            padded = checker.check_sync(Claim(text=f"{answer}. {filler}"), record.evidence)
            total += 1
            flips += padded.label == "supported"
    assert total > 50
    assert flips == 0


JOINED_FILLER: dict[str, Callable[[str, str], str]] = {
    "which": lambda answer, filler: f"{answer}, which {filler[0].lower()}{filler[1:]}.",
    "and": lambda answer, filler: f"{answer}, and {filler[0].lower()}{filler[1:]}.",
    "brackets": lambda answer, filler: f"{answer} ({filler[0].lower()}{filler[1:]}).",
    "semicolon": lambda answer, filler: f"{answer}; {filler[0].lower()}{filler[1:]}.",
}


def test_filler_joined_into_the_sentence_rarely_raises_a_real_unsupported_claim(
    trained: Any,
) -> None:
    """The same attack with the filler joined into the claim's own sentence, where splitting at
    sentence ends cannot take it out: the longest of the first evidence sentences after ", which",
    ", and", ";" or in brackets. ``learned-8`` turned 45% of these supported; the check without
    copied runs keeps all but the false answers that name nothing, 4.5% here
    (docs/learned-checker.md, "Robustness to padding")."""
    from assay.verify.checkers._sentences import split_evidence

    checker = LearnedChecker()
    flips = dict.fromkeys(JOINED_FILLER, 0)
    total = 0
    for name in ("halueval", "wice"):
        for example in trained.corpus.examples[name][:200]:
            record = example.record
            answer = (record.answer or "").rstrip(" .")
            sentences = [s for e in record.evidence[:2] for s in split_evidence(e.text)][:5]
            if example.supported or not answer or not sentences:
                continue
            if checker.check_sync(Claim(text=answer + "."), record.evidence).label == "supported":
                continue
            filler = max(sentences, key=len).rstrip(" .")
            total += 1
            for join, pad in JOINED_FILLER.items():
                padded = checker.check_sync(Claim(text=pad(answer, filler)), record.evidence)
                flips[join] += padded.label == "supported"
    assert total > 50
    assert all(count <= 0.06 * total for count in flips.values()), (flips, total)


def test_a_copied_run_is_left_out_only_when_it_is_long_enough() -> None:
    """A run of pieces one evidence sentence holds whole is left out from COPIED_RUN_ITEMS
    content items on (synonyms count); a short copied phrase, a name or a date, stays, and the
    explanation quotes what was left out."""
    from assay.verify.checkers._align import evidence_index
    from assay.verify.checkers._learned_text import claim_pieces
    from assay.verify.checkers.learned import COPIED_RUN_ITEMS, without_copied_runs

    page = "The movie premiered at Cannes on 19 May 2016 and earned two million dollars."
    index = evidence_index([Evidence(evidence_id="e1", text=page)])
    pieces = claim_pieces(
        "The opera opened in Venice, which film premiered at Cannes on 19 May 2016 (and earned "
        "two million dollars), in 1990"
    )
    assert pieces == [
        "The opera opened in Venice", "which film premiered at Cannes on 19 May 2016",
        "and earned two million dollars", "in 1990",
    ]  # fmt: skip
    assert without_copied_runs(pieces, index) == ["The opera opened in Venice", "in 1990"]
    short = claim_pieces("The opera opened in Venice, at Cannes")  # one copied item
    assert COPIED_RUN_ITEMS > 1 and without_copied_runs(short, index) == short
    # two adjacent sentences run together are one window; sentences of two snippets are not
    two = "The film premiered at Cannes in May. It earned two million dollars in its first week."
    glued = claim_pieces("Opera, which film premiered at Cannes in May.It earned two million")
    adjacent = evidence_index([Evidence(evidence_id="e1", text=two)])
    assert without_copied_runs(glued, adjacent) == ["Opera"]
    apart = evidence_index([Evidence(evidence_id=f"e{i}", text=t) for i, t in
                            enumerate(two.split(". "))])  # fmt: skip
    assert (
        "Opera" in without_copied_runs(glued, apart) and len(without_copied_runs(glued, apart)) > 1
    )
    check = LearnedChecker().check_sync(
        Claim(text="The opera opened in Venice, which film premiered at Cannes on 19 May 2016."),
        [Evidence(evidence_id="e1", text=page)],
    )
    assert check.label == "unsupported"
    assert 'scored without the part one evidence sentence holds whole: "which film' in (
        check.rationale
    )


def _runs_grown_afresh(pieces: list[str], index: Any) -> list[str]:
    """The copied-run rule as defined: from each start, grow the longest held run anew."""
    from assay.verify.checkers._learned_text import text_stats
    from assay.verify.checkers.learned import COPIED_RUN_ITEMS, _one_window_holds

    kept, start = [], 0
    while start < len(pieces):
        end, items = start, frozenset[str]()
        while end < len(pieces):
            grown = items | text_stats(pieces[end]).items
            if not _one_window_holds(grown, index):
                break
            items, end = grown, end + 1
        if len(items) >= COPIED_RUN_ITEMS:
            start = end
        else:
            kept.append(pieces[start])
            start += 1
    return kept


def test_the_copied_run_search_is_linear_in_the_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run-on sentence of many short clauses that the evidence holds together but that name
    too little to be a copied run: growing every start afresh tested one window per pair of
    pieces (320,400 tests, about a second, for 800 clauses). The search carries the held pieces
    over: at most two window tests per piece, and the same pieces kept as by the definition,
    here and on random sentences that do hold copied runs."""
    import random

    from assay.verify.checkers import learned
    from assay.verify.checkers._align import evidence_index
    from assay.verify.checkers._learned_text import claim_pieces

    page = "Paris is in France. Lyon is a city in France, on the river Rhone, north of Marseille."
    index = evidence_index([Evidence(evidence_id="e1", text=page)])
    pieces = claim_pieces(", ".join(["Paris is in France"] * 800) + ", and Lyon is on the Rhone")
    tests = 0
    window_holds = learned._one_window_holds

    def counted(items: frozenset[str], at: Any) -> bool:
        nonlocal tests
        tests += 1
        return window_holds(items, at)

    monkeypatch.setattr(learned, "_one_window_holds", counted)
    kept = learned.without_copied_runs(pieces, index)
    assert len(pieces) == 801 and tests <= 2 * len(pieces)
    monkeypatch.undo()
    assert kept == _runs_grown_afresh(pieces, index)
    words = [
        "Paris",
        "France",
        "Lyon",
        "city",
        "river",
        "Rhone",
        "north",
        "Marseille",
        "is",
        "in",
        "on",
        "the",
        "of",
    ]
    rng = random.Random(0)
    left_out = 0
    for _ in range(500):
        sentence = [" ".join(rng.choices(words, k=rng.randint(1, 4))) for _ in range(12)]
        kept = learned.without_copied_runs(sentence, index)
        assert kept == _runs_grown_afresh(sentence, index)
        left_out += len(kept) < len(sentence)
    assert left_out > 50  # the random sentences do hold copied runs


def test_a_sentence_is_scored_without_its_copied_run_only_when_the_rest_names_something() -> None:
    """What remains once a copied run is out is scored on its own when it holds a name or a
    number (a false statement about something); a generated answer's framing around a copied
    source sentence ("Despite these efforts, ...") is not judged alone."""
    from assay.verify.checkers.learned import claim_vectors

    page = [Evidence(evidence_id="e1", text="The film premiered at Cannes in May 2016 to acclaim.")]
    copied = "the film premiered at Cannes in May 2016 to acclaim"
    named = claim_vectors(f"The opera opened in Venice, and {copied}.", page)
    framing = claim_vectors(f"Despite these efforts, {copied}.", page)
    assert len(named) == 2 and named[1].copied_out and not named[0].copied_out
    assert len(framing) == 1 and not framing[0].copied_out


def test_a_learned_run_records_the_checker_version(tmp_path: Path) -> None:
    from assay.verify.benchmark import BenchmarkConfig

    data = tmp_path / "d.jsonl"
    config = BenchmarkConfig(data=data, pattern="entailment", out_dir=tmp_path, verifier="learned")
    assert config.protocol()["checker_version"] == CHECKER_VERSION
    combined = config.model_copy(update={"verifier": "learned+llamacpp/smollm2"})
    assert combined.protocol()["checker_version"] == CHECKER_VERSION


def test_a_lexical_run_records_the_checker_version(tmp_path: Path) -> None:
    """The lexical checker alone or as the primary of ``lexical+MODEL``; a model has none."""
    from assay.verify.benchmark import BenchmarkConfig
    from assay.verify.checkers.baseline import LEXICAL_VERSION

    data = tmp_path / "d.jsonl"
    lexical = BenchmarkConfig(data=data, pattern="entailment", out_dir=tmp_path, verifier="lexical")
    assert lexical.protocol()["checker_version"] == LEXICAL_VERSION == "lexical-2"
    combined = lexical.model_copy(update={"verifier": "lexical+llamacpp/smollm2"})
    assert combined.protocol()["checker_version"] == LEXICAL_VERSION
    model = lexical.model_copy(update={"verifier": "llamacpp/smollm2"})
    assert "checker_version" not in model.protocol()


@pytest.mark.parametrize(
    ("verifier", "current", "earlier"),
    [("learned", CHECKER_VERSION, "learned-2"), ("lexical", "lexical-2", "lexical-1")],
)
def test_a_run_made_by_an_earlier_checker_version_is_not_resumed(
    tmp_path: Path, verifier: str, current: str, earlier: str
) -> None:
    """A run directory of an earlier version (same settings, only the checker version differs:
    ``learned-2``, or ``lexical-1`` with its own evidence splitter) is refused rather than
    continued with the current version's verdicts."""
    from assay.errors import RunError
    from assay.runs import fingerprint
    from assay.verify.benchmark import BenchmarkConfig, run_benchmark

    from .bench_fixtures import verify_only_records, write_jsonl

    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3))
    out = tmp_path / "run"
    config = BenchmarkConfig(data=data, pattern="entailment", out_dir=out, verifier=verifier)
    run_benchmark(config)
    run_json = out / "run.json"
    log = json.loads(run_json.read_text(encoding="utf-8"))
    assert log["models"]["verifier"]["checker_version"] == current
    protocol, verifier_log = config.protocol(), log["models"]["verifier"]
    if earlier == "lexical-1":  # lexical-1 recorded no version at all
        del protocol["checker_version"], verifier_log["checker_version"]
    else:
        protocol["checker_version"] = verifier_log["checker_version"] = earlier
    log["fingerprint"] = fingerprint(protocol)  # what the earlier code wrote for these settings
    run_json.write_text(json.dumps(log), encoding="utf-8")
    with pytest.raises(RunError, match="other settings"):
        run_benchmark(config)


def test_the_model_free_checkers_split_evidence_alike() -> None:
    """``lexical`` and ``learned`` cut evidence with one function (the learned checker's, which
    its shipped weights depend on), so the two match claims against the same sentences."""
    from assay.verify.checkers import _align, _lexical, _sentences, baseline

    # the names each checker imports, which they do not re-export (hence the ignores)
    lexical_split = baseline.split_evidence  # type: ignore[attr-defined]
    learned_split = _align.split_evidence  # type: ignore[attr-defined]
    assert lexical_split is _sentences.split_evidence is learned_split
    text = 'It opened in 1932.\n"Bradfield" designed it. It is long (503 m).Tolls apply. (a) no'
    expected = ['It opened in 1932.', '"Bradfield" designed it.', "It is long (503 m).",
                "Tolls apply. (a) no"]  # fmt: skip
    learned = [s.text for s in _align.EvidenceIndex([("e1", None, text)]).sentences]
    assert learned == expected
    lexical = [s.features for s in baseline._sentences([Evidence(evidence_id="e1", text=text)])]
    assert lexical == [_lexical.features(sentence) for sentence in expected]


@pytest.mark.parametrize(
    ("forms", "same"),
    [
        (("line", "lines"), True),
        (("take", "taking", "takes"), True),
        (("fire", "fired", "fires"), True),
        (("city", "cities"), True),
        (("stop", "stopped", "stopping"), True),
        (("study", "studied", "studies"), True),
        (("release", "released", "releases"), True),
        (("fill", "filled"), True),  # a doubled l stays
        (("bridge", "bride"), False),
    ],
)
def test_inflections_of_one_word_share_a_stem(forms: tuple[str, ...], same: bool) -> None:
    from assay.verify.checkers._learned_text import stem

    assert (len({stem(f) for f in forms}) == 1) is same


def test_number_words_and_scales_are_one_number() -> None:
    from assay.verify.checkers._learned_text import text_stats

    assert text_stats("It raised $1.2 million.").numbers == {"#1200000"}
    assert text_stats("It raised 1,200,000 dollars.").numbers == {"#1200000"}
    assert text_stats("two thousand people, sixty of them").numbers == {"#2000", "#60"}
    assert text_stats("a thousand ships").numbers == {"#1000"}  # "a" is not a cardinal
    _, right, _ = _check("The Harbour Bridge main span is 503 metres long.")
    _, wrong, _ = _check("The Harbour Bridge main span is six hundred metres long.")
    assert wrong < 0.5 < right  # "six hundred" is the number 600, which the evidence lacks


def test_a_demonym_is_its_country() -> None:
    """One item for "British" and "Britain" (and a name, as both are capitalised): a claim that
    restates the page's country as a nationality is not missing a word."""
    from assay.verify.checkers._learned_text import text_stats

    assert text_stats("a British engineer").items == text_stats("an engineer from Britain").items
    assert text_stats("a British engineer").names == text_stats("Britain").names
    assert text_stats("French").items == text_stats("France").items
    assert text_stats("French").items != text_stats("Germany").items
    page = "Bradfield, an engineer born in Britain, built it."
    evidence = [Evidence(evidence_id="e1", text=page)]
    found = LearnedChecker().check_sync(Claim(text="A British engineer built it."), evidence)
    missing = LearnedChecker().check_sync(Claim(text="A Swedish engineer built it."), evidence)
    assert found.p_supported is not None and missing.p_supported is not None
    assert missing.p_supported < 0.5 < found.p_supported


def test_a_day_and_its_month_are_one_number() -> None:
    """ "May 19", "May 19th", "19 May" and "19th of May" are the one item ``#5/19``: a page that
    has the number 19 and the word "May" apart does not hold the claim's date."""
    from assay.verify.checkers._learned_text import text_stats

    forms = ["on May 19, 2016", "on May 19th 2016", "on 19 May 2016", "on the 19th of May 2016"]
    assert {text_stats(form).numbers for form in forms} == {frozenset({"#5/19", "#2016"})}
    assert len({text_stats(form).items for form in forms}) == 1
    assert text_stats("June").items < text_stats("on 3 June").items  # the month stays an item
    assert text_stats("they may 19 times").numbers == {"#19"}  # the verb is not a month
    assert text_stats("in March 2011").numbers == {"#2011"}  # a year is not a day
    dated = "The film premiered at Cannes on 19 May 2016."
    apart = "In May 2016 the film premiered at Cannes. It ran in 19 cinemas."
    claim = Claim(text="The film premiered at Cannes on May 19, 2016.")
    found = LearnedChecker().check_sync(claim, [Evidence(evidence_id="e1", text=dated)])
    missing = LearnedChecker().check_sync(claim, [Evidence(evidence_id="e1", text=apart)])
    assert found.p_supported is not None and missing.p_supported is not None
    assert missing.p_supported < 0.5 < found.p_supported


def test_the_discourse_words_of_generated_answers_are_not_content() -> None:
    """Connectives and stress words ("additionally", "crucial") say nothing a source must hold:
    the same claim with and without them has the same items and the same probability."""
    from assay.verify.checkers._learned_text import text_stats

    plain = "The Harbour Bridge opened to traffic in 1932."
    dressed = (
        "Additionally, it is crucial that the Harbour Bridge notably opened to traffic in 1932."
    )
    assert text_stats(plain).items == text_stats(dressed).items
    assert _check(dressed)[1] == _check(plain)[1]


def _features(text: str, page: str) -> dict[str, float]:
    vector = claim_features(text, [Evidence(evidence_id="e1", text=page)])
    return dict(zip(FEATURE_NAMES, vector.values, strict=True))


def test_a_first_sense_synonym_counts_as_found() -> None:
    """ "movie" against a page that says "film" misses no word once synonyms count (WordNet's
    first sense of "movie" holds "film"); an unrelated word stays missing. The literal
    ``missing_weight_max`` still sees the word change."""
    page = "The film premiered at Cannes in 2016."
    same = _features("The film premiered at Cannes in 2016.", page)
    synonym = _features("The movie premiered at Cannes in 2016.", page)
    other = _features("The opera premiered at Cannes in 2016.", page)
    assert synonym["idf_recall_all"] == same["idf_recall_all"] == 1.0
    assert synonym["synonym_missing_max"] == 0.0 < other["synonym_missing_max"]
    assert other["idf_recall_all"] < 1.0
    assert synonym["missing_weight_max"] > 0.0
    evidence = [Evidence(evidence_id="e1", text=page)]
    p_synonym = LearnedChecker().check_sync(Claim(text="The movie premiered at Cannes."), evidence)
    p_other = LearnedChecker().check_sync(Claim(text="The opera premiered at Cannes."), evidence)
    assert p_synonym.p_supported is not None and p_other.p_supported is not None
    assert p_synonym.p_supported > p_other.p_supported
    # the explanation names the words it found only as synonyms, as the texts write them
    assert "found as synonyms: movie ~ film" in (p_synonym.rationale or "")
    assert "found as synonyms" not in (p_other.rationale or "")
    assert p_other.missing_words == ("opera",) and p_synonym.missing_words == ()


def test_a_check_names_the_missing_words_as_written_heaviest_first() -> None:
    """``missing_words`` and the rationale read a claim's missing items back as its own words:
    a date, a scaled number and a demonym as written, not as items or stems; the heaviest
    (names and numbers weigh double) first, at most five."""
    page = "The film premiered at Cannes on 19 May 2016 and earned two million dollars."
    evidence = [Evidence(evidence_id="e1", text=page)]
    claim = "The opera premiered in Venice on May 20, 2016, earning 3 million dollars."
    check = LearnedChecker().check_sync(Claim(text=claim), evidence)
    assert set(check.missing_words) == {"Venice", "May 20", "3 million", "opera"}
    assert check.missing_words[-1] == "opera"  # the one plain word weighs least
    assert 'not in the evidence: "' in check.rationale and '"May 20"' in check.rationale
    many = "Seven British sailors, tailors, tinkers, bakers and brewers premiered it at Cannes."
    long_check = LearnedChecker().check_sync(Claim(text=many), evidence)
    assert len(long_check.missing_words) == 5 and "British" in long_check.missing_words
    found = LearnedChecker().check_sync(Claim(text="The film premiered at Cannes."), evidence)
    assert found.missing_words == () and "not in the evidence" not in found.rationale


def test_words_found_only_apart_do_not_stand_together() -> None:
    """``pairs_in_one_sentence`` is 1.0 when one sentence holds the claim's heaviest words
    together, less when each is on the page but elsewhere."""
    claim = "Bradfield designed the Harbour Bridge."
    together = _features(claim, "Bradfield designed the Harbour Bridge. It opened in 1932.")
    apart = _features(claim, "Bradfield designed ferries. The Harbour Bridge opened in 1932.")
    assert together["pairs_in_one_sentence"] == 1.0
    assert 0.0 < apart["pairs_in_one_sentence"] < 1.0
    assert together["idf_recall_all"] == apart["idf_recall_all"] == 1.0


def test_the_missing_tail_is_counted_up_to_three_items() -> None:
    page = "The Harbour Bridge opened to traffic in 1932."
    assert _features("The Harbour Bridge opened in 1932.", page)["missing_tail_count"] == 0.0
    one = _features("The Harbour Bridge opened in 1932 under Lang.", page)
    many = _features("The bridge opened in 1932 under Premier Jack Lang's Labor cabinet.", page)
    assert one["missing_tail_count"] == 1.0
    assert many["missing_tail_count"] == 3.0


def test_an_answer_rechecked_against_its_citations_explains_that_check() -> None:
    """When the answer-level verifier lowers an answer's score against the snippets it cites,
    the window, deciding features and missing words shown are those of that check, not of the
    check against all the evidence that it replaced."""
    from assay.verify.checkers.answer_level import CheckerAnswerVerifier
    from assay.verify.types import GoldCitation, GroundedQARecord

    supports = Evidence(evidence_id="a", text="The film premiered at Cannes in 2016.")
    cited = Evidence(evidence_id="b", text="Cannes hosts a festival every spring.")
    answer = "The film premiered at Cannes in 2016 [cite:b]."
    record = GroundedQARecord(
        id="r", question="q", gold_answer=answer, evidence=(supports, cited),
        gold_citations=(GoldCitation(evidence_id="a"),), answer=answer,
    )  # fmt: skip
    claim = Claim(text="The film premiered at Cannes in 2016.", cited_ids=("b",))  # as scored
    whole = LearnedChecker().check_sync(claim, record.evidence)
    check = asyncio.run(CheckerAnswerVerifier(LearnedChecker()).verify(claim, record))
    assert whole.missing_words == () and whole.evidence_window == supports.text
    assert check.rationale.startswith("against the cited snippets")
    assert check.p_supported is not None and whole.p_supported is not None
    assert check.p_supported < whole.p_supported
    assert check.evidence_window == cited.text
    assert set(check.missing_words) == {"film", "premiered", "2016"}
    assert check.deciding_features != whole.deciding_features


def test_a_claim_it_cannot_read_is_a_failure_with_its_reason_not_a_score() -> None:
    """The checker compares words. A claim mostly in a script written without spaces between
    words is one "word" per phrase to it, so a true claim would score as false: it is a failure
    with its reason instead. An English claim that names something in such a script is still
    checked. A claim with no word to compare ("No.") keeps the empty claim's score, and its
    explanation says that nothing was compared."""
    from assay.verify.checkers.baseline import LexicalChecker

    page = [
        Evidence(
            evidence_id="e1",
            text="北京是中华人民共和国的首都。 Beijing (北京) is the capital of China.",
        )
    ]
    checker = LearnedChecker()
    unread = checker.check_sync(Claim(text="北京是中国的首都。"), page)
    assert unread.p_supported is None and unread.label == "uncertain"
    assert unread.failure is not None and "learned checker cannot split" in unread.failure
    lexical = LexicalChecker().check_sync(Claim(text="北京是中国的首都。"), page)
    assert lexical.failure is not None and "lexical checker cannot split" in lexical.failure
    named = checker.check_sync(Claim(text="Beijing (北京) is the capital of China."), page)
    assert named.failure is None and named.label == "supported"
    bare = checker.check_sync(Claim(text="No."), page)
    assert bare.failure is None and bare.rationale.startswith("no word to compare")
