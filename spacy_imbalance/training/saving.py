"""Saves that a signal cannot leave half-written, for ``spacy train``:

    [training.before_to_disk]
    @callbacks = "spacy-imbalance.atomic_save.v1"

spaCy's training loop saves each checkpoint with ``nlp.to_disk(model-last)``,
writing file by file into the folder it replaces, and then copies model-last
to model-best. A SIGTERM (a scheduler's time limit, ``kill``) during that
write left a model-last that did not load: a 0-byte tokenizer file, "Unpack
failed: incomplete input" (issue 43). With this callback the pipeline is
written to a hidden sibling folder and swapped in by two renames; SIGTERM
and SIGINT that arrive meanwhile wait until the swap is done and are then
delivered as they would have been, so the process still stops (or raises
KeyboardInterrupt) at once, with the folder it was writing complete. A save
killed outright (SIGKILL, power loss) leaves the previous folder and a
hidden leftover that the next save to the same place removes.

What this does not cover: spaCy's own copy of model-last to model-best
(``shutil.rmtree`` then ``shutil.copytree``) runs after the callback's save
returns, out of its reach; it takes a fraction of the write's time.
"""
import glob
import logging
import os
import shutil
import signal
import threading
import uuid
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.util import registry

logger = logging.getLogger("spacy")

# the signals a save defers: a scheduler's or `kill`'s SIGTERM, and Ctrl-C
DEFERRED = (signal.SIGTERM, signal.SIGINT)
# the hidden siblings of a folder being saved: the new pipeline while it is
# written, and the old one between the two renames
WRITING = "saving"
REPLACED = "replaced"


@registry.callbacks("spacy-imbalance.atomic_save.v1")
def create_atomic_save_v1() -> Callable[[Language], Language]:
    """A ``[training.before_to_disk]`` callback: each checkpoint of
    ``spacy train`` is written whole or not at all (module docstring)."""
    return save_atomically


def save_atomically(nlp: Language) -> Language:
    """``nlp`` itself, whose next ``to_disk`` is ``to_disk_atomically``.

    spaCy calls ``to_disk`` on what ``before_to_disk`` returns and requires
    a ``Language`` (E914): the same object, not a copy of a pipeline that is
    being trained, with ``to_disk`` shadowed by an instance attribute for one
    call. Other ``[training.before_to_disk]`` callbacks of this package
    return their pipeline through this function, as a config has one.
    """
    # an instance attribute that shadows the method for one call (mypy refuses assigning to a method)
    setattr(nlp, "to_disk", partial(_to_disk_once, nlp))
    return nlp


def _to_disk_once(nlp: Language, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
    # the instance attribute goes first: the pipeline's own to_disk writes the sibling folder
    nlp.__dict__.pop("to_disk", None)
    to_disk_atomically(nlp, path, exclude=exclude)


def to_disk_atomically(nlp: Language, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
    """``nlp.to_disk(path, exclude=exclude)``, written to a hidden sibling
    of ``path`` and renamed into place, with SIGTERM and SIGINT deferred until
    then (module docstring). Whatever was at ``path`` is replaced whole,
    unlike spaCy's ``to_disk``, which leaves the files of a component the
    pipeline no longer has. When the write fails, ``path`` is left as it was
    and the error is raised."""
    # normalised, so that the siblings of "out/model-last/" or "x/.." have a name
    target = Path(os.path.abspath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    _clean_leftovers(target)
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    # a name, not a folder: to_disk creates it with the mode any folder it creates gets
    writing, replaced = _sibling(target, WRITING, token), _sibling(target, REPLACED, token)
    with _signals_deferred():
        try:
            type(nlp).to_disk(nlp, writing, exclude=exclude)
            _swap(writing, target, replaced)
        except BaseException:
            _remove_leftover(writing)
            raise
        # the save is done: an old folder that cannot be removed is a leftover the next save removes
        _remove_leftover(replaced)


def _swap(new: Path, target: Path, replaced: Path) -> None:
    """``new`` renamed to ``target``, whatever was there renamed to
    ``replaced`` first (and back, when the second rename fails)."""
    had_target = os.path.lexists(target)
    if had_target:
        os.rename(target, replaced)
    try:
        os.rename(new, target)
    except BaseException:
        if had_target:
            os.rename(replaced, target)
        raise


def _sibling(target: Path, role: str, token: str) -> Path:
    return target.parent / f".{target.name}.{role}-{token}"


def _clean_leftovers(target: Path) -> None:
    """Remove what a killed save to ``target`` left beside it (our own names
    only); when it was killed between the two renames, ``target`` is missing
    and the folder it had, complete, is put back first."""
    replaced = _leftovers(target, REPLACED)
    if replaced and not os.path.lexists(target):
        # the newest: older ones outlived a target that was since saved again
        os.rename(replaced.pop(), target)
    for leftover in [*replaced, *_leftovers(target, WRITING)]:
        _remove(leftover)


def _leftovers(target: Path, role: str) -> List[Path]:
    """The siblings of ``target`` a save named for ``role``, oldest first."""
    return sorted(target.parent.glob(f"{glob.escape(f'.{target.name}.{role}-')}*"), key=os.path.getmtime)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _remove_leftover(path: Path) -> None:
    """``_remove``, where a failure is not the caller's error to raise."""
    try:
        _remove(path)
    except OSError as err:
        logger.warning("Could not remove %s (the next save to the same place removes it): %s", path, err)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Record SIGTERM and SIGINT instead of acting on them; on leaving, put
    the previous handlers back and deliver each signal received, once, in
    the order received. Python handles signals in the main thread only: in
    another one, or for a handler not set from Python, nothing is deferred."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: List[int] = []

    def record(signum: int, frame: Optional[FrameType]) -> None:
        if signum not in received:
            received.append(signum)

    previous: Dict[signal.Signals, Any] = {}
    for signum in DEFERRED:
        handler = signal.getsignal(signum)
        if handler is not None:
            previous[signum] = handler
            signal.signal(signum, record)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for number in received:
            # the default SIGTERM ends the process here; SIGINT's raises KeyboardInterrupt
            signal.raise_signal(number)
