"""`spacy-imbalance review`: what it refuses before serving (the server
itself: tests/review/test_server.py; in a browser: tests/review/test_browser.py),
and a served page answering while the command runs."""
import json
import socket
import threading
import time
import urllib.request

import pytest

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.cli import review as review_command

from ..review.conftest import make_doc, make_result, suspect
from ._cli import _assert_failed, _invoke


@pytest.fixture
def audit_dir(tmp_path):
    doc = make_doc(["Anna", "flew", "to", "Berlin"], [(0, 1, "PER")])
    (tmp_path / "review.html").write_text(review_html([doc], make_result([doc], [suspect(0, 3, 4, "LOC", 0.9)])), encoding="utf8")
    return tmp_path


def test_review_refuses_a_folder_without_a_page(tmp_path):
    _assert_failed(_invoke("review", tmp_path, "--no-browser"), str(tmp_path), "no review page there")


def test_review_refuses_a_file_that_is_not_a_review_page(tmp_path):
    page = tmp_path / "summary.html"
    page.write_text("<html>a summary</html>", encoding="utf8")
    _assert_failed(_invoke("review", page, "--no-browser"), "summary.html", "not a review page")


@pytest.mark.parametrize("port", ["-1", "70000"])
def test_review_refuses_a_port_out_of_range(audit_dir, port):
    _assert_failed(_invoke("review", audit_dir, "--port", port, "--no-browser"), "--port", port)


def test_review_refuses_a_port_in_use(audit_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        _assert_failed(_invoke("review", audit_dir, "--port", port, "--no-browser"), f"--port {port}", "cannot listen")


def test_review_serves_the_folders_page_until_stopped(audit_dir, monkeypatch):
    servers = []
    real_serve = review_command.serve

    def serve(page, port=0):
        servers.append(real_serve(page, port=port))
        return servers[-1]

    monkeypatch.setattr(review_command, "serve", serve)
    results = []
    thread = threading.Thread(target=lambda: results.append(_invoke("review", audit_dir, "--no-browser", "--port", 0)), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not servers and time.monotonic() < deadline:
        time.sleep(0.02)
    (server,) = servers
    body = json.dumps({"state": {"format": 1, "rows": [[0, "r", 1, 3, 4]]}}).encode("utf8")
    with urllib.request.urlopen(server.page_url, timeout=10) as response:
        assert response.read() == (audit_dir / "review.html").read_bytes()
    request = urllib.request.Request(f"{server.url}decisions/{server.key}", data=body, method="PUT", headers={"X-Review-Token": server.token, "If-Match": server.etag, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204
    (line,) = (audit_dir / f"review-{server.key}.jsonl").read_text(encoding="utf8").splitlines()
    assert json.loads(line)["answer"] == "reject"
    server.shutdown()
    thread.join(timeout=10)
    assert not thread.is_alive()
    (result,) = results
    assert result.exit_code == 0, result.output
    assert "Stopped after 1 saves" in result.output


def test_review_port_comes_from_the_page_and_moves_when_taken(audit_dir, monkeypatch):
    from spacy_imbalance.review.server import default_port, page_key

    port = default_port(page_key(audit_dir / "review.html"))
    assert 20000 <= port < 40000 and port == default_port(page_key(audit_dir / "review.html"))
    listening = []
    monkeypatch.setattr(review_command.ReviewServer, "serve_forever", lambda self: listening.append(self.server_address[1]))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        result = _invoke("review", audit_dir, "--no-browser")
    assert result.exit_code == 0, result.output
    assert f"port {port} is in use" in " ".join(result.output.split()) and listening and listening[0] != port
    assert "no decision is kept" in result.output
