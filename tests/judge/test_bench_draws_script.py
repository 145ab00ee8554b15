"""benchmarks/bench_judge_draws.py on a small size: its evaluations are what the analyses
take, and both analyses run on them."""

from __future__ import annotations

from ..helpers.benchmark_scripts import load_benchmark


def test_the_benchmark_times_both_analyses_on_valid_evaluations() -> None:
    bench = load_benchmark("bench_judge_draws")
    made = bench.evaluations(4, 3)
    assert [len(draw) for draw in made] == [4 * len(bench.VARIANTS)] * 3
    assert all(r.valid and r.overall_score == sum(r.scores) for draw in made for r in draw)
    measured = bench.measure(4, 3, 20)
    assert measured["evaluations"] == 3 * 4 * len(bench.VARIANTS)
    assert measured["one"] > 0 and measured["joint"] > 0
