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
its own page's key alone.
"""
import json
import os
import re
import tempfile
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from .payload import ReviewData
from .state import check_state, decision_records

MAX_BODY = 16 * 1024 * 1024  # the state of 5,000 decisions with a full undo history is well under 1 MB
DATA = re.compile(r'<script[^>]*\bid="review-data"[^>]*>(.*?)</script>', re.DOTALL)
KEY = re.compile(r"^[0-9a-f]{16}$")


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


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it: a
    crash mid-write leaves the previous version, never half a file."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class ReviewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, page: Path, host: str = "127.0.0.1", port: int = 0):
        self.page = page
        self.data = page_data(page)
        self.key = self.data["key"]
        self.state_path, self.jsonl_path = state_paths(page, self.key)
        self.saves = 0
        super().__init__((host, port), ReviewHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per keypress would bury what the command prints

    def do_GET(self) -> None:
        if self.path in ("/", "/review.html", f"/{self.server.page.name}"):
            self._send(HTTPStatus.OK, self.server.page.read_bytes(), "text/html; charset=utf-8")
        elif self.path == self._decisions_path():
            if self.server.state_path.is_file():
                self._send(HTTPStatus.OK, self.server.state_path.read_bytes(), "application/json")
            else:
                self._error(HTTPStatus.NOT_FOUND, "no decisions saved yet")
        else:
            self._error(HTTPStatus.NOT_FOUND, f"the review server serves its page and its decisions, not {self.path}")

    def do_PUT(self) -> None:
        if self.path != self._decisions_path():
            self._error(HTTPStatus.NOT_FOUND, f"decisions are saved at {self._decisions_path()}, not {self.path}")
            return
        length = self._length()
        if length is None:
            return
        try:
            state, jsonl = decisions_jsonl(json.loads(self.rfile.read(length)), self.server.data)
        except ValueError as err:
            self._error(HTTPStatus.BAD_REQUEST, str(err))
            return
        write_atomic(self.server.state_path, json.dumps(state, separators=(",", ":")))
        write_atomic(self.server.jsonl_path, jsonl)
        self.server.saves += 1
        self._send(HTTPStatus.NO_CONTENT, b"", None)

    def _decisions_path(self) -> str:
        return f"/decisions/{self.server.key}"

    def _length(self) -> Optional[int]:
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is needed")
            return None
        if not 0 < length <= MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a body of 1 to {MAX_BODY:,} bytes is accepted, got {length:,}")
            return None
        return length

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._send(status, json.dumps({"error": message}).encode("utf8"), "application/json")

    def _send(self, status: HTTPStatus, body: bytes, content_type: Optional[str]) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # the page's state changes on every keypress: never a cached copy
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if body:
            self.wfile.write(body)


def serve(page: Path, host: str = "127.0.0.1", port: int = 0) -> ReviewServer:
    """A server for ``page`` (not yet serving: call ``serve_forever``)."""
    return ReviewServer(page, host, port)
