"""The review server (spacy_imbalance/review/server.py) over real HTTP on
the loopback address: it serves its page, writes the decisions it is sent
next to it, refuses everything else with a reason, and never touches the page."""
import json
import threading
import urllib.error
import urllib.request

import pytest

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.review.server import ReviewPageError, page_key, serve

from .conftest import make_result, suspect

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


def request(server, path, body=None, method=None, raw=None, host=None, token=True, if_match=True):
    """A request as the page sends it: with the owner's token (``token``
    True), another one (a string) or none (False); a save names the
    server's current revision (``if_match`` True), another (a string) or
    none (False)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf8"))
    req = urllib.request.Request(server.url.rstrip("/") + path, data=data, method=method or ("PUT" if data is not None else "GET"))
    if host is not None:
        req.add_header("Host", host)
    if token:
        req.add_header("X-Review-Token", server.token if token is True else token)
    if if_match and req.get_method() == "PUT":
        req.add_header("If-Match", server.etag if if_match is True else if_match)
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
        ["review.html", served.jsonl_path.name, served.state_path.name]
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
    from spacy_imbalance.review import server as server_module

    def full(path, text):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(server_module, "write_text_atomic", full)
    status, text = request(served, f"/decisions/{served.key}", {"state": STATE})
    assert status == 500 and "No space left on device" in json.loads(text)["error"]
    assert served.jsonl_path.name in json.loads(text)["error"]


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
