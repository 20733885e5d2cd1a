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

A save must also come from the page (its own ``Origin``, when the browser
sends one) as JSON (``Content-Type: application/json``), with one ``Host``
and a path as its target. What it costs stays bounded whatever a client
does: at most ``max_connections`` at once (503 past them), each request
read whole (line, headers, body) within ``request_timeout`` seconds (408
after), and Ctrl+C stops it at once, a save in progress finished first
(issue 43, M4, L5, L7, L8). ``store.py`` keeps the files.
"""
import hmac
import io
import json
import re
import secrets
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple
from urllib.parse import parse_qs, urlsplit

from .payload import ReviewData, check_review_data
from .state import check_state, jsonl_lines
from .store import MAX_STATE, ReviewStore, StoreError, state_paths

MAX_BODY = 16 * 1024 * 1024  # the state of 5,000 decisions with a full undo history is well under 1 MB
MAX_CONNECTIONS = 32  # a browser opens six to a host; the rest is room for a few tabs
REQUEST_TIMEOUT = 10.0  # seconds for a whole request, however slowly it trickles in
CLOSE_WAIT = 5.0  # seconds a save in progress gets to finish when the server stops
LINGER = 1.0  # seconds to read what a client still sends after its answer (see shutdown_request)
DATA = re.compile(r'<script[^>]*\bid="review-data"[^>]*>(.*?)</script>', re.DOTALL)
KEY = re.compile(r"^[0-9a-f]{16}$")
LENGTH = re.compile(r"[0-9]{1,20}")
TOKEN_HEADER = "X-Review-Token"
JSON_TYPE = "application/json"

__all__ = ["ReviewPageError", "ReviewServer", "StoreError", "default_port", "page_data", "page_key", "serve", "state_paths"]


class ReviewPageError(ValueError):
    """The file is not a review page the server can serve."""


def page_data(page: Path) -> ReviewData:
    """The data a review page embeds (``payload.ReviewData``), checked: its
    key, and everything a save reads of it."""
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
    except (ValueError, AttributeError, RecursionError) as err:
        raise ReviewPageError(f"{page}: its review data is not valid JSON ({err})") from err
    if not isinstance(key, str) or not KEY.match(key):
        raise ReviewPageError(f"{page}: its review data has no valid key (got {key!r})")
    try:
        return check_review_data(data)
    except ValueError as err:
        raise ReviewPageError(f"{page}: {err}") from err


def page_key(page: Path) -> str:
    """The storage key of a review page (``payload.ReviewData.key``)."""
    return page_data(page)["key"]


def checked_state(body: Any, data: ReviewData) -> Dict[str, Any]:
    """The state a request body holds, checked against the page's data;
    ValueError naming what is wrong."""
    if not isinstance(body, dict) or set(body) != {"state"}:
        raise ValueError("the body must be a JSON object with the one key 'state'")
    return check_state(body["state"], data)


class Stale(Exception):
    """A save made from a read older than the state on disk."""


class Refused(Exception):
    """A save the server does not make: ``status`` and the message say why."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


class RequestTooSlow(Exception):
    """A request not read whole within the server's request_timeout. Not a
    TimeoutError, which http.server swallows: this one is answered (408)."""


class ReviewServer(ThreadingHTTPServer):
    # an idle connection never holds the process: Ctrl+C closes at once (a save in progress is
    # waited for in server_close, not by joining every connection's thread)
    daemon_threads = True
    block_on_close = False
    # a port in use is refused, not shared (Windows lets a reused address bind twice)
    allow_reuse_address = False
    # an AF_INET socket's bound name: the host as text (the stubs allow the bytes a bind takes)
    server_address: Tuple[str, int]

    def __init__(
        self, page: Path, host: str = "127.0.0.1", port: int = 0, *,
        max_connections: int = MAX_CONNECTIONS, request_timeout: float = REQUEST_TIMEOUT,
    ):
        self.page = page
        self.data = page_data(page)
        self.key = self.data["key"]
        # read once: an audit re-run into the folder while this runs does not change what is served
        self.page_bytes = page.read_bytes()
        self.request_timeout = request_timeout
        self.saves = 0
        # the owner's secret: in the URL printed to the terminal, never on disk
        self.token = secrets.token_urlsafe(24)
        self.lock = threading.Lock()  # one save at a time: the two files always from one request
        self.closing = False
        self._slots = threading.BoundedSemaphore(max_connections)
        self._open: Set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self.store = ReviewStore(page, self.data)  # the lock on the page's files, before the port
        try:
            super().__init__((host, port), ReviewHandler)
        except BaseException:
            self.store.close()
            raise

    @property
    def state_path(self) -> Path:
        return self.store.state_path

    @property
    def jsonl_path(self) -> Path:
        return self.store.jsonl_path

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
        return f'"{self.store.revision}"'

    def save(self, state: Dict[str, Any], read: Optional[str]) -> str:
        """The checked ``state`` and its JSONL on disk (``store.py``). ``read``
        is the revision (ETag) the page last read: ``Stale`` unless it is the
        current one (another tab saved since). Returns the new ETag."""
        with self.lock:
            if self.closing:
                raise Refused(HTTPStatus.SERVICE_UNAVAILABLE, "the review server is stopping: this save was not made")
            if read != self.etag:
                raise Stale(
                    "the decisions were saved from another tab or window since this page read them "
                    f"(revision {read or 'none'}, now {self.etag})"
                )
            revision = self.store.revision + 1
            try:
                # allow_nan=False: a NaN anywhere in the state (its undo history) would make it unreadable to the page
                text = json.dumps({**state, "revision": revision}, separators=(",", ":"), allow_nan=False)
            except ValueError as err:
                raise Refused(HTTPStatus.BAD_REQUEST, f"the state holds a number JSON has not (NaN or an infinity): {err}") from err
            except RecursionError as err:
                raise Refused(HTTPStatus.BAD_REQUEST, "the state nests too deeply") from err
            if len(text) > MAX_STATE:
                raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the state takes {len(text):,} bytes stored, at most {MAX_STATE:,}")
            self.store.save(text, revision, jsonl_lines(self.data, state))
            self.saves += 1
            return self.etag

    def read_state(self) -> Tuple[str, Optional[bytes]]:
        """The current ETag and the stored state (None when none), from one
        moment: not between a save's two writes."""
        with self.lock:
            return self.etag, self.store.read_state()

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection while fewer than max_connections are
        open; past them a 503 at once, and no thread (M4: 300 connections
        made 180 threads)."""
        if not self._slots.acquire(blocking=False):
            _refuse_busy(request)
            return
        with self._open_lock:
            self._open.add(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def _forget(self, request: Any) -> None:
        with self._open_lock:
            if request not in self._open:
                return
            self._open.discard(request)
        self._slots.release()

    def shutdown_request(self, request: Any) -> None:
        """Closes a connection once its answer is sent, after reading for a
        moment what the client still sends: closing with a body unread (a
        refused save) makes the kernel reset the connection, and the client
        may lose the answer before reading it."""
        try:
            request.shutdown(socket.SHUT_WR)
            request.settimeout(LINGER)
            left, deadline = MAX_BODY, time.monotonic() + LINGER
            while left > 0 and time.monotonic() < deadline:
                chunk = request.recv(min(left, 65536))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:
            pass
        self.close_request(request)

    def server_close(self) -> None:
        """Stops at once: no new connection, a save in progress finished (up
        to CLOSE_WAIT seconds) and none after it, every open connection
        closed without waiting for its client, the page's lock released."""
        super().server_close()
        got = self.lock.acquire(timeout=CLOSE_WAIT)
        self.closing = True
        if got:
            self.lock.release()
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)  # wakes the thread reading it: it ends
            except OSError:
                pass
        self.store.close()


def _refuse_busy(request: socket.socket) -> None:
    """A 503 without a thread, sent from the accepting thread: a few bytes
    into an empty socket buffer, which never waits."""
    body = json.dumps({"error": "the review server has too many connections open; try again in a moment"}).encode("utf8")
    head = f"HTTP/1.0 503 Service Unavailable\r\nContent-Type: {JSON_TYPE}\r\nContent-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    try:
        request.setblocking(False)
        request.send(head.encode("ascii") + body)
        request.shutdown(socket.SHUT_WR)
        request.recv(65536)  # what the client sent already: unread, the close would reset the connection
    except OSError:
        pass
    request.close()


class _DeadlineReader(io.RawIOBase):
    """A connection's bytes until ``deadline`` (time.monotonic()): the whole
    request has REQUEST_TIMEOUT seconds, not each read (M4: a header byte
    every 10 s kept a connection open for ever)."""

    def __init__(self, connection: socket.socket, deadline: float):
        self.connection, self.deadline = connection, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RequestTooSlow()
        self.connection.settimeout(left)
        try:
            return self.connection.recv_into(buffer)
        except TimeoutError as err:
            raise RequestTooSlow() from err


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewServer
    raw_requestline: bytes  # read by http.server's handle_one_request (not in its stubs)
    # every answer starts with a status line, even to a request line that names no version
    default_request_version = "HTTP/1.0"
    requestline = ""
    request_version = "HTTP/1.0"
    command = ""
    timeout = None  # the whole request's deadline (_DeadlineReader), not a timeout per read

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        # a BufferedReader over the deadline reader where the stdlib types rfile as the socket's own file
        setattr(self, "rfile", io.BufferedReader(_DeadlineReader(self.connection, time.monotonic() + self.server.request_timeout)))
        self.host = ""

    def handle(self) -> None:
        try:
            super().handle()
        except RequestTooSlow:
            self.close_connection = True
            self._error(HTTPStatus.REQUEST_TIMEOUT, f"the request did not arrive whole within {self.server.request_timeout:g} s")
        except OSError:
            pass  # the client went away, or the server closed the connection as it stopped

    def version_string(self) -> str:
        return "spacy-imbalance-review"  # not the Python version, which http.server tells every client

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per keypress would bury what the command prints

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        pass

    def parse_request(self) -> bool:
        words = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n").split()
        if len(words) != 3:
            # HTTP/0.9's "GET /" has no headers (no Host, no token), and http.server would answer it without a status line
            self.close_connection = True
            self._error(HTTPStatus.BAD_REQUEST, "a request line is METHOD TARGET HTTP/1.x")
            return False
        return super().parse_request()

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """http.server's own refusals (a garbled request line, too long or
        too many headers, a method with no do_*) as this server's JSON."""
        self.close_connection = True
        if code == HTTPStatus.NOT_IMPLEMENTED:  # a method the server has not: not a fault of the server
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, f"the review server answers GET and PUT, not {_shown(self.command)}", allow="GET, PUT")
        elif code == HTTPStatus.HTTP_VERSION_NOT_SUPPORTED:
            version = self.requestline.split()[-1]  # http.server has not set request_version yet
            self._error(HTTPStatus.BAD_REQUEST, f"the review server speaks HTTP/1.0 and HTTP/1.1, not {_shown(version)}")
        else:
            self._error(HTTPStatus(code), message or explain or HTTPStatus(code).phrase)

    def do_GET(self) -> None:
        path = self._checked_path()
        if path is None:
            return
        if path in ("/", "/review.html", f"/{self.server.page.name}"):
            self._send(HTTPStatus.OK, self.server.page_bytes, "text/html; charset=utf-8")
        elif path == self._decisions_path():
            try:
                etag, body = self.server.read_state()
            except StoreError as err:  # a pipe or a huge file put there while the server runs
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(err))
                return
            if body is None:
                self._error(HTTPStatus.NOT_FOUND, "no decisions saved yet", etag=etag)
            else:
                self._send(HTTPStatus.OK, body, JSON_TYPE, etag=etag)
        else:
            self._error(HTTPStatus.NOT_FOUND, f"the review server serves its page and its decisions, not {_shown(path)}")

    def do_PUT(self) -> None:
        path = self._checked_path()
        if path is None:
            return
        if path != self._decisions_path():
            self._error(HTTPStatus.NOT_FOUND, f"decisions are saved at {self._decisions_path()}, not {_shown(path)}")
            return
        if not self._from_the_page():
            return
        read = self.headers.get("If-Match")
        if read is None:
            self._error(HTTPStatus.PRECONDITION_REQUIRED, "an If-Match header is needed: the revision (ETag) of the decisions this page last read")
            return
        body = self._body()
        if body is None:
            return
        try:
            state = checked_state(json.loads(body), self.server.data)
        except (ValueError, RecursionError) as err:
            self._error(HTTPStatus.BAD_REQUEST, str(err) if isinstance(err, ValueError) else "the body nests too deeply")
            return
        try:
            etag = self.server.save(state, str(read))
        except Stale as err:
            self._error(HTTPStatus.CONFLICT, str(err), etag=self.server.etag)
        except Refused as err:
            self._error(err.status, str(err))
        except StoreError as err:  # the target is a folder, a pipe or a device, or its folder is not writable
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(err))
        except OSError as err:
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{err.filename or self.server.page.parent}: cannot be written ({err.strerror or err})")
        else:
            self._send(HTTPStatus.NO_CONTENT, b"", None, etag=etag)

    def _checked_path(self) -> Optional[str]:
        """The request's path without its query, or None (answered) when the
        request is not for this server: more than one Host header or a
        target that is not a path (400: which of two would a proxy have
        read?), a Host that is not this server's (403: a web page cannot
        reach the server through a DNS name it controls, DNS rebinding), or
        not the owner's token (403)."""
        port = self.server.server_address[1]
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1:
            self._error(HTTPStatus.BAD_REQUEST, f"a request has one Host header, this one has {len(hosts)}")
            return None
        self.host = str(hosts[0]).strip() if hosts else ""
        if self.host not in {f"127.0.0.1:{port}", f"localhost:{port}"}:
            self._error(HTTPStatus.FORBIDDEN, f"the review server answers requests for 127.0.0.1:{port} only")
            return None
        # absolute-form ("http://host/...") or "//host/...", which a proxy would read for its host (and which
        # http.server turns into "/host/...": the target as sent is checked)
        target = self.requestline.split()[1]
        if not target.startswith("/") or target.startswith("//"):
            self._error(HTTPStatus.BAD_REQUEST, f"the request's target must be a path such as /, not {_shown(target)}")
            return None
        url = urlsplit(self.path)
        tokens = self.headers.get_all(TOKEN_HEADER) or []
        if tokens:
            given = str(tokens[0]) if len(tokens) == 1 else ""  # two tokens: neither counts
        else:
            given = next(iter(parse_qs(url.query).get("token", [])), "")
        # constant time: the comparison tells nothing of how much of a guess was right
        if not hmac.compare_digest(given.encode("utf8", "replace"), self.server.token.encode("utf8")):
            self._error(
                HTTPStatus.FORBIDDEN,
                "the review server answers only its owner: open the address `spacy-imbalance review` printed (with its token)",
            )
            return None
        return url.path

    def _from_the_page(self) -> bool:
        """Whether a save comes from the page: its Origin (browsers send one
        with every PUT) is this server's, and its body is declared JSON, which
        a form of another site cannot send without asking first (CORS)."""
        origins = self.headers.get_all("Origin") or []
        own = f"http://{self.host}"
        if len(origins) > 1 or (origins and str(origins[0]).strip() != own):
            shown = ", ".join(_shown(str(o)) for o in origins)
            self._error(HTTPStatus.FORBIDDEN, f"decisions are saved only from the review page (Origin {own}), not from {shown}")
            return False
        kind = str(self.headers.get("Content-Type", ""))
        if kind.split(";")[0].strip().lower() != JSON_TYPE:
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"a save's body is JSON, sent with Content-Type: {JSON_TYPE}; got {_shown(kind) if kind else 'none'}")
            return False
        return True

    def _body(self) -> Optional[bytes]:
        """The request's body, read whole within the request's time, or None
        (answered): its Content-Length missing (411), not one number of
        bytes, or the body shorter than it (400), too large (413)."""
        if self.headers.get("Transfer-Encoding") is not None:
            self._error(HTTPStatus.BAD_REQUEST, "a body is sent with a Content-Length, not a Transfer-Encoding")
            return None
        lengths = [str(value).strip() for value in self.headers.get_all("Content-Length") or []]
        if not lengths:
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is needed")
            return None
        if len(lengths) > 1 or not LENGTH.fullmatch(lengths[0]):
            shown = ", ".join(_shown(value) for value in lengths)
            self._error(HTTPStatus.BAD_REQUEST, f"the Content-Length header must be one number of bytes, got {shown}")
            return None
        length = int(lengths[0])
        if length == 0:
            self._error(HTTPStatus.BAD_REQUEST, "the body is empty: it must hold the page's state")
            return None
        if length > MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body of at most {MAX_BODY:,} bytes is accepted, got {length:,}")
            return None
        try:
            body = self.rfile.read(length)
        except RequestTooSlow:
            self._error(HTTPStatus.REQUEST_TIMEOUT, f"the body did not arrive whole within {self.server.request_timeout:g} s")
            return None
        if len(body) < length:
            self._error(HTTPStatus.BAD_REQUEST, f"the body ended after {len(body):,} of the {length:,} bytes its Content-Length announced")
            return None
        return body

    def _decisions_path(self) -> str:
        return f"/decisions/{self.server.key}"

    def _error(self, status: HTTPStatus, message: str, etag: Optional[str] = None, allow: Optional[str] = None) -> None:
        self._send(status, json.dumps({"error": message}).encode("utf8"), JSON_TYPE, etag=etag, allow=allow)

    def _send(self, status: HTTPStatus, body: bytes, content_type: Optional[str], etag: Optional[str] = None, allow: Optional[str] = None) -> None:
        self.connection.settimeout(self.server.request_timeout)  # a client that reads nothing holds no thread for ever
        self.send_response(status)
        headers: List[Tuple[str, Optional[str]]] = [("Content-Type", content_type), ("ETag", etag), ("Allow", allow)]
        for name, value in headers:
            if value is not None:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        # the page's state changes on every keypress: never a cached copy
        self.send_header("Cache-Control", "no-store")
        # never framed (clickjacking), never sniffed as another type, no referrer out
        self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)


def _shown(text: str, limit: int = 80) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def default_port(key: str) -> int:
    """A port from the page's key, the same every time the page is served:
    the browser's copy of the decisions belongs to an origin (host and port),
    so a new port each time would leave it behind."""
    return 20000 + int(key, 16) % 20000


def serve(page: Path, host: str = "127.0.0.1", port: int = 0) -> ReviewServer:
    """A server for ``page`` (not yet serving: call ``serve_forever``)."""
    return ReviewServer(page, host, port)
