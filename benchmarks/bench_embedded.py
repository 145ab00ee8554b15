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
  with logprobs (a `logits_all` handle), on the first `--json-claims` claims only (it is slow).

    python benchmarks/bench_embedded.py [--answers 8] [--json-claims 6]

Every way runs in this process with its own llama.cpp handle, threads = usable cores.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.data.grounded import load_records
from assay.data.records import GroundedQARecord
from assay.model import ChatMessage, ModelOptions, get_model
from assay.model.providers.llamacpp import smollm2_path, usable_cores
from assay.verify.checkers.model import ModelChecker
from assay.verify.checkers.single_pass import TEMPLATES, SinglePassChecker, evidence_text
from assay.verify.claims import split_claims
from assay.verify.types import Claim

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "examples" / "grounded_qa_labelled.jsonl"
MAX_EVIDENCE_CHARS = 6000  # SinglePassConfig's default


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
        prompt = self.formatter(messages=[m.model_dump() for m in messages]).prompt
        return list(self.llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def full(self, messages: Sequence[ChatMessage]) -> float:
        import llama_cpp

        tokens = self.tokens(messages)
        self.llm.reset()
        self.llm.eval(tokens)
        return float(llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)[0])

    def restored(self, messages: Sequence[ChatMessage], prefix: list[int]) -> float:
        """Restore the saved prefix state (saving it on first use) and evaluate the rest."""
        import llama_cpp

        tokens = self.tokens(messages)
        assert tokens[: len(prefix)] == prefix, "the prefix must be shared"
        if self.saved_prefix is None or self.saved_prefix[0] != prefix:
            self.llm.reset()
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


def run(answers: int, json_claims: int) -> dict[str, list[float]]:
    records = [r for r in load_records(LABELLED).records if r.answer][:answers]
    pairs = claims_of(records)
    template = TEMPLATES["assay"]
    prompts = [
        template.messages(c, evidence_text(r.evidence, MAX_EVIDENCE_CHARS)) for r, c in pairs
    ]
    bare = BarePass()
    prefixes = {}
    for record in records:
        mine = [p for (r, _), p in zip(pairs, prompts, strict=True) if r is record]
        prefixes[record.id] = shared_prefix(bare, mine) if len(mine) > 1 else []
    options = ModelOptions(cache=False)
    single = SinglePassChecker(get_model("llamacpp/smollm2", options))
    json_checker = ModelChecker(get_model("llamacpp/smollm2", options))
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    loop = asyncio.new_event_loop()
    try:
        for index, ((record, claim), messages) in enumerate(zip(pairs, prompts, strict=True)):
            run_check = loop.run_until_complete
            times["bare pass"].append(timed(bare.full, messages))
            times["bare + state restore"].append(
                timed(bare.restored, messages, prefixes[record.id])
            )
            times["assay single-pass"].append(
                timed(run_check, single.check(claim, record.evidence))
            )
            if index < json_claims:
                times["assay JSON"].append(
                    timed(run_check, json_checker.check(claim, record.evidence))
                )
    finally:
        loop.run_until_complete(single.model.aclose())
        loop.run_until_complete(json_checker.model.aclose())
        loop.close()
    return times


WAYS = ("bare pass", "bare + state restore", "assay single-pass", "assay JSON")


def table(times: dict[str, list[float]]) -> str:
    base = statistics.median(times["bare pass"])
    lines = [
        "| way | claims | median s / claim | p90 s / claim | median vs bare pass |",
        "|---|---|---|---|---|",
    ]
    for way in WAYS:
        values = sorted(times[way])
        if not values:
            continue
        median = statistics.median(values)
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        lines.append(f"| {way} | {len(values)} | {median:.3f} | {p90:.3f} | {median / base:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=8, help="labelled answers (their claims)")
    parser.add_argument("--json-claims", type=int, default=6, help="claims for the JSON way")
    args = parser.parse_args(argv)
    times = run(args.answers, args.json_claims)
    print(f"threads {usable_cores()}; {len(times['bare pass'])} claims")
    print(table(times))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
