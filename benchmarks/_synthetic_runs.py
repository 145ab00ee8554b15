"""Synthetic benchmark run directories at sizes no test should wait for (50,000 examples).

Every line of results.jsonl is a real :class:`assay.verify.results.ResultRecord` (built from the
project's own types, so it fails loudly if their shape changes), with text of realistic length:
a question, three evidence snippets of ~60 words, an answer of three cited claims, claim checks
with rationales, and the gold answer. summary.json and the plots come from assay's own
``write_summary``, so the report reads exactly what a real run writes.
"""

from __future__ import annotations

import random
from pathlib import Path

from assay.runs import JsonlWriter, RunLog, RunLogger
from assay.verify.patterns.base import AnswerScore, Candidate
from assay.verify.results import BUCKETS, ResultRecord, failure_bucket
from assay.verify.summary import write_summary
from assay.verify.types import Claim, ClaimCheck, Evidence, ExampleCost

# a vocabulary of ~250 words: about the entropy of real prose under gzip
WORDS = (  # noqa: SIM905
    "the of and to in is was for on that with as by at from his her their its an be this "
    "which or are were had has have not but first one two three new after also other more "
    "city river council bridge built century museum opened population grew war treaty signed "
    "railway station northern district famous painter born studied university physics award "
    "received national library archive founded king queen province island harbour trade route "
    "merchants festival annual spring mountain glacier lake canal ships locks water crossing "
    "construction engineers company government minister election parliament law court judge "
    "church cathedral tower castle wall gate market square street house garden park forest "
    "valley coast sea ocean north south east west central region state country empire kingdom "
    "republic army navy battle siege victory defeat peace alliance colony independence revolution "
    "industry factory mill coal iron steel cotton wool grain wheat rice sugar coffee tea salt "
    "gold silver copper oil gas electricity telephone radio television newspaper book novel poem "
    "play opera symphony composer writer poet actor director film studio theatre school college "
    "student teacher professor scientist doctor hospital disease vaccine medicine research "
    "experiment theory discovery invention patent machine engine car train aircraft rocket "
    "satellite telescope planet star moon sun earth climate weather rain snow storm flood "
    "drought earthquake volcano eruption fire destroyed rebuilt restored expanded renamed moved "
    "closed abandoned declined recovered increased reduced measured estimated reported recorded "
    "described named called known largest smallest oldest highest longest deepest"
).split()


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _check(rng: random.Random, text: str, cited: tuple[str, ...]) -> ClaimCheck:
    label = rng.choices(["supported", "unsupported", "uncertain"], [6, 3, 1])[0]
    supporting = cited if label == "supported" else ()
    return ClaimCheck(
        claim=Claim(text=text, cited_ids=cited),
        label=label,  # type: ignore[arg-type]
        p_supported=round(rng.random(), 4),
        probability_source="heuristic",
        supporting_ids=supporting,
        cited_supporting_ids=supporting,
        checker="lexical",
        rationale=sentence(rng, 9),
    )


def _record_texts(rng: random.Random) -> tuple[str, str, tuple[Evidence, ...]]:
    """Question, gold answer and evidence of one source record."""
    evidence = tuple(
        Evidence(
            evidence_id=f"e{k}",
            title=sentence(rng, 3),
            text=sentence(rng, 60),
            source="https://example.org/doc",
        )
        for k in range(3)
    )
    return sentence(rng, 14)[:-1] + "?", sentence(rng, 22), evidence


def bench_record(
    rng: random.Random, i: int, texts: tuple[str, str, tuple[Evidence, ...]]
) -> ResultRecord:
    question, gold_answer, evidence = texts
    claims = [sentence(rng, 14) for _ in range(3)]
    cites = [(f"e{rng.randrange(3)}",) for _ in claims]
    answer = " ".join(f"{c[:-1]} [cite:{ids[0]}]." for c, ids in zip(claims, cites, strict=True))
    p_error = round(rng.random(), 4)
    error = rng.random() < 0.6
    error_type = rng.choice(BUCKETS[1:-1]) if error else None
    checks = tuple(_check(rng, c, ids) for c, ids in zip(claims, cites, strict=True))
    score = AnswerScore(answer=answer, p_error=p_error, verifier_pass=p_error < 0.5)
    return ResultRecord(
        id=f"ex-{i:06d}",
        cluster=f"q-{i // 6:06d}",
        pattern="entailment",
        mode="verify_only",
        question=question,
        gold_answer=gold_answer,
        evidence=evidence,
        selected_answer=answer,
        selected_index=0,
        candidates=(Candidate(index=0, text=answer, score=score),),
        verifier_score=p_error,
        verifier_pass=p_error < 0.5,
        score_method="weakest-claim",
        threshold=0.5,
        citations=tuple(sorted({ids[0] for ids in cites})),
        gold_citations=("e0",),
        claim_checks=checks,
        gold_error=error,
        label_source="injected",
        error_type=error_type,
        failure_bucket=failure_bucket(error, error_type),
        usage=ExampleCost(calls=4, prompt_tokens=900, completion_tokens=120, latency_ms=850.0),
    )


def make_bench_run(
    run_dir: Path, n: int, *, seed: int = 0, n_resamples: int = 200, variants: int = 1
) -> Path:
    """A finished benchmark run of ``n`` synthetic examples, summarised by assay itself.
    ``variants`` answers per source record share its question, evidence and gold answer, as
    the six answers ``assay perturb`` makes from one record do (1: every example unique)."""
    rng = random.Random(seed)
    config = {"data": "synthetic", "pattern": "entailment", "n_resamples": n_resamples}
    log = RunLog(kind="bench", sample_count=n, fingerprint=f"synthetic-{seed}", config=config)
    logger = RunLogger(run_dir, log)
    with JsonlWriter(run_dir / "results.jsonl") as writer:
        for i in range(n):
            if i % variants == 0:
                texts = _record_texts(rng)
            writer.append(bench_record(rng, i, texts))
    logger.finish("success", finished_count=n)
    write_summary(run_dir, n_resamples=n_resamples)
    return run_dir
