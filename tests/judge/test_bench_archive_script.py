"""benchmarks/bench_archive.py writes its synthetic judge archives as `assay judge run` writes
them, so that `assay judge validate` (one of the steps it times) finds them consistent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from assay.cli import main

from ..conftest import REPO_ROOT


def _load(name: str) -> ModuleType:
    """A benchmark script as a module (its helpers import each other by bare name)."""
    benchmarks = str(REPO_ROOT / "benchmarks")
    if benchmarks not in sys.path:
        sys.path.insert(0, benchmarks)
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("layout", ["files", "shards"])
def test_the_archive_the_benchmark_writes_validates(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_archive = _load("bench_archive")
    run_dir = tmp_path / layout
    bench_archive.write_archive(run_dir, 12, layout)
    capsys.readouterr()
    code = main(["judge", "validate", str(run_dir)])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    assert "classified differently" not in out
