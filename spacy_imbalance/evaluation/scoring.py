"""The pass over documents of a trained pipeline that the audit, the
threshold search and the reliability tables make: a ``sampled_spancat``'s
scores for each batch, of which a choice (``spans.scoring``) comes to the
host in one transfer."""
from typing import Iterable, Iterator, List, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch

from ..spans.scoring import Choose, HostSpans, choose_spans
from .components import span_component


def score_spans(
    nlp: Language, component: str, docs: Iterable[Doc], choose: Choose, *, batch_size: int = 128
) -> Iterator[Tuple[List[Doc], HostSpans]]:
    """Batch by batch: copies of the docs' tokens (their annotations are not
    seen) after the pipeline's components before ``component``, and what
    ``choose`` keeps of the component's scores for them. ``component`` names
    a ``sampled_spancat`` (``span_component`` checks that, with the error a
    user should see)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    pipe = span_component(nlp, component)
    # the upstream components only: a listener reads the tok2vec's doc.tensor
    downstream = nlp.pipe_names[nlp.pipe_names.index(component) :]
    for batch in minibatch(docs, size=batch_size):
        copies = [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in batch]
        copies = list(nlp.pipe(copies, disable=downstream, batch_size=batch_size))
        candidates, logits = pipe.predict(copies)
        yield copies, choose_spans(pipe.model.ops, candidates, logits, choose)
