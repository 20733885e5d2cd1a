"""Where the review server keeps a page's decisions: ``review-<key>.state.json``
and ``review-<key>.jsonl`` beside the page (``server.py`` says what they hold).

Written so that a stop at any moment (Ctrl+C, SIGKILL, a power cut) leaves
files that agree, or that the next start makes agree: each file goes to a
temporary file, synced, renamed over the old one, and the folder synced; the
state first, the JSONL (built from it) second. A start reads the state back,
writes the JSONL again when it is not the state's (a save cut short between
the two), and removes the temporary files a stopped save left (issue 43, L1).

Read so that nothing planted at those paths stops the server: a named pipe
is refused, never opened blocking (M3), and a file larger than any state the
server writes is refused unread (L15). One server at a time keeps a page's
files: a lock file beside them, held by the OS for as long as the process
runs, stops a second one (L14).
"""
import json
import os
import re
import secrets
import stat
import sys
from pathlib import Path
from typing import Iterable, Optional, Tuple

from ..corpus.docs_io import output_file_problem
from .payload import ReviewData
from .state import check_state, jsonl_lines

MAX_STATE = 16 * 1024 * 1024  # the server refuses to store a larger state, so it never reads one
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)  # a pipe opens without waiting for a writer


class StoreError(ValueError):
    """A decisions file the server cannot keep; the message names it."""


def state_paths(page: Path, key: str) -> Tuple[Path, Path]:
    """Where the server keeps the state and the JSONL of ``page``."""
    return page.with_name(f"review-{key}.state.json"), page.with_name(f"review-{key}.jsonl")


class ReviewStore:
    """The state and the JSONL of one page, held by this process alone until
    ``close``. Raises StoreError (naming the path) when another server keeps
    them, when either path is not a file, or when the state is none this
    page could have saved."""

    def __init__(self, page: Path, data: ReviewData):
        self.key = data["key"]
        self.folder = page.parent
        self.state_path, self.jsonl_path = state_paths(page, self.key)
        self._lock = FileLock(page.with_name(f".review-{self.key}.lock"), page)
        try:
            for path in (self.state_path, self.jsonl_path):
                problem = _not_a_file(path)
                if problem:
                    raise StoreError(f"{path} {problem}")
            self.removed = self._remove_stale_temps()
            self.revision, self.rewritten = self._reconcile(data)
        except BaseException:
            self._lock.release()
            raise

    def read_state(self) -> Optional[bytes]:
        """The stored state as the server wrote it, None when there is none."""
        return _read_bounded(self.state_path, MAX_STATE)

    def save(self, state_text: str, revision: int, lines: Iterable[str]) -> None:
        """The state (``revision`` once it is on disk), then its JSONL."""
        _write_durably(self.state_path, [state_text.encode("utf8")])
        self.revision = revision  # the state on disk is the truth, even if the JSONL fails next
        _write_durably(self.jsonl_path, (line.encode("utf8") for line in lines))

    def close(self) -> None:
        self._lock.release()

    def _reconcile(self, data: ReviewData) -> Tuple[int, bool]:
        """The stored revision (0 with no state), and whether the JSONL had
        to be written again to be the state's."""
        raw = self.read_state()
        if raw is None:
            return 0, False
        try:
            stored = json.loads(raw)
            state = check_state(stored, data)
        except (ValueError, RecursionError) as err:
            raise StoreError(
                f"{self.state_path}: not a state of this page the review server can read back ({err}); "
                "move it away to start this page's review afresh"
            ) from err
        revision = stored.get("revision", 0)  # a dict: check_state says so
        revision = revision if type(revision) is int and revision >= 0 else 0
        if _same_lines(self.jsonl_path, jsonl_lines(data, state)):
            return revision, False
        _write_durably(self.jsonl_path, (line.encode("utf8") for line in jsonl_lines(data, state)))
        return revision, True

    def _remove_stale_temps(self) -> int:
        """Removes the temporary files of saves that never finished: only
        this page's own (its key, the names ``_write_durably`` gives), and
        only while this process holds the page's lock, so no save of
        another server is running."""
        pattern = re.compile(rf"\.review-{self.key}\.(?:jsonl|state\.json)\.[0-9a-f]{{16}}\.tmp")
        folders = {Path(os.path.realpath(self.folder)), *(Path(os.path.realpath(p)).parent for p in (self.state_path, self.jsonl_path))}
        removed = 0
        for folder in folders:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)
                    removed += 1
        return removed


class FileLock:
    """An exclusive OS lock on ``path`` (flock; msvcrt on Windows), released
    when the process ends however it ends; the file is removed on release.
    StoreError when another process holds it."""

    def __init__(self, path: Path, page: Path):
        self.path = path
        self._fd: Optional[int] = None
        for _ in range(10):
            fd = self._open()
            try:
                if not _try_lock(fd):
                    raise StoreError(
                        f"{page.parent}: another `spacy-imbalance review`{_holder(fd)} is serving {page.name} from this "
                        f"folder (it holds {path}): stop it, or open the address it printed"
                    )
                if self._still_ours(fd):
                    os.ftruncate(fd, 0)
                    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
                    self._fd = fd
                    return
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # a server that stopped meanwhile removed the file it held: lock the new one
        raise StoreError(f"{path}: cannot take the review lock (it is removed and made again all the time)")

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as err:
            raise StoreError(f"{self.path}: cannot make the review lock there ({err.strerror or err})") from err
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise StoreError(f"{self.path} is not a file: the review server keeps its lock there; move it away")
        return fd

    def _still_ours(self, fd: int) -> bool:
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            if self._still_ours(self._fd):
                os.unlink(self.path)  # while still locked: a server starting now locks a new file
        except OSError:
            pass  # Windows: an open file cannot be removed; the next server locks it again
        os.close(self._fd)
        self._fd = None


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    """" (process N)" from the lock file, when it says."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError, AttributeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""


def _not_a_file(path: Path) -> Optional[str]:
    """Why ``path`` cannot hold a decisions file (None when it is one or is
    not there): a folder, pipe, socket or device; stat, never open, so a
    named pipe does not block."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"is {kind}, not a file: the review server keeps this page's decisions there; move it away and start again"


def _read_bounded(path: Path, limit: int) -> Optional[bytes]:
    """The bytes of the regular file ``path`` (None when it is not there),
    at most ``limit`` of them; StoreError naming it otherwise."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise StoreError(f"{path}: cannot be read ({err.strerror or err})") from err
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        problem = None if stat.S_ISREG(info.st_mode) else _not_a_file(path) or "is not a file"
        if problem:
            raise StoreError(f"{path} {problem}")
        # the size before reading: a planted 30 GB file is refused, not read
        text = file.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(text) > limit:
            size = max(info.st_size, len(text))
            raise StoreError(f"{path} is {size:,} bytes: larger than any state the review server writes ({limit:,} bytes at most)")
        return text


def _same_lines(path: Path, lines: Iterable[str]) -> bool:
    """Whether the file ``path`` holds ``lines`` and nothing else, read a line's
    length at a time (never the whole file, whatever its size)."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return False
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        for line in lines:
            expected = line.encode("utf8")
            if file.read(len(expected)) != expected:
                return False
        return file.read(1) == b""


def _write_durably(path: Path, chunks: Iterable[bytes]) -> None:
    """``chunks`` to ``path`` whole or not at all, on disk when it returns:
    a temporary file beside it (``.<name>.<16 hex>.tmp``), synced, renamed
    over it, the folder synced (the rename is on disk too). A symlink is
    written through to its target."""
    problem = output_file_problem(path)
    if problem is not None:
        raise StoreError(f"{path} {problem}")
    target = Path(os.path.realpath(path))
    tmp = _new_temp(target.parent, path.name)
    try:
        with open(tmp, "wb") as file:
            for chunk in chunks:
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    _sync_folder(target.parent)


def _new_temp(folder: Path, name: str) -> Path:
    while True:
        tmp = folder / f".{name}.{secrets.token_hex(8)}.tmp"
        try:
            # O_EXCL: never take over a file that exists; 0666 less the umask, as a file written in place
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


def _sync_folder(folder: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):
        return  # Windows syncs no folder; its rename is synced with the file
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system that cannot sync a folder (some network ones) keeps the rename as it can
    finally:
        os.close(fd)

