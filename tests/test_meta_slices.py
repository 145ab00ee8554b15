"""`meta` everywhere (issue 10 #2): records, questions and manifest lines carry the user's own
fields into results and archives, `--by meta.KEY` gives every metric per slice, the slices add
up to the whole, the report shows them, and the importers keep what users slice by."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.meta import MISSING, keep_where, meta_value, parse_by, parse_where
from assay.errors import ConfigError
from assay.judge.archive import iter_archive
from assay.report.html import ReportOptions, build_report
from assay.verify.summary import BenchSummary
from tests.judge.helpers import write_questions
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _records_with_meta(count: int) -> list[dict[str, object]]:
    records = verify_only_records(count)
    for i, record in enumerate(records):
        if i % 5:  # every fifth has no meta at all: the "(none)" slice
            record["meta"] = {"system": ["alpha", "beta"][i // 6 % 2], "batch": {"week": i % 3}}
    return records


def test_results_keep_meta_and_bench_slices_add_up_to_the_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _records_with_meta(30))
    run = tmp_path / "run"
    args = ["--verifier", "lexical", "--no-cache", "--no-progress", "--n-resamples", "50"]
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    assert main([*base, *args, "--no-report"]) == 0
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert lines[7]["meta"] == {"system": "beta", "batch": {"week": 1}} and lines[0]["meta"] is None
    capsys.readouterr()
    assert main(["bench", "summarize", str(run), "--by", "meta.system", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "| meta.system | n | error rate | balanced_accuracy" in out
    sliced = json.loads((run / "slices" / "meta.system.json").read_text())["slices"]
    assert set(sliced) == {"alpha", "beta", MISSING}
    whole = json.loads((run / "summary.json").read_text())
    for key in ("results", "scored", "used_for_detection"):
        assert sum(s["counts"][key] for s in sliced.values()) == whole["counts"][key]
    assert sliced["alpha"]["detection"]["metrics"]["auroc"]["low"] is not None  # with intervals
    assert main(["bench", "summarize", str(run), "--by", "meta.batch.week", "--no-plots"]) == 0
    weeks = json.loads((run / "slices" / "meta.batch.week.json").read_text())["slices"]
    assert set(weeks) == {"0", "1", "2", MISSING}


def _timeless(summary: BenchSummary) -> dict[str, Any]:
    """A summary without the second it was made in (two summaries built a second apart)."""
    data: dict[str, Any] = summary.model_dump(mode="json")
    data.pop("created_at")
    return data


def _without_times(value: Any) -> Any:
    """A JSON value without its ``created_at`` fields (two files written a second apart)."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "created_at"}
    if isinstance(value, list):
        return [_without_times(item) for item in value]
    return value


def test_a_slice_counted_in_one_pass_is_the_summary_of_its_own_results(tmp_path: Path) -> None:
    from assay.verify.results import iter_results
    from assay.verify.slices import RunTallies
    from assay.verify.summary import build_summary

    data = write_jsonl(tmp_path / "data.jsonl", _records_with_meta(30))
    run = tmp_path / "run"
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    assert main([*base, "--verifier", "lexical", "--no-cache", "--no-progress", "--no-report"]) == 0
    tallies = RunTallies.read(run, ["meta.system", "meta.batch.week"])
    weeks = tallies.slice_summaries(run, "meta.batch.week", n_resamples=50)
    assert list(weeks) == [MISSING, "0", "1", "2"] and all(s.money is None for s in weeks.values())
    results = list(iter_results(run / "results.jsonl"))
    for value, summary in weeks.items():
        own = [r for r in results if meta_value(r.meta, ("batch", "week")) == value]
        expected = build_summary(run, results=own, n_resamples=50, plots=False)
        assert _timeless(summary) == _timeless(expected)
    whole = build_summary(run, n_resamples=50, plots=False)
    assert _timeless(build_summary(run, tally=tallies.whole, n_resamples=50, plots=False)) == (
        _timeless(whole)
    )
    with pytest.raises(ConfigError, match=r"--by meta.sytem: no record has this key.*meta\.system"):
        RunTallies.read(run, ["meta.sytem"])


def test_an_option_given_twice_is_one_slice_table_under_a_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _records_with_meta(30))
    run = tmp_path / "run"
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    assert main([*base, "--verifier", "lexical", "--no-cache", "--no-progress", "--no-report"]) == 0
    calibration = tmp_path / "calibration.json"
    assert main(["bench", "calibrate", str(run), "--out", str(calibration)]) == 0
    summarize = ["bench", "summarize", str(run), "--no-plots", "--no-report"]
    summarize += ["--calibration", str(calibration), "--n-resamples", "50"]
    assert main([*summarize, "--by", "meta.system"]) == 0
    once = _without_times(json.loads((run / "slices" / "meta.system.json").read_text()))
    capsys.readouterr()
    assert main([*summarize, "--by", "meta.system", "--by", "meta.system"]) == 0
    assert capsys.readouterr().out.count("| meta.system | n |") == 1
    again = json.loads((run / "slices" / "meta.system.json").read_text())
    assert _without_times(again) == once  # calibrated once


def test_the_report_shows_the_slices(tmp_path: Path) -> None:
    from assay.report.html import write_report

    data = write_jsonl(tmp_path / "data.jsonl", _records_with_meta(12))
    run = tmp_path / "run"
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    assert main([*base, "--verifier", "lexical", "--no-cache", "--no-progress", "--no-report"]) == 0
    assert main(["bench", "summarize", str(run), "--by", "meta.system", "--no-plots"]) == 0
    html = write_report(run).read_text(encoding="utf-8")
    assert "Slices by meta.system" in html


def test_compare_by_slices_each_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _records_with_meta(12))
    runs = []
    for checker in ("lexical", "learned"):
        run = tmp_path / checker
        base = ["bench", "run", "--data", str(data), "--pattern", "entailment"]
        flags = ["--verifier", checker, "--no-cache", "--no-progress", "--no-report"]
        assert main([*base, "--out_dir", str(run), *flags]) == 0
        runs.append(str(run))
    capsys.readouterr()
    assert main(["bench", "compare", *runs, "--by", "meta.system"]) == 0
    out = capsys.readouterr().out
    # each run's slice row, and the pair's paired differences in that slice
    assert out.count("| alpha |") == 3 and str(tmp_path / "learned") in out


def test_compare_by_gives_paired_differences_per_slice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", _records_with_meta(40))
    runs = []
    for checker in ("lexical", "learned"):
        run = tmp_path / checker
        base = ["bench", "run", "--data", str(data), "--pattern", "entailment"]
        flags = ["--verifier", checker, "--no-cache", "--no-progress", "--no-report"]
        assert main([*base, "--out_dir", str(run), *flags]) == 0
        runs.append(run)
    capsys.readouterr()
    assert main(["bench", "compare", *map(str, runs), "--by", "meta.system"]) == 0
    section = capsys.readouterr().out.split("## Paired metric differences by meta.system")[1]
    rows = {
        cells[2]: cells
        for line in section.splitlines()
        if line.startswith("| lexical | learned |")
        for cells in [[c.strip() for c in line.split("|")[1:-1]]]
    }
    assert set(rows) == {"alpha", "beta", MISSING}
    slices = [json.loads((r / "slices" / "meta.system.json").read_text())["slices"] for r in runs]
    for value, cells in rows.items():
        counts = [s[value]["counts"]["used_for_detection"] for s in slices]
        assert cells[3].startswith(f"{counts[0]} (") and counts[0] == counts[1]
        auroc = [s[value]["detection"]["metrics"]["auroc"]["value"] for s in slices]
        if None in auroc:
            assert cells[4].startswith("n/a")
        else:  # each slice's paired difference is the difference of the runs' slice figures
            assert float(cells[4].split(" ")[0]) == pytest.approx(auroc[1] - auroc[0], abs=6e-4)


def test_a_misspelt_field_is_still_an_error_that_points_to_meta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = verify_only_records(2)
    records[1]["label"] = "x"
    data = write_jsonl(tmp_path / "data.jsonl", records)
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment"]
    assert main([*base, "--out_dir", str(tmp_path / "r"), "--verifier", "lexical"]) == 2
    err = capsys.readouterr().err
    assert f"{data}:2" in err and "'label'" in err and "'meta'" in err


def test_by_needs_a_meta_key() -> None:
    assert parse_by("meta.a.b") == ("a", "b")
    for bad in ("system", "meta.", "meta", "meta..x"):
        with pytest.raises(ConfigError):
            parse_by(bad)
    assert meta_value({"a": {"b": 2}}, ("a", "b")) == "2"
    assert meta_value({"a": 1}, ("a", "b")) == MISSING
    assert meta_value(None, ("a",)) == MISSING


def test_judge_archives_sample_meta_and_analyze_slices_add_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = json.loads(json.dumps(_questions()))
    questions[0]["meta"] = {"domain": "cs", "source": "questions"}
    qfile = write_questions(tmp_path / "q.jsonl", questions)
    manifest = tmp_path / "manifest.jsonl"
    rows = []
    for target in ("stub/a", "stub/b"):
        for question in ("Q1", "Q2"):
            for variant in ("A", "B"):
                row = {
                    "question_id": question,
                    "prompt_variant": variant,
                    "target_model": target,
                    "output_id": f"{target}/{question}/{variant}",
                    "text": f"Output of {target} for {question} {variant}: 2, 3 and more.",
                    "meta": {"source": "manifest", "setting": variant.lower()},
                }
                rows.append(row)
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = tmp_path / "run"
    command = ["judge", "run", "--questions", str(qfile), "--outputs", str(manifest)]
    command += ["--judge", "stub/j", "--mode", "cross", "--out", str(run)]
    assert main(command) == 0
    records = [i.record.model_dump() for i in iter_archive(run) if i.record is not None]
    q1 = next(r for r in records if r["question_id"] == "Q1")
    assert q1["sample_meta"] == {
        "domain": "cs",
        "source": "manifest",
        "setting": q1["prompt_variant"].lower(),
    }
    capsys.readouterr()
    analyze = ["judge", "analyze", str(run), "--resamples", "50", "--no-plots", "--no-report"]
    assert main([*analyze, "--by", "meta.setting", "--by", "meta.domain"]) == 0
    whole = json.loads((run / "summary.json").read_text())["counts"]
    for key, expected in (("meta.setting", {"a", "b"}), ("meta.domain", {"cs", MISSING})):
        sliced = json.loads((run / "slices" / f"{key}.json").read_text())["slices"]
        assert set(sliced) == expected
        for field in ("work_items", "valid", "invalid", "records"):
            assert sum(s["counts"][field] for s in sliced.values()) == whole[field]
    assert "| meta.setting | samples x judges |" in capsys.readouterr().out
    # a key no sample has is refused before the analysis rewrites anything
    written = {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()}
    assert main([*analyze, "--by", "meta.nokey"]) == 2
    assert "meta.nokey" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in run.rglob("*") if p.is_file()} == written


def test_judge_agreement_by_slices_is_each_slices_own_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = json.loads(json.dumps(_questions()))
    questions[0]["meta"] = {"domain": "cs"}
    qfile = write_questions(tmp_path / "q.jsonl", questions)
    outputs, run = tmp_path / "outputs", tmp_path / "run"
    assert (
        main(["generate", "--questions", str(qfile), "--model", "stub/a", "--out", str(outputs)])
        == 0
    )
    command = ["judge", "run", "--questions", str(qfile), "--outputs", str(outputs)]
    assert main([*command, "--judge", "stub/j", "--out", str(run)]) == 0
    samples = [(q, v) for q in ("Q1", "Q2") for v in ("A", "B")]
    labels = [
        {"question_id": q, "prompt_variant": v, "target_model": "stub/a", "dimension": dim,
         "score": score}
        for (q, v), score in zip(samples, (2, 1, 2, 0), strict=True)
        for dim in ("D1", "verdict")
    ]  # fmt: skip
    every = write_jsonl(tmp_path / "labels.jsonl", labels)
    agreement = ["judge", "agreement", str(run), "--labels", str(every), "--resamples", "50"]
    assert main([*agreement, "--by", "meta.domain"]) == 0
    printed = capsys.readouterr().out
    assert "by meta.domain:" in printed and "| meta.domain | judge | method |" in printed
    report = json.loads((run / "agreement.json").read_text())
    (sliced,) = report["slices"]
    assert sliced["by"] == "meta.domain" and set(sliced["values"]) == {"cs", MISSING}
    whole = {d["dimension"]: d["n"] for d in report["dimensions"]}
    for dimension, n in whole.items():
        parts = [
            d["n"] for part in sliced["values"].values() for d in part["dimensions"]
            if d["dimension"] == dimension
        ]  # fmt: skip
        assert sum(parts) == n
    # the cs slice is the agreement of Q1's labels alone
    alone = write_jsonl(tmp_path / "q1.jsonl", [r for r in labels if r["question_id"] == "Q1"])
    out = tmp_path / "q1-agreement.json"
    own = ["judge", "agreement", str(run), "--labels", str(alone), "--resamples", "50"]
    assert main([*own, "--out", str(out)]) == 0
    cs = sliced["values"]["cs"]
    assert cs["dimensions"] == json.loads(out.read_text())["dimensions"]
    assert cs["unmatched_labels"] == 0 and cs["labels"] == 4
    payload, _ = build_report([run], ReportOptions())
    (table,) = [
        t for t in payload.runs[0].tables if t.title == "Agreement with labels by meta.domain"
    ]
    assert {row[0] for row in table.rows} == {"cs", MISSING}
    capsys.readouterr()
    written = (run / "agreement.json").read_text()
    assert main([*agreement, "--by", "meta.nokey"]) == 2
    assert "meta.nokey" in capsys.readouterr().err
    assert (run / "agreement.json").read_text() == written


def _questions() -> list[dict[str, object]]:
    from tests.judge.helpers import QUESTIONS_JSONL

    return QUESTIONS_JSONL


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not beside the project")
def test_importers_keep_what_users_slice_by(tmp_path: Path) -> None:
    sources = {
        "expertqa": DATA / "expertqa" / "domain_val.jsonl",
        "wice": DATA / "wice" / "claim_dev.jsonl",
        "halueval": DATA / "halueval" / "qa_one-turn_data.json",
    }
    expected = {
        "expertqa": {"system", "field", "specific_field", "question_type"},
        "wice": {"article", "section"},
        "halueval": {"task", "source", "answer"},
    }
    for name, source in sources.items():
        out = tmp_path / f"{name}.jsonl"
        assert main(["import", name, str(source), "--out", str(out)]) == 0
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert all(set(r["meta"]) == expected[name] for r in records), name
    expert = [json.loads(x) for x in (tmp_path / "expertqa.jsonl").read_text().splitlines()]
    assert len({r["meta"]["system"] for r in expert}) >= 2  # the answering systems


def test_where_keeps_records_matching_every_key_and_names_misspelt_values() -> None:
    records: list[dict[str, dict[str, object] | None]] = [
        {"meta": {"dataset": "Lfqa", "batch": {"week": 1}}},
        {"meta": {"dataset": "RAGTruth", "batch": {"week": 2}}},
        {"meta": {"dataset": "Lfqa", "batch": {"week": 2}}},
        {"meta": None},
    ]
    where = parse_where(["meta.dataset=Lfqa", "meta.dataset=RAGTruth", "meta.batch.week=2"])
    assert where == {("dataset",): {"Lfqa", "RAGTruth"}, ("batch", "week"): {"2"}}
    assert keep_where(records, lambda r: r["meta"], where) == records[1:3]
    assert keep_where(records, lambda r: r["meta"], parse_where([f"meta.dataset={MISSING}"])) == [
        records[3]
    ]
    with pytest.raises(ConfigError, match=r"no record has the value 'LFQA'.*: Lfqa, RAGTruth$"):
        keep_where(records, lambda r: r["meta"], parse_where(["meta.dataset=LFQA"]))
    for bad in ("meta.dataset", "dataset=Lfqa", "meta.=x"):
        with pytest.raises(ConfigError, match="--where"):
            parse_where([bad])
