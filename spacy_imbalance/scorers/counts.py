"""Per-example span match counts: the one place where predictions meet gold.

Scores, bootstrap intervals and paired comparisons are all computed from the
same ``(n_examples, n_labels, 3)`` table of true positives, false positives and
false negatives, so a resampled score is always the score of a resampled
test set. The matching rules copy spaCy's: ``get_ner_prf`` for ``doc.ents`` and
``Scorer.score_spans`` for ``doc.spans[key]``.
"""
import base64
import zlib
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

import numpy

from spacy.training import Example

TP, FP, FN = 0, 1, 2


@dataclass
class MatchCounts:
    labels: List[str]
    # int64 array (n_examples, n_labels, 3): tp, fp, fn of each label per example
    table: numpy.ndarray

    def totals(self) -> numpy.ndarray:
        return self.table.sum(axis=0)

    def with_labels(self, labels: List[str]) -> "MatchCounts":
        """The same counts over a superset of labels (zeros for new ones)."""
        missing = set(self.labels) - set(labels)
        if missing:
            raise ValueError(f"with_labels: labels {sorted(missing)} would be dropped")
        table = numpy.zeros((self.table.shape[0], len(labels), 3), dtype="int64")
        for j, label in enumerate(self.labels):
            table[:, labels.index(label)] = self.table[:, j]
        return MatchCounts(labels, table)

    def to_sparse(self) -> Dict[str, Any]:
        """A JSON-ready form holding only the non-zero rows, so that a metrics
        file can be compared later (paired bootstrap) without the model.

        The rows (example, label, tp, fp, fn) are stored as five little-endian
        int32 columns, the example column as differences, zlib-compressed and
        base64-encoded: a span model that predicts spans everywhere has a row
        for nearly every example and label, and as JSON lists these made up
        most of metrics/."""
        nonzero = numpy.argwhere(self.table.any(axis=2))
        columns = numpy.zeros((5, len(nonzero)), dtype="<i4")
        if len(nonzero):
            columns[0] = numpy.diff(nonzero[:, 0], prepend=0)
            columns[1] = nonzero[:, 1]
            columns[2:] = self.table[nonzero[:, 0], nonzero[:, 1]].T
        return {
            "labels": list(self.labels),
            "n_examples": int(self.table.shape[0]),
            "n_rows": int(len(nonzero)),
            "columns_zlib": base64.b64encode(zlib.compress(columns.tobytes(), 9)).decode("ascii"),
        }

    @classmethod
    def from_sparse(cls, data: Dict[str, Any]) -> "MatchCounts":
        """The counts of ``to_sparse``; also reads the earlier form, a list of
        [example, label, tp, fp, fn] rows."""
        table = numpy.zeros((data["n_examples"], len(data["labels"]), 3), dtype="int64")
        if "columns_zlib" in data:
            raw = zlib.decompress(base64.b64decode(data["columns_zlib"]))
            columns = numpy.frombuffer(raw, dtype="<i4").reshape(5, data["n_rows"]).astype("int64")
            table[numpy.cumsum(columns[0]), columns[1]] = columns[2:].T
            return cls(list(data["labels"]), table)
        for i, j, *values in data["rows"]:
            table[i, j] = values
        return cls(list(data["labels"]), table)


def _to_table(rows: List[Dict[str, List[int]]]) -> MatchCounts:
    labels = sorted({label for row in rows for label in row})
    table = numpy.zeros((len(rows), len(labels), 3), dtype="int64")
    for i, row in enumerate(rows):
        for label, values in row.items():
            table[i, labels.index(label)] = values
    return MatchCounts(labels, table)


def ents_counts(examples: Iterable[Example], gold_key: Optional[str] = None, entities_key: Optional[str] = None) -> MatchCounts:
    """Count matches of predicted ``doc.ents`` (or the predicted span group
    ``doc.spans[entities_key]``, a component's entities beside another ner's)
    against gold ``doc.ents``, or against the gold span group
    ``doc.spans[gold_key]`` when it is given.

    As in spaCy's ``get_ner_prf``: docs without entity annotation (without
    the gold group) are skipped; a predicted entity over gold tokens with
    missing annotation is ignored (span groups have no missing annotation).
    """
    rows: List[Dict[str, List[int]]] = []
    for eg in examples:
        row: Dict[str, List[int]] = {}
        rows.append(row)
        if gold_key is None and not eg.y.has_annotation("ENT_IOB"):
            continue
        if gold_key is not None and gold_key not in eg.y.spans:
            continue
        gold_spans = eg.y.ents if gold_key is None else eg.y.spans[gold_key]
        golds: Set[Tuple[str, int, int]] = {(e.label_, e.start, e.end) for e in gold_spans}
        align_x2y = eg.alignment.x2y
        for pred in eg.x.ents if entities_key is None else eg.x.spans.get(entities_key, []):
            counts = row.setdefault(pred.label_, [0, 0, 0])
            indices = align_x2y[pred.start : pred.end]
            if not len(indices):
                continue
            if gold_key is None and any(token.ent_iob == 0 for token in eg.y[indices[0] : indices[-1] + 1]):
                continue
            key = (pred.label_, int(indices[0]), int(indices[-1]) + 1)
            if key in golds:
                counts[TP] += 1
                golds.remove(key)
            else:
                counts[FP] += 1
        for label, _, _ in golds:
            row.setdefault(label, [0, 0, 0])[FN] += 1
    return _to_table(rows)


def spans_counts(
    examples: Iterable[Example], spans_key: str, *, allow_overlap: bool = True
) -> MatchCounts:
    """Count matches of predicted against gold ``doc.spans[spans_key]``.

    As in spaCy's ``Scorer.score_spans``: docs whose gold lacks the key are
    skipped, and spans are compared as sets of (label, start, end).
    """
    rows: List[Dict[str, List[int]]] = []
    for eg in examples:
        row: Dict[str, List[int]] = {}
        rows.append(row)
        if spans_key not in eg.reference.spans:
            continue
        gold = {(s.label_, s.start, s.end) for s in eg.reference.spans[spans_key]}
        pred: Set[Tuple[str, int, int]] = set()
        if spans_key in eg.predicted.spans:
            predicted = eg.predicted.spans[spans_key]
            # aligning makes the spans in the gold doc, whose vocab may not know
            # a predicted label (one the gold set lacks): spaCy's E084 otherwise
            for span in predicted:
                eg.reference.vocab.strings.add(span.label_)
            aligned = eg.get_aligned_spans_x2y(predicted, allow_overlap)
            pred = {(s.label_, s.start, s.end) for s in aligned}
        for label, _, _ in pred & gold:
            row.setdefault(label, [0, 0, 0])[TP] += 1
        for label, _, _ in pred - gold:
            row.setdefault(label, [0, 0, 0])[FP] += 1
        for label, _, _ in gold - pred:
            row.setdefault(label, [0, 0, 0])[FN] += 1
    return _to_table(rows)
