"""Load gold Docs from .spacy or CoNLL files, and write .spacy files safely."""
import os
import secrets
import stat
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


def output_file_problem(path: Union[str, Path]) -> Optional[str]:
    """Why ``path`` cannot be written as a regular file by an atomic rename,
    or None when it can: it exists as a device, named pipe, socket or folder
    (a rename would replace it with a file), or its folder is not writable.
    The one rule of every writing command (``cli.checks.check_output_file``)
    and of the writers below."""
    target = Path(os.path.realpath(path))  # a symlink is written through to its target
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # a new path; NotADirectoryError: below a file, named next
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    if mode is not None and stat.S_ISDIR(mode):
        return "is a folder: give a file path"
    if mode is not None and not stat.S_ISREG(mode):
        return "is not a regular file (a device, named pipe or socket), which a write would replace: give a file path"
    return parent_problem(target, "written")


def parent_problem(target: Path, verb: str) -> Optional[str]:
    """Why ``target`` cannot be ``verb`` ("written", "made") in its folder:
    the nearest folder above it that exists is a file, or is not writable."""
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"cannot be made: {folder} is a file"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot be {verb}: the folder {folder} is not writable"
    return None


def _write_target(path: Path) -> Path:
    """The file an atomic write of ``path`` renames onto: the target of a
    symlink (so the link stays and its target is written), checked to be a
    regular file or a new path; a ValueError naming ``path`` otherwise."""
    problem = output_file_problem(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}")
    return Path(os.path.realpath(path))


def write_docbins(parts: Dict[Path, Iterable[Doc]]) -> Dict[Path, int]:
    """Write several .spacy files all or nothing: every file goes to a temporary
    name first and is renamed only once all of them are written. A symlink is
    written through to its target; a device, pipe, socket or folder is refused.

    The docs' ``user_data`` is written too: it holds their label scopes
    (``corpus.scopes``), which a corpus transformed or split by a command
    must keep, and otherwise only what the input file brought with it (this
    package keeps nothing else there), which a command has no reason to
    drop. Docs a command builds anew carry only their scope
    (``sentences.keep_label_scope``)."""
    targets = {path: _write_target(Path(path)) for path in parts}
    temps: Dict[Path, str] = {}
    sizes: Dict[Path, int] = {}
    try:
        for path, docs in parts.items():
            targets[path].parent.mkdir(parents=True, exist_ok=True)
            docbin = DocBin(docs=docs, store_user_data=True)
            temps[path] = _create_temp_file(targets[path])
            docbin.to_disk(temps[path])
            sizes[path] = len(docbin)
        for path, tmp in temps.items():
            os.replace(tmp, targets[path])
    finally:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
    return sizes


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file: a process stopped
    while writing leaves the old file or none, never half of one (records
    that resuming reads back). A symlink is written through to its target;
    a device, pipe, socket or folder is refused with a ValueError."""
    target = _write_target(Path(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _create_temp_file(target)
    try:
        Path(tmp).write_text(text, encoding="utf8")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _create_temp_file(path: Path) -> str:
    """A new empty file beside ``path`` (the real file, not a link to it),
    to be renamed to it. Unlike mkstemp's (always 0600) it gets the mode of
    any file written in place, 0666 less the umask, which the rename keeps."""
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
