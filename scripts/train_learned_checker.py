"""Train the ``learned`` claim checker's weights and report held-out numbers (numpy only).

    python scripts/train_learned_checker.py                 # retrain, write the shipped weights
    python scripts/train_learned_checker.py --check         # only verify the shipped file
    python scripts/train_learned_checker.py --data-dir ../shared/data --out /tmp/w.json

Data: the public files in ``../shared/data`` (relative to the repo root), imported with assay's
own importers (ExpertQA val, WiCE dev, HaluEval QA). Each record's answer, citation markers
removed, is one training claim labelled supported (``gold_error`` false) or not; its features
are :func:`assay.verify.checkers.learned.claim_features` against all of the record's evidence.

Fit: logistic regression on standardized features, L2 penalty on the coefficients (not the
bias), Newton's method to convergence. Sample weights give every training dataset the same
total weight and balance the two classes inside each dataset, so the fit learns what separates
supported from unsupported claims, not each dataset's base rate. Nothing is random; ``--seed``
only salts the grouped fold assignment (a hash of the record's ``group``, so no question or
article is in two folds).

Shipped weights: trained on all three files (``SHIPPED_TRAIN_SETS``); held-out numbers come
from the report only. The report prints, per dataset, balanced accuracy (threshold 0.5 on
p_error), AUROC and ECE of the lexical baseline and of the learned checker, both scored at the
answer level the way the benchmark does it (claims split by
:func:`assay.verify.claims.split_claims`, p_error = 1 - the weakest claim's probability, a
claim whose cited snippets do not support it re-checked against them alone), on held-out data:
leave-one-dataset-out, and grouped k-fold (train on the other datasets plus the other folds).
Directions measured and not shipped: ``scripts/learned_checker_experiments.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assay.data.citations import strip_citations
from assay.data.importers import GroundedImport
from assay.data.importers.expertqa import import_expertqa
from assay.data.importers.halueval import import_halueval
from assay.data.importers.wice import import_wice
from assay.metrics import expected_calibration_error
from assay.verify.checkers.baseline import LexicalChecker
from assay.verify.checkers.learned import (
    CHECKER_VERSION,
    FEATURE_NAMES,
    FeatureVector,
    LearnedChecker,
    LearnedWeights,
    claim_features,
    claim_vectors,
)
from assay.verify.claims import split_claims
from assay.verify.types import Claim, ClaimCheck, GroundedQARecord

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "src" / "assay" / "verify" / "checkers" / "learned_weights.json"
DATASET_FILES: dict[str, tuple[str, Callable[[Path], GroundedImport]]] = {
    "expertqa": ("expertqa/domain_val.jsonl", import_expertqa),
    "wice": ("wice/claim_dev.jsonl", import_wice),
    "halueval": ("halueval/qa_one-turn_data.json", import_halueval),
}
SHIPPED_TRAIN_SETS = ("expertqa", "wice", "halueval")
# The files the lexical baseline's weights were fitted on (docs/verify-data.md): its cells of the
# report are in fit there and held out elsewhere.
LEXICAL_TRAIN_SETS = ("wice", "halueval")
L2_GRID = (1.0, 10.0, 100.0, 1000.0)
# The direction each feature may push p_supported (0: either). More overlap can only mean more
# support, a missing number or name only less: a coefficient of the wrong sign is a quirk of
# one dataset's collinear features, and it does not transfer to another dataset.
FEATURE_SIGNS: dict[str, int] = {
    "idf_recall_all": 1,
    "bigram_recall_all": 1,
    "numbers_missing_all_frac": -1,
    "has_numbers": 0,
    "names_missing_all_frac": -1,
    "names_missing_all": -1,
    "negation_mismatch": -1,
    "missing_weight_max": -1,
    "missing_tail_max": -1,
    "synonym_missing_max": -1,
    "missing_tail_count": -1,
    "pairs_in_one_sentence": 1,
}
DIGITS = 8  # weights are written rounded, so a retrain writes the shipped file byte for byte

Array = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class TrainConfig:
    """What decides the weights (recorded in the weights file)."""

    train_on: tuple[str, ...] = SHIPPED_TRAIN_SETS
    l2: float = 100.0
    lower: float = 0.4
    upper: float = 0.6
    max_iterations: int = 100
    tolerance: float = 1e-12


@dataclass(frozen=True)
class ClaimUnit:
    """One split claim of an answer, with its features against all evidence and the cited."""

    claim: Claim
    against_all: tuple[FeatureVector, ...]
    against_cited: tuple[FeatureVector, ...] | None


@dataclass(frozen=True)
class Example:
    """A record: its training features (whole answer) and its answer-level claim units."""

    record: GroundedQARecord
    dataset: str
    supported: bool
    features: tuple[float, ...]
    units: tuple[ClaimUnit, ...]


@dataclass
class Corpus:
    examples: dict[str, list[Example]] = field(default_factory=dict)

    def select(self, names: Sequence[str]) -> list[Example]:
        return [e for n in names for e in self.examples[n]]


def load_corpus(data_dir: Path, datasets: Sequence[str] = tuple(DATASET_FILES)) -> Corpus:
    """Import every dataset with assay's importers and compute the features once."""
    corpus = Corpus()
    for name in datasets:
        relative, importer = DATASET_FILES[name]
        records = importer(data_dir / relative).records
        corpus.examples[name] = [_example(r, name) for r in records]
    return corpus


def _example(record: GroundedQARecord, dataset: str) -> Example:
    answer = record.answer or ""
    vector = claim_features(strip_citations(answer), record.evidence)
    units = []
    for claim in split_claims(answer):
        cited = [e for e in record.evidence if e.evidence_id in claim.cited_ids]
        against_cited = claim_vectors(claim.text, cited) if cited else None
        units.append(ClaimUnit(claim, claim_vectors(claim.text, record.evidence), against_cited))
    return Example(record, dataset, not record.gold_error, vector.values, tuple(units))


# ---------------------------------------------------------------------------- fitting


def sample_weights(examples: Sequence[Example]) -> Array:
    """Equal total weight per dataset, classes balanced inside each; mean weight 1."""
    counts: dict[tuple[str, bool], int] = {}
    for e in examples:
        counts[(e.dataset, e.supported)] = counts.get((e.dataset, e.supported), 0) + 1
    cells = len(counts)
    return np.array([len(examples) / (cells * counts[(e.dataset, e.supported)]) for e in examples])


def fit_logistic(x: Array, y: Array, w: Array, config: TrainConfig) -> tuple[Array, float]:
    """Weighted L2 logistic regression by Newton's method; returns (coef, bias)."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    penalty = np.full(d + 1, config.l2)
    penalty[-1] = 0.0
    beta = np.zeros(d + 1)
    for _ in range(config.max_iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -50.0, 50.0)))
        gradient = design.T @ (w * (p - y)) + penalty * beta
        hessian = (design * (w * p * (1.0 - p))[:, None]).T @ design + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta = beta - step
        if float(np.max(np.abs(step))) < config.tolerance:
            break
    return beta[:-1], float(beta[-1])


def fit_signed(x: Array, y: Array, w: Array, config: TrainConfig) -> tuple[Array, float]:
    """:func:`fit_logistic` under :data:`FEATURE_SIGNS`: while a coefficient has the wrong
    sign, the most wrong one is fixed at 0 and the rest refitted (an active-set method)."""
    signs = np.array([FEATURE_SIGNS[n] for n in FEATURE_NAMES], dtype=np.float64)
    active = list(range(x.shape[1]))
    while True:
        coef, bias = fit_logistic(x[:, active], y, w, config)
        signed = signs[active] * coef
        if not active or float(signed.min()) >= 0.0:
            break
        del active[int(np.argmin(signed))]
    full = np.zeros(x.shape[1])
    full[active] = coef
    return full, bias


def train_weights(examples: Sequence[Example], config: TrainConfig) -> LearnedWeights:
    x = np.array([e.features for e in examples], dtype=np.float64)
    y = np.array([1.0 if e.supported else 0.0 for e in examples])
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    coef, bias = fit_signed((x - mean) / scale, y, sample_weights(examples), config)
    raw = LearnedWeights(
        feature_names=FEATURE_NAMES,
        mean=_rounded(mean),
        scale=_rounded(scale),
        coef=_rounded(coef),
        bias=round(bias, DIGITS),
        lower=config.lower,
        upper=config.upper,
    )
    a, b = fit_platt(examples, raw, config)
    return replace(raw, platt_a=round(a, DIGITS), platt_b=round(b, DIGITS))


def fit_platt(
    examples: Sequence[Example], raw: LearnedWeights, config: TrainConfig
) -> tuple[float, float]:
    """The Platt map ``p = sigmoid(a * z + b)`` of the answer-level logit, fitted on the same
    training examples as the regression (classes balanced): the regression is fitted on whole
    answers, the benchmark scores the weakest split claim, and the map corrects the difference
    (and the L2 penalty's pull towards 0.5)."""
    kept = [
        (e, p)
        for e, p in zip(examples, learned_scores(examples, raw), strict=True)
        if p is not None
    ]
    p_ok = np.clip(np.array([1.0 - p for _, p in kept]), 1e-9, 1 - 1e-9)
    z = np.log(p_ok / (1.0 - p_ok))[:, None]
    y = np.array([1.0 if e.supported else 0.0 for e, _ in kept])
    platt_config = replace(config, l2=1e-3)
    coef, bias = fit_logistic(z, y, sample_weights([e for e, _ in kept]), platt_config)
    return float(coef[0]), bias


def record_p_error(examples: Sequence[Example], weights: LearnedWeights) -> Array:
    """p_error of each record from its training features (the whole answer as one claim)."""
    return np.array([1.0 - weights.p_supported(e.features) for e in examples])


def transfer_auroc(corpus: Corpus, config: TrainConfig, l2: float) -> float:
    """Mean AUROC over ordered pairs of training datasets (fit on one, score the other)."""
    values = []
    for source in config.train_on:
        weights = train_weights(corpus.examples[source], _with(config, (source,), l2))
        for target in config.train_on:
            if target != source:
                examples = corpus.examples[target]
                error = np.array([not e.supported for e in examples])
                values.append(auroc(error, record_p_error(examples, weights)))
    return float(np.mean(values))


def select_l2(corpus: Corpus, config: TrainConfig) -> tuple[float, dict[float, float]]:
    """The L2 strength of :data:`L2_GRID` that transfers best between the training datasets
    (the held-out dataset plays no part); ties go to the stronger penalty."""
    table = {l2: round(transfer_auroc(corpus, config, l2), 6) for l2 in L2_GRID}
    best = max(sorted(table, reverse=True), key=lambda l2: table[l2])
    return best, table


def _rounded(values: Array) -> tuple[float, ...]:
    return tuple(round(float(v), DIGITS) for v in values)


def weights_document(
    weights: LearnedWeights, config: TrainConfig, corpus: Corpus
) -> dict[str, object]:
    """The JSON file: the model, and how it was trained (for people; not read at inference)."""
    counts = {n: len(corpus.examples[n]) for n in config.train_on}
    return {
        "version": CHECKER_VERSION,
        "model": {
            "kind": "logistic_regression",
            "feature_names": list(weights.feature_names),
            "mean": list(weights.mean),
            "scale": list(weights.scale),
            "coef": list(weights.coef),
            "bias": weights.bias,
            "calibration": {"kind": "platt", "a": weights.platt_a, "b": weights.platt_b},
            "lower": weights.lower,
            "upper": weights.upper,
        },
        "training": {
            "script": "scripts/train_learned_checker.py",
            "train_on": {n: DATASET_FILES[n][0] for n in config.train_on},
            "records": counts,
            "l2": config.l2,
            "sample_weights": "equal per dataset, classes balanced within each dataset",
            "unit": "the whole answer, citation markers removed, against all its evidence",
            "held_out": "none of the shipped fit; held-out numbers (LODO, grouped folds) are in "
            "docs/learned-checker.md",
        },
    }


# ---------------------------------------------------------------------------- scoring


def answer_p_error(checks: Sequence[tuple[ClaimCheck, ClaimCheck | None]]) -> float | None:
    """The benchmark's answer score from (check against all, check against cited) pairs."""
    p_ok: list[float] = []
    for check, against_cited in checks:
        p = check.p_supported if check.p_supported is not None else 0.5
        recheck = against_cited is not None and not check.cited_supporting_ids
        if recheck and check.label != "unsupported" and against_cited is not None:
            p = min(p, against_cited.p_supported if against_cited.p_supported is not None else p)
        p_ok.append(p)
    return 1.0 - min(p_ok) if p_ok else None


def learned_scores(examples: Sequence[Example], weights: LearnedWeights) -> list[float | None]:
    checker = LearnedChecker(weights)
    out = []
    for e in examples:
        checks = [
            (
                checker.verdict(u.claim, u.against_all),
                checker.verdict(u.claim, u.against_cited) if u.against_cited else None,
            )
            for u in e.units
        ]
        out.append(answer_p_error(checks))
    return out


def uncertain_rate(examples: Sequence[Example], weights: LearnedWeights) -> float:
    """Share of claims (against all evidence) that the weights label ``uncertain``."""
    checker = LearnedChecker(weights)
    labels = [checker.verdict(u.claim, u.against_all).label for e in examples for u in e.units]
    return labels.count("uncertain") / len(labels) if labels else 0.0


def lexical_scores(examples: Sequence[Example]) -> list[float | None]:
    checker = LexicalChecker()
    out = []
    for e in examples:
        checks = []
        for u in e.units:
            cited = [x for x in e.record.evidence if x.evidence_id in u.claim.cited_ids]
            again = checker.check_sync(u.claim, cited) if cited else None
            checks.append((checker.check_sync(u.claim, e.record.evidence), again))
        out.append(answer_p_error(checks))
    return out


def balanced_accuracy(error: BoolArray, p_error: Array) -> float:
    flagged = p_error >= 0.5
    return float((flagged[error].mean() + (~flagged[~error]).mean()) / 2)


def auroc(error: BoolArray, p_error: Array) -> float:
    """Probability that an error outranks a grounded answer (ties count half)."""
    pos, neg = p_error[error], p_error[~error]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


@dataclass(frozen=True)
class Scores:
    balanced_accuracy: float
    auroc: float
    n: int
    unscored: int
    ece: float = 0.0


def score(examples: Sequence[Example], p_error: Sequence[float | None]) -> Scores:
    """Metrics over the scored answers (an answer with no claim is left out and counted)."""
    kept = [(e, p) for e, p in zip(examples, p_error, strict=True) if p is not None]
    error = np.array([not e.supported for e, _ in kept])
    p = np.array([p for _, p in kept], dtype=np.float64)
    return Scores(
        balanced_accuracy(error, p),
        auroc(error, p),
        len(kept),
        len(examples) - len(kept),
        expected_calibration_error(error, p),
    )


# ---------------------------------------------------------------------------- held-out runs


def fold_of(group: str, folds: int, seed: int) -> int:
    digest = hashlib.sha256(f"{seed}:{group}".encode()).hexdigest()
    return int(digest[:8], 16) % folds


def leave_one_dataset_out(corpus: Corpus, config: TrainConfig) -> dict[str, list[float | None]]:
    """For each dataset: scores from weights trained on all the other datasets."""
    out = {}
    for name in corpus.examples:
        others = _with(config, tuple(n for n in corpus.examples if n != name))
        l2, _ = select_l2(corpus, others)
        weights = train_weights(corpus.select(others.train_on), _with(others, others.train_on, l2))
        out[name] = learned_scores(corpus.examples[name], weights)
    return out


def grouped_cross_validation(
    corpus: Corpus, config: TrainConfig, folds: int, seed: int
) -> dict[str, list[float | None]]:
    """For each dataset, each fold scored by weights trained on the other datasets plus the
    other folds of this one (folds by ``group``: no question or article on both sides)."""
    out: dict[str, list[float | None]] = {}
    for name, examples in corpus.examples.items():
        fold = [fold_of(e.record.cluster, folds, seed) for e in examples]
        scores: list[float | None] = [None] * len(examples)
        others = corpus.select([n for n in corpus.examples if n != name])
        for k in range(folds):
            train = others + [e for e, f in zip(examples, fold, strict=True) if f != k]
            weights = train_weights(train, _with(config, tuple(corpus.examples)))
            test = [i for i, f in enumerate(fold) if f == k]
            for i, p in zip(
                test, learned_scores([examples[i] for i in test], weights), strict=True
            ):
                scores[i] = p
        out[name] = scores
    return out


def _with(config: TrainConfig, train_on: tuple[str, ...], l2: float | None = None) -> TrainConfig:
    return TrainConfig(
        train_on=train_on,
        l2=config.l2 if l2 is None else l2,
        lower=config.lower,
        upper=config.upper,
        max_iterations=config.max_iterations,
        tolerance=config.tolerance,
    )


def report(corpus: Corpus, config: TrainConfig, folds: int, seed: int) -> list[str]:
    """The held-out table, as Markdown lines."""
    lodo = leave_one_dataset_out(corpus, config)
    grouped = grouped_cross_validation(corpus, config, folds, seed)
    shipped = train_weights(corpus.select(config.train_on), config)
    lines = [
        "| dataset | n | lexical BAcc / AUROC / ECE "
        "| LODO BAcc / AUROC / ECE (held out) "
        f"| {folds}-fold BAcc / AUROC / ECE (held out) "
        "| shipped weights BAcc / AUROC / ECE | shipped uncertain |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, examples in corpus.examples.items():
        base = score(examples, lexical_scores(examples))
        held = score(examples, lodo[name])
        cv = score(examples, grouped[name])
        own = score(examples, learned_scores(examples, shipped))
        lines.append(
            f"| {name} | {base.n} | {_triple(base)} ({_fit_label(name, LEXICAL_TRAIN_SETS)}) "
            f"| {_triple(held)} | {_triple(cv)} "
            f"| {_triple(own)} ({_fit_label(name, config.train_on)}) "
            f"| {_pct(uncertain_rate(examples, shipped))}% |"
        )
    return lines


def _fit_label(dataset: str, fitted_on: Sequence[str]) -> str:
    return "in fit" if dataset in fitted_on else "held out"


def _triple(scores: Scores) -> str:
    return f"{_pct(scores.balanced_accuracy)} / {scores.auroc:.3f} / {scores.ece:.3f}"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


# ---------------------------------------------------------------------------- command line


@dataclass(frozen=True)
class Trained:
    """The shipped training run: its data, its settings (L2 selected), weights and file."""

    corpus: Corpus
    config: TrainConfig
    l2_table: dict[float, float]
    weights: LearnedWeights
    document: dict[str, object]


def train_shipped(data_dir: Path, config: TrainConfig | None = None) -> Trained:
    """Load the data, select L2 by transfer between the training datasets, fit the weights."""
    config = config or TrainConfig()
    corpus = load_corpus(data_dir)
    l2, table = select_l2(corpus, config)
    config = _with(config, config.train_on, l2)
    weights = train_weights(corpus.select(config.train_on), config)
    document = weights_document(weights, config, corpus)
    training = document["training"]
    assert isinstance(training, dict)
    training["l2_selection"] = {
        "criterion": "mean AUROC training on one training dataset, scoring the other",
        "grid": {str(k): v for k, v in table.items()},
    }
    return Trained(corpus, config, table, weights, document)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="salts the grouped fold assignment")
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    parser.add_argument("--no-report", action="store_true", help="skip the held-out table")
    args = parser.parse_args(argv)
    trained = train_shipped(args.data_dir)
    if args.check:
        return check_shipped(args.out, trained)
    args.out.write_text(weights_text(trained.document), encoding="utf-8")
    print(f"wrote {args.out}")
    print("L2 selection (transfer AUROC): " + str(trained.l2_table) + f" -> {trained.config.l2}")
    if not args.no_report:
        print("\n".join(report(trained.corpus, trained.config, args.folds, args.seed)))
    return 0


def weights_text(document: dict[str, object]) -> str:
    """The weights file exactly as the script writes it."""
    return json.dumps(document, indent=1) + "\n"


def check_shipped(path: Path, trained: Trained) -> int:
    """0 when ``path`` holds, byte for byte, the file this training run would write; else say
    how far its weights are from the retrained ones and return 1."""
    text = path.read_text(encoding="utf-8")
    if text == weights_text(trained.document):
        print(f"{path}: identical to the retrained weights, byte for byte")
        return 0
    gap = max_difference(LearnedWeights.from_json(json.loads(text)), trained.weights)
    print(f"{path}: differs from the retrained weights (largest difference {gap:.2e})")
    return 1


def max_difference(a: LearnedWeights, b: LearnedWeights) -> float:
    left = (*a.mean, *a.scale, *a.coef, a.bias, a.platt_a, a.platt_b, a.lower, a.upper)
    right = (*b.mean, *b.scale, *b.coef, b.bias, b.platt_a, b.platt_b, b.lower, b.upper)
    return max(abs(x - y) for x, y in zip(left, right, strict=True))


if __name__ == "__main__":
    sys.exit(main())
