"""benchmarks/bench_archive.py writes its synthetic judge archives as `assay judge run` writes
them, so that `assay judge validate` (one of the steps it times) finds them consistent."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cli import main

from ..helpers.benchmark_scripts import load_benchmark


@pytest.mark.parametrize("layout", ["files", "shards"])
def test_the_archive_the_benchmark_writes_validates(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench_archive = load_benchmark("bench_archive")
    run_dir = tmp_path / layout
    bench_archive.write_archive(run_dir, 12, layout)
    capsys.readouterr()
    code = main(["judge", "validate", str(run_dir)])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    assert "classified differently" not in out
