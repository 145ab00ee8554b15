"""The report highlights exactly the quotes the validator located: one matcher for both."""

from __future__ import annotations

import pytest

from assay.judge.evidence import quote_located, quote_spans
from assay.report._html_judge import quote_marks

OUTPUT = "Step 1 \u2014 “Mix” the ﬂour.\n\nThen  WAIT two\u2011hours… done."

CASES = [
    ('step 1 - "mix" the flour.', True),  # em dash, typographic quotes, ligature, case
    ("Then wait two-hours", True),  # whitespace run, non-breaking hyphen
    ("Mix ... two-hours", True),  # pieces in order
    ("two-hours ... Mix", False),  # pieces out of order
    ("the flower", False),
    ("\u201cMix\u201d the", True),
]


@pytest.mark.parametrize(("quote", "expected"), CASES)
def test_report_and_validator_agree(quote: str, expected: bool) -> None:
    assert quote_located(quote, OUTPUT) is expected
    _, found = quote_marks(OUTPUT, [("FORMAT_COMPLIANCE", quote)])
    assert found == [expected]


def test_spans_point_into_the_original_text() -> None:
    spans = quote_spans("mix ... two-hours", OUTPUT)
    assert spans is not None
    assert [OUTPUT[start:end] for start, end in spans] == ["Mix", "two\u2011hours"]
    (span,) = quote_spans("the flour", OUTPUT) or []
    assert OUTPUT[span[0] : span[1]] == "the ﬂour"
