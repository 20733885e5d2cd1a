"""The review page served from its audit folder, decisions written to disk.

Opened as a file, the page keeps its decisions in the browser's localStorage,
which browsers do not promise to keep for file:// pages (Debian's Chromium
150 showed a file page an empty storage after some reloads,
tests/review/test_browser.py). Served by :func:`serve` (``spacy-imbalance
review``), the page also sends its compact state a moment after each change;
the server checks it against the page's data and writes, next to the page:

- ``review-<key>.state.json``: the page's state (decisions, cursor, undo),
  read back when the page opens, in any browser;
- ``review-<key>.jsonl``: the decisions as the page exports them (built
  here, ``state.decision_records``), ready for ``spacy-imbalance apply-review``.

``<key>`` is the page's data hash, so the decisions of another audit written
into the same folder stay apart. The server listens on the loopback address
only, serves the page and nothing else of the folder, and accepts state for
its own page's key alone. Each save makes a new revision (the ``ETag`` of
the saved state); a save must name the revision its page last read
(``If-Match``), so that a tab working from an older read is refused (409)
instead of writing over another tab's decisions: the page then merges what
it changed into the newer state and saves again. It answers only its owner: every request carries
the random token of the URL the command prints (``?token=`` for the page,
the ``X-Review-Token`` header for the page's own requests), as notebook
servers do; another user of the machine, or a page in another tab, gets 403.
"""
import hmac
import json
import re
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

from ..corpus.docs_io import write_text_atomic
from .payload import ReviewData
from .state import check_state, decision_records

MAX_BODY = 16 * 1024 * 1024  # the state of 5,000 decisions with a full undo history is well under 1 MB
DATA = re.compile(r'<script[^>]*\bid="review-data"[^>]*>(.*?)</script>', re.DOTALL)
KEY = re.compile(r"^[0-9a-f]{16}$")
TOKEN_HEADER = "X-Review-Token"


class ReviewPageError(ValueError):
    """The file is not a review page the server can serve."""


def page_data(page: Path) -> ReviewData:
    """The data a review page embeds (``payload.ReviewData``), its key checked."""
    try:
        text = page.read_text(encoding="utf8")
    except (OSError, UnicodeDecodeError) as err:
        raise ReviewPageError(f"{page}: cannot be read ({err})") from err
    match = DATA.search(text)
    if match is None:
        raise ReviewPageError(f"{page}: not a review page of spacy-imbalance audit (no review data in it)")
    try:
        data = json.loads(match.group(1))
        key = data.get("key")
    except (ValueError, AttributeError) as err:
        raise ReviewPageError(f"{page}: its review data is not valid JSON ({err})") from err
    if not isinstance(key, str) or not KEY.match(key):
        raise ReviewPageError(f"{page}: its review data has no valid key (got {key!r})")
    return data


def page_key(page: Path) -> str:
    """The storage key of a review page (``payload.ReviewData.key``)."""
    return page_data(page)["key"]


def state_paths(page: Path, key: str) -> Tuple[Path, Path]:
    """Where the server keeps the state and the JSONL of ``page``."""
    return page.with_name(f"review-{key}.state.json"), page.with_name(f"review-{key}.jsonl")


def decisions_jsonl(body: Any, data: ReviewData) -> Tuple[Dict[str, Any], str]:
    """The state a request body holds, checked against the page's data, and
    its decisions as JSONL; ValueError naming what is wrong."""
    if not isinstance(body, dict) or set(body) != {"state"}:
        raise ValueError("the body must be a JSON object with the one key 'state'")
    state = check_state(body["state"], data)
    lines = [json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n" for record in decision_records(data, state)]
    return state, "".join(lines)


class ReviewServer(ThreadingHTTPServer):
    # a save in progress finishes before the server closes (Ctrl+C)
    daemon_threads = False
    block_on_close = True
    # a port in use is refused, not shared (Windows lets a reused address bind twice)
    allow_reuse_address = False

    def __init__(self, page: Path, host: str = "127.0.0.1", port: int = 0):
        self.page = page
        self.data = page_data(page)
        self.key = self.data["key"]
        # read once: an audit re-run into the folder while this runs does not change what is served
        self.page_bytes = page.read_bytes()
        self.state_path, self.jsonl_path = state_paths(page, self.key)
        self.saves = 0
        self.revision = self._stored_revision()
        # the owner's secret: in the URL printed to the terminal, never on disk
        self.token = secrets.token_urlsafe(24)
        self.lock = threading.Lock()  # one save at a time: the two files always from one request
        super().__init__((host, port), ReviewHandler)

    @property
    def url(self) -> str:
        """The server's address (requests need the token as well)."""
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    @property
    def page_url(self) -> str:
        """The page's address with the owner's token: what to open."""
        return f"{self.url}?token={self.token}"

    @property
    def etag(self) -> str:
        return f'"{self.revision}"'

    def _stored_revision(self) -> int:
        """The revision of the state on disk (0 when there is none): saves
        go on counting across restarts."""
        try:
            stored = json.loads(self.state_path.read_text(encoding="utf8"))
        except (OSError, ValueError):
            return 0
        revision = stored.get("revision", 0) if isinstance(stored, dict) else 0
        return revision if type(revision) is int and revision >= 0 else 0

    def save(self, state: Dict[str, Any], jsonl: str, read: Optional[str]) -> str:
        """Both files, the JSONL first: a state on disk never runs ahead of
        the decisions apply-review reads. ``read`` is the revision (ETag)
        the page last read: ``Stale`` unless it is the current one (another
        tab saved since). Returns the new revision's ETag."""
        with self.lock:
            if read != self.etag:
                raise Stale(
                    "the decisions were saved from another tab or window since this page read them "
                    f"(revision {read or 'none'}, now {self.etag})"
                )
            revision = self.revision + 1
            write_text_atomic(self.jsonl_path, jsonl)
            write_text_atomic(self.state_path, json.dumps({**state, "revision": revision}, separators=(",", ":")))
            self.revision = revision
            self.saves += 1
            return self.etag


class Stale(Exception):
    """A save made from a read older than the state on disk."""


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewServer
    timeout = 30  # a client that stops sending mid-body does not hold a thread forever

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per keypress would bury what the command prints

    def do_GET(self) -> None:
        path = self._checked_path()
        if path is None:
            return
        if path in ("/", "/review.html", f"/{self.server.page.name}"):
            self._send(HTTPStatus.OK, self.server.page_bytes, "text/html; charset=utf-8")
        elif path == self._decisions_path():
            # the body and its revision from one moment: not between a save's two writes
            with self.server.lock:
                etag = self.server.etag
                try:
                    body: Optional[bytes] = self.server.state_path.read_bytes()
                except FileNotFoundError:
                    body = None
                except OSError as err:
                    self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{self.server.state_path}: cannot be read ({err.strerror or err})")
                    return
            if body is None:
                self._error(HTTPStatus.NOT_FOUND, "no decisions saved yet", etag=etag)
            else:
                self._send(HTTPStatus.OK, body, "application/json", etag=etag)
        else:
            self._error(HTTPStatus.NOT_FOUND, f"the review server serves its page and its decisions, not {path}")

    def do_PUT(self) -> None:
        path = self._checked_path()
        if path is None:
            return
        if path != self._decisions_path():
            self._error(HTTPStatus.NOT_FOUND, f"decisions are saved at {self._decisions_path()}, not {path}")
            return
        read = self.headers.get("If-Match")
        if read is None:
            self._error(HTTPStatus.PRECONDITION_REQUIRED, "an If-Match header is needed: the revision (ETag) of the decisions this page last read")
            return
        length = self._length()
        if length is None:
            return
        try:
            state, jsonl = decisions_jsonl(json.loads(self.rfile.read(length)), self.server.data)
        except (ValueError, RecursionError) as err:
            self._error(HTTPStatus.BAD_REQUEST, str(err) if isinstance(err, ValueError) else "the body nests too deeply")
            return
        try:
            etag = self.server.save(state, jsonl, read)
        except Stale as err:
            self._error(HTTPStatus.CONFLICT, str(err), etag=self.server.etag)
            return
        except OSError as err:
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{err.filename or self.server.page.parent}: cannot be written ({err.strerror or err})")
            return
        except ValueError as err:  # write_text_atomic: the target is a folder, a pipe or a device
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(err))
            return
        self._send(HTTPStatus.NO_CONTENT, b"", None, etag=etag)

    def _checked_path(self) -> Optional[str]:
        """The request's path without its query, or None (answered 403) when
        the Host header is not this server's: a web page cannot reach the
        server through a DNS name it controls (DNS rebinding)."""
        port = self.server.server_address[1]
        if self.headers.get("Host") not in {f"127.0.0.1:{port}", f"localhost:{port}"}:
            self._error(HTTPStatus.FORBIDDEN, f"the review server answers requests for 127.0.0.1:{port} only")
            return None
        url = urlsplit(self.path)
        given = self.headers.get(TOKEN_HEADER) or next(iter(parse_qs(url.query).get("token", [])), "")
        # constant time: the comparison tells nothing of how much of a guess was right
        if not hmac.compare_digest(given.encode("utf8"), self.server.token.encode("utf8")):
            self._error(
                HTTPStatus.FORBIDDEN,
                "the review server answers only its owner: open the address `spacy-imbalance review` printed (with its token)",
            )
            return None
        return url.path

    def _decisions_path(self) -> str:
        return f"/decisions/{self.server.key}"

    def _length(self) -> Optional[int]:
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is needed")
            return None
        if length <= 0:
            self._error(HTTPStatus.BAD_REQUEST, "the body is empty: it must hold the page's state")
            return None
        if length > MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body of at most {MAX_BODY:,} bytes is accepted, got {length:,}")
            return None
        return length

    def _error(self, status: HTTPStatus, message: str, etag: Optional[str] = None) -> None:
        self._send(status, json.dumps({"error": message}).encode("utf8"), "application/json", etag=etag)

    def _send(self, status: HTTPStatus, body: bytes, content_type: Optional[str], etag: Optional[str] = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        if etag is not None:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        # the page's state changes on every keypress: never a cached copy
        self.send_header("Cache-Control", "no-store")
        # never framed (clickjacking), never sniffed as another type, no referrer out
        self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        if body:
            self.wfile.write(body)


def default_port(key: str) -> int:
    """A port from the page's key, the same every time the page is served:
    the browser's copy of the decisions belongs to an origin (host and port),
    so a new port each time would leave it behind."""
    return 20000 + int(key, 16) % 20000


def serve(page: Path, host: str = "127.0.0.1", port: int = 0) -> ReviewServer:
    """A server for ``page`` (not yet serving: call ``serve_forever``)."""
    return ReviewServer(page, host, port)
