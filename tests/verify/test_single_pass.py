"""The single-pass claim check: p(supported) from one next-token distribution.

On llama.cpp the probability must equal the one computed from the full next-token
distribution of a plain evaluation (a separate ``logits_all`` handle); the OpenAI-compatible
path is checked against the real llama_cpp.server."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import pytest

from assay.model import (
    ChatMessage,
    Completion,
    ModelOptions,
    TokenLogprob,
    TopLogprob,
    get_model,
)
from assay.model.providers.stub import StubBackend
from assay.verify.checkers._learned_text import STATISTICS_VERSION
from assay.verify.checkers.single_pass import (
    TEMPLATES,
    TOP_LOGPROBS,
    SinglePassChecker,
    SinglePassConfig,
    evidence_text,
    next_token_probability,
)
from assay.verify.stub_replies import RESPONDERS
from assay.verify.types import Claim, Evidence

EVIDENCE = (
    Evidence(evidence_id="e1", text="The Sydney Harbour Bridge opened to traffic in 1932."),
    Evidence(evidence_id="e2", text="Its main span is 503 metres long."),
)
SUPPORTED = Claim(text="The bridge opened in 1932.", cited_ids=("e1",))
UNSUPPORTED = Claim(text="The bridge was designed by Gustave Eiffel.", cited_ids=("e2",))
NO_CACHE = ModelOptions(cache=False)

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage


def _completion(*alternatives: tuple[str, float]) -> Completion:
    top = tuple(TopLogprob(token=t, logprob=math.log(p)) for t, p in alternatives)
    first = TokenLogprob(token=top[0].token, logprob=top[0].logprob, top=top)
    return Completion(text=first.token, finish_reason="length", logprobs=(first,))


def test_probability_renormalises_over_the_label_set() -> None:
    p, source = next_token_probability(
        _completion(("The", 0.5), ("Yes", 0.3), (" yes", 0.1), ("No", 0.1)), "Yes", "No"
    )
    assert source == "next_token" and p == pytest.approx(0.4 / 0.5)


def test_a_missing_label_is_bounded_by_the_least_likely_alternative() -> None:
    p, source = next_token_probability(_completion(("Yes", 0.6), ("The", 0.2)), "Yes", "No")
    assert source == "next_token_bounded" and p == pytest.approx(0.6 / 0.8)
    p, source = next_token_probability(_completion(("No", 0.6), ("The", 0.1)), "Yes", "No")
    assert source == "next_token_bounded" and p == pytest.approx(0.1 / 0.7)


def test_no_label_gives_no_probability_and_an_uncertain_failed_check() -> None:
    p, source = next_token_probability(_completion(("The", 0.6), ("A", 0.2)), "Yes", "No")
    assert p is None and "neither label" in source


def test_the_checker_asks_for_one_token_with_logprobs_and_evidence_first() -> None:
    seen = []

    def reply(messages, config, rng):  # type: ignore[no-untyped-def]
        seen.append((messages, config))
        return "Yes"

    model = get_model("stub/x", NO_CACHE, backend=StubBackend("x", replies=reply))
    check = asyncio.run(SinglePassChecker(model).check(SUPPORTED, EVIDENCE))
    ((messages, config),) = seen
    assert config.max_tokens == 1 and config.logprobs and config.top_logprobs == 20
    assert config.json_schema is None and config.logprob_tokens == ("Yes", "No")
    body = messages[-1].content
    assert body.index("[e1]") < body.index("Claim: The bridge opened in 1932.")
    assert check.probability_source in {"next_token", "next_token_bounded"}
    assert check.p_supported is not None and check.p_supported >= 0.5  # the reply was Yes
    assert check.cited_supporting_ids == (("e1",) if check.label == "supported" else ())


def test_the_stub_answers_label_questions() -> None:
    model = get_model("stub/x", NO_CACHE.with_stub_responders(RESPONDERS))
    good = asyncio.run(SinglePassChecker(model).check(SUPPORTED, EVIDENCE))
    assert good.failure is None and good.p_supported is not None


def _full_distribution_p(messages: Sequence[ChatMessage]) -> float:
    """p(Yes)/(p(Yes)+p(No)) from every logit of a plain evaluation (a logits_all handle)."""
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from assay.model.providers.llamacpp import smollm2_path

    llm = Llama(model_path=str(smollm2_path()), n_ctx=2048, logits_all=True, verbose=False)
    template = llm.metadata["tokenizer.chat_template"]
    eos = llm.detokenize([llm.token_eos()], special=True).decode()
    bos = llm.detokenize([llm.token_bos()], special=True).decode()
    # a ChatMessage dumps to {"role": "system" | "user" | "assistant", "content": str}, one of
    # llama.cpp's request messages
    prompt_messages = cast("list[ChatCompletionRequestMessage]", [m.model_dump() for m in messages])
    prompt = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)(
        messages=prompt_messages
    ).prompt
    tokens = llm.tokenize(prompt.encode(), add_bos=False, special=True)
    llm.eval(tokens)
    logits = np.asarray(llm.scores[len(tokens) - 1], dtype=np.float64)
    probs = np.exp(logits - np.logaddexp.reduce(logits))
    mass = {"yes": 0.0, "no": 0.0}
    for token_id in range(llm.n_vocab()):
        text = llm.detokenize([token_id], special=True).decode("utf-8", "replace")
        key = text.strip().casefold()
        if key in mass:
            mass[key] += float(probs[token_id])
    llm.close()
    return mass["yes"] / (mass["yes"] + mass["no"])


@pytest.mark.slow
def test_llamacpp_single_pass_equals_the_full_distribution() -> None:
    model = get_model("llamacpp/smollm2", NO_CACHE)
    checker = SinglePassChecker(model)

    async def both() -> list[tuple[float | None, int]]:
        out = []
        for claim in (SUPPORTED, UNSUPPORTED):  # same evidence first: the prefix is reused
            messages = checker.template.messages(claim, evidence_text(EVIDENCE, 6000))
            result = await model.generate(messages, checker.generate_config())
            assert isinstance(result, Completion)
            p, _ = next_token_probability(result, "Yes", "No")
            out.append((p, result.prompt_tokens_reused))
        await model.aclose()
        return out

    (p_first, reused_first), (p_second, reused_second) = asyncio.run(both())
    assert reused_first == 0 and reused_second > 20  # system prompt and evidence kept
    for claim, p in ((SUPPORTED, p_first), (UNSUPPORTED, p_second)):
        messages = checker.template.messages(claim, evidence_text(EVIDENCE, 6000))
        expected = _full_distribution_p(messages)
        assert p == pytest.approx(expected, abs=2e-3)


def _server_path_p(messages: Sequence[ChatMessage]) -> float:
    """p(Yes)/(p(Yes)+p(No)) over the top alternatives llama-cpp-python's own chat completion
    lists for the first token, read here without assay: the server's code path, in process."""
    from llama_cpp import Llama

    from assay.model.providers.llamacpp import smollm2_path

    # the server's defaults: logits_all (its logprobs need it), n_ctx as the test server's
    llm = Llama(model_path=str(smollm2_path()), n_ctx=2048, logits_all=True, verbose=False)
    prompt_messages = cast("list[ChatCompletionRequestMessage]", [m.model_dump() for m in messages])
    reply = llm.create_chat_completion(
        prompt_messages, max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=TOP_LOGPROBS
    )
    llm.close()
    listed = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]  # type: ignore[index]
    mass = {"yes": 0.0, "no": 0.0}
    for alternative in listed:
        key = alternative["token"].strip().casefold()
        if key in mass:
            mass[key] += math.exp(alternative["logprob"])
    return mass["yes"] / (mass["yes"] + mass["no"])


@pytest.mark.slow
def test_openai_single_pass_against_the_real_server() -> None:
    from tests.helpers.servers import start_llama_server

    # A server of its own: llama_cpp.server reuses the KV cache of the prompt prefix it shares
    # with the previous request and evaluates the rest in another batch shape, which rounds
    # differently (here 0.245 fresh, 0.267 after another prompt); how much depends on the CPU's
    # kernels, and on a shared server, on which tests ran before. A fresh server evaluates the
    # prompt whole, as the in-process references do.
    with start_llama_server() as base_url:
        model = get_model("openai/smollm2", ModelOptions(base_url=base_url, cache=False))
        check = asyncio.run(SinglePassChecker(model).check(SUPPORTED, EVIDENCE))
    assert check.failure is None, check.failure
    assert check.probability_source == "next_token"
    messages = SinglePassChecker(model).template.messages(SUPPORTED, evidence_text(EVIDENCE, 6000))
    # what the server listed, read right: equal to llama-cpp-python's own top alternatives
    assert check.p_supported == pytest.approx(_server_path_p(messages), abs=1e-4)
    # and close to the whole distribution: the top 20 leave out a little of each label's mass
    # (spellings such as ' yes'), 0.010 here
    assert check.p_supported == pytest.approx(_full_distribution_p(messages), abs=0.02)


def test_templates_put_evidence_before_the_claim() -> None:
    for template in TEMPLATES.values():
        assert template.user.index("{evidence}") < template.user.index("{claim}")


# ------------------------------------------------------------------ evidence over the budget

FILLER = [f"Filler sentence number {i} about the harbour ferries." for i in range(40)]
LONG_PAGE = (
    *(Evidence(evidence_id=str(i), text=text) for i, text in enumerate(FILLER)),
    Evidence(evidence_id="40", text="The Harbour Bridge opened to traffic in 1932."),
)


def test_evidence_over_the_budget_is_cut_in_page_order_or_by_relevance() -> None:
    claim = "The Harbour Bridge opened in 1932."
    page_order = evidence_text(LONG_PAGE, 600, claim)
    relevant = evidence_text(LONG_PAGE, 600, claim, "relevance")
    assert "[40]" not in page_order and page_order.startswith("[0] ")
    assert "[40] The Harbour Bridge opened to traffic in 1932." in relevant.splitlines()
    assert len(page_order) <= 600 and len(relevant) <= 600
    ids = [int(line[1 : line.index("]")]) for line in relevant.splitlines()]
    assert ids == sorted(ids)  # shown in record order
    assert len(ids) > 1  # the budget left over is filled


def test_evidence_within_the_budget_is_the_same_either_way() -> None:
    claim = SUPPORTED.text
    whole = evidence_text(EVIDENCE, 6000, claim)
    assert evidence_text(EVIDENCE, 6000, claim, "relevance") == whole
    assert whole.splitlines() == [
        "[e1] The Sydney Harbour Bridge opened to traffic in 1932.",
        "[e2] Its main span is 503 metres long.",
    ]


def test_a_snippet_longer_than_the_budget_is_still_shown_cut() -> None:
    huge = (Evidence(evidence_id="x", text="The Harbour Bridge opened in 1932. " * 50),)
    text = evidence_text(huge, 100, "The Harbour Bridge opened in 1932.", "relevance")
    assert text.startswith("[x] The Harbour Bridge") and len(text) == 100


def test_the_relevance_cut_reaches_the_model_and_the_fingerprint() -> None:
    seen = []

    def reply(messages, config, rng):  # type: ignore[no-untyped-def]
        seen.append(messages[-1].content)
        return "Yes"

    model = get_model("stub/x", NO_CACHE, backend=StubBackend("x", replies=reply))
    claim = Claim(text="The Harbour Bridge opened in 1932.")
    config = SinglePassConfig(max_evidence_chars=600, evidence_cut="relevance")
    asyncio.run(SinglePassChecker(model, config).check(claim, LONG_PAGE))
    asyncio.run(
        SinglePassChecker(model, SinglePassConfig(max_evidence_chars=600)).check(claim, LONG_PAGE)
    )
    assert "[40]" in seen[0] and "[40]" not in seen[1]
    # runs made before the option existed keep their fingerprint: the default is not described
    assert "evidence_cut" not in SinglePassConfig().describe()
    relevance = SinglePassConfig(evidence_cut="relevance").describe()
    assert relevance["evidence_cut"] == "relevance"
    # the ranking's text statistics are part of the run: a change to them is not resumed
    assert relevance["relevance_statistics"] == STATISTICS_VERSION
