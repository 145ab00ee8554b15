"""``assay import NAME SRC --out FILE``: a public benchmark file -> assay's input format."""

from __future__ import annotations

import argparse
import contextlib
import os
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..data.importers import (
    IFEVAL_FOLDER,
    IFEVAL_LAYOUT_NAMES,
    IMPORTERS,
    GroundedImport,
    GroundedImporter,
    IFEvalFiles,
    IFEvalSources,
    Importer,
    ImportReport,
    JudgeSetImporter,
    LabelField,
    LmEvalImport,
    LogImporter,
    TableImporter,
    TableMapping,
    refuse_empty,
)
from ..data.meta import keep_where, parse_where
from ..data.questions import MANIFEST_NAME
from ..errors import ConfigError
from ..runs import JsonlWriter
from ._common import check_out_file, check_run_dir_parents

# The outputs manifest is named as the judge's loader expects, so `--outputs DIR` also works.
JUDGE_SET_FILES = {
    "questions": "questions.jsonl",
    "outputs": MANIFEST_NAME,
    "labels": "labels.jsonl",
}
LOG_FILES = ("questions", "outputs")  # what a log importer writes: no labels


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import",
        help="convert a public benchmark file into assay's input format",
        description="Convert one split of a public benchmark into assay's input format. "
        "Run `assay import NAME --help` for the label convention of each dataset.",
    )
    names = parser.add_subparsers(dest="dataset", metavar="NAME", required=True)
    for importer in IMPORTERS.values():
        if isinstance(importer, GroundedImporter):
            _register_grounded(names, importer)
        elif isinstance(importer, TableImporter):
            _register_table(names, importer)
        elif isinstance(importer, LogImporter):
            _register_logs(names, importer)
        else:
            _register_judge_set(names, importer)


def _dataset_parser(names: Any, importer: Importer) -> Any:
    metavar = importer.metavar if isinstance(importer, LogImporter) else "SRC"
    parser = names.add_parser(
        importer.name,
        help=importer.summary,
        description=_paragraphs(
            f"{importer.summary}.",
            f"{metavar}: {importer.source}.",
            f"Labels: {importer.label_convention}",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if isinstance(importer, LogImporter):
        parser.add_argument("src", type=Path, nargs="+", metavar=metavar, help=importer.source)
    else:
        parser.add_argument("src", type=Path, metavar="SRC", help=importer.source)
    return parser


def _register_grounded(names: Any, importer: GroundedImporter) -> None:
    parser = _dataset_parser(names, importer)
    _add_out_and_where(parser)
    if importer.convert_labelled is not None:
        _add_label_options(parser)
    parser.set_defaults(handler=_import_grounded, importer=importer)


def _register_table(names: Any, importer: TableImporter) -> None:
    parser = _dataset_parser(names, importer)
    _add_out_and_where(parser)
    _add_field_options(parser)
    _add_label_options(parser)
    parser.set_defaults(handler=_import_grounded, importer=importer)


def _add_out_and_where(parser: Any) -> None:
    """The output options every grounded-QA import takes."""
    parser.add_argument(
        "--out", type=Path, required=True, help="grounded-QA JSONL to write (replaced if it exists)"
    )
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="meta.KEY=VALUE",
        help="keep only records whose meta has this value (repeat: the same key keeps any of "
        "its values, different keys must all match), e.g. --where meta.dataset=Lfqa",
    )


def _add_field_options(parser: Any) -> None:
    """The fields of a table that hold each part of a record: a key, dotted for a nested one."""
    fields = parser.add_argument_group("fields of each row (a key, dotted for a nested one)")
    fields.add_argument(
        "--answer", required=True, metavar="FIELD", help="the answer to verify, e.g. response"
    )
    fields.add_argument(
        "--evidence",
        required=True,
        metavar="FIELD",
        help="the passages the answer should be grounded in: a list of strings or of objects "
        "with a 'text' (and 'id', 'title', 'source'), or one string; in CSV a cell holding a "
        "list as JSON or as Python's text of it",
    )
    fields.add_argument("--question", metavar="FIELD", help="the question (default: none, '')")
    fields.add_argument(
        "--reference",
        metavar="FIELD",
        help="a reference answer, as gold_answer (default: none, '')",
    )
    fields.add_argument(
        "--id", metavar="FIELD", help="the record id (default: a hash of question and answer)"
    )
    fields.add_argument(
        "--group",
        metavar="FIELD",
        help="the cluster of the bootstrap (default: the question)",
    )


def _add_label_options(parser: Any) -> None:
    """A dataset without labels of its own is labelled by a boolean field the user names."""
    labels = parser.add_mutually_exclusive_group()
    labels.add_argument(
        "--error-field",
        metavar="PATH",
        help="a boolean field of each row, true = the output has a grounding error "
        "(gold_error), dotted for a nested one, e.g. additional_metadata.hallucinated",
    )
    labels.add_argument(
        "--grounded-field",
        metavar="PATH",
        help="a boolean field of each row, true = the output is grounded, e.g. "
        "additional_metadata.faithful",
    )
    parser.add_argument(
        "--error-value",
        metavar="VALUE",
        action="append",
        help="with --error-field: the field holds categories, and this one (compared as text, "
        "ignoring case, e.g. hallucinated) means a grounding error; any other value means "
        "grounded. Give it again for each value that means an error (--error-value partial "
        "--error-value unsupported)",
    )


def _register_judge_set(names: Any, importer: JudgeSetImporter) -> None:
    parser = _dataset_parser(names, importer)
    parser.add_argument(
        "--responses", type=Path, required=True, help="the model's responses (prompt, response)"
    )
    parser.add_argument(
        "--labels", type=Path, required=True, help="IFEval's eval_results_strict.jsonl"
    )
    parser.add_argument("--loose-labels", type=Path, help="IFEval's eval_results_loose.jsonl")
    parser.add_argument(
        "--target-model",
        help="name of the model that wrote the responses (default: from the responses file "
        "name, input_response_data_<name>.jsonl)",
    )
    parser.add_argument(
        "--no-constraints",
        action="store_true",
        help="do not list the instructions as the prompt variant's constraints",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        help=f"directory to write {', '.join(JUDGE_SET_FILES.values())} into",
    )
    parser.set_defaults(handler=_import_judge_set, importer=importer)


def _register_logs(names: Any, importer: LogImporter) -> None:
    parser = _dataset_parser(names, importer)
    files = ", ".join(JUDGE_SET_FILES[kind] for kind in LOG_FILES)
    parser.add_argument("--out", type=Path, required=True, help=f"directory to write {files} into")
    parser.set_defaults(handler=_import_logs, importer=importer)


def _paragraphs(*texts: str) -> str:
    return "\n\n".join(textwrap.fill(text, width=88) for text in texts)


def _import_grounded(args: argparse.Namespace) -> int:
    importer: GroundedImporter | TableImporter = args.importer
    _refuse_overwriting_source(args.src, args.out)
    check_out_file(args.out)
    where = parse_where(args.where)
    result = _convert_grounded(importer, args)
    refuse_empty(result.report)
    records = keep_where(result.records, lambda r: r.meta, where) if where else result.records
    write_jsonl(args.out, records)
    for line in result.report.lines():
        print(line)
    if where:
        print(f"kept {len(records)} of {len(result.records)} records {_where_text(where)}")
    print(f"wrote {len(records)} records to {args.out}")
    return 0


def _convert_grounded(
    importer: GroundedImporter | TableImporter, args: argparse.Namespace
) -> GroundedImport:
    """The import, labelled by the field --error-field or --grounded-field names, if one does
    (only the table importer and importers with ``convert_labelled`` have the options); a
    table by the fields its options name."""
    label = _label_field(args)
    if isinstance(importer, TableImporter):
        return importer.convert(args.src, _table_mapping(args), label)
    if label is None or importer.convert_labelled is None:
        return importer.convert(args.src)
    return importer.convert_labelled(args.src, label)


def _table_mapping(args: argparse.Namespace) -> TableMapping:
    try:
        return TableMapping.parse(
            args.answer,
            args.evidence,
            question=args.question,
            reference=args.reference,
            id=args.id,
            group=args.group,
        )
    except ValueError as error:
        raise ConfigError(str(error)) from None


def _label_field(args: argparse.Namespace) -> LabelField | None:
    error_values = getattr(args, "error_value", None) or []
    if error_values and getattr(args, "error_field", None) is None:
        raise ConfigError("--error-value goes with --error-field: name the field it is a value of")
    for dest, true_means_error in (("error_field", True), ("grounded_field", False)):
        named = getattr(args, dest, None)
        if named is not None:
            try:
                return LabelField.parse(
                    named, true_means_error=true_means_error, error_values=error_values
                )
            except ValueError as error:
                raise ConfigError(f"--{dest.replace('_', '-')} {error}") from None
    return None


def _where_text(where: dict[tuple[str, ...], frozenset[str]]) -> str:
    """``where meta.dataset is Lfqa or RAGTruth`` (keys joined by ``and``)."""
    parts = [
        f"meta.{'.'.join(path)} is {' or '.join(sorted(values))}" for path, values in where.items()
    ]
    return "where " + " and ".join(parts)


def _import_judge_set(args: argparse.Namespace) -> int:
    from ..instructions import check_kwargs

    importer: JudgeSetImporter = args.importer
    sources = IFEvalSources(
        prompts=args.src,
        responses=args.responses,
        labels=args.labels,
        loose_labels=args.loose_labels,
        target_model=args.target_model,
        constraints=not args.no_constraints,
        check_kwargs=check_kwargs,  # the instruction checkers' own argument checks
    )
    check_out_dir(args.out)
    result = importer.convert(sources)
    refuse_empty(result.report)
    contents = {"questions": result.questions, "outputs": result.outputs, "labels": result.labels}
    return _write_judge_set(
        args.out, contents, result.report, (args.src, args.responses, args.labels)
    )


def _import_logs(args: argparse.Namespace) -> int:
    importer: LogImporter = args.importer
    check_out_dir(args.out, LOG_FILES)
    result = importer.convert(args.src)
    refuse_empty(result.report)
    ifeval = result.ifeval if isinstance(result, LmEvalImport) else ()
    _check_ifeval_files(args.out, ifeval)
    contents = {"questions": result.questions, "outputs": result.outputs}
    _write_judge_set(args.out, contents, result.report, tuple(args.src))
    _clear_earlier_ifeval_files(args.out, ifeval)
    _write_ifeval_files(args.out, ifeval)
    return 0


def _write_judge_set(
    out: Path,
    contents: Mapping[str, Sequence[BaseModel]],
    report: ImportReport,
    sources: tuple[Path, ...],
) -> int:
    """Write each kind's file of a judge set into ``out`` (never over one of ``sources``),
    then print the import's report and what was written."""
    out.mkdir(parents=True, exist_ok=True)
    for kind, records in contents.items():
        _refuse_overwriting_source(*sources, out / JUDGE_SET_FILES[kind])
        write_jsonl(out / JUDGE_SET_FILES[kind], records)
    for line in report.lines():
        print(line)
    for kind, records in contents.items():
        print(f"wrote {len(records)} {kind} to {out / JUDGE_SET_FILES[kind]}")
    return 0


def _ifeval_contents(files: IFEvalFiles) -> dict[str, Sequence[BaseModel]]:
    """File name -> lines of an IFEval layout (an empty verdicts file is not written)."""
    contents: dict[str, Sequence[BaseModel]] = {
        "input_data.jsonl": files.inputs,
        files.responses_name: files.responses,
    }
    for mode, lines in files.verdicts.items():
        contents[f"eval_results_{mode}.jsonl"] = lines
    return contents


def _check_ifeval_files(out: Path, layouts: Sequence[IFEvalFiles]) -> None:
    for files in layouts:
        check_run_dir_parents(out / files.directory)
        for name in _ifeval_contents(files):
            check_out_file(out / files.directory / name)


def _clear_earlier_ifeval_files(out: Path, layouts: Sequence[IFEvalFiles]) -> None:
    """Remove the IFEval files an earlier import wrote under ``out/ifeval`` that this one does
    not write again (another model or variant, a verdicts mode it no longer has): the import
    replaces the judge set, and IFEval files of questions no longer in it would be read as
    its. Only files of IFEval's layout go, and folders they leave empty; nothing else."""
    root = out / IFEVAL_FOLDER
    if not root.is_dir():
        return
    keep = {out / files.directory / name for files in layouts for name in _ifeval_contents(files)}
    for folder in sorted({path.parent for path in root.glob("*/*/*.jsonl")}):
        earlier = [path for path in folder.glob("*.jsonl") if _is_ifeval_file(path.name)]
        stale = [path for path in earlier if path not in keep]
        for path in stale:
            path.unlink()
        for empty in (folder, folder.parent):
            with contextlib.suppress(OSError):  # not empty: something else lives there
                empty.rmdir()
        if stale and not folder.exists():
            print(f"removed the IFEval files of an earlier import from {folder}")


def _is_ifeval_file(name: str) -> bool:
    return name in IFEVAL_LAYOUT_NAMES or (
        name.startswith("input_response_data_") and name.endswith(".jsonl")
    )


def _write_ifeval_files(out: Path, layouts: Sequence[IFEvalFiles]) -> None:
    """IFEval documents in IFEval's layout, for `assay instructions check|agreement`."""
    for files in layouts:
        directory = out / files.directory
        directory.mkdir(parents=True, exist_ok=True)
        for name, lines in _ifeval_contents(files).items():
            write_jsonl(directory / name, lines)
        modes = " and ".join(files.verdicts) or "no"
        print(
            f"wrote {len(files.responses)} IFEval responses of {files.target_model} under "
            f"{files.prompt_variant!r} ({modes} verdicts) to {directory}"
        )


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    """Write all records, then move the file into place: an interrupted import leaves no half
    file under the final name, and a rerun replaces the old output instead of appending."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    with JsonlWriter(partial) as writer:
        for record in records:
            writer.append(record)
    os.replace(partial, path)


def check_out_dir(out: Path, kinds: Iterable[str] = tuple(JUDGE_SET_FILES)) -> None:
    """``--out`` of a judge set: a directory (made if missing) whose files of the names of
    ``kinds`` are replaced, as every importer replaces its output; never a file."""
    files = [JUDGE_SET_FILES[kind] for kind in kinds]
    names = ", ".join(files)
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {out} is a file, not a directory: this importer writes {names} into a "
            "directory (replacing files of those names, as every importer replaces its output)",
            hint="give a directory (a new one is made)",
        )
    check_run_dir_parents(out)
    for name in files:
        check_out_file(out / name)


def _refuse_overwriting_source(*paths: Path) -> None:
    sources, out = paths[:-1], paths[-1]
    for source in sources:
        if source.exists() and out.exists() and source.resolve() == out.resolve():
            raise ConfigError(f"--out {out} is the source file itself; choose another path")
