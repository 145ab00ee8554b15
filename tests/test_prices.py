"""Cost in money (issue 10 #4): a price table multiplied out over a run's tokens, per example,
per judge and per pattern; unknown prices are said, never zero. Models in assay's own process
(stub/, llamacpp/) are billed by nobody: zero, unless the table prices them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main
from assay.errors import InputError
from assay.model import runs_in_process
from assay.runs.prices import PriceTable, load_prices, money, session_usage
from tests.helpers.fault_server import OK, fault_server
from tests.judge.helpers import write_manifest, write_questions
from tests.verify.bench_fixtures import generate_records, verify_only_records, write_jsonl

CLAIM_SUPPORTED = json.dumps({"label": "supported", "supporting_ids": [], "rationale": "ok"})
PRICES = {
    "models": {"stub/gen": {"input": 2.0, "output": 8.0}, "stub/*": {"input": 1.0, "output": 3.0}}
}


def _tokens(run: Path) -> dict[str, dict[str, int]]:
    lines = [json.loads(x) for x in (run / "run_log.jsonl").read_text().splitlines()]
    return session_usage(lines)


def test_bench_money_multiplies_out_per_model_and_per_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(6))
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    roles = ["--generator", "stub/gen", "--verifier", "stub/ver", "--no-cache", "--no-progress"]
    assert main([*args, *roles, "--no-report", "--n-resamples", "20", "--prices", str(prices)]) == 0
    out = capsys.readouterr().out
    usage = _tokens(run)
    gen, ver = usage["stub/gen"], usage["stub/ver"]
    assert gen["prompt_tokens"] > 0 and ver["completion_tokens"] > 0
    expected = (
        gen["prompt_tokens"] * 2.0 + gen["completion_tokens"] * 8.0  # the exact name
        + ver["prompt_tokens"] * 1.0 + ver["completion_tokens"] * 3.0  # the pattern
    ) / 1e6  # fmt: skip
    summary = json.loads((run / "summary.json").read_text())["money"]
    assert summary["known"] and summary["total"] == pytest.approx(expected)
    assert summary["per_item"] == pytest.approx(expected / 6)
    assert summary["billed"] == pytest.approx(expected)  # no cache: every token was billed
    assert f"money: {expected / 6:.6f} USD per example" in out
    assert (run / "prices.json").is_file()
    capsys.readouterr()
    assert main(["bench", "compare", str(run), str(run)]) == 0
    assert f"{expected / 6:.6f} USD" in capsys.readouterr().out


def test_in_process_models_cost_nothing_unless_the_table_prices_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nobody bills a stub's tokens: without a table the run's money is known and zero, and says
    why; a table that prices one of them wins for that one."""
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(2))
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    roles = ["--generator", "stub/gen", "--verifier", "stub/ver", "--no-cache", "--no-progress"]
    assert main([*args, *roles, "--no-report", "--n-resamples", "20"]) == 0
    note = "in-process models stub/gen, stub/ver: no per-token price"
    assert f"money: 0 USD ({note})" in capsys.readouterr().out
    free = json.loads((run / "summary.json").read_text())["money"]
    assert (free["known"], free["total"], free["billed"], free["per_item"]) == (True, 0, 0, 0)
    assert free["in_process"] == ["stub/gen", "stub/ver"] and free["note"] == note
    assert free["missing_prices"] == [] and free["by_model"]["stub/ver"]["usd"] == 0

    prices = tmp_path / "prices.yaml"  # someone charging their own machine's time
    prices.write_text("models:\n  stub/gen: {input: 1, output: 1}\n")
    assert main(["bench", "summarize", str(run), "--prices", str(prices), "--no-plots"]) == 0
    out = capsys.readouterr().out
    gen = _tokens(run)["stub/gen"]
    expected = (gen["prompt_tokens"] + gen["completion_tokens"]) / 1e6
    summary = json.loads((run / "summary.json").read_text())["money"]
    assert summary["known"] and expected > 0 and summary["total"] == pytest.approx(expected)
    assert summary["in_process"] == ["stub/ver"] and summary["by_model"]["stub/ver"]["usd"] == 0
    assert f"{expected / 2:.6f} USD per example" in out
    assert "in-process model stub/ver: no per-token price" in out


def test_a_summary_written_before_the_in_process_rule_reads_as_today_in_compare_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older assay wrote "unknown" money for a stub or the embedded model; bench compare and
    the report recompute it from the run's tokens, and leave summary.json as it was written."""
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(2))
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    roles = ["--generator", "stub/gen", "--verifier", "stub/ver", "--no-cache", "--no-progress"]
    assert main([*args, *roles, "--no-report", "--n-resamples", "20"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    models = sorted(summary["money"]["by_model"])
    before = {k: v for k, v in summary["money"].items() if k != "in_process"}  # a later field
    summary["money"] = {  # the words of a summary from before the rule
        **before,
        **{"known": False, "total": None, "per_item": None, "billed": None},
        "by_model": {m: {**summary["money"]["by_model"][m], "usd": None} for m in models},
        "missing_prices": models,
        "note": "no price table: give --prices FILE (stub/gen, stub/ver)",
    }
    old = json.dumps(summary, indent=2)
    (run / "summary.json").write_text(old)
    capsys.readouterr()
    assert main(["bench", "compare", str(run), str(run)]) == 0
    out = capsys.readouterr().out
    assert "0.000000 USD (in-process: stub/gen, stub/ver)" in out
    assert "unknown (no price" not in out
    assert main(["report", str(run)]) == 0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "money: in-process models stub/gen, stub/ver: no per-token price" in page
    assert "money: unknown" not in page
    assert (run / "summary.json").read_text() == old  # compare and report only read it


def test_a_model_behind_http_without_a_price_makes_the_total_unknown_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server may be a paid proxy, even on loopback: its tokens are never a silent zero. In a
    run beside an in-process model, that one counts as zero and the server's model is named."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(2))
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    roles = ["--generator", "stub/gen", "--verifier", "openai/x", "--claim-check", "json"]
    with fault_server([OK], reply_text=CLAIM_SUPPORTED) as server:
        http = ["--base-url", server.base_url, "--no-cache", "--no-progress", "--no-report"]
        assert main([*args, *roles, *http, "--n-resamples", "20"]) == 0
    out = capsys.readouterr().out
    assert "money: unknown (no price table: give --prices FILE" in out and "openai/x" in out
    unknown = json.loads((run / "summary.json").read_text())["money"]
    assert (unknown["known"], unknown["total"], unknown["per_item"]) == (False, None, None)
    assert unknown["missing_prices"] == ["openai/x"] and "openai/x" in unknown["note"]
    assert unknown["in_process"] == ["stub/gen"] and unknown["by_model"]["stub/gen"]["usd"] == 0
    assert unknown["by_model"]["openai/x"]["usd"] is None
    assert main(["report", str(run)]) == 0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "money: unknown (no price table: give --prices FILE" in page
    capsys.readouterr()
    assert main(["bench", "compare", str(run), str(run)]) == 0
    assert "unknown (no price: openai/x)" in capsys.readouterr().out

    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  openai/x: {input: 1, output: 1}\n")
    assert main(["bench", "summarize", str(run), "--prices", str(prices), "--no-plots"]) == 0
    tokens = _tokens(run)["openai/x"]
    summary = json.loads((run / "summary.json").read_text())["money"]
    expected = (tokens["prompt_tokens"] + tokens["completion_tokens"]) / 1e6
    assert summary["known"] and expected > 0 and summary["total"] == pytest.approx(expected)
    assert summary["in_process"] == ["stub/gen"]


@pytest.mark.slow
def test_the_embedded_model_costs_nothing_per_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's quick start on one example: the embedded model's money is known and zero in
    summary.json, the command's output and the report."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(1))
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    assert main([*args, "--verifier", "llamacpp/smollm2", "--no-progress"]) == 0
    note = "in-process model llamacpp/smollm2: no per-token price"
    assert f"money: 0 USD ({note})" in capsys.readouterr().out
    money = json.loads((run / "summary.json").read_text())["money"]
    assert (money["known"], money["total"], money["per_item"], money["note"]) == (True, 0, 0, note)
    assert money["by_model"]["llamacpp/smollm2"]["prompt_tokens"] > 0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert f"money: {note}" in page and "money: unknown" not in page


def test_judge_money_per_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."stub/j"]\ninput = 0.5\noutput = 1.5\n')
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a"])
    run = tmp_path / "judge"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    assert main([*command, "--judge", "stub/j", "--mode", "cross", "--out", str(run)]) == 0
    analyze = ["judge", "analyze", str(run), "--resamples", "20", "--no-plots", "--no-report"]
    assert main([*analyze, "--prices", str(prices)]) == 0
    tokens = _tokens(run)["stub/j"]
    expected = (tokens["prompt_tokens"] * 0.5 + tokens["completion_tokens"] * 1.5) / 1e6
    summary = json.loads((run / "summary.json").read_text())["money"]
    assert summary["by_model"]["stub/j"]["usd"] == pytest.approx(expected)
    assert summary["per_item"] == pytest.approx(expected / 4)  # 4 samples x 1 judge
    assert "per sample x judge" in capsys.readouterr().out


def test_a_judge_run_on_a_stub_judge_costs_nothing_without_a_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a"])
    run = tmp_path / "judge"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    assert main([*command, "--judge", "stub/j", "--mode", "cross", "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["judge", "analyze", str(run), "--resamples", "20", "--no-plots"]) == 0
    note = "in-process model stub/j: no per-token price"
    assert f"money: 0 USD ({note})" in capsys.readouterr().out
    money = json.loads((run / "summary.json").read_text())["money"]
    assert (money["known"], money["total"], money["per_item"], money["note"]) == (True, 0, 0, note)
    page = (run / "report.html").read_text(encoding="utf-8")
    assert f"money: {note}" in page and "money per sample x judge" in page


def test_cached_input_and_batch_prices() -> None:
    table = PriceTable.model_validate(
        {"models": {"m": {"input": 10, "output": 20, "cached_input": 1, "batch_discount": 0.5}}}
    )
    usage = {
        "m": {
            "prompt_tokens": 3000,  # the work, cache hits of assay's response cache included
            "completion_tokens": 100,
            "billed_prompt_tokens": 2000,  # sent now; 1,000 of them from the provider's cache
            "billed_cached_prompt_tokens": 1000,
            "billed_completion_tokens": 50,
        }
    }
    live = money(table, usage, 10, batch=False, in_process=runs_in_process)
    assert live.total == pytest.approx((3000 * 10 + 100 * 20) / 1e6)
    assert live.billed == pytest.approx((1000 * 10 + 1000 * 1 + 50 * 20) / 1e6)
    batch = money(table, usage, 10, batch=True, in_process=runs_in_process)
    assert live.total is not None
    assert batch.total == pytest.approx(live.total * 0.5) and batch.batch


def test_a_bad_price_table_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"stub/gen": {"input": -1, "output": 1}}}))
    run = tmp_path / "run"
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(1))
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    roles = ["--generator", "stub/gen", "--verifier", "lexical", "--no-cache", "--no-progress"]
    assert main([*args, *roles, "--no-report"]) == 0
    assert main(["bench", "summarize", str(run), "--prices", str(prices)]) == 2
    err = capsys.readouterr().err
    assert str(prices) in err and "models.stub/gen.input" in err


def test_a_misspelt_price_key_is_named_as_written(tmp_path: Path) -> None:
    """`inputs:` for `input:` was reported as `input: Field required`, which does not say
    which key of the file is wrong."""
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  stub/gen: {inputs: 1, output: 2}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_prices(prices)
    assert (caught.value.field, caught.value.reason) == (
        "models.stub/gen.inputs",
        "Extra inputs are not permitted",
    )


@pytest.mark.parametrize(
    ("entry", "field", "named"),
    [
        ("{input: .nan, output: 1}", "models.stub/gen.input", "NaN"),
        (
            "{input: 1, output: 1, batch_discount: .inf}",
            "models.stub/gen.batch_discount",
            "Infinity",
        ),
        ("{input: 1, output: 1, cached_input: -.inf}", "models.stub/gen.cached_input", "-Infinity"),
    ],
)
def test_a_non_finite_price_is_named(entry: str, field: str, named: str, tmp_path: Path) -> None:
    """YAML spells NaN and the infinities ``.nan``, ``.inf``: the error names them, not the bound
    they fail (``Input should be less than 1``)."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"models:\n  stub/gen: {entry}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_prices(prices)
    assert (caught.value.path, caught.value.field) == (str(prices), field)
    assert caught.value.reason == f"{named} is not a number assay accepts (give a finite number)"


def test_a_model_priced_twice_in_yaml_is_refused_with_its_line(tmp_path: Path) -> None:
    from assay.errors import InputError
    from assay.runs.prices import load_prices

    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "models:\n  stub/gen: {input: 1, output: 1}\n  stub/gen: {input: 9, output: 9}\n"
    )
    with pytest.raises(InputError) as error:
        load_prices(prices)
    assert str(error.value).startswith(f"{prices}:3: not a price table: column 3: the key")
    assert "given twice" in str(error.value)


def test_a_bad_price_field_in_yaml_is_named_with_its_line(tmp_path: Path) -> None:
    from assay.errors import InputError
    from assay.runs.prices import load_prices

    prices = tmp_path / "prices.yaml"
    prices.write_text('models:\n  "stub/*":\n    inputs: 1\n    output: 2\n')
    with pytest.raises(InputError) as error:
        load_prices(prices)
    assert str(error.value) == (
        f"{prices}:3 field 'models.stub/*.inputs': Extra inputs are not permitted"
    )
