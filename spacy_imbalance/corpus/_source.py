"""What the corpus readers of this package share: each reads a .spacy path
like ``spacy.Corpus.v1`` or wraps another reader (so they nest in a config),
works sentence by sentence, and turns edited gold Docs back into Examples."""
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Set

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from wasabi import msg

from .sentences import sentence_doc

ReaderT = Callable[[Language], Iterable[Example]]

_announced: Set[str] = set()


def announce(message: str) -> None:
    """Print a reader's summary once per process.

    Printed, not logged: `spacy train` shows the spacy logger's INFO only with
    -V, and what a reader did to the training set (size factor, entities
    masked) is what a user wants to see before training. Once per process,
    because `spacy train` builds the train reader twice (initialisation and
    training) and calls it every epoch.
    """
    if message not in _announced:
        _announced.add(message)
        msg.info(message)


def source_corpus(
    name: str,
    path: Optional[Path],
    corpus: Optional[ReaderT],
    *,
    gold_preproc: bool = False,
    max_length: int = 0,
    limit: int = 0,
    augmenter: Optional[Callable] = None,
) -> ReaderT:
    """The reader to draw examples from: ``spacy.Corpus`` over ``path``, or
    ``corpus`` itself. Exactly one of the two must be given."""
    if (path is None) == (corpus is None):
        raise ValueError(
            f"{name}: give exactly one of `path` (a .spacy file or folder) or `corpus` (another reader)"
        )
    if corpus is not None:
        return corpus
    if not Path(path).exists():
        raise FileNotFoundError(f"{name}: no such corpus path: {path}")
    return Corpus(path, gold_preproc=gold_preproc, max_length=max_length, limit=limit, augmenter=augmenter)


def sentence_examples(corpus: ReaderT, nlp: Language) -> List[Example]:
    """All examples of a reader, split into sentences where boundaries are set."""
    sentences: List[Example] = []
    for eg in corpus(nlp):
        sentences.extend(split_example(eg))
    return sentences


def split_example(eg: Example) -> List[Example]:
    """``Example.split_sents`` keeping the reference's span groups (which
    ``Span.as_doc`` drops): one example per reference sentence that has
    predicted tokens aligned to it."""
    reference = eg.reference
    if not (len(reference) and reference.has_annotation("SENT_START")) or len(list(reference.sents)) == 1:
        return [eg]
    y2x = eg.alignment.y2x
    seen: Set[int] = set()
    out: List[Example] = []
    for sent in reference.sents:
        indices = [int(i) for i in y2x[sent.start : sent.end] if int(i) not in seen]
        if indices:
            predicted = eg.predicted[indices[0] : indices[-1] + 1].as_doc()
            out.append(Example(predicted, sentence_doc(reference, sent)))
            seen.update(indices)
    return out


def is_gold_tokenized(eg: Example) -> bool:
    return [t.text for t in eg.predicted] == [t.text for t in eg.reference]


def example_like(nlp: Language, source: Example, reference: Doc) -> Example:
    """An Example for an edited reference doc, tokenised the way ``source``
    was: with the gold tokens when its predicted doc had them (gold_preproc),
    else by the pipeline's tokenizer."""
    if is_gold_tokenized(source):
        words = [t.text for t in reference]
        spaces = [bool(t.whitespace_) for t in reference]
        predicted = Doc(nlp.vocab, words=words, spaces=spaces)
    else:
        predicted = nlp.make_doc(reference.text)
    return Example(predicted, reference)
