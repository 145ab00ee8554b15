"""Citation markers: parsing, stripping, merging with the structured list, checking ids."""

from __future__ import annotations

from assay.data.citations import (
    answer_citations,
    cited_ids,
    format_marker,
    parse_citations,
    strip_citations,
)


def test_parse_single_and_multi_id_markers() -> None:
    text = "Paris is large [cite:e1]. It has museums [cite: e2 , e3][cite:e1]."
    markers = parse_citations(text)
    assert [m.ids for m in markers] == [("e1",), ("e2", "e3"), ("e1",)]
    assert text[markers[0].start : markers[0].end] == "[cite:e1]"
    assert cited_ids(text) == ("e1", "e2", "e3")


def test_strip_leaves_clean_text() -> None:
    assert strip_citations("Paris is large [cite:e1]. It has [cite:a,b] museums.") == (
        "Paris is large. It has museums."
    )
    assert strip_citations("No markers here.") == "No markers here."


def test_other_brackets_are_not_markers() -> None:
    markers = parse_citations("see [1] and [citation needed] and [cite:]")
    assert [m.ids for m in markers] == [()]
    assert cited_ids("see [1] and [cite:]") == ()


def test_merge_with_structured_list_and_report_unknown() -> None:
    merged = answer_citations("A [cite:e2]. B [cite:e9].", ["e1", "e2"], ["e1", "e2", "e3"])
    assert merged.ids == ("e2", "e9", "e1")
    assert merged.from_markers == ("e2", "e9")
    assert merged.from_list == ("e1", "e2")
    assert merged.unknown == ("e9",)
    assert merged.valid == ("e2", "e1")


def test_format_marker_round_trips() -> None:
    assert format_marker(["a", "b"]) == "[cite:a,b]"
    assert cited_ids(format_marker(["a", "b"])) == ("a", "b")
    assert format_marker([]) == ""
