"""Results where users work: ``assay.load_run(DIR)`` and ``assay export RUN``.

A run directory becomes typed objects (:class:`BenchRun`, :class:`JudgeRun`,
:class:`RobustnessRun`, :class:`JudgeDrawsRun`) whose rows are flat dictionaries: one per
example of a bench run (or one per claim check), one per evaluation of a judge run (of each
draw's judge run, with its ``draw``), one per output of an instruction-robustness run (or one
per instruction verdict). A bench or judge row holds the ids, the labels and
scores, flags, the gold label and where it came from, the cost, and the record's ``meta``
flattened as ``meta.KEY`` columns. Rows go to CSV and JSONL with the standard library, and to
pandas and Parquet with the ``export`` extra.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError
from ..instructions.robustness import OutputCheck
from ..instructions.robustness_run import KIND as ROBUSTNESS_KIND
from ..instructions.robustness_run import VERDICTS_FILE, read_output_checks
from ..json_safe import displayable
from ..judge.archive import PROTOCOL_FILE, EvaluationRecord, iter_archive
from ..judge.draws import draw_runs
from ..judge.evaluations import final_evaluations
from ..runs import RUN_FILE, check_not_being_written, read_run_json
from ..verify.results import RESULTS_FILE, ResultRecord, iter_results
from ..verify.types import ClaimCheck
from ._html_common import read_json_file

Row = dict[str, Any]
ExportFormat = Literal["csv", "parquet", "jsonl"]
EXTRA_HINT = "install the extra: pip install 'assay[export]' (pandas and pyarrow)"


@dataclass
class BenchRun:
    """A verifier-benchmark run: its results (the current one per id) and summary."""

    path: Path
    results: list[ResultRecord]
    summary: dict[str, Any] = field(default_factory=dict)
    kind: Literal["bench"] = "bench"

    def rows(self, *, claims: bool = False) -> list[Row]:
        """One flat dict per result (``claims``: per claim check); docs/export.md lists the
        columns."""
        if claims:
            return [row for result in self.results for row in claim_rows(result)]
        return [example_row(result) for result in self.results]

    def to_pandas(self, *, claims: bool = False) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (needs the ``export`` extra)."""
        return _data_frame(self.rows(claims=claims))


@dataclass
class JudgeRun:
    """A judge run: every archived evaluation (all attempts) and the analysis summary."""

    path: Path
    records: list[EvaluationRecord]
    summary: dict[str, Any] = field(default_factory=dict)
    kind: Literal["judge"] = "judge"
    unreadable: list[str] = field(default_factory=list)  # where and why, left out of records

    def rows(self, *, claims: bool = False) -> list[Row]:
        """One flat dict per archived evaluation (every attempt; ``final`` marks the one the
        analysis uses). ``claims`` is for bench runs and changes nothing here."""
        finals = _final_keys(self.records)
        return [evaluation_row(r, finals) for r in self.records]

    def to_pandas(self, *, claims: bool = False) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (needs the ``export`` extra)."""
        return _data_frame(self.rows())


@dataclass
class RobustnessRun:
    """An instruction-robustness run (``assay instructions robustness --out``): every output's
    verdicts and the summary."""

    path: Path
    checks: list[OutputCheck]
    summary: dict[str, Any] = field(default_factory=dict)
    kind: Literal["robustness"] = "robustness"

    def rows(self, *, claims: bool = False) -> list[Row]:
        """One flat dict per output (``claims``: per instruction verdict)."""
        if claims:
            return [row for check in self.checks for row in instruction_rows(check)]
        return [output_row(check) for check in self.checks]

    def to_pandas(self, *, claims: bool = False) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (needs the ``export`` extra)."""
        return _data_frame(self.rows(claims=claims))


@dataclass
class JudgeDrawsRun:
    """A directory of judge runs, one per draw of the target outputs (``assay judge run
    --draws``): each draw's :class:`JudgeRun` and the summary of the draws together."""

    path: Path
    draws: list[JudgeRun]  # draw k at k-1
    summary: dict[str, Any] = field(default_factory=dict)
    kind: Literal["judge-draws"] = "judge-draws"

    def rows(self, *, claims: bool = False) -> list[Row]:
        """Every draw's :meth:`JudgeRun.rows`, each with ``draw`` (k of draw-k) first."""
        return [{"draw": _draw_number(run.path), **row} for run in self.draws for row in run.rows()]

    def to_pandas(self, *, claims: bool = False) -> Any:
        """:meth:`rows` as a ``pandas.DataFrame`` (needs the ``export`` extra)."""
        return _data_frame(self.rows())


def _draw_number(path: Path) -> int:
    return int(path.name.removeprefix("draw-"))


AnyRun = BenchRun | JudgeRun | RobustnessRun | JudgeDrawsRun


def load_run(path: Path | str) -> AnyRun:
    """The run in ``path``: a bench run (results.jsonl), a judge run (protocol.json), an
    instruction-robustness run (its run.json says so; verdicts.jsonl), or a directory of
    judge runs of repeated draws (``draw-K`` folders, each a judge run).

    A run that has not finished its first example or evaluation yet (stopped right after it
    started) is the run with none: its run.json names its kind. A run another assay process
    is still writing is refused with a RunError naming that process, as ``assay export``
    refuses it: what it has written so far is not the whole run.
    """
    run_dir = Path(path)
    check_not_being_written(run_dir)
    summary = _summary(run_dir)
    if (run_dir / RESULTS_FILE).is_file():
        return BenchRun(run_dir, list(iter_results(run_dir / RESULTS_FILE)), summary)
    if (run_dir / PROTOCOL_FILE).is_file():
        records, unreadable = [], []
        for item in iter_archive(run_dir):
            if item.record is None:
                unreadable.append(f"{item.where}: {item.error or 'unreadable'}"[:300])
            else:
                records.append(item.record)
        _warn_unreadable(run_dir, unreadable)
        return JudgeRun(run_dir, records, summary, unreadable=unreadable)
    if (read_run_json(run_dir) or {}).get("kind") == ROBUSTNESS_KIND:
        return RobustnessRun(run_dir, read_output_checks(run_dir / VERDICTS_FILE), summary)
    if draws := draw_runs(run_dir):
        judged = [load_run(draw) for draw in draws]
        return JudgeDrawsRun(run_dir, [run for run in judged if isinstance(run, JudgeRun)], summary)
    return _run_without_output(run_dir, summary)


def _run_without_output(run_dir: Path, summary: dict[str, Any]) -> BenchRun | JudgeRun:
    """A directory with neither results.jsonl nor protocol.json: a bench or judge run that
    stopped before it wrote either is known by its run.json, and holds nothing yet."""
    kind = (read_run_json(run_dir) or {}).get("kind")
    if kind == "bench":
        return BenchRun(run_dir, [], summary)
    if kind == "judge":
        return JudgeRun(run_dir, [], summary)
    if kind == "judge-draws":
        raise ConfigError(
            f"{run_dir}: the joint analysis of a judge run's repeats "
            "(`judge analyze --repeats-as-draws`), which holds no evaluations of its own",
            hint=f"export the judge run it was made from, {run_dir.parent}: its rows name each "
            "repeat",
        )
    if isinstance(kind, str):
        raise ConfigError(
            f"{run_dir}: holds a {kind!r} run ({RUN_FILE}); load_run and export read bench, "
            "judge and instruction-robustness runs",
            hint="give the --out_dir of `assay bench run` or the --out of `assay judge run` or "
            "`assay instructions robustness`",
        )
    raise ConfigError(
        f"{run_dir}: not a run directory (no {RESULTS_FILE}, {PROTOCOL_FILE} or {RUN_FILE})",
        hint="give the --out_dir of `assay bench run` or the --out of `assay judge run`",
    )


def _warn_unreadable(run_dir: Path, unreadable: list[str]) -> None:
    """A damaged archive must not pass for a smaller run: say how many evaluations are left
    out and where the first ones are (``JudgeRun.unreadable`` lists them all)."""
    if not unreadable:
        return
    first = "; ".join(unreadable[:3])
    warnings.warn(
        f"{run_dir}: {len(unreadable)} archived evaluation(s) could not be read and are left "
        f"out of records (`assay judge validate {run_dir}` checks the archive): {first}",
        UnreadableEvaluations,
        stacklevel=3,
    )


class UnreadableEvaluations(UserWarning):
    """Some archived evaluations of a judge run could not be read."""


def export_run(
    run: AnyRun,
    fmt: ExportFormat,
    out: Path | None,
    *,
    claims: bool = False,
    spreadsheet: bool = False,
) -> tuple[Path | None, int]:
    """Write the run's rows as ``fmt`` to ``out`` (CSV and JSONL: standard output when
    ``out`` is None). Returns where it went and the number of rows. ``spreadsheet``: CSV
    text cells a spreadsheet would run as formulas are written as text (:func:`rows_to_csv`)."""
    rows = run.rows(claims=claims)
    if fmt == "parquet":
        if out is None:
            raise ConfigError("--format parquet needs --out FILE (it is a binary format)")
        frame = _data_frame([_displayable_row(row) for row in rows])
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            frame.to_parquet(out, index=False)
        except ImportError:
            raise ConfigError("pyarrow is not installed", hint=EXTRA_HINT) from None
        return out, len(rows)
    text = displayable(rows_to_csv(rows, spreadsheet)) if fmt == "csv" else rows_to_jsonl(rows)
    if out is None:
        print(text, end="")
        return None, len(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out, len(rows)


# ---------------------------------------------------------------- robustness rows


def output_row(check: OutputCheck) -> Row:
    followed = [r.instruction_id for r in check.results if r.followed]
    return {
        "question_id": check.question_id,
        "prompt_variant": check.prompt_variant,
        "target_model": check.target_model,
        "draw": check.draw,
        "output_id": check.output_id,
        "source": check.source,
        "mode": check.mode,
        "follow_all_instructions": check.follow_all_instructions,
        "instructions": len(check.results),
        "instructions_followed": len(followed),
        "not_followed": " ".join(r.instruction_id for r in check.results if not r.followed),
        "prompt": check.prompt,
        "response": check.response,
    }


def instruction_rows(check: OutputCheck) -> Iterator[Row]:
    for index, result in enumerate(check.results):
        yield {
            "question_id": check.question_id,
            "prompt_variant": check.prompt_variant,
            "target_model": check.target_model,
            "draw": check.draw,
            "output_id": check.output_id,
            "mode": check.mode,
            "instruction_index": index,
            "instruction_id": result.instruction_id,
            "kwargs": json.dumps(result.kwargs, ensure_ascii=False, sort_keys=True),
            "followed": result.followed,
            "reason": result.reason,
        }


# ---------------------------------------------------------------- bench rows


def example_row(result: ResultRecord) -> Row:
    checks = result.claim_checks
    labels = [c.label for c in checks]
    row: Row = {
        "id": result.id,
        "cluster": result.cluster,
        "pattern": result.pattern,
        "mode": result.mode,
        "gold_error": result.gold_error,
        "label_source": result.label_source,
        "error_type": result.error_type,
        "failure_bucket": result.failure_bucket,
        "p_error": result.verifier_score,
        "verifier_pass": result.verifier_pass,
        "flagged": None if result.verifier_pass is None else not result.verifier_pass,
        "threshold": result.threshold,
        "score_method": result.score_method,
        "scored": result.scored,
        "complete": result.complete,
        "failure": result.failure,
        "revision_used": result.revision_used,
        "selected_index": result.selected_index,
        "candidates": len(result.candidates),
        "claims": len(checks),
        "claims_supported": labels.count("supported"),
        "claims_unsupported": labels.count("unsupported"),
        "claims_uncertain": labels.count("uncertain"),
        "claim_check_failures": sum(c.failure is not None for c in checks),
        "citations": " ".join(result.citations),
        "unknown_citations": " ".join(result.unknown_citations),
        "gold_citations": " ".join(result.gold_citations),
        **_usage_columns(result),
        "question": result.question,
        "selected_answer": result.selected_answer,
    }
    return {**row, **flatten_meta(result.meta)}


def claim_rows(result: ResultRecord) -> Iterator[Row]:
    meta = flatten_meta(result.meta)
    for index, check in enumerate(result.claim_checks):
        yield {
            "id": result.id,
            "claim_index": index,
            "claim": check.claim.text,
            "cited_ids": " ".join(check.claim.cited_ids),
            **_check_columns(check),
            "gold_error": result.gold_error,
            "label_source": result.label_source,
            "error_type": result.error_type,
            "p_error": result.verifier_score,
            **meta,
        }


def _check_columns(check: ClaimCheck) -> Row:
    second = check.second_opinion
    return {
        "label": check.label,
        "p_supported": check.p_supported,
        "probability_source": check.probability_source,
        "checker": check.checker,
        "supporting_ids": " ".join(check.supporting_ids),
        "cited_supporting_ids": " ".join(check.cited_supporting_ids),
        "failure": check.failure,
        "check_ms": check.check_ms,
        "second_opinion_p_supported": None if second is None else second.p_supported,
        # a word never holds "; " (the checker's tokens are letters, digits, ' and -)
        "missing_words": "; ".join(check.missing_words),
    }


def _usage_columns(result: ResultRecord) -> Row:
    usage = result.usage
    return {
        "calls": usage.calls,
        "cache_hits": usage.cache_hits,
        "call_failures": usage.failures,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "latency_ms": usage.latency_ms,
        "check_ms": _summed_check_ms(result),
    }


def _summed_check_ms(result: ResultRecord) -> float | None:
    """The answer's timed claim checks' wall times, summed; None when none was timed."""
    times = [c.check_ms for c in result.claim_checks if c.check_ms is not None]
    return sum(times) if times else None


# ---------------------------------------------------------------- judge rows


def evaluation_row(record: EvaluationRecord, finals: set[tuple[Any, ...]]) -> Row:
    c = record.classification
    call, failure = record.call, record.call_failure
    row: Row = {
        "question_id": record.question_id,
        "prompt_variant": record.prompt_variant,
        "target_model": record.target_model,
        "output_id": record.output_id,
        "judge_model": record.judge_model,
        "method": record.method,
        "attempt": record.attempt,
        "final": (*record.work_key, record.attempt) in finals,
        "valid": record.valid,
        "flags": " ".join(record.flags),
        "verdict": c.verdict,
        "overall_score": c.overall_score,
        **{f"score.{k}": v for k, v in sorted((c.scores or {}).items())},
        "decoding_mode": record.decoding_mode,
        "call_failure": None if failure is None else failure.kind,
        "prompt_tokens": 0 if call is None else call.prompt_tokens,
        "completion_tokens": 0 if call is None else call.completion_tokens,
        "latency_s": None if call is None else call.latency_s,
        "cached": None if call is None else call.cached,
        # what served the reply, as the server named it (empty when it named nothing)
        "served_model": None if call is None else call.reported_model,
        "served_fingerprint": None if call is None else call.system_fingerprint,
        "fingerprint": record.fingerprint,
    }
    return {**row, **flatten_meta(record.sample_meta)}


def _final_keys(records: Sequence[EvaluationRecord]) -> set[tuple[Any, ...]]:
    """(work key, attempt) of each sample x judge's final evaluation, by the analysis's rule
    (its valid attempt if there is one, else its last)."""
    return {(*r.work_key, r.attempt) for r in final_evaluations(records)}


# ---------------------------------------------------------------- writing


def flatten_meta(meta: Mapping[str, Any] | None, prefix: str = "meta") -> Row:
    """``{"a": {"b": 1}}`` as ``{"meta.a.b": 1}``; lists stay as JSON text."""
    flat: Row = {}
    for key, value in (meta or {}).items():
        name = f"{prefix}.{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_meta(value, name))
        elif isinstance(value, list):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def columns_of(rows: Iterable[Row]) -> list[str]:
    """Every column, in first-seen order (meta columns differ between records)."""
    return list(dict.fromkeys(key for row in rows for key in row))


def rows_to_csv(rows: Sequence[Row], spreadsheet: bool = False) -> str:
    """The rows as CSV, values as they are (for pandas, and to compare with results.jsonl);
    ``spreadsheet``: a text cell that a spreadsheet would run as a formula gets a leading
    apostrophe, which spreadsheets show as text (the report's CSV download does the same)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns_of(rows), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        cells = {k: "" if v is None else v for k, v in row.items()}
        if spreadsheet:
            cells = {k: as_spreadsheet_text(v) for k, v in cells.items()}
        writer.writerow(cells)
    return buffer.getvalue()


_FORMULA_START = re.compile(r"[=+\-@\t\r]")
_NUMBER_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def as_spreadsheet_text(value: object) -> object:
    """A string a spreadsheet would run as a formula (it starts with = + - @, a tab or a
    return, and is not a number), with a leading apostrophe; anything else unchanged."""
    if isinstance(value, str) and _FORMULA_START.match(value) and not _NUMBER_TEXT.fullmatch(value):
        return "'" + value
    return value


def rows_to_jsonl(rows: Sequence[Row]) -> str:
    return "".join(_json_line(row) + "\n" for row in rows)


def _json_line(row: Row) -> str:
    """The row as JSON; a row holding a lone surrogate (a model may answer with one) is
    written with non-ASCII characters escaped, which keeps it exactly."""
    line = json.dumps(row, ensure_ascii=False)
    return line if displayable(line) is line else json.dumps(row, ensure_ascii=True)


def _displayable_row(row: Row) -> Row:
    return {k: displayable(v) if isinstance(v, str) else v for k, v in row.items()}


def _data_frame(rows: Sequence[Row]) -> Any:
    try:
        pandas = importlib.import_module("pandas")
    except ImportError:
        raise ConfigError("pandas is not installed", hint=EXTRA_HINT) from None
    return pandas.DataFrame.from_records(list(rows), columns=columns_of(rows))


def _summary(run_dir: Path) -> dict[str, Any]:
    """summary.json, empty when the run has none; a damaged one is an InputError naming it."""
    path = run_dir / "summary.json"
    return read_json_file(path) if path.is_file() else {}
