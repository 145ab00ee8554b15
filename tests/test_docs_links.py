"""Every relative link in the README and docs/ points at a file, and at a heading, that exists.

Anchors follow GitHub's rule for heading ids, since that is where the docs are read.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "benchmarks" / "README.md",
]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def github_slug(heading: str) -> str:
    """The id GitHub gives a heading: lowercased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """The file's lines outside fenced code blocks, numbered from 1."""
    lines: list[tuple[int, str]] = []
    in_fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            lines.append((number, line))
    return lines


def heading_ids(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    ids: set[str] = set()
    for _, line in prose_lines(path):
        match = HEADING.match(line)
        if match is None:
            continue
        slug = github_slug(match.group(2))
        ids.add(slug if seen[slug] == 0 else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return ids


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken: list[str] = []
    for number, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{number}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in heading_ids(linked):
                broken.append(f"{where} (no such heading)")
    return broken


def test_slug_follows_github() -> None:
    assert github_slug("Operating points on your own data: `bench calibrate`") == (
        "operating-points-on-your-own-data-bench-calibrate"
    )
    assert (
        github_slug("Held out on long-form answers: LFQA") == "held-out-on-long-form-answers-lfqa"
    )
    assert github_slug("What's new (v2)") == "whats-new-v2"


def test_a_missing_heading_is_caught(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# B\n", encoding="utf-8")
    doc.write_text(
        "# Title\n\n[here](#title) [there](#nowhere) [b](b.md#b) [c](c.md)\n```\n[x](#no)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(doc, root=tmp_path) == [
        "a.md:3: #nowhere (no such heading)",
        "a.md:3: c.md (no such file)",
    ]


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    assert broken_links(doc) == []
