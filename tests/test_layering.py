"""No module imports a layer above its own (DESIGN: integrations -> cli -> report -> judge/verify
-> ...).

Reads every import statement of src/assay with ``ast`` (including imports inside functions),
resolves relative imports, and fails naming each upward import.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "assay"

# Higher number = higher layer. A module may import its own layer or any lower one.
LAYERS: dict[str, int] = {
    "arrays": 0,
    "errors": 0,
    "figures": 0,
    "interrupts": 0,
    "json_safe": 0,
    "redact": 0,
    "tables": 0,
    "metrics": 1,
    "data": 2,
    "model": 3,
    "runs": 3,
    "instructions": 4,
    "judge": 4,
    "verify": 4,
    "report": 5,
    "cli": 6,
    "__main__": 6,
    "integrations": 7,  # assay inside other tools (inspect_ai): above everything, imported by none
}
# Same-level packages that must not import each other either.
SIBLINGS_APART = {"judge", "verify", "instructions", "model", "runs"}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "assay" or len(parts) < 2:
        return None
    return parts[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    package = ".".join(("assay", *path.relative_to(SRC).with_suffix("").parts))
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + ".__init__"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: -node.level] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.append((node.lineno, module))
            # `from .. import verify` imports a package by name
            if node.module is None:
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _string_module_names(path: Path) -> list[tuple[int, str]]:
    """Dotted ``assay.x`` names written in string constants (imports by name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.split(":")[0]
            if text.startswith("assay.") and " " not in text:
                found.append((node.lineno, text))
    return found


def _violations() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        own = path.relative_to(SRC).parts[0].removesuffix(".py")
        if own not in LAYERS or own == "__init__":
            continue
        for line, module in _imports(path) + _string_module_names(path):
            other = _layer_of(module)
            if other is None or other == own or other not in LAYERS:
                continue
            upward = LAYERS[other] > LAYERS[own]
            sideways = own in SIBLINGS_APART and other in SIBLINGS_APART
            if upward or (sideways and LAYERS[other] == LAYERS[own]):
                problems.append(f"{path.relative_to(SRC.parent)}:{line}: {own} -> {module}")
    return problems


def test_no_module_imports_a_layer_above_it() -> None:
    problems = _violations()
    assert not problems, "upward or sideways imports:\n" + "\n".join(problems)


def test_the_check_sees_an_upward_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "assay"
    (fake / "metrics").mkdir(parents=True)
    (fake / "metrics" / "bad.py").write_text("def f():\n    from ..verify import types\n")
    (fake / "data").mkdir()
    (fake / "data" / "by_name.py").write_text('TARGET = "assay.judge.stub_replies:reply"\n')
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    problems = _violations()
    assert any("metrics/bad.py:2" in p and "assay.verify" in p for p in problems)
    assert any("data/by_name.py:1" in p for p in problems)
