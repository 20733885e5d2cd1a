"""The review loop measured with a reviewer who knows the truth (``--review``):
the audit's ranking read from the top, k spans in all (k = the number of
entities hidden), each accepted when it is a hidden entity (its boundaries
fixed and its label set right where it only overlaps one) and rejected
otherwise. The decisions are written in the review page's format (Prodigy's
binary annotations) and applied with ``spacy-imbalance apply-review``, once
with the accepts only and once with the rejections too, so the loop a user
runs is the loop measured; then ``--restore``'s config is trained on both
corpora (the rejections: known negatives, ``incorrect_spans_key``)."""
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from spacy.tokens import Doc

from ...benchmark.paired import paired_runs
from .matching import SpanKey, overlaps
from .restoring import corpus_runs, recovered_share
from .setting import Setting
from .steps import Timer, package_command

ACCEPTS, WITH_REJECTIONS = "reviewed-accepts", "reviewed"
Decision = Tuple[SpanKey, str]


def simulated_review(ranked: Sequence[SpanKey], truth: Sequence[SpanKey], k: int) -> List[Decision]:
    """(span as the reviewer leaves it, "accept" | "reject") for the first k
    spans of ``ranked``. A span that overlaps a hidden entity not yet
    accepted is accepted as that entity; one that repeats an accepted entity
    exactly is skipped (the reviewer has seen it); any other is rejected."""
    decisions: List[Decision] = []
    accepted: List[SpanKey] = []
    for span in ranked[:k]:
        if any(span[:3] == a[:3] for a in accepted):
            continue
        entity = next((t for t in truth if overlaps(span, t) and t not in accepted), None)
        if entity is not None:
            accepted.append(entity)
            decisions.append((entity, "accept"))
        else:
            decisions.append((span, "reject"))
    return decisions


def decision_lines(docs: Sequence[Doc], decisions: Sequence[Decision]) -> List[str]:
    """The decisions as the review page exports them: one JSON task a line."""
    lines = []
    for (i, start, end, label), answer in decisions:
        span = docs[i][start:end]
        lines.append(json.dumps({
            "text": docs[i].text,
            "spans": [{"start": span.start_char, "end": span.end_char, "token_start": start, "token_end": end - 1, "label": label}],
            "answer": answer,
            "meta": {"doc": i},
        }))
    return lines


def apply_review(corpus: Path, decisions: Path, out: Path) -> None:
    """``spacy-imbalance apply-review``, as a user runs it."""
    result = subprocess.run(package_command("apply-review", str(corpus), str(decisions), "-o", str(out)), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"apply-review failed on {decisions}: {result.stdout[-2000:]}{result.stderr[-2000:]}")


def review_step(setting: Setting, docs: Sequence[Doc], masked: Path, ranked: Sequence[SpanKey], truth: Sequence[SpanKey],
                timer: Timer) -> Dict[str, Any]:
    """The simulated review of one setting and its report."""
    decisions = simulated_review(ranked, truth, len(truth))
    corpora = {}
    for name, kept in ((ACCEPTS, [d for d in decisions if d[1] == "accept"]), (WITH_REJECTIONS, decisions)):
        path = setting.folder / f"{name}.jsonl"
        path.write_text("\n".join(decision_lines(docs, kept)) + "\n", encoding="utf8")
        corpora[name] = setting.folder / f"{name}.spacy"
        if not corpora[name].exists():
            apply_review(masked, path, corpora[name])
    reports = corpus_runs(setting, {"masked": masked, **corpora}, timer)
    macro = {key: reports[key]["macro"]["f"] for key in ("full", "masked", *corpora)}
    paired = paired_runs([reports[ACCEPTS]], [reports[WITH_REJECTIONS]])
    n_accepted = sum(1 for _, answer in decisions if answer == "accept")
    return {
        "k": len(truth),
        "accepted": n_accepted,
        "rejected": len(decisions) - n_accepted,
        "macro_f": macro,
        "recovered_share": {name: recovered_share(macro["full"], macro["masked"], macro[name]) for name in corpora},
        # what the rejections add to the accepts, paired over the test sentences
        "paired_rejections": {k: paired["macro_f"][k] for k in ("delta", "low", "high", "share_not_better")},
    }
