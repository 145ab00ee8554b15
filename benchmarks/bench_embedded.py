"""Per-claim latency of the embedded checker against the hardware limit (benchmarks/README.md).

The same claim prompts (the first answers of examples/grounded_qa_labelled.jsonl, split into
claims by assay's rule splitter, each asked against all of its answer's evidence, the single-pass
`assay` template) are answered four ways, claim by claim in turn, so machine noise hits all alike:

- bare pass: one llama.cpp `eval` of the whole prompt on a fresh KV cache and the last
  position's logits (`llama_get_logits_ith(ctx, -1)`), no `logits_all` handle: the least
  work any checker can do per claim with this model, the hardware limit;
- bare + state restore: the answer's shared prefix (system prompt and evidence) evaluated once
  and saved with `save_state`; each claim restores it (`load_state`) and evaluates only its
  suffix: what llama-cpp-python's state save/restore gives;
- assay single-pass: `SinglePassChecker.check` through the model layer (response cache off),
  which reuses the KV cache prefix the claim shares with the previous prompt;
- assay JSON (the earlier default): `ModelChecker.check`, a grammar-constrained JSON verdict
  with logprobs (a `logits_all` handle), on the first `--json-claims` claims only (it is slow);
- with `--before-provider FILE` (an earlier `src/assay/model/providers/llamacpp.py`, loaded
  beside this tree's as a sibling module), assay single-pass through that provider too.

After the timings, each assay single-pass way answers every claim again *cold* (right after an
unrelated prompt, so nothing is kept) and the table says how far the p(supported) it gave in
the run, where it followed the answer's previous claim, is from that: a reply that depends on
the call before it shows here.

    python benchmarks/bench_embedded.py [--answers 8] [--json-claims 6] [--before-provider F]

Every way runs in this process with its own llama.cpp handle, threads = usable cores, and on
the one thread assay runs llama.cpp on (`llamacpp.llama_thread()`; an earlier provider's
`asyncio.to_thread` is pointed at it too): llama.cpp computes with OpenMP, and work started
from a second thread competes with the first thread's OpenMP team, which would slow whichever
way ran off that thread by up to 2.7x.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from assay.data.grounded import load_records
from assay.data.records import GroundedQARecord
from assay.model import ChatMessage, ModelOptions, get_model, user
from assay.model._model import Model
from assay.model.providers.llamacpp import (
    llama_thread,
    on_llama_thread,
    smollm2_path,
    usable_cores,
)
from assay.verify.checkers.model import ModelChecker
from assay.verify.checkers.single_pass import TEMPLATES, SinglePassChecker, evidence_text
from assay.verify.claims import split_claims
from assay.verify.types import Claim, ClaimCheck

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "examples" / "grounded_qa_labelled.jsonl"
MAX_EVIDENCE_CHARS = 6000  # SinglePassConfig's default

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage


class BarePass:
    """llama.cpp alone: tokenise the chat prompt, evaluate it, read the last logits."""

    def __init__(self) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.llm = Llama(
            model_path=str(smollm2_path()),
            n_ctx=4096,
            n_threads=usable_cores(),
            logits_all=False,
            verbose=False,
        )
        vocab = self.llm
        self.formatter = Jinja2ChatFormatter(
            template=self.llm.metadata["tokenizer.chat_template"],
            eos_token=vocab.detokenize([vocab.token_eos()]).decode(),
            bos_token=vocab.detokenize([vocab.token_bos()]).decode(),
        )
        self.saved_prefix: tuple[list[int], Any] | None = None

    def tokens(self, messages: Sequence[ChatMessage]) -> list[int]:
        # a ChatMessage dumps to {"role": ..., "content": str}, one of llama.cpp's request messages
        dumped = cast("list[ChatCompletionRequestMessage]", [m.model_dump() for m in messages])
        prompt = self.formatter(messages=dumped).prompt
        return list(self.llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def full(self, messages: Sequence[ChatMessage]) -> float:
        import llama_cpp

        tokens = self.tokens(messages)
        self.llm.reset()  # type: ignore[no-untyped-call]  # Llama.reset has no annotations
        self.llm.eval(tokens)
        return float(llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)[0])

    def restored(self, messages: Sequence[ChatMessage], prefix: list[int]) -> float:
        """Restore the saved prefix state (saving it on first use) and evaluate the rest."""
        import llama_cpp

        tokens = self.tokens(messages)
        assert tokens[: len(prefix)] == prefix, "the prefix must be shared"
        if self.saved_prefix is None or self.saved_prefix[0] != prefix:
            self.llm.reset()  # type: ignore[no-untyped-call]  # (see full)
            self.llm.eval(prefix)
            self.saved_prefix = (prefix, self.llm.save_state())
        self.llm.load_state(self.saved_prefix[1])
        self.llm.eval(tokens[len(prefix) :])
        return float(llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)[0])


def shared_prefix(bare: BarePass, prompts: Sequence[Sequence[ChatMessage]]) -> list[int]:
    """The tokens every claim prompt of one answer starts with (system prompt and evidence)."""
    token_lists = [bare.tokens(p) for p in prompts]
    first = token_lists[0]
    length = min(len(t) for t in token_lists) - 1
    for other in token_lists[1:]:
        length = next((i for i in range(length) if first[i] != other[i]), length)
    return first[:length]


def claims_of(records: Sequence[GroundedQARecord]) -> list[tuple[GroundedQARecord, Claim]]:
    return [(r, c) for r in records if r.answer for c in split_claims(r.answer)]


def timed(action: Callable[..., object], *args: Any) -> float:
    started = time.perf_counter()
    action(*args)
    return time.perf_counter() - started


def before_checker(provider: Path) -> SinglePassChecker:
    """A single-pass checker on an earlier llamacpp provider file, imported as a sibling of
    this tree's (its relative imports resolve to this tree's model layer)."""
    name = "assay.model.providers._llamacpp_before"
    spec = importlib.util.spec_from_file_location(name, provider)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # the same thread as ours; set in the module's namespace, which its code reads
    vars(module)["asyncio"] = types.SimpleNamespace(to_thread=on_llama_thread)
    return SinglePassChecker(Model(module.LlamaCppBackend("smollm2")))


def on_thread(function: Callable[..., Any], *args: Any) -> Any:
    return llama_thread().submit(function, *args).result()


class Recorder:
    """Times a single-pass checker's checks and keeps the p(supported) each gave."""

    def __init__(self, checker: SinglePassChecker, loop: asyncio.AbstractEventLoop) -> None:
        self.checker = checker
        self.loop = loop
        self.p_in_run: list[float | None] = []

    def check(self, claim: Claim, record: GroundedQARecord) -> ClaimCheck:
        return self.loop.run_until_complete(self.checker.check(claim, record.evidence))

    def timed_check(self, claim: Claim, record: GroundedQARecord) -> float:
        started = time.perf_counter()
        self.p_in_run.append(self.check(claim, record).p_supported)
        return time.perf_counter() - started

    def cold_differences(self, pairs: Sequence[tuple[GroundedQARecord, Claim]]) -> list[float]:
        """|p in the run - p cold| per claim, cold = right after an unrelated prompt."""
        unrelated = [user("Name three rivers of Europe.")]
        out = []
        for (record, claim), p_run in zip(pairs, self.p_in_run, strict=True):
            self.loop.run_until_complete(
                self.checker.model.generate(unrelated, self.checker.generate_config())
            )
            p_cold = self.check(claim, record).p_supported
            out.append(abs((p_run or 0.0) - (p_cold or 0.0)))
        return out


def run(
    answers: int, json_claims: int, before_provider: Path | None
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    records = [r for r in load_records(LABELLED).records if r.answer][:answers]
    pairs = claims_of(records)
    template = TEMPLATES["assay"]
    prompts = [
        template.messages(c, evidence_text(r.evidence, MAX_EVIDENCE_CHARS)) for r, c in pairs
    ]
    bare = on_thread(BarePass)
    prefixes = {}
    for record in records:
        mine = [p for (r, _), p in zip(pairs, prompts, strict=True) if r is record]
        prefixes[record.id] = shared_prefix(bare, mine) if len(mine) > 1 else []
    options = ModelOptions(cache=False)
    loop = asyncio.new_event_loop()
    singles = {"assay single-pass": Recorder(SinglePassChecker(get_model(MODEL, options)), loop)}
    if before_provider is not None:
        singles[BEFORE] = Recorder(before_checker(before_provider), loop)
    json_checker = ModelChecker(get_model(MODEL, options))
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    try:
        for index, ((record, claim), messages) in enumerate(zip(pairs, prompts, strict=True)):
            times["bare pass"].append(timed(on_thread, bare.full, messages))
            times["bare + state restore"].append(
                timed(on_thread, bare.restored, messages, prefixes[record.id])
            )
            for way, recorder in singles.items():
                times[way].append(recorder.timed_check(claim, record))
            if index < json_claims:
                times["assay JSON"].append(
                    timed(loop.run_until_complete, json_checker.check(claim, record.evidence))
                )
        differences = {way: r.cold_differences(pairs) for way, r in singles.items()}
    finally:
        for recorder in singles.values():
            loop.run_until_complete(recorder.checker.model.aclose())
        loop.run_until_complete(json_checker.model.aclose())
        loop.close()
    return times, differences


MODEL = "llamacpp/smollm2"
BEFORE = "assay single-pass (before)"
WAYS = ("bare pass", "bare + state restore", "assay single-pass", BEFORE, "assay JSON")


def table(times: dict[str, list[float]], differences: dict[str, list[float]]) -> str:
    base = statistics.median(times["bare pass"])
    lines = [
        "| way | claims | median s / claim | p90 s / claim | median vs bare pass "
        "| p differs from cold (claims, max) |",
        "|---|---|---|---|---|---|",
    ]
    for way in WAYS:
        values = sorted(times[way])
        if not values:
            continue
        median = statistics.median(values)
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        moved = differences.get(way)
        drift = f"{sum(d > 0 for d in moved)} of {len(moved)}, {max(moved):.4f}" if moved else ""
        lines.append(
            f"| {way} | {len(values)} | {median:.3f} | {p90:.3f} | {median / base:.2f}x | {drift} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=8, help="labelled answers (their claims)")
    parser.add_argument("--json-claims", type=int, default=6, help="claims for the JSON way")
    parser.add_argument(
        "--before-provider", type=Path, default=None, help="an earlier llamacpp.py to compare"
    )
    args = parser.parse_args(argv)
    times, differences = run(args.answers, args.json_claims, args.before_provider)
    print(f"threads {usable_cores()}; {len(times['bare pass'])} claims")
    print(table(times, differences))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
