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
    parts = {
        "title": html.escape(title),
        "style": _read(STYLE),
        "header": header,
        "static": static,
        "data": embed_json(data),
        "script": _read(SCRIPT),
    }
    return _fill(_read(TEMPLATE), parts)


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
