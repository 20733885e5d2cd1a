"""The review server (spacy_imbalance/review/server.py) over real HTTP on
the loopback address: it serves its page, writes the decisions it is sent
next to it, refuses everything else with a reason, and never touches the page."""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.review.page import embed_json
from spacy_imbalance.review.server import DATA, ReviewPageError, StoreError, page_key, serve, state_paths

from .conftest import make_result, suspect
from .raw_http import error_of, exchange, parse, request_bytes

# suspect 0 (Berlin, LOC, tokens [4, 5) of the first document) accepted as it is; suspect 1
# (United Nations) relabelled ORG and not decided yet: no line for it
STATE = {"format": 1, "cursor": 1, "rows": [[0, "a", 1, 4, 5], [1, "", 2, 1, 3]], "history": [[0, 0, None]], "time": 1}


@pytest.fixture
def served(small_corpus, tmp_path):
    docs, result = small_corpus
    page = tmp_path / "review.html"
    page.write_text(review_html(docs, result), encoding="utf8")
    server = serve(page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def request(server, path, body=None, method=None, raw=None, host=None, token=True, if_match=True, headers=()):
    """A request as the page sends it: with the owner's token (``token``
    True), another one (a string) or none (False); a save names the
    server's current revision (``if_match`` True), another (a string) or
    none (False), and is JSON (Content-Type: application/json); ``headers``
    are added last (a value of None leaves the header out)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf8"))
    req = urllib.request.Request(server.url.rstrip("/") + path, data=data, method=method or ("PUT" if data is not None else "GET"))
    if host is not None:
        req.add_header("Host", host)
    if token:
        req.add_header("X-Review-Token", server.token if token is True else token)
    if req.get_method() == "PUT":
        req.add_header("Content-Type", "application/json")
        if if_match:
            req.add_header("If-Match", server.etag if if_match is True else if_match)
    for name, value in headers:
        if value is None:
            req.remove_header(name.capitalize())
        else:
            req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_server_serves_its_page_and_keeps_decisions_on_disk(served):
    page_bytes = served.page.read_bytes()
    assert request(served, "/") == (200, page_bytes)
    decisions = f"/decisions/{served.key}"
    status, body = request(served, decisions)
    assert status == 404 and "no decisions" in json.loads(body)["error"]
    assert request(served, decisions, {"state": STATE})[0] == 204
    # the state as sent, read back when the page opens; the JSONL for apply-review beside the page
    status, body = request(served, decisions)
    assert status == 200 and json.loads(body) == {**STATE, "revision": 1}
    assert served.jsonl_path == served.page.with_name(f"review-{served.key}.jsonl")
    (line,) = [json.loads(text) for text in served.jsonl_path.read_text(encoding="utf8").splitlines()]
    assert (line["answer"], line["spans"][0]["label"], line["spans"][0]["token_start"]) == ("accept", "LOC", 4)
    assert line["text"][line["spans"][0]["start"] : line["spans"][0]["end"]] == "Berlin"
    assert served.state_path.name == f"review-{served.key}.state.json"
    assert served.page.read_bytes() == page_bytes and served.saves == 1
    # a later save replaces both; no temporary file is left behind
    assert request(served, decisions, {"state": {**STATE, "cursor": 2, "rows": []}})[0] == 204
    assert json.loads(request(served, decisions)[1])["cursor"] == 2 and served.jsonl_path.read_text(encoding="utf8") == ""
    assert sorted(p.name for p in served.page.parent.iterdir()) == sorted(
        ["review.html", served.jsonl_path.name, served.state_path.name, f".review-{served.key}.lock"]
    )


@pytest.mark.parametrize(
    "body, reason",
    [
        ({"state": STATE, "jsonl": ""}, "the one key 'state'"),
        ({"state": {**STATE, "format": 2}}, "'format': 1"),
        ({"state": {**STATE, "format": True}}, "'format': 1"),
        ({"state": {**STATE, "rows": [[0, [], 1, 4, 5]]}}, "answer []"),
        ({"state": {**STATE, "rows": {}}}, "a list of 'rows'"),
        ({"state": {**STATE, "rows": [[0, "a", 1, 4]]}}, "row 1 of 'state'"),
        ({"state": {**STATE, "rows": [[0, "a", 1, 4, 5], [99, "a", 1, 4, 5]]}}, "row 2 of 'state' ([99, 'a', 1, 4, 5]): no suspect 99 (the page has 7)"),
        ({"state": {**STATE, "rows": [[0, "y", 1, 4, 5]]}}, "answer 'y'"),
        ({"state": {**STATE, "rows": [[0, "a", 9, 4, 5]]}}, "no label 9"),
        ({"state": {**STATE, "rows": [[0, "a", 1, 4, 40]]}}, "not a span of the document's"),
        ({"state": {**STATE, "rows": [[0, "a", 1, 4, 5], [0, "r", 1, 4, 5]]}}, "suspect 0 has a row already"),
    ],
)
def test_server_refuses_a_body_it_cannot_keep_and_says_why(served, body, reason):
    status, text = request(served, f"/decisions/{served.key}", body)
    assert status == 400 and reason in json.loads(text)["error"]
    assert not served.state_path.exists() and not served.jsonl_path.exists()


def test_server_refuses_other_paths_keys_and_bodies(served, tmp_path):
    (tmp_path / "secret.txt").write_text("not for the browser", encoding="utf8")
    # nothing else of the folder is served
    assert request(served, "/secret.txt")[0] == 404
    # another page's key: refused, nothing written
    status, text = request(served, "/decisions/0123456789abcdef", {"state": STATE})
    assert status == 404 and served.key in json.loads(text)["error"]
    assert request(served, f"/decisions/{served.key}", raw=b"not json")[0] == 400
    assert request(served, f"/decisions/{served.key}", raw=b"")[0] == 400
    assert request(served, f"/decisions/{served.key}", raw=b"[" * 100000 + b"]" * 100000)[0] == 400
    # a web page reaching the server through a DNS name it controls (rebinding) is refused
    status, text = request(served, "/", host="attacker.example:80")
    assert status == 403 and "127.0.0.1" in json.loads(text)["error"]
    assert not served.state_path.exists()
    # a query string is not part of the path
    assert request(served, "/?from=bookmark")[0] == 200


def test_two_tabs_never_write_over_each_other(served):
    """Issue 43, H3: tab A saved suspect 0, tab B (which read before it)
    saved suspect 1 over it, and A's decision was gone. Now each save names
    the revision its page read; B's is refused (409, the current revision
    in its ETag) and the disk keeps A's decision, whatever B's clock says."""
    decisions = f"/decisions/{served.key}"
    read = served.etag  # both tabs read the same (empty) decisions
    assert request(served, decisions, {"state": {**STATE, "time": 100}}, if_match=read)[0] == 204
    status, text = request(served, decisions, {"state": {**STATE, "rows": [], "time": 9e12}}, if_match=read)
    assert status == 409 and "another tab" in json.loads(text)["error"]
    assert json.loads(request(served, decisions)[1])["rows"] == STATE["rows"] and served.saves == 1
    # without a revision a save is refused; the revision goes on across restarts
    assert request(served, decisions, {"state": STATE}, if_match=False)[0] == 428
    from spacy_imbalance.review.server import ReviewServer

    served.shutdown()
    served.server_close()
    again = ReviewServer(served.page)
    try:
        assert again.etag == served.etag == '"1"'
    finally:
        again.server_close()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "1" + "0" * 400, "-1", '"5"', "true"])
def test_a_state_with_an_impossible_time_is_refused(served, literal):
    """Issue 43, M1, M2: NaN was written and no browser could read the state
    again; 10**400 broke every later save."""
    body = json.dumps({"state": {**STATE, "time": 0}}).replace('"time": 0', f'"time": {literal}')
    status, text = request(served, f"/decisions/{served.key}", raw=body.encode("utf8"))
    assert status == 400 and "'time'" in json.loads(text)["error"]
    assert not served.state_path.exists()


def test_server_says_what_it_could_not_write(served, monkeypatch):
    from spacy_imbalance.review import store

    def full(path, chunks):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(store, "_write_durably", full)
    status, text = request(served, f"/decisions/{served.key}", {"state": STATE})
    assert status == 500 and "No space left on device" in json.loads(text)["error"]
    # the state is written first (the JSONL is built from it)
    assert served.state_path.name in json.loads(text)["error"] and served.saves == 0


def test_pages_of_two_audits_in_one_folder_keep_their_decisions_apart(small_corpus, tmp_path):
    docs, result = small_corpus
    first, second = tmp_path / "review.html", tmp_path / "other.html"
    first.write_text(review_html(docs, result), encoding="utf8")
    second.write_text(review_html(docs, make_result(docs, [suspect(0, 4, 5, "LOC", 0.9)])), encoding="utf8")
    a, b = serve(first), serve(second)
    try:
        assert a.key != b.key and a.jsonl_path != b.jsonl_path and a.state_path != b.state_path
    finally:
        a.server_close()
        b.server_close()


def test_page_key_names_the_file_that_is_not_a_review_page(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html><body>a report</body></html>", encoding="utf8")
    with pytest.raises(ReviewPageError, match="page.html: not a review page"):
        page_key(page)
    page.write_text('<script type="application/json" id="review-data">{"key": "../../etc"}</script>', encoding="utf8")
    with pytest.raises(ReviewPageError, match="no valid key"):
        page_key(page)
    page.write_bytes(b"\xff\xfe")
    with pytest.raises(ReviewPageError, match="cannot be read"):
        page_key(page)


def test_server_answers_only_its_owner(served):
    """Issue 43, H2: another user of the machine (or a page in another tab)
    could read the corpus and overwrite the decisions. Without the token of
    the printed address, or with another, every request is refused."""
    decisions = f"/decisions/{served.key}"
    for token in (False, "", "guess", served.token[:-1]):
        assert request(served, "/", token=token)[0] == 403
        assert request(served, decisions, token=token)[0] == 403
        status, text = request(served, decisions, {"state": {**STATE, "time": 9e15}}, token=token)
        assert status == 403 and b"only its owner" in text
    assert not served.state_path.exists() and served.saves == 0
    # the page's address carries the token in its query
    assert request(served, f"/?token={served.token}", token=False)[0] == 200
    assert served.page_url == f"{served.url}?token={served.token}"
    # every server has its own
    assert len(served.token) >= 32


def _wire(served, method, target, headers, body=b""):
    """(status, error message or None, headers) of a request sent as bytes."""
    status, answer_headers, answer = parse(exchange(served.server_address, request_bytes(method, target, headers, body)))
    return status, error_of(answer) if answer_headers.get("content-type") == "application/json" and status >= 400 else None, answer_headers


def _put_headers(served, body, **changes):
    """The headers the page sends with a save; a change to None leaves one out."""
    host = f"127.0.0.1:{served.server_address[1]}"
    headers = {
        "Host": host, "X-Review-Token": served.token, "If-Match": served.etag, "Content-Type": "application/json",
        "Origin": f"http://{host}", "Content-Length": str(len(body)),
    }
    headers.update(changes)
    return [(name, value) for name, value in headers.items() if value is not None]


def test_two_host_headers_or_an_absolute_target_are_refused(served):
    """Issue 43, L5: with two Host headers the first won, and an absolute
    target (which a proxy reads for its host) was answered."""
    host = f"127.0.0.1:{served.server_address[1]}"
    token = [("X-Review-Token", served.token)]
    assert _wire(served, "GET", "/", [("Host", host), *token])[0] == 200
    assert _wire(served, "GET", "/", [("Host", host), ("Host", "attacker.example"), *token])[:2] == (
        400, "a request has one Host header, this one has 2",
    )
    assert _wire(served, "GET", f"http://{host}/", [("Host", host), *token])[:2] == (
        400, f"the request's target must be a path such as /, not 'http://{host}/'",
    )
    body = json.dumps({"state": STATE}).encode("utf8")
    for target in (f"http://{host}/decisions/{served.key}", f"//decisions/{served.key}"):
        status, error, _ = _wire(served, "PUT", target, _put_headers(served, body), body)
        assert (status, error) == (400, f"the request's target must be a path such as /, not {target!r}")
    assert not served.state_path.exists()


def test_a_save_must_come_from_the_page_as_json(served):
    """Issue 43, L7: a save needed no Content-Type and any Origin was taken."""
    body = json.dumps({"state": STATE}).encode("utf8")
    target = f"/decisions/{served.key}"
    host = f"127.0.0.1:{served.server_address[1]}"
    for origin in ("http://attacker.example", "null", f"http://localhost:{served.server_address[1]}", f"https://{host}"):
        status, error, _ = _wire(served, "PUT", target, _put_headers(served, body, Origin=origin), body)
        assert (status, error) == (403, f"decisions are saved only from the review page (Origin http://{host}), not from {origin!r}")
    for kind in ("text/plain", "application/x-www-form-urlencoded", None):
        status, error, _ = _wire(served, "PUT", target, _put_headers(served, body, **{"Content-Type": kind}), body)
        assert (status, error) == (415, f"a save's body is JSON, sent with Content-Type: application/json; got {repr(kind) if kind else 'none'}")
    assert not served.state_path.exists() and served.saves == 0
    # the page's own (JSON with a charset, its Origin), and a client that sends no Origin (curl)
    assert _wire(served, "PUT", target, _put_headers(served, body, **{"Content-Type": "application/json; charset=utf-8"}), body)[0] == 204
    assert _wire(served, "PUT", target, _put_headers(served, body, Origin=None), body)[0] == 204
    assert served.saves == 2


@pytest.mark.parametrize(
    "lengths, status, error",
    [
        (["1e3"], 400, "the Content-Length header must be one number of bytes, got '1e3'"),
        (["-5"], 400, "the Content-Length header must be one number of bytes, got '-5'"),
        (["+5"], 400, "the Content-Length header must be one number of bytes, got '+5'"),
        (["5", "5"], 400, "the Content-Length header must be one number of bytes, got '5', '5'"),
        ([], 411, "a Content-Length header is needed"),
        (["0"], 400, "the body is empty: it must hold the page's state"),
        (["100"], 400, "the body ended after 5 of the 100 bytes its Content-Length announced"),
        (["99999999999"], 413, "a body of at most 16,777,216 bytes is accepted, got 99,999,999,999"),
    ],
)
def test_a_malformed_content_length_is_named(served, lengths, status, error):
    """Issue 43, L8: "1e3" got 411 (needed), "-5" got "the body is empty"."""
    headers = [pair for pair in _put_headers(served, b"", **{"Content-Length": None})] + [("Content-Length", n) for n in lengths]
    assert _wire(served, "PUT", f"/decisions/{served.key}", headers, b"12345")[:2] == (status, error)
    assert not served.state_path.exists()


def test_a_chunked_save_is_refused(served):
    headers = _put_headers(served, b"", **{"Content-Length": None, "Transfer-Encoding": "chunked"})
    assert _wire(served, "PUT", f"/decisions/{served.key}", headers, b"5\r\n12345\r\n0\r\n\r\n")[:2] == (
        400, "a body is sent with a Content-Length, not a Transfer-Encoding",
    )


def test_methods_and_versions_the_server_has_not_are_4xx(served):
    host = [("Host", f"127.0.0.1:{served.server_address[1]}"), ("X-Review-Token", served.token)]
    status, error, headers = _wire(served, "DELETE", "/", host)
    assert (status, error, headers["allow"]) == (405, "the review server answers GET and PUT, not 'DELETE'", "GET, PUT")
    assert _wire(served, "GET", "/", host, b"")[0] == 200
    response = exchange(served.server_address, b"GET / HTTP/2.0\r\n\r\n")
    assert parse(response)[0] == 400 and b"HTTP/1.0 and HTTP/1.1, not 'HTTP/2.0'" in response
    # HTTP/0.9 ("GET /", no headers): http.server answered it without a status line
    assert parse(exchange(served.server_address, b"GET /\r\n"))[0] == 400


def _page_with_data(small_corpus, tmp_path, change):
    """A review page whose embedded data ``change`` has edited."""
    docs, result = small_corpus
    page = tmp_path / "review.html"
    text = review_html(docs, result)
    match = DATA.search(text)
    data = json.loads(match.group(1))
    change(data)
    page.write_text(text[: match.start(1)] + embed_json(data) + text[match.end(1) :], encoding="utf8")
    return page


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.pop("suspects"), "its review data has no 'suspects': not a page spacy-imbalance audit wrote, or one cut short"),
        (lambda d: d.update(labels={}), "its review data's 'labels' is a JSON dict, not a list"),
        (lambda d: d["suspects"][2].update(doc=9), "its review data's suspects[2] names document 9, but there are 3"),
        (lambda d: d["suspects"][0].pop("label"), "its review data's suspects[0] has no 'label' (an integer), got None"),
        (lambda d: d["docs"][1]["tokens"].append([0, 999, 0]), "its review data's docs[1] token 9 is [0, 999, 0], not [start, end, ws] within its text"),
    ],
)
def test_a_page_whose_data_the_server_cannot_use_is_refused_at_start(small_corpus, tmp_path, change, message):
    """Issue 43, M13: a page whose data lacked "suspects" was served, and
    its first save failed (KeyError)."""
    page = _page_with_data(small_corpus, tmp_path, change)
    with pytest.raises(ReviewPageError) as err:
        serve(page)
    assert str(err.value) == f"{page}: {message}"
    with pytest.raises(ReviewPageError):
        page_key(page)  # what the command reads first


def test_a_named_pipe_at_a_decisions_path_is_refused_never_opened(small_corpus, tmp_path):
    """Issue 43, M3: a FIFO at the state path hung GET and PUT (read under
    the save lock), and Ctrl+C could not stop the server."""
    docs, result = small_corpus
    page = tmp_path / "review.html"
    page.write_text(review_html(docs, result), encoding="utf8")
    state, jsonl = state_paths(page, page_key(page))
    for path in (state, jsonl):
        os.mkfifo(path)
        with pytest.raises(StoreError) as err:
            serve(page)
        assert str(err.value) == f"{path} is a named pipe, not a file: the review server keeps this page's decisions there; move it away and start again"
        path.unlink()


def test_a_named_pipe_put_there_while_serving_is_answered_not_waited_on(served):
    decisions = f"/decisions/{served.key}"
    assert request(served, decisions, {"state": STATE})[0] == 204
    served.state_path.unlink()
    os.mkfifo(served.state_path)
    started = time.monotonic()
    status, text = request(served, decisions)
    assert (status, json.loads(text)["error"]) == (
        500, f"{served.state_path} is a named pipe, not a file: the review server keeps this page's decisions there; move it away and start again",
    )
    status, text = request(served, decisions, {"state": STATE})
    assert status == 500 and "is not a regular file" in json.loads(text)["error"]
    assert time.monotonic() - started < 5 and request(served, "/")[0] == 200


def test_a_second_server_for_the_same_page_stops_naming_the_folder(served):
    """Issue 43, L14: a second `review` of the same folder started (the lock
    was per process), and two servers wrote the same files."""
    lock = served.page.with_name(f".review-{served.key}.lock")
    with pytest.raises(StoreError) as err:
        serve(served.page)
    assert str(err.value) == (
        f"{served.page.parent}: another `spacy-imbalance review` (process {os.getpid()}) is serving review.html from this "
        f"folder (it holds {lock}): stop it, or open the address it printed"
    )
    # an OS lock: another process cannot take it either
    taken = subprocess.run(
        [sys.executable, "-c", f"import fcntl, os; fcntl.flock(os.open({str(lock)!r}, os.O_RDWR), fcntl.LOCK_EX | fcntl.LOCK_NB)"],
        capture_output=True, text=True, timeout=60,
    )
    assert taken.returncode == 1 and "BlockingIOError" in taken.stderr
    served.shutdown()
    served.server_close()
    assert not lock.exists()
    again = serve(served.page)
    again.server_close()


def test_a_state_with_nan_anywhere_is_refused(served):
    """The undo history is kept as the page sends it: a NaN there made the
    stored state unreadable to the page (JSON.parse has no NaN)."""
    body = json.dumps({"state": {**STATE, "history": [[0, 0, None]]}}).replace("None", "NaN").replace("null", "NaN")
    status, text = request(served, f"/decisions/{served.key}", raw=body.encode("utf8"))
    assert status == 400 and json.loads(text)["error"].startswith("the state holds a number JSON has not (NaN or an infinity)")
    assert not served.state_path.exists()


@pytest.mark.parametrize("path, token", [("/", True), ("/", False), ("/decisions/{key}", True), ("/nowhere", True)])
def test_every_answer_forbids_framing_sniffing_and_referrers(served, path, token):
    """Round 3, L6: the page cannot be framed (clickjacking its keys), nor
    its JSON read as script, nor its token leaked in a Referer; on every
    answer, refusals included."""
    url = served.url.rstrip("/") + path.format(key=served.key)
    req = urllib.request.Request(url)
    if token:
        req.add_header("X-Review-Token", served.token)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            headers = response.headers
    except urllib.error.HTTPError as err:
        headers = err.headers
    assert headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in headers.get_all("Content-Security-Policy")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
