"""What the corpus-transforming commands (resample, undersample, augment,
mask, subsample) share: read a corpus as sentences, write the result
atomically, and show the imbalance statistics before and after."""
from pathlib import Path
from typing import Callable, List, Optional

from spacy.tokens import Doc
from spacy.vocab import Vocab
from wasabi import msg

from ..corpus.conll import ConllFormatError
from ..corpus.docs_io import load_docs, write_docbin
from ..corpus.gold_checks import check_no_empty_spans
from ..corpus.sentences import sentence_docs
from ..corpus.stats import corpus_stats
from ._app import check_outputs_are_not_inputs, fail
from .checks import check_docbin_output, check_output_file, check_spans_key


def read_sentences(path: Path, vocab: Optional[Vocab] = None) -> List[Doc]:
    """The sentences of a .spacy or CoNLL file, one Doc each (span groups and
    entities kept); a clear message and exit 1 when the file cannot be read
    or holds a zero-length span (the index names the document in the file)."""
    try:
        docs = load_docs(path, vocab)
        check_no_empty_spans(docs, str(path))
    except (OSError, ConllFormatError, ValueError) as err:
        fail(str(err))
    return [sentence for doc in docs for sentence in sentence_docs(doc)]


def transform_file(
    input_path: Path,
    output: Path,
    transform: Callable[[List[Doc]], List[Doc]],
    *,
    spans_key: Optional[str] = None,
) -> List[Doc]:
    """Read ``input_path``, apply ``transform`` to its sentences, write the
    result to ``output`` and print both statistics side by side. A
    ValueError raised by the transform ends the command with its message.
    ``spans_key``, when given, must name a span group of the input: an absent
    key would make every transform silently do nothing."""
    # the message of the output that is the input, then every other output
    # problem (a folder, a device, a pipe, an unwritable folder): all before
    # the corpus is read
    check_outputs_are_not_inputs([input_path], [output])
    check_output_file(output, "OUTPUT", inputs=[input_path])
    check_docbin_output(output, "OUTPUT")
    before = read_sentences(input_path)
    if spans_key is not None:
        check_spans_key(before, spans_key, str(input_path))
    try:
        after = transform(before)
    except ValueError as err:
        fail(str(err))
    n_written = write_docbin(after, output)
    msg.good(f"Wrote {n_written:,} sentences to {output}")
    print_comparison(before, after, spans_key=spans_key)
    return after


def print_comparison(before: List[Doc], after: List[Doc], *, spans_key: Optional[str] = None) -> None:
    """The rows of `spacy-imbalance stats`, one column per corpus."""
    b, a = corpus_stats(before, spans_key=spans_key), corpus_stats(after, spans_key=spans_key)

    def frequent(s, which: str) -> str:
        label, pct = getattr(s, f"{which}_frequent_type"), getattr(s, f"{which}_frequent_type_pct")
        return "-" if label is None else f"{pct:.2f} ({label})"

    rows = [
        ("tokens", f"{b.tokens:,}", f"{a.tokens:,}"),
        ("sentences", f"{b.sentences:,}", f"{a.sentences:,}"),
        ("size factor (sentences)", "1.00", f"{a.sentences / b.sentences:.2f}" if b.sentences else "-"),
        ("size factor (tokens)", "1.00", f"{a.tokens / b.tokens:.2f}" if b.tokens else "-"),
        ("entity types", b.entity_types, a.entity_types),
        ("% entity tokens", f"{b.entity_token_pct:.2f}", f"{a.entity_token_pct:.2f}"),
        ("% tokens of least frequent type", frequent(b, "least"), frequent(a, "least")),
        ("% tokens of most frequent type", frequent(b, "most"), frequent(a, "most")),
        ("% sentences with an entity", f"{b.sentences_with_entity_pct:.2f}", f"{a.sentences_with_entity_pct:.2f}"),
    ]
    msg.table(rows, header=("", "before", "after"), aligns=("l", "r", "r"))
    labels = sorted(set(b.per_type) | set(a.per_type), key=lambda t: (-b.per_type[t].tokens if t in b.per_type else 0, t))
    if labels:
        per_type = [
            (
                label,
                b.per_type[label].tokens if label in b.per_type else 0,
                a.per_type[label].tokens if label in a.per_type else 0,
                f"{b.per_type[label].token_pct:.2f}" if label in b.per_type else "-",
                f"{a.per_type[label].token_pct:.2f}" if label in a.per_type else "-",
            )
            for label in labels
        ]
        msg.table(
            per_type,
            header=("type", "tokens before", "tokens after", "% before", "% after"),
            aligns=("l", "r", "r", "r", "r"),
        )
