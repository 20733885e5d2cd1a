import html
import configparser
import json
import re
from fnmatch import fnmatch
from html.parser import HTMLParser
from typing import Dict, List, Tuple

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.review.page import STATIC
from spacy_imbalance.review.payload import review_data

from ..conftest import ROOT
from .conftest import make_result


class Scripts(HTMLParser):
    """The <script> elements of a page as a browser's tokenizer ends them:
    at the first "</script"."""

    def __init__(self) -> None:
        super().__init__()
        self.found: List[Tuple[Dict[str, str], str]] = []
        self._open = False

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._open = True
            self.found.append((dict(attrs), ""))

    def handle_data(self, data):
        if self._open:
            attrs, text = self.found[-1]
            self.found[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._open = False


def scripts_of(page: str) -> List[Tuple[Dict[str, str], str]]:
    parser = Scripts()
    parser.feed(page)
    return parser.found


def test_the_data_arrives_whole_whatever_the_text_holds(small_corpus):
    # document 2 holds "</script>", "<!--" and "{{script}}"
    docs, result = small_corpus
    page = review_html(docs, result)
    (data_attrs, data_text), (code_attrs, code) = scripts_of(page)
    assert data_attrs == {"type": "application/json", "id": "review-data"}
    assert "<" not in data_text
    expected = json.loads(json.dumps(review_data(docs, result.suspects, result.labels)))
    assert json.loads(data_text) == expected
    assert expected["docs"][2]["text"] == docs[2].text
    assert code_attrs == {} and code.strip() == (STATIC / "review.js").read_text(encoding="utf8").strip()
    # the template's placeholders are all filled, and the text's own is left alone
    assert set(re.findall(r"\{\{\w+\}\}", page)) == {"{{script}}"}


def test_the_page_loads_nothing(small_corpus):
    docs, result = small_corpus
    page = review_html(docs, result).lower()
    for reference in ("http:", "https:", "//cdn", "src=", "<link", "@import", "@font-face"):
        assert reference not in page
    # CSS's url(), not the script's URL.createObjectURL(
    assert not re.search(r"(?<![a-z])url\(", page)


def test_every_suspect_is_reviewable_beyond_the_static_limit(small_corpus):
    docs, result = small_corpus
    page = review_html(docs, result, limit=1)
    (_, data_text), _ = scripts_of(page)
    assert len(json.loads(data_text)["suspects"]) == len(result.suspects) == 7
    assert page.count("document 0 (fold 0)") == 1 and "document 1 (fold 1)" not in page
    assert "the 1 most probable of 3" in page
    # the summary header stays above the reviewer
    assert page.index("7 suspected missing entities (") < page.index("suspects in 3 of 3 documents") < page.index('id="review-card"')


def test_the_header_says_what_the_command_says_and_that_the_folds_learned_little(small_corpus):
    """The page repeats the audit's own line, and an estimate from weak
    folds carries its note (escaped, as every string of the page)."""
    from dataclasses import replace

    from spacy_imbalance.audit.estimate import TOTAL
    from spacy_imbalance.audit.run import headline

    docs, result = small_corpus
    rate = result.miss_rate
    line = headline(len(result.suspects), result.settings.threshold, rate.row(TOTAL), rate.method)
    page = review_html(docs, result)
    assert html.escape(line) in page and "learned little" not in page
    weak = replace(result, info={**result.info, "learned_little": True}, miss_rate=replace(rate, notes=["The fold models learned little: <b>0.01</b>", *rate.notes]))
    page = review_html(docs, weak)
    assert "<p><strong>The fold models learned little: &lt;b&gt;0.01&lt;/b&gt;</strong></p>" in page


def test_an_audit_without_suspects_has_a_page(small_corpus):
    docs, _ = small_corpus
    page = review_html(docs, make_result(docs, []))
    (_, data_text), _ = scripts_of(page)
    assert json.loads(data_text)["suspects"] == []
    assert "<details" not in page


def test_the_package_ships_the_page_files():
    """setup.cfg's package_data holds every file of review/static, so an
    installed (not editable) package builds the same page."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf8")
    patterns = [p.strip() for p in config["options.package_data"]["spacy_imbalance"].split(",")]
    names = sorted(p.relative_to(ROOT / "spacy_imbalance").as_posix() for p in STATIC.iterdir())
    assert names == ["review/static/review.css", "review/static/review.html", "review/static/review.js"]
    assert [name for name in names if not any(fnmatch(name, pattern) for pattern in patterns)] == []


class Markup(HTMLParser):
    """Every element tag and attribute of a page outside its <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: List[Tuple[str, Dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_hostile_labels_and_texts_are_never_markup():
    """Issue 43, H1: a label "<script>…" or "<img onerror>" (from a CoNLL tag
    through convert and audit) was put into the static view unescaped by
    displaCy's template. Now no corpus string adds an element or attribute:
    the page's tags are those of a page built from harmless strings."""
    from .conftest import make_doc, suspect

    hostile_label = "<script>document.title='PWNED'</script>"
    image = "<img/src=x/onerror=alert(document.domain)>"
    docs = [make_doc(["Anna", image, "flew", "<b>to</b>", "Berlin", "."], [(0, 1, hostile_label)])]
    page = review_html(docs, make_result(docs, [suspect(0, 4, 5, image, 0.9)], labels=[hostile_label, image]))
    harmless = [make_doc(["Anna", "x", "flew", "to", "Berlin", "."], [(0, 1, "PER")])]
    plain = review_html(harmless, make_result(harmless, [suspect(0, 4, 5, "LOC", 0.9)], labels=["PER", "LOC"]))
    tags, plain_tags = Markup(), Markup()
    tags.feed(page)
    plain_tags.feed(plain)
    assert [tag for tag, _ in tags.tags] == [tag for tag, _ in plain_tags.tags]
    assert not any("onerror" in attrs or "src" in attrs for _, attrs in tags.tags)
    # the strings are there, as text
    assert html.escape(hostile_label) in page and html.escape(image) in page


class Inline(HTMLParser):
    """The text of each <style> and <script> element, and the page's CSP."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: List[Tuple[str, Dict[str, str], str]] = []
        self.policy = ""
        self._open = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy":
            self.policy = attrs["content"]
        if tag in ("style", "script"):
            self._open = (tag, attrs)
            self.texts.append((tag, attrs, ""))

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if self._open is not None:
            tag, attrs, text = self.texts[-1]
            self.texts[-1] = (tag, attrs, text + data)


def test_the_policy_allows_exactly_the_page_own_style_and_script(small_corpus):
    """Issue 43: a strict Content-Security-Policy whose hashes are those of
    the page's inline style and (executable) script as a browser reads them."""
    import base64
    import hashlib

    docs, result = small_corpus
    parsed = Inline()
    parsed.feed(review_html(docs, result))
    directives = dict(part.strip().split(" ", 1) for part in parsed.policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'self'"

    def digest(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf8")).digest()).decode() + "'"

    (style,) = [text for tag, _, text in parsed.texts if tag == "style"]
    (script,) = [text for tag, attrs, text in parsed.texts if tag == "script" and attrs.get("type") != "application/json"]
    assert directives["style-src"] == digest(style)
    assert directives["script-src"] == digest(script)
