"""The interactive review page: one offline HTML file with its style, its
script and its data inline (no server, no network), built from the
template, style and script in ``static/``.

The page shows one suspect at a time, most probable first; the reviewer
accepts, rejects or skips it, changes its label or moves either boundary by
a token, from the keyboard. Decisions stay in the browser's localStorage
under the data's hash (and, served by ``spacy-imbalance review``, in files
next to the page: ``server.py``) and are exported as JSONL, one line per
decided suspect in Prodigy's binary-annotation format::

    {"text", "tokens": [{"text", "start", "end", "id", "ws"}],
     "spans": [{"start", "end", "token_start", "token_end", "label"}],
     "answer": "accept" | "reject" | "ignore",
     "meta": {"doc", "score", "original"?: {"start", "end", "label"}}}

with exactly one span, the suspect as the reviewer left it (``end``
exclusive, ``token_end`` inclusive); ``meta.original`` is the suspect as
the audit proposed it, present only when the label or a boundary changed.
Lines follow the review order.
"""
import base64
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Dict

from .payload import ReviewData

STATIC = Path(__file__).parent / "static"
TEMPLATE, STYLE, SCRIPT = "review.html", "review.css", "review.js"
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def review_page(data: ReviewData, *, title: str, header: str = "", static: str = "") -> str:
    """The page for ``data`` (``payload.review_data``). ``header`` and
    ``static`` are HTML put before and after the reviewer as they are: the
    caller escapes what they hold."""
    style, script = _read(STYLE), _read(SCRIPT)
    parts = {
        "title": html.escape(title),
        "policy": html.escape(content_policy(style, script)),
        "style": style,
        "header": header,
        "static": static,
        "data": embed_json(data),
        "script": script,
    }
    return _fill(_read(TEMPLATE), parts)


def content_policy(style: str, script: str) -> str:
    """The page's Content-Security-Policy: nothing loads or runs but its own
    style and script (by hash, as the template holds them: a newline each
    side), and it talks only to where it came from (the review server).
    Whatever a corpus string might smuggle into the page, no other script
    runs and no style, image or frame loads (issue 43)."""

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(f"\n{text}\n".encode("utf8")).digest()).decode("ascii") + "'"

    return (
        f"default-src 'none'; script-src {digest(script)}; style-src {digest(style)}; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'"
    )


def embed_json(data: object) -> str:
    """``data`` as JSON to sit inside a <script> element. A "<" only occurs
    inside JSON strings, where ``\\u003c`` means the same, so no text
    (a "</script>", a "<!--") can end the element or change how it parses."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _fill(template: str, parts: Dict[str, str]) -> str:
    """Every {{name}} of the template replaced in one pass, so that a part's
    own text (a document may hold "{{script}}") is never filled in again."""
    missing = set(PLACEHOLDER.findall(template)) ^ set(parts)
    if missing:
        raise ValueError(f"the review template and its parts disagree on {sorted(missing)}")
    return PLACEHOLDER.sub(lambda match: parts[match.group(1)], template)


def _read(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf8")
