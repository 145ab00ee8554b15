"""The HTML report without a browser: escaping, encoding, binding to real run artifacts, CLI."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.errors import InputError
from assay.judge.agreement import Interval, format_interval
from assay.report._html_common import at_path, format_number, locate, marks_for
from assay.report._html_judge import quote_marks
from assay.report._html_page import content_security_policy, embed_json
from assay.report._html_script import SCRIPT
from assay.report._html_style import STYLE
from assay.report.html import ReportOptions, build_report, render_report, write_report

from .conftest import PAYLOAD

SCRIPT_BLOCK = re.compile(r'<script type="application/json" id="([^"]+)">(.*?)</script>', re.S)


def blocks_of(page: str) -> dict[str, str]:
    return dict(SCRIPT_BLOCK.findall(page))


def main_payload(page: str) -> dict[str, Any]:
    """The report's data: JSON the tests index by the keys the page's script reads."""
    payload: dict[str, Any] = json.loads(blocks_of(page)["assay-data"])
    return payload


def first_chunk(page: str, example_set: Any) -> list[dict[str, Any]]:
    """The details of the first chunk of a plain-JSON example set, shared texts put back."""
    blocks = blocks_of(page)
    details: list[dict[str, Any]] = json.loads(blocks[example_set["chunk_ids"][0]])
    texts = [t for k in example_set["text_chunk_ids"] for t in json.loads(blocks[k])]
    for detail in details:
        for section in detail["sections"]:
            for node in [section, *section.get("items", [])]:
                if "text_ref" in node:
                    node["text"] = texts[node.pop("text_ref")]
    return details


# ---------------------------------------------------------------- escaping and page


@pytest.mark.parametrize(
    "text", [PAYLOAD, "</SCRIPT >", "<!--<script>", "a\u2028b\u2029c", "&lt;", "]]>"]
)
def test_embedded_json_cannot_close_its_block(text: str) -> None:
    embedded = embed_json({"t": text, "nested": [text]})
    assert not set("<>&\u2028\u2029") & set(embedded)
    assert json.loads(embedded) == {"t": text, "nested": [text]}


def test_non_finite_numbers_become_strings_json_parse_accepts() -> None:
    embedded = embed_json({"a": float("nan"), "b": [float("inf")], "c": 1.5})
    assert json.loads(embedded) == {"a": "NaN", "b": ["Infinity"], "c": 1.5}
    assert "NaN," not in embedded.replace('"NaN"', "")


def test_page_script_never_writes_markup() -> None:
    for forbidden in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert forbidden not in SCRIPT


def test_csp_hashes_match_the_inline_script_and_style(judge_run: Path) -> None:
    page = render_report([judge_run])
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    style = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert script == [SCRIPT] and style == [STYLE]
    policy = content_security_policy()
    assert f'http-equiv="Content-Security-Policy" content="{policy}"' in page
    for source in (SCRIPT, STYLE):
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert "default-src 'none'" in policy and "img-src data:" in policy


def test_no_external_resource_in_the_page(judge_run: Path) -> None:
    page = render_report([judge_run])
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(" not in STYLE


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (3, "3"),
        (2.0, "2"),
        (0.94285714, "0.9429"),
        (0.03125, "0.0313"),  # half away from zero, as JavaScript's toFixed
        (-0.03125, "-0.0313"),
        (1.5e-05, "1.50e-5"),
        (0.00001234, "1.23e-5"),
        (-0.00004, "-4.00e-5"),
        (True, "true"),
        (None, "—"),
    ],
)
def test_format_number(value: float | None, shown: str) -> None:
    assert format_number(value) == shown


def test_locate_ignores_case_spaces_and_dropped_citation_markers() -> None:
    text = "Paris is the capital [cite:e1]. It has  many\nbridges."
    assert locate(text, "Paris is the capital.") == (0, 20)
    start, end = locate(text, "it has many bridges.") or (0, 0)
    assert text[start:end] == "It has  many\nbridges"
    assert locate(text, "capital of France") is None
    assert locate(text, "   ") is None


def test_locate_ignores_spacing_around_punctuation() -> None:
    # ExpertQA answers space their commas; the claim text does not
    text = "Firms use cyber risk management  , a broad approach [cite:3]."
    start, end = locate(text, "Firms use cyber risk management, a broad approach.") or (0, 0)
    assert text[start:end] == "Firms use cyber risk management  , a broad approach"


def test_marks_count_utf16_units_like_javascript() -> None:
    text = "😀😀 grounded claim."
    marks, found = marks_for(text, [("grounded claim", "supported", "1", "e1")])
    assert found == [True]
    assert (marks[0].start, marks[0].end) == (5, 19)  # each emoji is two UTF-16 units


def test_a_sentence_the_answer_repeats_is_marked_at_each_place(tmp_path: Path) -> None:
    from assay.report.html import load_run
    from tests.verify.bench_fixtures import verify_only_records, write_jsonl

    record = verify_only_records(1)[0]
    claim = "Paris is the capital of France."
    record["answer"] = f"{claim} [cite:p1] {claim} [cite:p2]"
    run = tmp_path / "run"
    data = write_jsonl(tmp_path / "data.jsonl", [record])
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--verifier", "lexical", "--no-cache", "--no-progress", "--no-report"]
    assert main([*args, *flags, "--n-resamples", "20"]) == 0
    detail = load_run(run).sources[0].detail(0, None)
    answer = next(s for s in detail["sections"] if s.get("marks"))
    spans = [(m["start"], m["end"], m.get("ref")) for m in answer["marks"]]
    second = answer["text"].index(claim, 1)
    assert spans == [(0, len(claim), "p1"), (second, second + len(claim), "p2")]


def test_quote_with_ellipsis_marks_each_piece_in_order() -> None:
    output = "First part here. Middle. Last part there."
    marks, found = quote_marks(output, [("D1", "first part ... last part"), ("D2", "absent")])
    assert found == [True, False]
    assert [output[m.start : m.end] for m in marks] == ["First part", "Last part"]


def test_overlapping_quotes_are_all_marked() -> None:
    output = "A hash map stores pairs.\n- Lookup is fast."
    marks, found = quote_marks(output, [("D3", "stores"), ("D4", "map stores pairs. - Lookup is")])
    assert found == [True, True]
    shown = [(output[m.start : m.end], m.title) for m in marks]
    assert shown == [
        ("map ", "evidence 2"),
        ("stores", "evidence 1, 2"),
        (" pairs.\n- Lookup is", "evidence 2"),
    ]


def test_at_path() -> None:
    assert at_path({"a": {"b": 2}}, "a.b") == 2
    assert at_path({"a": {"b": 2}}, "a.c") is None


# ---------------------------------------------------------------- binding to real runs


def test_judge_report_binds_summary_and_archives(judge_run: Path) -> None:
    summary = json.loads((judge_run / "summary.json").read_text())
    payload, _ = build_report([judge_run], ReportOptions())
    run = payload.runs[0]
    assert run.kind == "judge"
    assert run.reproducibility[1].value == summary["fingerprint"]
    for m in run.metrics:
        assert m.value == at_path(summary, m.path)
    titles = [t.title for t in run.tables]
    assert any(t.startswith("Scores per target x variant x dimension") for t in titles)
    assert "Self-judge vs cross-judge (self-preference)" in titles
    valid, invalid = run.example_sets
    assert len(valid.rows) == summary["counts"]["valid"]
    assert len(valid.rows) + len(invalid.rows) == summary["counts"]["records"]
    assert {p.name for p in run.plots} == {Path(p).stem for p in summary["plots"]}
    assert "results_analysis.md" in [d.title for d in run.documents]


def test_score_table_cells_are_the_summary_numbers(judge_run: Path) -> None:
    summary = json.loads((judge_run / "summary.json").read_text())
    payload, _ = build_report([judge_run], ReportOptions())
    table = next(t for t in payload.runs[0].tables if t.title.startswith("Scores"))
    first = summary["scores"][0]
    key = [first["method"], first["judge_model"], first["target_model"], first["prompt_variant"]]
    row = next(r for r in table.rows if r[:4] == key)
    cell = row[table.columns.index(first["dimension"])]
    mean, low, high = (format_number(first[k]) for k in ("mean", "ci_low", "ci_high"))
    assert cell == f"{mean} [{low}, {high}]"


def test_invalid_evaluation_detail_has_flags_checks_and_raw_reply(judge_run: Path) -> None:
    page = render_report([judge_run])
    payload = main_payload(page)
    invalid = payload["runs"][0]["example_sets"][1]
    details = first_chunk(page, invalid)
    assert details, "the stub judges are expected to break the protocol sometimes"
    first = details[0]
    titles = [s.get("title") or s.get("table", {}).get("title") for s in first["sections"]]
    assert "Raw judge reply" in titles and "Checks that fired" in titles
    prompt = next(s for s in first["sections"] if s.get("title", "").startswith("Prompt sent"))
    assert prompt["collapsed"] and "--- system ---" in prompt["text"]
    assert any(f["label"] == "validity" and f["value"] == "invalid" for f in first["facts"])


def test_bench_report_binds_summary_buckets_and_examples(bench_run: Path) -> None:
    summary = json.loads((bench_run / "summary.json").read_text())
    payload, _ = build_report([bench_run], ReportOptions())
    run = payload.runs[0]
    assert run.kind == "bench"
    auroc = next(m for m in run.metrics if m.path == "detection.metrics.auroc.value")
    node = summary["detection"]["metrics"]["auroc"]
    assert (auroc.value, auroc.ci_low, auroc.ci_high) == (node["value"], node["low"], node["high"])
    buckets = next(t for t in run.tables if t.title == "Failure buckets")
    assert {r[0] for r in buckets.rows} == set(summary["buckets"])
    assert len(run.example_sets[0].rows) == summary["counts"]["results"]
    assert [p.name for p in run.plots] == [
        "calibration",
        "pr_curve",
        "roc_curve",
        "coverage_accuracy",
    ]


def test_bench_detail_marks_claims_and_links_evidence(bench_run: Path) -> None:
    page = render_report([bench_run])
    example_set = main_payload(page)["runs"][0]["example_sets"][0]
    details = first_chunk(page, example_set)
    detail = details[0]
    answer = next(s for s in detail["sections"] if s.get("title", "").startswith("Selected"))
    claims = next(s for s in detail["sections"] if s["type"] == "claims")
    evidence = next(s for s in detail["sections"] if s["type"] == "evidence")
    assert answer["marks"] and claims["items"] and evidence["items"]
    ids = {e["evidence_id"] for e in evidence["items"]}
    assert all(m["ref"] in ids for m in answer["marks"] if "ref" in m)
    assert {m["cls"] for m in answer["marks"]} <= {"supported", "unsupported", "uncertain"}


def test_best_of_n_detail_lists_candidates(best_of_n_run: Path) -> None:
    page = render_report([best_of_n_run])
    example_set = main_payload(page)["runs"][0]["example_sets"][0]
    details = first_chunk(page, example_set)
    tables = [s["table"] for d in details for s in d["sections"] if s["type"] == "table"]
    candidates = [t for t in tables if t["title"].startswith("Candidates")]
    assert candidates and len(candidates[0]["rows"]) == 3


def test_large_runs_use_gzip_chunks_and_cut_texts_to_the_budget(bench_run: Path) -> None:
    options = ReportOptions(max_bytes=260_000, gzip_above_bytes=0, chunk_rows_gzip=16)
    page = render_report([bench_run], options)
    example_set = main_payload(page)["runs"][0]["example_sets"][0]
    assert example_set["chunk_encoding"] == "gzip" and example_set["rows_block"]
    assert example_set["truncated_to"] is not None
    chunk = blocks_of(page)[example_set["chunk_ids"][0]]
    details = json.loads(gzip.decompress(base64.b64decode(chunk)))
    assert len(details) == 16
    rows = json.loads(gzip.decompress(base64.b64decode(blocks_of(page)[example_set["rows_block"]])))
    assert len(rows) == example_set["row_count"]


def test_payload_text_is_only_ever_escaped_in_the_file(bench_run: Path, judge_run: Path) -> None:
    for run in (bench_run, judge_run):
        page = render_report([run])
        assert "window.__pwned" not in page.split("<script>")[-1]
        assert "<script>window.__pwned" not in page
        assert "<img src=x" not in page


def test_comparison_names_runs_apart(bench_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp.html"
    assert main(["report", str(bench_run), str(bench_run), "--out", str(out)]) == 0
    names = [r["name"] for r in main_payload(out.read_text())["runs"]]
    assert names == ["run", "run (2)"]


def test_write_report_default_path_and_cli(
    judge_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert write_report(judge_run) == judge_run / "report.html"
    assert main(["report", str(judge_run)]) == 0
    assert "report.html" in capsys.readouterr().out


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no run.json" in capsys.readouterr().err
    assert main(["report", str(tmp_path), str(tmp_path)]) == 2
    assert "--out" in capsys.readouterr().err
    with pytest.raises(InputError):
        write_report(tmp_path / "missing")


def test_broken_run_json_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(InputError, match=r"run\.json"):
        write_report(tmp_path)


def test_across_runs_table_pairs_examples_by_id(bench_run: Path, critique_run: Path) -> None:
    payload, _ = build_report([bench_run, critique_run], ReportOptions())
    (across,) = payload.across_runs
    results = [
        {r["id"]: r for r in map(json.loads, (run / "results.jsonl").open())}
        for run in (bench_run, critique_run)
    ]
    assert across.row_count == len(results[0])
    keys = [c.key for c in across.columns]
    for row in across.rows:
        first, second = (table[str(row[0])] for table in results)
        assert row[keys.index("p_error_0")] == first["verifier_score"]
        assert row[keys.index("p_error_1")] == second["verifier_score"]
        passes = {r["verifier_pass"] for r in (first, second)}
        expected = "disagree" if passes == {True, False} else None
        if expected:
            assert row[keys.index("agreement")] == expected


def test_no_across_runs_table_for_a_single_run(bench_run: Path) -> None:
    payload, _ = build_report([bench_run], ReportOptions())
    assert payload.across_runs == []


def test_texts_the_examples_repeat_are_stored_once(bench_run: Path) -> None:
    page = render_report([bench_run])
    example_set = main_payload(page)["runs"][0]["example_sets"][0]
    blocks = blocks_of(page)
    texts = [t for k in example_set["text_chunk_ids"] for t in json.loads(blocks[k])]
    results = [json.loads(line) for line in (bench_run / "results.jsonl").open()]
    evidence = [e["text"] for r in results for e in r["evidence"] if len(e["text"]) >= 40]
    assert len(set(texts)) == len(texts)
    assert set(evidence) <= set(texts) and len(texts) < len(evidence) / 2


def test_judge_coverage_table_is_summary_coverage(judge_run: Path) -> None:
    summary = json.loads((judge_run / "summary.json").read_text())
    payload, _ = build_report([judge_run], ReportOptions())
    table = next(t for t in payload.runs[0].tables if t.title == "Evaluation set coverage")
    shown = dict((str(k), v) for k, v in table.rows)
    coverage = summary["coverage"]
    assert shown["expected outputs"] == coverage["expected"]
    assert shown["aligned outputs"] == coverage["aligned"]
    assert shown["missing"] == sum(i["kind"] == "missing" for i in coverage["issues"])


def test_a_budget_too_small_for_what_is_never_cut_is_exceeded_with_a_warning(
    bench_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Texts are cut down to 40 characters; the tables and numbers are never cut, so a tiny
    --max-mb is exceeded, and report says so instead of exiting quietly."""
    out = tmp_path / "tiny.html"
    assert main(["report", str(bench_run), "--out", str(out), "--max-mb", "0.01"]) == 0
    err = capsys.readouterr().err
    assert out.stat().st_size > 10_000
    assert f"warning: {out} is over --max-mb 0.01: texts were cut to the shortest" in err
    assert main(["report", str(bench_run), "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["bench", "judge"])
def test_a_damaged_slices_file_costs_its_table_not_the_report(
    kind: str, bench_run: Path, judge_run: Path, tmp_path: Path
) -> None:
    import shutil

    run = shutil.copytree(bench_run if kind == "bench" else judge_run, tmp_path / "run")
    (run / "slices").mkdir(exist_ok=True)
    (run / "slices" / "meta.system.json").write_text('{"by": "meta.system", "slices": {"a": ')
    (run / "slices" / "meta.topic.json").write_text('{"by": "meta.topic", "slices": {"a": {}}}')
    payload, _ = build_report([run], ReportOptions())
    notes = payload.runs[0].notes
    assert any("meta.system.json: cannot read" in note for note in notes), notes
    assert any("meta.topic.json field 'slices.a." in note for note in notes), notes


def test_a_report_says_when_the_analysis_predates_evaluations_added_since(
    tmp_path: Path,
) -> None:
    """judge run after judge analyze (here: re-asks of the invalid replies) adds records the
    summary's tables do not count: the report says so, and says it no more once analysed."""
    questions = [
        {"question_id": q, "variants": {v: {"prompt": f"Answer {q} as {v}."} for v in "AB"}}
        for q in ("Q1", "Q2")
    ]
    outputs = [
        {"question_id": q, "prompt_variant": v, "target_model": "stub/a", "text": f"{q} {v}"}
        | {"output_id": f"{q}/{v}"}
        for q in ("Q1", "Q2")
        for v in "AB"
    ]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (tmp_path / "o.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))
    run = tmp_path / "run"
    args = ["judge", "run", "--questions", str(tmp_path / "q.jsonl")]
    args += ["--outputs", str(tmp_path / "o.jsonl"), "--judge", "stub/a", "--judge", "stub/b"]
    args += ["--mode", "both", "--seed", "2", "--out", str(run)]
    assert main(args) == 0
    assert main(["judge", "analyze", str(run), "--resamples", "50", "--no-plots"]) == 0
    assert main(["report", str(run)]) == 0
    assert "out of date" not in (run / "report.html").read_text(encoding="utf-8")
    before = json.loads((run / "summary.json").read_text())["counts"]
    assert before["invalid"] > 0  # seed 2: the stub judges give some invalid replies

    assert main([*args, "--judge-attempts", "3"]) == 0  # re-asks: new records in the archive
    assert main(["report", str(run)]) == 0
    page = (run / "report.html").read_text(encoding="utf-8")
    stale = re.search(
        r"summary.json is out of date: it counts (\d+) evaluation records, "
        r"the archive now holds (\d+)",
        page,
    )
    assert stale is not None and int(stale.group(1)) == before["records"]
    assert int(stale.group(2)) > before["records"]
    assert "`assay judge analyze RUN_DIR` updates them" in page

    assert main(["judge", "analyze", str(run), "--resamples", "50", "--no-plots"]) == 0
    assert main(["report", str(run)]) == 0
    assert "out of date" not in (run / "report.html").read_text(encoding="utf-8")


def _labels_file(path: Path) -> Path:
    rows = [
        {"question_id": q, "prompt_variant": v, "target_model": t, "dimension": "D1", "score": 2}
        for q in ("Q1", "Q2")
        for v in "AB"
        for t in ("stub/a", "stub/b")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_report_shows_the_agreement_with_labels_the_run_holds(
    judge_run: Path, tmp_path: Path
) -> None:
    import shutil

    run = shutil.copytree(judge_run, tmp_path / "run")
    payload, _ = build_report([run], ReportOptions())
    assert not [t for t in payload.runs[0].tables if t.title == "Agreement with labels"]
    labels = _labels_file(tmp_path / "labels.jsonl")
    assert main(["judge", "agreement", str(run), "--labels", str(labels), "--resamples", "50"]) == 0
    agreement = json.loads((run / "agreement.json").read_text())
    payload, _ = build_report([run], ReportOptions())
    (table,) = [t for t in payload.runs[0].tables if t.title == "Agreement with labels"]
    assert len(table.rows) == len(agreement["dimensions"]) > 0
    first = agreement["dimensions"][0]
    row = next(
        r
        for r in table.rows
        if r[:3] == [first["judge_model"], first["method"], "FORMAT_COMPLIANCE"]
    )
    assert row[5] == format_interval(Interval.model_validate(first["accuracy"]))
    assert f"labels: 8 from {labels}" in table.note

    (run / "agreement.json").write_text('{"labels_files": []}')
    payload, _ = build_report([run], ReportOptions())
    assert not [t for t in payload.runs[0].tables if t.title == "Agreement with labels"]
    notes = payload.runs[0].notes
    assert any(
        n.startswith(f"agreement with labels left out: {run / 'agreement.json'}") for n in notes
    )
