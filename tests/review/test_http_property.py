"""Issue 43, the property test of the review server's HTTP surface: random
requests sent as bytes (any method, target and version; the headers the
page sends, left out, doubled, wrong or malformed, among random ones; a
valid state, broken JSON or random bytes as the body). For each:

- the answer is well formed (a status line, headers, a body of exactly its
  Content-Length) with a status in a known set, never a 5xx;
- the decisions on disk and their revision change only with a 204, and a
  204 comes only to a PUT of the page's decisions with the owner's token
  and the current revision;
- the server still serves its page afterwards, and no connection stays open.

One server for every call (what a random client meets is a server that has
been answering others). Reproducible in CI: derandomized, no example
database, a few seconds. SPACY_IMBALANCE_HOSTILE_SCALE=20 hunts with 20
times as many random requests.
"""
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.review.server import ReviewServer

from .conftest import make_doc, make_result, suspect
from .raw_http import exchange, parse, request_bytes

KNOWN = {200, 204, 400, 403, 404, 405, 408, 409, 411, 413, 414, 415, 428, 431}
SCALE = int(os.environ.get("SPACY_IMBALANCE_HOSTILE_SCALE", "1"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    docs = [
        make_doc("Anna Schmidt flew from Berlin to New York .".split(), [(0, 2, "PER")]),
        make_doc("The United Nations met in Geneva on Friday .".split(), []),
    ]
    suspects = [suspect(0, 4, 5, "LOC", 0.9), suspect(0, 6, 8, "LOC", 0.7), suspect(1, 1, 3, "ORG", 0.6), suspect(1, 7, 8, "DATE", 0.5)]
    page = tmp_path_factory.mktemp("http") / "review.html"
    page.write_text(review_html(docs, make_result(docs, suspects)), encoding="utf8")
    served = ReviewServer(page, request_timeout=2.0)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    yield served
    served.shutdown()
    served.server_close()


# --- what a request is made of: symbols resolved against the server when sent ---

HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=255, blacklist_characters="\x7f"), max_size=30)
NAME = st.text(st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters=":"), min_size=1, max_size=20)


def mostly(common: List[str], rare: st.SearchStrategy) -> st.SearchStrategy:
    """One of ``common`` (repeated: likelier) nine times in ten, else ``rare``."""
    return st.sampled_from(range(10)).flatmap(lambda n: rare if n == 0 else st.sampled_from(common))


METHODS = mostly(["PUT"] * 9 + ["GET"] * 9 + ["POST", "HEAD", "DELETE", "OPTIONS", "get", "CONNECT"], NAME)
TARGETS = mostly(
    ["DECISIONS"] * 6 + ["/", "/", "QUERY_TOKEN", "QUERY_TOKEN", "/review.html", "ABSOLUTE", "//DECISIONS", "/decisions/0123456789abcdef",
     "/decisions/", "/secret.txt", "*", "/?token=guess", "/%2e%2e/etc/passwd", "/decisions/KEY/../KEY"],
    NAME,
)
VERSIONS = mostly(["HTTP/1.1"] * 12 + ["HTTP/1.0"] * 4 + ["HTTP/2.0", "HTTP/1", "HTTP/1.1.1", "FOO", ""], HEADER_TEXT.filter(lambda t: " " not in t))
HEADERS = st.sampled_from(
    [
        ("Host", "OWN"), ("Host", "OWN"), ("Host", "LOCALHOST"), ("Host", "evil.example:80"), ("Host", ""),
        ("X-Review-Token", "TOKEN"), ("X-Review-Token", "TOKEN"), ("X-Review-Token", "guess"), ("X-Review-Token", ""),
        ("If-Match", "ETAG"), ("If-Match", "ETAG"), ("If-Match", '"0"'), ("If-Match", '"999"'), ("If-Match", "*"),
        ("Content-Type", "application/json"), ("Content-Type", "application/json"), ("Content-Type", "text/plain"),
        ("Origin", "ORIGIN"), ("Origin", "http://evil.example"), ("Origin", "null"),
        ("Content-Length", "LENGTH"), ("Content-Length", "LENGTH"), ("Content-Length", "1e3"), ("Content-Length", "-5"),
        ("Content-Length", "0"), ("Content-Length", "99999999999"), ("Content-Length", "3"), ("Transfer-Encoding", "chunked"),
        ("Connection", "keep-alive"), ("Expect", "100-continue"),
    ]
) | st.tuples(NAME, HEADER_TEXT)
# what the page sends with a save: each left out one time in ten
PAGE_HEADERS = [
    ("Host", "OWN"), ("X-Review-Token", "TOKEN"), ("If-Match", "ETAG"), ("Content-Type", "application/json"), ("Origin", "ORIGIN"),
    ("Content-Length", "LENGTH"),
]


@dataclass
class Call:
    method: str
    target: str
    version: str
    headers: List[Tuple[str, str]]
    body: Any  # bytes, or ("STATE", rows, time) for a state to encode

    def wire(self, server: ReviewServer) -> Tuple[bytes, Dict[str, List[str]]]:
        """The request's bytes, and its headers as the server reads them."""
        port = server.server_address[1]
        body = self.body if isinstance(self.body, bytes) else state_body(*self.body[1:])
        symbols = {
            "OWN": f"127.0.0.1:{port}", "LOCALHOST": f"localhost:{port}", "TOKEN": server.token, "ETAG": server.etag,
            "ORIGIN": f"http://127.0.0.1:{port}", "LENGTH": str(len(body)), "STALE": f'"{server.store.revision - 1}"',
        }
        targets = {
            "DECISIONS": f"/decisions/{server.key}", "ABSOLUTE": f"http://127.0.0.1:{port}/decisions/{server.key}",
            "//DECISIONS": f"//decisions/{server.key}", "QUERY_TOKEN": f"/decisions/{server.key}?token={server.token}",
        }
        target = targets.get(self.target, self.target).replace("KEY", server.key)
        headers = [(name, symbols.get(value, value)) for name, value in self.headers]
        line = f"{self.method} {target} {self.version}".rstrip()
        lines = [line, *(f"{name}: {value}" for name, value in headers)]
        sent: Dict[str, List[str]] = {}
        for name, value in headers:
            sent.setdefault(name.lower(), []).append(value)
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body, sent


def state_body(rows: List[List[Any]], time_ms: float) -> bytes:
    import json

    return json.dumps({"state": {"format": 1, "cursor": 0, "rows": rows, "history": [], "time": time_ms}}).encode("utf8")


# rows of the four suspects above, each as it is or relabelled: a state the server keeps
SPANS = [(4, 5), (6, 8), (1, 3), (7, 8)]
ROWS = st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "r", "i", ""]), st.integers(0, 3)), min_size=4, max_size=4).map(
    lambda rows: [[i, code, label, *SPANS[i]] for i, (kept, code, label) in enumerate(rows) if kept]
)
BODIES = st.one_of(
    st.tuples(st.just("STATE"), ROWS, st.integers(0, 10**12)),
    st.tuples(st.just("STATE"), ROWS, st.integers(0, 10**12)),
    st.tuples(st.just("STATE"), ROWS, st.sampled_from([-1.0, 1e14])),
    st.sampled_from([b"", b"{", b"[]", b'{"state": null}', b"null", b'{"state": {"format": 1, "rows": [[0, "a", 0, 4, 99]]}}',
                     b'{"state": {"format": 1, "rows": [], "history": [NaN]}}', b"[" * 5000 + b"]" * 5000, "\u00e9".encode("latin-1")]),
    st.binary(max_size=200),
)


@st.composite
def calls(draw) -> Call:
    """Half the calls a save of the page's with something changed (a header
    left out, one added, another body), half anything."""
    if draw(st.booleans()):
        method, target, version = "PUT", draw(st.sampled_from(["DECISIONS", "QUERY_TOKEN"])), "HTTP/1.1"
    else:
        method, target, version = draw(METHODS), draw(TARGETS), draw(VERSIONS)
    # the page's own headers, some left out, among random, doubled or wrong ones
    headers = [(name, value) for name, value in PAGE_HEADERS if draw(st.sampled_from(range(10))) > 0]
    # a read older than the last save (another tab's), or one that never was
    headers = [(name, draw(st.sampled_from(["ETAG"] * 3 + ["STALE", '"999"'])) if name == "If-Match" else value) for name, value in headers]
    headers += draw(st.lists(HEADERS, max_size=3))
    order = draw(st.permutations(range(len(headers))))
    return Call(method, target, version, [headers[i] for i in order], draw(BODIES))


def hostile(max_examples: int):
    return settings(
        max_examples=max_examples * SCALE, deadline=5000, derandomize=SCALE == 1, database=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def disk(server: ReviewServer) -> Tuple[Optional[bytes], Optional[bytes], int, int]:
    read = lambda path: path.read_bytes() if path.exists() else None  # noqa: E731
    return read(server.state_path), read(server.jsonl_path), server.store.revision, server.saves


@hostile(150)
@given(calls())
@example(Call("PUT", "DECISIONS", "HTTP/1.1", [("Host", "OWN"), ("X-Review-Token", "TOKEN"), ("If-Match", "ETAG"), ("Content-Type", "application/json"),
                                               ("Origin", "ORIGIN"), ("Content-Length", "LENGTH")], ("STATE", [[0, "a", 1, 4, 5]], 5)))
@example(Call("PUT", "DECISIONS", "HTTP/1.1", [("Host", "OWN"), ("Host", "evil.example:80"), ("X-Review-Token", "TOKEN"), ("If-Match", "ETAG"),
                                               ("Content-Type", "application/json"), ("Content-Length", "LENGTH")], ("STATE", [], 5)))
@example(Call("GET", "/", "", [], b""))
@example(Call("BREW", "/", "HTTP/1.1", [("Host", "OWN"), ("X-Review-Token", "TOKEN")], b""))
def test_the_server_answers_any_request_well_and_keeps_its_decisions(server, call):
    before = disk(server)
    etag = server.etag
    data, sent = call.wire(server)
    status, headers, _ = parse(exchange(server.server_address, data), head=call.method == "HEAD")
    event(f"status {status}")
    assert status in KNOWN, (status, call)
    after = disk(server)
    if status == 204:
        # only the owner, at the current revision, saves
        target = call.target in ("DECISIONS", "QUERY_TOKEN")
        token = sent.get("x-review-token") == [server.token] or ("x-review-token" not in sent and call.target == "QUERY_TOKEN")
        assert call.method == "PUT" and target and token and sent.get("if-match") == [etag], call
        assert after[2:] == (before[2] + 1, before[3] + 1) and headers["etag"] == server.etag
    else:
        assert after == before, call
    # still up: the page is served, and no connection of this call is left open
    home = [("Host", f"127.0.0.1:{server.server_address[1]}"), ("X-Review-Token", server.token)]
    assert parse(exchange(server.server_address, request_bytes("GET", "/", home)))[0] == 200
    deadline = time.monotonic() + 5
    while server._open and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not server._open
