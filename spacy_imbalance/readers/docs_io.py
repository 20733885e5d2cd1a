"""Load gold Docs from .spacy or CoNLL files, and write .spacy files safely."""
import os
import tempfile
from pathlib import Path
from typing import Iterable, List, Optional, Union

from spacy.tokens import Doc, DocBin, SpanGroup
from spacy.vocab import Vocab

from .conll import conll_to_docs


def load_docs(path: Union[str, Path], vocab: Optional[Vocab] = None) -> List[Doc]:
    """Read a ``.spacy`` file, or any other file as CoNLL."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such corpus file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"Expected a .spacy or CoNLL file, got the folder {path}")
    vocab = vocab if vocab is not None else Vocab()
    if path.suffix == ".spacy":
        return list(DocBin().from_disk(path).get_docs(vocab))
    docs, _ = conll_to_docs(path, vocab)
    return docs


def copy_ents_to_spans(docs: Iterable[Doc], spans_key: str) -> None:
    """Store the gold entities also as ``doc.spans[spans_key]`` (for spancat)."""
    for doc in docs:
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=list(doc.ents))


def write_docbin(docs: Iterable[Doc], path: Union[str, Path]) -> int:
    """Write Docs to ``path`` atomically: a failure leaves no partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    docbin = DocBin(docs=docs, store_user_data=False)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        docbin.to_disk(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(docbin)
