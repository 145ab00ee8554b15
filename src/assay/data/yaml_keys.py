"""YAML mappings as assay reads them: every key a string, given once.

PyYAML keeps the last value of a key given twice and says nothing, and reads the keys ``yes``,
``no``, ``on``, ``off``, ``null``, ``1`` as a boolean, None or a number (a variant label ``yes:``
became ``"True"``). assay refuses both, naming the line: a key meant as text is quoted
(``"yes":``). :func:`check_keys` checks a composed node tree (question sets keep the nodes to
locate errors); :class:`StrictKeysLoader` / :func:`strict_load` is ``yaml.safe_load`` with the
same checks, for settings files.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import InputError

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"


def key_problem(node: yaml.MappingNode) -> tuple[yaml.Node, str] | None:
    """The first key node of ``node`` (not its children) that is not a string, or repeats one."""
    seen: dict[str, int] = {}
    for key, _ in node.value:
        if key.tag == _MERGE:
            continue
        if not isinstance(key, yaml.ScalarNode) or key.tag != _STR:
            shown = key.value if isinstance(key, yaml.ScalarNode) else "a list or mapping"
            return key, (
                f"the key {shown} is not text (YAML reads it as {_kind(key)}): "
                f'quote it ("{shown}":) if it is a name'
            )
        if key.value in seen:
            return key, (
                f"the key {key.value!r} is given twice in one mapping (also on line "
                f"{seen[key.value]}); YAML would keep only the last value"
            )
        seen[key.value] = key.start_mark.line + 1
    return None


def check_keys(root: yaml.Node, path: Any) -> None:
    """Refuse, as an InputError naming ``path`` and the line, the first mapping under ``root``
    with a key that is not a string or is given twice."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            problem = key_problem(node)
            if problem is not None:
                raise InputError(problem[1], path=path, line=problem[0].start_mark.line + 1)
            stack.extend(value for _, value in reversed(node.value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))


def _kind(node: yaml.Node) -> str:
    names = {
        "tag:yaml.org,2002:bool": "a boolean",
        "tag:yaml.org,2002:null": "null",
        "tag:yaml.org,2002:int": "an integer",
        "tag:yaml.org,2002:float": "a number",
    }
    return names.get(node.tag, "not a string")


class StrictKeysLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing a mapping key that is not a string or is given twice (a
    ``yaml.constructor.ConstructorError`` with the key's line, as other YAML errors carry)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        problem = key_problem(node)
        if problem is not None:
            raise yaml.constructor.ConstructorError(None, None, problem[1], problem[0].start_mark)
        return super().construct_mapping(node, deep=deep)


def strict_load(text: str) -> Any:
    """``yaml.safe_load(text)`` with :class:`StrictKeysLoader`'s checks."""
    return yaml.load(text, Loader=StrictKeysLoader)


def node_line(node: yaml.Node, loc: tuple[Any, ...], default: int) -> int:
    """The line of the YAML node at ``loc`` (as deep as the path can be followed)."""
    line = default
    for part in loc:
        child = _child(node, part)
        if child is None:
            break
        node = child
        line = node.start_mark.line + 1
    return line


def _child(node: yaml.Node, part: Any) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == str(part):
                return value  # type: ignore[no-any-return]
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]  # type: ignore[no-any-return]
    return None


def line_at(text: str, loc: tuple[Any, ...]) -> int | None:
    """The line of the value at ``loc`` (a pydantic error's path) in YAML or JSON ``text``
    that has already been read without error; None when the path leads nowhere."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if root is None:
        return None
    line = node_line(root, loc, 0)
    return line or None
