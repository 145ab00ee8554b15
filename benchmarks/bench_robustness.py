"""Time `instructions robustness` at the scale of IFEval's whole file with repeated draws.

The prompts of IFEval's `input_data.jsonl` that IFEval's GPT-4 response file answers (540 of
541), varied under the five kinds, each answered in every draw by GPT-4's response to the
prompt, or, in a seeded fifth of the cells, by that response in lower case with its commas
removed (so that some verdicts differ between draws and wordings). The outputs are made in
memory; each stage is timed on them as `robustness` runs it:

- check: every output against its prompt's instructions (`check_outputs`, once per draw);
- summarize: every table, the bootstrap intervals and the permutation tests;
- write: `summary.json`, verdicts, labels, `robustness.md` and both plots (`write_robustness_run`).

    .venv/bin/python benchmarks/bench_robustness.py              # 5 draws, 2000 resamples
    .venv/bin/python benchmarks/bench_robustness.py --draws 1

Prints one table: per stage, the outputs, wall seconds and milliseconds per output, then the
peak resident set size of the process. No target: the numbers are in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IFEVAL = REPO.parent / "shared" / "data" / "ifeval"
RESPONSES = IFEVAL / "input_response_data_gpt4_20231107_145030.jsonl"
TARGET = "gpt-4-responses"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from assay.data.questions import QuestionSet, TargetOutput
    from assay.instructions.ifeval_data import read_responses
    from assay.instructions.robustness import check_outputs, summarize_robustness
    from assay.instructions.robustness_run import write_robustness_run
    from assay.instructions.variants import VARIANT_KINDS
    from assay.instructions.varied_set import vary_inputs

    answers = {r.prompt: r.response for r in read_responses(RESPONSES)}
    varied = vary_inputs(IFEVAL / "input_data.jsonl", list(VARIANT_KINDS), seed=0)
    # the prompts GPT-4's response file answers (it leaves a few out)
    answered = tuple(q for q in varied if q.variants[0].prompt in answers)
    questions = QuestionSet(source="ifeval", questions=answered)

    def draw_outputs(draw: int) -> list[TargetOutput]:
        rng = random.Random(draw)
        outputs = []
        for question in questions.questions:
            answer = answers[question.variants[0].prompt]
            for variant in question.variants:
                text = answer.lower().replace(",", "") if rng.random() < 0.2 else answer
                outputs.append(
                    TargetOutput(
                        question_id=question.question_id,
                        prompt_variant=variant.variant,
                        target_model=TARGET,
                        output_id=f"{question.question_id}__{variant.variant}",
                        text=text,
                        source=f"draw {draw}",
                    )
                )
        return outputs

    drawn = [draw_outputs(draw) for draw in range(1, args.draws + 1)]
    count = sum(map(len, drawn))
    path = Path("ifeval_varied.jsonl")
    rows = []
    start = time.perf_counter()
    checks = [
        check
        for draw, outputs in enumerate(drawn, start=1)
        for check in check_outputs(
            questions, path, outputs, "strict", draw=draw if args.draws > 1 else None
        )
    ]
    rows.append(("check", time.perf_counter() - start))
    start = time.perf_counter()
    summary = summarize_robustness(
        questions,
        checks,
        "strict",
        n_resamples=args.resamples,
        draws=[f"draw {d}" for d in range(1, args.draws + 1)] if args.draws > 1 else [],
    )
    rows.append(("summarize", time.perf_counter() - start))
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        write_robustness_run(Path(folder) / "run", summary, checks, {})
        rows.append(("write", time.perf_counter() - start))
    print(
        f"{questions.question_count} prompts, {len(questions.cells())} prompt variants, "
        f"{args.draws} draw(s): {count} outputs; {args.resamples} resamples\n"
    )
    print("| stage | outputs | seconds | ms per output |")
    print("|---|---:|---:|---:|")
    for stage, seconds in rows:
        print(f"| {stage} | {count} | {seconds:.2f} | {1000 * seconds / count:.3f} |")
    total = sum(seconds for _, seconds in rows)
    print(f"| total | {count} | {total:.2f} | {1000 * total / count:.3f} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
