"""What the review server spends, whatever its clients do (issue 43, M4):
a cap on connections and threads, a deadline for each whole request, and a
stop (Ctrl+C) that waits for no idle connection."""
import socket
import threading
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.cli import review as review_command
from spacy_imbalance.review.server import ReviewServer

from ..cli._cli import _invoke, _plain
from .raw_http import error_of, exchange, parse, request_bytes


@pytest.fixture
def page(small_corpus, tmp_path) -> Path:
    docs, result = small_corpus
    path = tmp_path / "review.html"
    path.write_text(review_html(docs, result), encoding="utf8")
    return path


def running(server: ReviewServer) -> ReviewServer:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop(server: ReviewServer) -> None:
    server.shutdown()
    server.server_close()


def get_page(server: ReviewServer) -> int:
    host = [("Host", f"127.0.0.1:{server.server_address[1]}"), ("X-Review-Token", server.token)]
    return parse(exchange(server.server_address, request_bytes("GET", "/", host)))[0]


def idle_connections(server: ReviewServer, n: int) -> List[socket.socket]:
    """``n`` connections that send nothing (as a browser's speculative
    ones), once the server has taken each."""
    sockets = [socket.create_connection(server.server_address, timeout=10) for _ in range(n)]
    wait_for(lambda: len(server._open) == n)
    return sockets


def rest_of(sock: socket.socket, first: bytes) -> bytes:
    """``first`` and what follows it to the end of the answer."""
    sock.settimeout(5)
    chunks = [first]
    while chunks[-1]:
        chunks.append(sock.recv(65536))
    return b"".join(chunks)


def wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.01)


@pytest.fixture
def capped(page) -> Iterator[ReviewServer]:
    server = running(ReviewServer(page, max_connections=3, request_timeout=5.0))
    yield server
    stop(server)


def test_connections_past_the_cap_get_503_and_no_thread(capped):
    """300 connections made 180 threads; now a few at once, the rest 503."""
    threads = threading.active_count()
    idle = idle_connections(capped, 3)
    assert threading.active_count() == threads + 3
    status, headers, body = parse(exchange(capped.server_address, b""))
    assert (status, headers["retry-after"]) == (503, "1")
    assert error_of(body) == "the review server has too many connections open; try again in a moment"
    assert threading.active_count() == threads + 3
    for sock in idle:
        sock.close()
    wait_for(lambda: not capped._open)
    assert get_page(capped) == 200


def test_a_request_that_trickles_in_is_cut_at_its_deadline(page):
    """A header byte every 10 s kept a connection (and its thread) for ever:
    each read had 30 s. Now the whole request has request_timeout."""
    server = running(ReviewServer(page, request_timeout=1.0))
    try:
        with socket.create_connection(server.server_address, timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            sock.settimeout(0.25)
            answer = b""
            while not answer and time.monotonic() - started < 6:
                try:
                    sock.sendall(b"X")  # one byte of a header every quarter second
                    answer = sock.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    break
            elapsed = time.monotonic() - started
            answer = rest_of(sock, answer)
        assert answer.startswith(b"HTTP/1.0 408 ") and b"did not arrive whole within 1 s" in answer
        assert 0.9 < elapsed < 3
        assert get_page(server) == 200
    finally:
        stop(server)


def test_a_body_that_stops_coming_is_answered_408(page):
    server = running(ReviewServer(page, request_timeout=1.0))
    try:
        host = f"127.0.0.1:{server.server_address[1]}"
        headers = [
            ("Host", host), ("X-Review-Token", server.token), ("If-Match", server.etag), ("Content-Type", "application/json"),
            ("Content-Length", "100"),
        ]
        with socket.create_connection(server.server_address, timeout=10) as sock:
            sock.sendall(request_bytes("PUT", f"/decisions/{server.key}", headers, b'{"state": '))
            started = time.monotonic()
            answer = sock.recv(65536)
            assert time.monotonic() - started < 3
            answer = rest_of(sock, answer)
        assert answer.startswith(b"HTTP/1.0 408 ") and b"the body did not arrive whole within 1 s" in answer
        assert not server.state_path.exists()
    finally:
        stop(server)


def test_stopping_waits_for_no_idle_connection(page):
    """One idle connection held Ctrl+C for 30 s (the server joined its thread)."""
    server = running(ReviewServer(page))
    idle = idle_connections(server, 2)
    server.shutdown()
    started = time.monotonic()
    server.server_close()
    assert time.monotonic() - started < 1
    for sock in idle:  # closed by the server, not left to time out
        assert sock.recv(10) == b""
        sock.close()
    assert not server.page.with_name(f".review-{server.key}.lock").exists()


def test_ctrl_c_stops_the_command_at_once_and_says_so(page, monkeypatch):
    """`spacy-imbalance review` with a connection open: Ctrl+C (a
    KeyboardInterrupt in serve_forever) ends it within a second, with its
    message."""
    opened = []

    def serve_forever(self, poll_interval=0.5):
        opened.append(socket.create_connection(self.server_address, timeout=10))
        self.handle_request()  # accepts it: a thread now waits for its request
        assert len(self._open) == 1
        opened.append(time.monotonic())
        raise KeyboardInterrupt

    monkeypatch.setattr(review_command.ReviewServer, "serve_forever", serve_forever)
    result = _invoke("review", page, "--no-browser", "--port", 0)
    assert time.monotonic() - opened[1] < 1
    assert result.exit_code == 0, result.output
    assert "Stopped; no decision is kept" in _plain(result.output)
    assert opened[0].recv(10) == b""
    opened[0].close()


def test_a_second_review_of_the_folder_stops_naming_it(page):
    """Issue 43, L14: a second `review` of the same folder started with a port warning only."""
    server = running(ReviewServer(page))
    try:
        result = _invoke("review", page.parent, "--no-browser")
        assert result.exit_code == 1
        assert f"{page.parent}: another `spacy-imbalance review`" in _plain(result.output)
        assert "is in use" not in result.output
    finally:
        stop(server)
