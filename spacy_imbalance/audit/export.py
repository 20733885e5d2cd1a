"""The audit's outputs: the corpus with its suspects, a JSONL file for
annotation tools, a review page (spacy_imbalance.review), a summary and
plots.

JSONL (one line per document with at least one suspect), in the format
Prodigy's ``ner_manual`` and most span annotation tools read::

    {"text": "...", "tokens": [{"text", "start", "end", "id", "ws"}],
     "spans": [{"start", "end", "token_start", "token_end", "label",
                "source": "annotation" | "suspect", "score"?}],
     "meta": {"doc": corpus index, "fold": k, "max_score": ...}}

``start``/``end`` are character offsets (end exclusive); ``token_start`` and
``token_end`` are token indices, *inclusive* as Prodigy has them. Suspects
carry their calibrated probability as ``score``.
"""
import html
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, Iterable, List, Sequence, Tuple

import numpy
from spacy.tokens import Doc, Span, SpanGroup

from ..corpus.docs_io import write_docbin
from ..plots import save_figure
from ..review.page import review_page
from ..review.payload import review_data
from .estimate import TOTAL, Calibration
from .run import AuditResult, Suspect, headline

SPANS_KEY = "suspected_missing"
FILES = {
    "corpus": "audited.spacy",
    "jsonl": "suspects.jsonl",
    "html": "review.html",
    "summary_json": "summary.json",
    "summary_md": "summary.md",
    "spans": "scored_spans.tsv",
    "miss_rate_plot": "miss_rate.png",
    "calibration_plot": "calibration.png",
}


def by_doc(suspects: Iterable[Suspect]) -> Dict[int, List[Suspect]]:
    grouped: Dict[int, List[Suspect]] = defaultdict(list)
    for suspect in suspects:
        grouped[suspect.doc].append(suspect)
    return grouped


def audited_docs(docs: Sequence[Doc], result: AuditResult, spans_key: str = SPANS_KEY) -> List[Doc]:
    """Copies of the documents with ``doc.spans[spans_key]``: the suspects,
    labelled, with their probabilities in ``attrs["scores"]``."""
    if not spans_key.strip():
        # spaCy takes "" as a key, but nobody would find the suspects under it
        raise ValueError(f"--spans-key must name a span group, got {spans_key!r}")
    grouped = by_doc(result.suspects)
    output = []
    for i, doc in enumerate(docs):
        if spans_key in doc.spans:
            raise ValueError(
                f"document {i} already has doc.spans[{spans_key!r}]; choose another --spans-key, so that it is not overwritten"
            )
        doc = doc.copy()
        mine = grouped.get(i, [])
        group = SpanGroup(doc, name=spans_key, spans=[Span(doc, s.start, s.end, label=s.label) for s in mine])
        group.attrs["scores"] = [s.probability for s in mine]
        doc.spans[spans_key] = group
        output.append(doc)
    return output


def jsonl_records(docs: Sequence[Doc], result: AuditResult) -> Iterable[Dict[str, Any]]:
    for i, suspects in sorted(by_doc(result.suspects).items()):
        doc = docs[i]
        spans = [_span_record(ent, "annotation") for ent in doc.ents]
        for s in suspects:
            spans.append({**_span_record(doc[s.start : s.end], "suspect", label=s.label), "score": round(s.probability, 4)})
        spans.sort(key=lambda span: span["start"])
        yield {
            "text": doc.text,
            "tokens": [
                {"text": t.text, "start": t.idx, "end": t.idx + len(t.text), "id": t.i, "ws": bool(t.whitespace_)} for t in doc
            ],
            "spans": spans,
            "meta": {"doc": i, "fold": suspects[0].fold, "max_score": round(max(s.probability for s in suspects), 4)},
        }


def _span_record(span: Span, source: str, label: str = "") -> Dict[str, Any]:
    return {
        "start": span.start_char,
        "end": span.end_char,
        "token_start": span.start,
        "token_end": span.end - 1,
        "label": label or span.label_,
        "source": source,
    }


def review_html(docs: Sequence[Doc], result: AuditResult, limit: int = 300) -> str:
    """The review page (spacy_imbalance.review): every suspect to accept,
    reject, relabel or re-bound, most probable first; below it a static view
    of the ``limit`` documents with the most probable suspects."""
    grouped = sorted(by_doc(result.suspects).items(), key=lambda item: -max(s.probability for s in item[1]))
    rate = result.miss_rate
    # the command's own line (suspects and estimate in agreement, issue 43 L13), and the note that
    # qualifies an estimate from folds that learned little first among the notes (issue 44)
    line = headline(len(result.suspects), result.settings.threshold, rate.row(TOTAL), rate.method)
    header = (
        f"<h1>spacy-imbalance audit</h1><p>{html.escape(line)}; suspects in {len(grouped)} of "
        f"{result.info.get('n_docs', '?')} documents.</p>"
    )
    if result.info.get("learned_little") and rate.notes:
        header += f"<p><strong>{html.escape(rate.notes[0])}</strong></p>"
    data = review_data(docs, result.suspects, result.labels)
    return review_page(data, title="spacy-imbalance audit: review", header=header, static=_static_view(docs, grouped, limit))


def _static_view(docs: Sequence[Doc], grouped: List[Tuple[int, List[Suspect]]], limit: int) -> str:
    """The first ``limit`` documents of ``grouped`` with their annotated
    entities and their suspects ("LABEL? probability") marked, folded away
    below the reviewer (it needs no script). Every corpus string (text,
    label) is escaped here: none is ever markup (issue 43, H1: displaCy's
    template put labels into the page unescaped)."""
    parts = []
    for i, suspects in grouped[:limit]:
        doc = docs[i]
        marks = [(e.start_char, e.end_char, "ent", e.label_) for e in doc.ents]
        for s in suspects:
            span = doc[s.start : s.end]
            marks.append((span.start_char, span.end_char, "suspect", f"{s.label}? {s.probability:.2f}"))
        parts.append(f"<h4>document {i} (fold {suspects[0].fold})</h4>" + _marked_text(doc.text, marks))
    if not parts:
        return ""
    shown = f"the {limit} most probable of {len(grouped)}" if len(grouped) > limit else f"all {len(grouped)}"
    return (
        f'<details class="static"><summary>Documents with suspects, a static view ({shown}; suspects.jsonl has them '
        f"all)</summary><p>Suspects are shown as dashed <i>LABEL? probability</i>.</p>{''.join(parts)}</details>"
    )


def _marked_text(text: str, marks: List[Tuple[int, int, str, str]]) -> str:
    """``text`` with each (start, end, kind, label) mark as <mark class=kind>,
    escaped; a mark that overlaps one before it is left out of the view."""
    out, position = [], 0
    for start, end, kind, label in sorted(marks):
        if start < position:
            continue
        out.append(html.escape(text[position:start]))
        out.append(f'<mark class="{kind}">{html.escape(text[start:end])}<span class="tag">{html.escape(label)}</span></mark>')
        position = end
    out.append(html.escape(text[position:]))
    return f'<p class="context">{"".join(out)}</p>'


def summary(result: AuditResult) -> Dict[str, Any]:
    rate = result.miss_rate
    counts: Dict[str, int] = defaultdict(int)
    for s in result.suspects:
        counts[s.label] += 1
    outside: Dict[str, int] = defaultdict(int)
    for s in result.out_of_scope:
        outside[s.label] += 1
    rows = []
    for label in rate.labels:
        row = {"label": label, **{k: round(v, 4) for k, v in rate.row(label).items()}}
        row["suspects"] = len(result.suspects) if label == TOTAL else counts[label]
        # spans of a type outside their document's label scope: unknown, not missed (audit.run.split_by_scope)
        row["out_of_scope"] = len(result.out_of_scope) if label == TOTAL else outside[label]
        rows.append(row)
    return {
        "method": rate.method,
        "folds": result.plan.k,
        "seed": result.plan.seed,
        "threshold": result.settings.threshold,
        "floor": result.settings.floor,
        "n_docs": result.info.get("n_docs"),
        # empty documents: in n_docs, but in no fold (nothing to score)
        "n_empty_docs": result.info.get("n_empty_docs", 0),
        "n_dev_docs": result.info.get("n_dev_docs"),
        "level": rate.level,
        "n_resamples": rate.n_resamples,
        "labels": rows,
        "decoding_recall": [round(r, 4) for r in rate.decoding_recall],
        "held_out_recall": [round(r, 4) for r in rate.held_out_recall],
        "held_out_rate": None if rate.held_out_rate is None else round(rate.held_out_rate, 4),
        "notes": rate.notes,
    }


def summary_markdown(data: Dict[str, Any]) -> str:
    level = int(round(100 * data["level"]))
    calibration = Calibration.of(data["method"])
    lines = [
        "# Audit summary",
        "",
        f"{data['n_docs']} documents"
        + (f" ({data['n_empty_docs']} of them empty, left out of the folds)" if data.get("n_empty_docs") else "")
        + f", {data['folds']}-fold cross-fitting (seed {data['seed']}); calibration: "
        + ("the dev set" if calibration is Calibration.DEV else "the training annotations (no dev set)")
        + f". Suspects: unannotated spans with a calibrated probability >= {data['threshold']:g}. "
        + (f"Intervals: {level} % percentile bootstrap over documents ({data['n_resamples']} resamples)."
           if data["n_resamples"] else "No intervals (--resamples 0): each interval is its point estimate."),
        "",
        "| type | annotated | suspects | expected missing | miss rate |",
        "| --- | --: | --: | --: | --: |",
    ]
    for row in data["labels"]:
        name = "**all**" if row["label"] == TOTAL else row["label"]
        lines.append(
            f"| {name} | {row['annotated']:.0f} | {row['suspects']} | {row['expected_missing']:.1f} "
            f"[{row['missing_low']:.1f}, {row['missing_high']:.1f}] | {100 * row['rate']:.1f} % "
            f"[{100 * row['rate_low']:.1f}, {100 * row['rate_high']:.1f}] |"
        )
    recall = data.get("decoding_recall") or []
    if recall:
        reference = "dev entities" if calibration is Calibration.DEV else "annotated entities of its held-out fold"
        lines += [
            "",
            f"Each fold's decoding found {', '.join(f'{100 * r:.0f}' for r in recall)} % of the {reference} with exact "
            "boundaries; the expected missing entities are the suspects' summed probabilities divided by that share "
            "(spacy_imbalance.audit.estimate).",
        ]
    held_out = data.get("held_out_recall") or []
    if recall and held_out:
        lines[-1] += (
            f" Of the annotated entities of their held-out training documents they found "
            f"{', '.join(f'{100 * r:.0f}' for r in held_out)} %"
            + ("." if data.get("held_out_rate") is None else f"; with that share instead the miss rate would be {100 * data['held_out_rate']:.1f} %.")
        )
    lines += ["", *(f"> {note}" for note in data["notes"])]
    return "\n".join(lines).rstrip() + "\n"


def scored_spans_tsv(docs: Sequence[Doc], result: AuditResult) -> str:
    """Every decoded unannotated span (not only the suspects), most probable first:
    lower the threshold later without running the audit again."""
    rows = []
    decoded = result.info["decoded"]
    for i in sorted(decoded):
        spans, probs = decoded[i], result.probabilities[i]
        if not len(spans):
            continue
        fold = result.plan.assignment[i]
        best = spans.best_labels()
        for k in range(len(spans)):
            start, end = int(spans.starts[k]), int(spans.ends[k])
            rows.append((float(spans.scores[k]), i, start, end, result.labels[int(best[k])], float(probs[k]), fold, docs[i][start:end].text))
    # by calibrated probability (comparable across folds, whose maps differ),
    # then by the model's score (the order within a step of the map)
    rows.sort(key=lambda r: (-r[5], -r[0], r[1], r[2]))
    lines = ["doc\tstart\tend\tlabel\tprobability\tscore\tfold\ttext"]
    for score, i, start, end, label, prob, fold, text in rows:
        text = text.replace("\t", " ").replace("\n", " ")
        lines.append(f"{i}\t{start}\t{end}\t{label}\t{prob:.4f}\t{score:.4f}\t{fold}\t{text}")
    return "\n".join(lines) + "\n"


def write_outputs(docs: Sequence[Doc], result: AuditResult, out: Path, *, spans_key: str = SPANS_KEY, html_limit: int = 300) -> Dict[str, Path]:
    """Write every output file into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {key: out / name for key, name in FILES.items()}
    write_docbin(audited_docs(docs, result, spans_key), paths["corpus"])
    with paths["jsonl"].open("w", encoding="utf8") as f:
        for record in jsonl_records(docs, result):
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    paths["html"].write_text(review_html(docs, result, html_limit), encoding="utf8")
    data = summary(result)
    paths["summary_json"].write_text(json.dumps(data, indent=1) + "\n", encoding="utf8")
    paths["summary_md"].write_text(summary_markdown(data), encoding="utf8")
    paths["spans"].write_text(scored_spans_tsv(docs, result), encoding="utf8")
    if not _plots(result, paths):
        del paths["miss_rate_plot"], paths["calibration_plot"]
    return paths


def _plots(result: AuditResult, paths: Dict[str, Path]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rate = result.miss_rate
    fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(rate.labels)), 3.5))
    x = numpy.arange(len(rate.labels))
    values = 100 * numpy.asarray(rate.rate)
    low, high = (100 * numpy.asarray(rate.rate_interval)).T
    ax.bar(x, values, color=["#4c72b0"] * (len(x) - 1) + ["#333333"])
    # the interval as it is: a percentile bootstrap interval need not hold its point estimate
    ax.vlines(x, low, high, color="black")
    ax.hlines(numpy.concatenate([low, high]), numpy.concatenate([x, x]) - 0.1, numpy.concatenate([x, x]) + 0.1, color="black")
    ax.set_xticks(x, [("all" if label == TOTAL else label) for label in rate.labels], rotation=30, ha="right")
    ax.set_ylabel("estimated miss rate (%)")
    ax.set_title(f"Estimated share of entities not annotated ({int(100 * rate.level)} % interval)")
    fig.tight_layout()
    save_figure(fig, paths["miss_rate_plot"], dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(4.5, 4))
    grid = numpy.linspace(0, 1, 201)
    for fold, (g, (scores, outcomes)) in enumerate(zip(result.maps, result.calibration)):
        ax.step(grid, g(grid), where="post", label=f"fold {fold + 1}", alpha=0.8)
        bins = numpy.minimum((scores * 10).astype(int), 9)
        for b in numpy.unique(bins):
            sel = bins == b
            ax.scatter(scores[sel].mean(), outcomes[sel].mean(), s=10 + 40 * numpy.sqrt(sel.sum() / max(len(scores), 1)), color="grey", alpha=0.5)
    ax.plot([0, 1], [0, 1], ls=":", color="black")
    ax.set_xlabel("model score 1 - p(O)")
    ax.set_ylabel("calibrated probability" if result.method is Calibration.DEV else "probability annotated")
    ax.set_title("Calibration maps (dots: binned outcomes)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, paths["calibration_plot"], dpi=120)
    plt.close(fig)
    return True
