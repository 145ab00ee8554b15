"""YAML settings read with assay's loader: a key given twice or a key that is not text is an
error with its line, never a silent last value or a label "True"."""

from __future__ import annotations

import pytest
import yaml

from assay.data.yaml_keys import strict_load
from assay.errors import yaml_problem


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("thresholds:\n  pass_min: 6\nthresholds:\n  pass_min: 2\n", 3, "given twice"),
        ("a: 1\nvariants:\n  null: x\n", 3, "is not text"),
        ("variants:\n  - {1: x}\n", 2, "is not text"),
    ],
)
def test_strict_load_refuses_ambiguous_keys(text: str, line: int, words: str) -> None:
    with pytest.raises(yaml.YAMLError) as error:
        strict_load(text)
    message = yaml_problem(error.value)
    assert message.startswith(f"line {line},") and words in message


def test_strict_load_reads_plain_yaml_and_quoted_keys() -> None:
    text = 'base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n"yes": ok\nlist: [1, 2]\n'
    assert strict_load(text) == {
        "base": {"x": 1},
        "other": {"x": 1, "y": 2},
        "yes": "ok",
        "list": [1, 2],
    }
