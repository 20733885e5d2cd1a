"""Load gold Docs from .spacy or CoNLL files, and write .spacy files safely."""
import os
import secrets
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Union

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
        return _read_docbin(path, vocab)
    docs, _ = conll_to_docs(path, vocab)
    return docs


def _read_docbin(path: Path, vocab: Vocab) -> List[Doc]:
    """The Docs of a .spacy file; a ValueError naming the file when it is not
    one or is damaged (an OSError names the file already)."""
    data = path.read_bytes()
    try:
        return list(DocBin().from_bytes(data).get_docs(vocab))
    except Exception as err:
        # damaged data fails anywhere in the decoding: zlib, msgpack, a missing
        # key, an array of the wrong size, each with its own exception type
        raise ValueError(
            f"{path}: not a .spacy (DocBin) file, or a damaged one ({type(err).__name__}: {err})"
        ) from err


def copy_ents_to_spans(docs: Iterable[Doc], spans_key: str) -> None:
    """Store the gold entities also as ``doc.spans[spans_key]`` (for spancat)."""
    for doc in docs:
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=list(doc.ents))


def write_docbins(parts: Dict[Path, Iterable[Doc]]) -> Dict[Path, int]:
    """Write several .spacy files all or nothing: every file goes to a temporary
    name first and is renamed only once all of them are written."""
    temps: Dict[Path, str] = {}
    sizes: Dict[Path, int] = {}
    try:
        for path, docs in parts.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            docbin = DocBin(docs=docs, store_user_data=False)
            temps[path] = _create_temp_file(path)
            docbin.to_disk(temps[path])
            sizes[path] = len(docbin)
        for path, tmp in temps.items():
            os.replace(tmp, path)
    finally:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
    return sizes


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file: a process stopped
    while writing leaves the old file or none, never half of one (records
    that resuming reads back)."""
    tmp = _create_temp_file(path)
    try:
        Path(tmp).write_text(text, encoding="utf8")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _create_temp_file(path: Path) -> str:
    """A new empty file beside ``path``, to be renamed to it. Unlike mkstemp's
    (always 0600) it gets the mode of any file written in place, 0666 less
    the umask, which the rename keeps."""
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            # O_EXCL: never take over a file that exists, as mkstemp does
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


def write_docbin(docs: Iterable[Doc], path: Union[str, Path]) -> int:
    """Write Docs to ``path`` atomically: a failure leaves no partial file."""
    path = Path(path)
    return write_docbins({path: docs})[path]
