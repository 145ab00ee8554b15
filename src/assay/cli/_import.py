"""``assay import NAME SRC --out FILE``: a public benchmark file -> assay's input format."""

from __future__ import annotations

import argparse
import os
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..data.importers import IMPORTERS, Importer
from ..errors import ConfigError
from ..runs import JsonlWriter


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import",
        help="convert a public benchmark file into assay's input format",
        description="Convert one split of a public benchmark into assay's input format. "
        "Run `assay import NAME --help` for the label convention of each dataset.",
    )
    names = parser.add_subparsers(dest="dataset", metavar="NAME", required=True)
    for importer in IMPORTERS.values():
        _register_grounded(names, importer)


def _register_grounded(names: Any, importer: Importer) -> None:
    parser = names.add_parser(
        importer.name,
        help=importer.summary,
        description=_paragraphs(
            f"{importer.summary}.",
            f"SRC: {importer.source}.",
            f"Labels: {importer.label_convention}",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("src", type=Path, metavar="SRC", help=importer.source)
    parser.add_argument(
        "--out", type=Path, required=True, help="grounded-QA JSONL to write (replaced if it exists)"
    )
    parser.set_defaults(handler=_import_grounded, importer=importer)


def _paragraphs(*texts: str) -> str:
    return "\n\n".join(textwrap.fill(text, width=88) for text in texts)


def _import_grounded(args: argparse.Namespace) -> int:
    importer: Importer = args.importer
    _refuse_overwriting_source(args.src, args.out)
    result = importer.convert(args.src)
    write_jsonl(args.out, result.records)
    for line in result.report.lines():
        print(line)
    print(f"wrote {len(result.records)} records to {args.out}")
    return 0


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    """Write all records, then move the file into place: an interrupted import leaves no half
    file under the final name, and a rerun replaces the old output instead of appending."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    with JsonlWriter(partial) as writer:
        for record in records:
            writer.append(record)
    os.replace(partial, path)


def _refuse_overwriting_source(*paths: Path) -> None:
    sources, out = paths[:-1], paths[-1]
    for source in sources:
        if source.exists() and out.exists() and source.resolve() == out.resolve():
            raise ConfigError(f"--out {out} is the source file itself; choose another path")
