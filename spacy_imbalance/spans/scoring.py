"""What a ``sampled_spancat`` model's logits say about each candidate,
chosen on the device and copied to the host once per batch.

What a caller reads of a batch's logits differs: the component its
decisions (``spans.decoding``), the threshold search and the reliability
tables the inputs of every decision a threshold could make
(``evaluation.predictions``), the audit every class probability of the
candidates that may be entities (``audit.suspects``). Each reading is a
*choice*: a function of the logits, run on their device, that keeps some
candidates and names columns of them. ``choose_spans`` brings a choice to the
host in one transfer; the pass over documents of a trained pipeline that
makes a choice per batch is ``evaluation.scoring.score_spans``.
"""
from typing import Any, Callable, Dict, List, NamedTuple, Sequence, Tuple, cast

import numpy
from thinc.api import NumpyOps, Ops
from thinc.types import Floats1d, Floats2d, Ints1d

from ..decisions.softmax import probability_of
from .candidates import Candidates, doc_offsets, enumerate_candidates


class Choice(NamedTuple):
    """Candidates chosen on the device: their indices and, per chosen
    candidate, named columns (int32 or bool, or float32: a float32 column may
    be a block with a row per candidate)."""

    rows: Ints1d
    columns: Dict[str, Any]


# a choice is made with ``xp`` (the logits' array module) on the logits
Choose = Callable[[Any, Floats2d], Choice]


class HostSpans(NamedTuple):
    """A choice on the host: each chosen candidate's token start, exclusive
    end and doc (positions within the batch, its docs laid end to end, until
    ``by_doc``), and the choice's columns."""

    starts: numpy.ndarray  # int32
    ends: numpy.ndarray  # int32, exclusive
    doc_ids: numpy.ndarray  # int32
    columns: Dict[str, numpy.ndarray]

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def by_doc(self, doc_lengths: Sequence[int]) -> List["HostSpans"]:
        """One ``HostSpans`` per doc, positions within the doc. Candidates
        are in doc order, so each doc's rows are one slice."""
        bounds = numpy.searchsorted(self.doc_ids, numpy.arange(len(doc_lengths) + 1))
        parts = []
        for i, offset in enumerate(doc_offsets(doc_lengths)):
            rows = slice(int(bounds[i]), int(bounds[i + 1]))
            parts.append(
                HostSpans(
                    (self.starts[rows] - offset).astype("int32"),
                    (self.ends[rows] - offset).astype("int32"),
                    self.doc_ids[rows],
                    {name: column[rows] for name, column in self.columns.items()},
                )
            )
        return parts


def choose_spans(ops: Ops, candidates: Candidates, logits: Floats2d, choose: Choose) -> HostSpans:
    """``choose`` run on the logits' device, and its result copied in one
    transfer: one sync (the chosen candidates' number) and one copy per batch."""
    if not len(candidates):
        # an empty batch asks the device nothing: the same choice, of no
        # candidates, worked out on the host gives the columns their shapes
        host = NumpyOps()
        return _to_host(host, enumerate_candidates(host, [], 1), choose(numpy, host.alloc2f(0, logits.shape[1])))
    return _to_host(ops, candidates, choose(ops.xp, logits))


def _to_host(ops: Ops, candidates: Candidates, choice: Choice) -> HostSpans:
    """The positions and columns of ``choice`` stacked into one int32 block
    on the device, copied at once: float32 values travel as the int32
    column of their bits, and are read back as float32 on the host."""
    xp = ops.xp
    rows = choice.rows
    blocks = [xp.stack([candidates.starts[rows], candidates.ends[rows] + 1, candidates.doc_ids[rows]], axis=1)]
    for column in choice.columns.values():
        block = column[:, None] if column.ndim == 1 else column
        blocks.append(block.view("int32") if column.dtype.kind == "f" else block.astype("int32"))
    host = ops.to_numpy(xp.concatenate(blocks, axis=1))
    columns, at = {}, 3
    for name, column in choice.columns.items():
        width = 1 if column.ndim == 1 else int(column.shape[1])
        block = numpy.ascontiguousarray(host[:, at : at + width])
        block = block.view("float32") if column.dtype.kind == "f" else block.astype(column.dtype)
        columns[name] = block[:, 0] if column.ndim == 1 else block
        at += width
    return HostSpans(host[:, 0], host[:, 1], host[:, 2], columns)


def best_entity(xp: Any, logits: Floats2d) -> Tuple[Ints1d, Floats1d, Any]:
    """Per candidate (on the logits' device): the most probable entity
    column l (>= 1; the first on ties), its float32 softmax probability p(l)
    and whether l is the argmax over all classes. That is l's logit above
    O's: ``argmax`` gives O on a tie, as O is column 0."""
    # argmax's int64 columns made int32: a 1-d int array, which Ints1d
    # describes (thinc types astype of any 1-d array as the generic _Array1d)
    label = cast(Ints1d, (logits[:, 1:].argmax(axis=1) + 1).astype("int32"))
    top = xp.take_along_axis(logits, label.reshape((-1, 1)), axis=1)
    return label, probability_of(xp, logits, label), top[:, 0] > logits[:, 0]
