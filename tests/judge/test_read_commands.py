"""`judge analyze` and `judge validate` on real run directories: they refuse a run being
written (its lock), and analyze checks every option and file before it writes anything."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main

from .helpers import QUESTIONS_JSONL, write_manifest, write_questions

HOLD = """
import sys, time
from pathlib import Path
from assay.runs import RunDirLock
lock = RunDirLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def contents(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A finished stub judge run whose questions carry a meta key with '/' in it."""
    rows = [{**question, "meta": {"sub/x": f"v{i}"}} for i, question in enumerate(QUESTIONS_JSONL)]
    questions = write_questions(tmp_path / "q.jsonl", rows)
    outputs = write_manifest(tmp_path / "m.jsonl", ["stub/a", "stub/b"])
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(outputs)]
    command += ["--judge", "stub/a", "--judge", "stub/b", "--out", str(tmp_path / "run")]
    # The stub's draw is seeded by the request, which carries the date: a fixed date keeps the
    # run's records (how many are valid, in which shard) the same on every day.
    command += ["--date", "2026-11-24"]
    assert run_cli(command, capsys)[0] == 0
    return tmp_path / "run"


@pytest.fixture
def held(run: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run's lock, as `judge run` does while it writes."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "locked"
    yield process
    process.kill()
    process.wait()


@pytest.mark.parametrize("command", [["analyze", "--no-plots", "--no-report"], ["validate"]])
def test_a_run_being_written_is_refused_with_the_locks_message(
    run: Path,
    held: subprocess.Popen[str],
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    before = contents(run)
    code, out, err = run_cli(["judge", command[0], str(run), *command[1:]], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"error: {run} is being written by another assay process: pid {held.pid}" in err
    assert contents(run) == before  # no summary.json from a partial archive

    held.kill()
    held.wait()
    code, out, _ = run_cli(["judge", command[0], str(run), *command[1:]], capsys)
    assert code == 0, out
    assert not (run / ".assay.lock").exists()  # released


def test_agreement_on_a_run_being_written_is_refused_with_the_locks_message(
    run: Path,
    held: subprocess.Popen[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`judge agreement` read a run another process was writing and wrote agreement.json
    from the records archived so far, exit 0; it takes the run's lock as analyze does."""
    labels = tmp_path / "labels.csv"
    labels.write_text("question_id,prompt_variant,target_model,dimension,score\nQ1,A,stub/a,D1,2\n")
    before = contents(run)
    code, out, err = run_cli(["judge", "agreement", str(run), "--labels", str(labels)], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"error: {run} is being written by another assay process: pid {held.pid}" in err
    assert contents(run) == before  # no agreement.json from a partial archive

    held.kill()
    held.wait()
    code, out, err = run_cli(["judge", "agreement", str(run), "--labels", str(labels)], capsys)
    assert code == 0, err
    assert (run / "agreement.json").is_file() and not (run / ".assay.lock").exists()


def test_validate_counts_add_up_and_name_both_copies_of_an_attempt(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With an unreadable line the counts did not add up (the line was counted among the
    evaluations, but neither valid nor invalid, and not counted apart), and an attempt
    archived twice was named by its second copy only."""
    shard = next(run.glob("*_evaluations/cross_judge/stub--a/stub--b/part-00000.jsonl"))
    lines = shard.read_text().splitlines(keepends=True)
    assert len(lines) >= 3
    lines[1] = "{" + lines[1]  # a line that no longer parses
    shard.write_text("".join([*lines, lines[0]]))  # and the first attempt archived again
    code, out, _ = run_cli(["judge", "validate", str(run)], capsys)
    assert code == 1
    head = out.splitlines()[0]
    total, valid, invalid, unreadable = (
        int(head.split(f" {word}")[0].rsplit(" ", 1)[-1])
        for word in ("evaluations", "valid", "invalid", "unreadable")
    )
    assert unreadable == 1 and total == valid + invalid + unreadable
    twice = f"attempt archived twice: {shard}:{len(lines) + 1} (the same attempt as {shard}:1)"
    assert twice in out.splitlines()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--seed", "-1"], "error: --seed: must be 0 or more, got -1"),
        (["--resamples", "0"], "error: --resamples: must be 1 or more, got 0"),
        (["--resamples", "-3"], "error: --resamples: must be 1 or more, got -3"),
    ],
)
def test_a_bad_option_is_named_as_typed_before_anything_is_written(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text('models: {"stub/*": {input: 1, output: 2}}\n')
    before = contents(run)
    code, _, err = run_cli(
        ["judge", "analyze", str(run), "--prices", str(prices), *options], capsys
    )
    assert code == 2 and err.strip() == message
    assert contents(run) == before


def test_a_corrupt_coverage_report_is_named_before_anything_is_written(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run / "coverage.json").write_text("{not json")
    prices = tmp_path / "prices.yaml"
    prices.write_text('models: {"stub/*": {input: 1, output: 2}}\n')
    before = contents(run)
    code, _, err = run_cli(["judge", "analyze", str(run), "--prices", str(prices)], capsys)
    assert code == 2 and "Traceback" not in err and err.count("error:") == 1
    assert err.startswith(f"error: {run / 'coverage.json'} (the run's coverage report): ")
    assert "Invalid JSON" in err and "invalid setting" not in err
    assert contents(run) == before  # prices.json, summary.json: none written


def test_a_slice_key_with_a_slash_gets_a_safe_file_name(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["judge", "analyze", str(run), "--by", "meta.sub/x", "--no-plots", "--no-report"], capsys
    )
    assert code == 0, err
    [written] = (run / "slices").iterdir()
    assert written.name.startswith("meta.sub_x-") and written.suffix == ".json"
    assert f"wrote {written}" in out
    payload = json.loads(written.read_text())
    assert payload["by"] == "meta.sub/x" and sorted(payload["slices"]) == ["v0", "v1"]
    code, _, _ = run_cli(["judge", "analyze", str(run), "--by", "meta.sub/x"], capsys)
    assert code == 0  # the report reads the slices back
    assert "Slices by meta.sub/x" in (run / "report.html").read_text()


@pytest.fixture
def read_only(run: Path) -> Iterator[Path]:
    """The run on a read-only file system (a bind mount remounted read-only; as root, the
    only way a write is refused) or, for another user, with its folders not writable."""
    import os
    import shutil

    if os.geteuid() != 0:
        folders = [run, *(p for p in run.rglob("*") if p.is_dir())]
        for folder in folders:
            folder.chmod(0o555)
        yield run
        for folder in folders:
            folder.chmod(0o755)
        return
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("a read-only bind mount cannot be made on this machine")
    steps = [[mount, "--bind", str(run), str(run)], [mount, "-o", "remount,bind,ro", str(run)]]
    for step in steps:
        if subprocess.run(step, capture_output=True).returncode != 0:
            subprocess.run(["umount", str(run)], capture_output=True)
            pytest.skip("a read-only bind mount cannot be made on this machine")
    try:
        yield run
    finally:
        subprocess.run(["umount", str(run)], check=True)


def test_a_run_that_cannot_be_locked_is_validated_with_a_note(
    read_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run on read-only storage (an archive shared with a team) cannot be locked, and no
    process of this user can be writing it: validate (and agreement, writing elsewhere) reads
    it, and says it took no lock; analyze, which writes its summary into the run, names the
    file it cannot write."""
    before = contents(read_only)
    code, out, err = run_cli(["judge", "validate", str(read_only)], capsys)
    assert code == 0 and out.rstrip().endswith("consistent")
    assert err.startswith(f"note: {read_only} cannot be locked (")
    labels = read_only.parent / "labels.csv"
    labels.write_text("question_id,prompt_variant,target_model,dimension,score\nQ1,A,stub/a,D1,2\n")
    agreement = read_only.parent / "agreement.json"
    command = ["judge", "agreement", str(read_only), "--labels", str(labels)]
    command += ["--out", str(agreement)]
    code, _, err = run_cli(command, capsys)
    assert code == 0 and agreement.is_file()
    assert err.startswith(f"note: {read_only} cannot be locked (")
    code, _, err = run_cli(["judge", "analyze", str(read_only), "--no-plots"], capsys)
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1].startswith(f"error: {read_only / 'summary.json'}: ")
    assert contents(read_only) == before


def test_a_rerun_of_finished_work_keeps_the_reported_models_and_the_report_sums_sessions(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rerun makes no call: run.json's usage is that session's (zeros), but the model names
    the replies reported stay, and the report shows the counts of every session."""
    first = json.loads((run / "run.json").read_text())
    requests = sum(u["calls"] + u["cache_hits"] for u in first["usage"].values())
    assert requests > 0 and all(m["reported"] for m in first["models"].values())
    command = ["judge", "run", "--questions", str(tmp_path / "q.jsonl")]
    command += ["--outputs", str(tmp_path / "m.jsonl"), "--judge", "stub/a", "--judge", "stub/b"]
    assert run_cli([*command, "--out", str(run)], capsys)[0] == 0
    again = json.loads((run / "run.json").read_text())
    assert sum(u["calls"] + u["cache_hits"] for u in again["usage"].values()) == 0
    assert again["models"] == first["models"]  # was: "reported": ""

    from assay.report._html_common import reproducibility

    facts = {fact.label: fact.value for fact in reproducibility(again, run)}
    assert "calls=0" in str(facts["usage, last session"])
    summed = str(facts["usage, all sessions (counts)"])
    for judge in ("stub/a", "stub/b"):
        usage = first["usage"][judge]
        assert f"cache_hits={usage['cache_hits']}, calls={usage['calls']}" in summed


def test_two_judges_that_share_no_sample_get_agreement_rows_that_say_so(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cross-judging with two judges that are also the targets: each judges only the other's
    outputs, so no sample has two judgments. The scope is reported as undefined with the
    reason (it was left out of summary.json without a word)."""
    assert run_cli(["judge", "analyze", str(run), "--no-plots", "--no-report"], capsys)[0] == 0
    rows = json.loads((run / "summary.json").read_text())["agreement"]
    cross = [row for row in rows if row["scope"] == "cross_only"]
    assert len(cross) == 2 * 5  # kappa and alpha for the four dimensions and overall_score
    assert all(row["n_units"] == 0 and row["value"] is None for row in cross)
    assert all(row["note"].startswith("undefined: no sample validly judged") for row in cross)
