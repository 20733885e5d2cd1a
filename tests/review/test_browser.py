"""The review page in a real browser (headless Chromium, conftest.browser):
decisions from the keyboard, kept across a reload by the review server
(`spacy-imbalance review`) even when the browser's storage is cleared,
exported as the JSONL apply-review reads; fast with 5,000 suspects; and the
same page opened as a file."""
import json
import random
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from spacy_imbalance.audit.export import jsonl_records, review_html
from spacy_imbalance.review.server import ReviewServer, serve

from .conftest import make_doc, make_result, suspect

try:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
except ImportError:
    pass  # the browser fixture skips, or fails saying what to install


# keys sent per WebDriver command: 5,000 in one overran the client's 120-second read timeout on a loaded machine
KEYS_PER_COMMAND = 500


def press(browser, *keys) -> None:
    """Each key pressed in turn on the focused element, as a person would; a
    (modifier, key) pair is a chord."""
    for start in range(0, len(keys), KEYS_PER_COMMAND):
        actions = ActionChains(browser)
        for key in keys[start : start + KEYS_PER_COMMAND]:
            if isinstance(key, tuple):
                modifier, key = key
                actions.key_down(modifier).send_keys(key).key_up(modifier)
            else:
                actions.send_keys(key)
        actions.perform()


def open_page(browser, url: Optional[str] = None) -> None:
    """Load ``url`` (None: reload) and wait until the page has drawn its state:
    served, it first asks the server for the decisions."""
    if url is None:
        browser.refresh()
    else:
        browser.get(url)
    deadline = time.monotonic() + 10
    while not browser.execute_script("const c = document.getElementById('review-card'); return c && c.dataset.ready === 'true'"):
        if time.monotonic() > deadline:
            raise AssertionError("the review page did not draw within 10 s")
        time.sleep(0.02)


def text_of(browser, element_id: str) -> str:
    return browser.execute_script(f"return document.getElementById({element_id!r}).textContent")


def suspect_shown(browser) -> Tuple[str, str]:
    """The marked suspect's text and its label tag."""
    return tuple(browser.execute_script(
        "const m = document.querySelector('#review-context mark.suspect');"
        "return [m.firstChild.textContent, m.querySelector('.tag').textContent];"
    ))


def write_page(path: Path, docs, result) -> str:
    path.write_text(review_html(docs, result), encoding="utf8")
    return path.as_uri()


@contextmanager
def served(path: Path, docs, result) -> Iterator[ReviewServer]:
    """The page written to ``path`` and served as `spacy-imbalance review` serves it."""
    write_page(path, docs, result)
    server = serve(path)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def saved_text(browser, server: ReviewServer) -> str:
    """The JSONL the server wrote, once the page says every change reached it
    (it sends its state a moment after the last change)."""
    deadline = time.monotonic() + 10
    while browser.execute_script("return document.getElementById('review-card').dataset.saved") != "true":
        if time.monotonic() > deadline:
            raise AssertionError(f"the page still has unsaved changes after 10 s: {text_of(browser, 'review-status')!r}")
        time.sleep(0.05)
    return server.jsonl_path.read_text(encoding="utf8")


def exported(browser, downloads: Path, raw: bool = False) -> Any:
    """Export (Shift+E) and read the file the browser downloads (its lines,
    or its text with ``raw``)."""
    press(browser, (Keys.SHIFT, "E"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done = list(downloads.glob("review-*.jsonl"))
        if done and not list(downloads.glob("*.crdownload")):
            text = done[0].read_text(encoding="utf8")
            assert text.endswith("\n")
            return text if raw else [json.loads(line) for line in text.splitlines()]
        time.sleep(0.05)
    raise AssertionError(f"no export downloaded into {downloads}: {list(downloads.iterdir())}")


def chars(text: str, phrase: str) -> Tuple[int, int]:
    start = text.index(phrase)
    return start, start + len(phrase)


def expected_line(record: Dict[str, Any], phrase: str, tokens: Tuple[int, int], label: str, answer: str, score: float,
                  original: Optional[Tuple[str, str]] = None) -> Dict[str, Any]:
    """A line of the export, from a suspects.jsonl record (its text, tokens and
    meta.doc), the span's phrase and its inclusive token range."""
    start, end = chars(record["text"], phrase)
    line = {
        "text": record["text"],
        "tokens": record["tokens"],
        "spans": [{"start": start, "end": end, "token_start": tokens[0], "token_end": tokens[1], "label": label}],
        "answer": answer,
        "meta": {"doc": record["meta"]["doc"], "score": score},
    }
    if original is not None:
        o_start, o_end = chars(record["text"], original[0])
        line["meta"]["original"] = {"start": o_start, "end": o_end, "label": original[1]}
    return line


def test_review_decides_survives_a_reload_and_exports_jsonl(browser, small_corpus, tmp_path):
    docs, result = small_corpus
    with served(tmp_path / "review.html", docs, result) as server:
        check_review(browser, docs, result, server, tmp_path)


def check_review(browser, docs, result, server: ReviewServer, tmp_path: Path) -> None:
    shift_left, shift_right = (Keys.SHIFT, Keys.ARROW_LEFT), (Keys.SHIFT, Keys.ARROW_RIGHT)
    open_page(browser, server.page_url)
    # the card has the focus from the start: keys work without a click
    assert browser.switch_to.active_element.get_attribute("id") == "review-card"
    assert text_of(browser, "review-position").startswith("Suspect 1 of 7")
    assert suspect_shown(browser) == ("Berlin", "LOC?")
    press(browser, "x")  # reject Berlin
    assert text_of(browser, "review-counts") == "1 of 7 (0 accepted, 1 rejected, 0 skipped)"
    press(browser, "u", "a")  # undo, accept instead
    assert text_of(browser, "review-counts") == "1 of 7 (1 accepted, 0 rejected, 0 skipped)"
    assert suspect_shown(browser) == ("United Nations", "LOC?")
    press(browser, "3")  # ORG, the third of DATE, LOC, ORG, PER
    assert suspect_shown(browser) == ("United Nations", "ORG?")
    assert browser.find_element("id", "review-label").get_attribute("value") == "2"
    press(browser, "a")
    assert suspect_shown(browser)[0].startswith("Acme Corp")
    press(browser, "i")  # skip Acme Corp
    assert suspect_shown(browser) == ("York", "LOC?")

    open_page(browser)
    assert text_of(browser, "review-counts") == "3 of 7 (2 accepted, 0 rejected, 1 skipped)"
    assert text_of(browser, "review-position").startswith("Suspect 4 of 7")
    press(browser, Keys.ARROW_LEFT)  # start one token left
    assert suspect_shown(browser) == ("New York", "LOC?")
    press(browser, shift_right)  # end one token right
    assert suspect_shown(browser) == ("New York on", "LOC?")
    assert "Changed from \u201cYork\u201d as LOC" in text_of(browser, "review-edit")
    press(browser, shift_left, "a")  # and back, then accept
    assert suspect_shown(browser) == ("on Friday", "DATE?")
    press(browser, Keys.ARROW_RIGHT, "a")  # start one token right: Friday
    assert suspect_shown(browser) == ("The", "PER?")
    press(browser, "x")
    assert suspect_shown(browser) == ("Monday", "DATE?")
    press(browser, "l")  # relabelled (LOC), not decided: not exported
    assert suspect_shown(browser) == ("Monday", "LOC?")

    # the browser's storage gone (another browser, a cleared profile): the server's copy on disk brings it all back
    on_disk = saved_text(browser, server)
    browser.execute_script("localStorage.clear()")
    open_page(browser, server.page_url)
    assert text_of(browser, "review-counts") == "6 of 7 (4 accepted, 1 rejected, 1 skipped)"
    assert suspect_shown(browser) == ("Monday", "LOC?")
    assert text_of(browser, "review-status") == ""  # no warning: the server has every decision

    text = exported(browser, tmp_path / "downloads", raw=True)
    assert on_disk == text  # what apply-review reads from the audit folder is the export, byte for byte
    lines = [json.loads(line) for line in text.splitlines()]
    records = {r["meta"]["doc"]: r for r in jsonl_records(docs, result)}
    anna, nations, acme = records[0], records[1], records[2]
    assert lines == [
        expected_line(anna, "Berlin", (4, 4), "LOC", "accept", 0.91),
        expected_line(nations, "United Nations", (1, 2), "ORG", "accept", 0.85, original=("United Nations", "LOC")),
        expected_line(acme, "Acme Corp", (6, 7), "ORG", "ignore", 0.7),
        expected_line(anna, "New York", (6, 7), "LOC", "accept", 0.62, original=("York", "LOC")),
        expected_line(nations, "Friday", (7, 7), "DATE", "accept", 0.58, original=("on Friday", "DATE")),
        expected_line(nations, "The", (0, 0), "PER", "reject", 0.55),
    ]
    # the text a </script> would have cut short arrived whole
    assert lines[2]["text"] == docs[2].text
    assert [list(line) for line in lines] == [["text", "tokens", "spans", "answer", "meta"]] * len(lines)


def big_corpus(n_suspects: int = 5000) -> Tuple[list, Any]:
    """1,000 short documents with five suspects each, and one of 3,000 tokens
    whose suspect comes first: the window, not the document, is drawn."""
    rng = random.Random(0)
    words = [f"w{k}" for k in range(40)]
    docs = [make_doc(words, [(0, 1, "PER")]) for _ in range(n_suspects // 5)]
    docs.append(make_doc([f"t{k}" for k in range(3000)], [(10, 12, "ORG")]))
    suspects = [suspect(d, 2 + 7 * k, 4 + 7 * k, rng.choice(["DATE", "LOC", "ORG"]), rng.uniform(0.5, 0.99))
                for d in range(len(docs) - 1) for k in range(5)]
    suspects[-1] = suspect(len(docs) - 1, 1500, 1502, "LOC", 0.999)
    return docs, make_result(docs, suspects)


# The page's handler runs between these two listeners (window capture, then
# window bubble); the second forces layout, so a time covers the redrawn
# card, not only the script. Keys the page ignores (Shift alone) are not timed.
TIMER = """
window.__keyTimes = [];
let began = 0;
window.addEventListener("keydown", () => { began = performance.now(); }, true);
window.addEventListener("keydown", (event) => {
  document.body.offsetHeight;
  if (event.defaultPrevented) window.__keyTimes.push(performance.now() - began);
});
"""


def test_review_stays_fast_with_5000_suspects(browser, tmp_path):
    docs, result = big_corpus()
    with served(tmp_path / "review.html", docs, result) as server:
        open_page(browser, server.page_url)
        assert text_of(browser, "review-position").startswith("Suspect 1 of 5000")
        # the long document's suspect: a window of it, not its 3,000 tokens
        assert suspect_shown(browser) == ("t1500 t1501", "LOC?")
        assert len(text_of(browser, "review-context")) < 600 < len(docs[-1].text)
        assert browser.execute_script("return document.getElementById('review').getElementsByTagName('*').length") < 200
        browser.execute_script(TIMER)
        rounds = 40
        # per round: a label, the start left, the end right and undone, accept; reject, undo it, skip
        one_round = ["2", Keys.ARROW_LEFT, (Keys.SHIFT, Keys.ARROW_RIGHT), "u", "a", "x", "u", "i"]
        press(browser, *(one_round * rounds), "k", "j")
        assert text_of(browser, "review-counts") == f"{2 * rounds} of 5000 ({rounds} accepted, 0 rejected, {rounds} skipped)"
        # the rest rejected, so the last keys store every decision and a full
        # undo history; then the last one undone and found again as undecided
        rest = 5000 - 2 * rounds
        press(browser, *["x"] * rest, "n", "u", "n", "x")
        assert text_of(browser, "review-counts") == f"5000 of 5000 ({rounds} accepted, {rest} rejected, {rounds} skipped)"
        times = browser.execute_script("return window.__keyTimes")
        assert len(times) == len(one_round) * rounds + 2 + rest + 4
        ordered = sorted(times)
        print(f"\nkeypress to update, {len(times)} keys with 5,000 suspects: median {ordered[len(times) // 2]:.1f} ms, "
              f"99th percentile {ordered[int(0.99 * len(times))]:.1f} ms, max {ordered[-1]:.1f} ms")
        # the 99th percentile, not the maximum: on a loaded 2-core machine one key of 5,000 waited 358 ms for the
        # CPU (its median 3.3 ms); a page that re-renders everything per key is slow on most keys, not one
        assert ordered[int(0.99 * len(times))] < 50, ordered[-60:]
        # and every decision comes back with the page
        open_page(browser)
        assert text_of(browser, "review-counts") == f"5000 of 5000 ({rounds} accepted, {rest} rejected, {rounds} skipped)"
        assert text_of(browser, "review-status") == ""  # no storage warning
        # the server got them all too, as the export has them
        assert len(saved_text(browser, server).splitlines()) == 5000


def test_review_as_a_file_decides_and_exports(browser, small_corpus, tmp_path):
    # opened from disk, no server: decisions live in the browser and leave by export
    docs, result = small_corpus
    open_page(browser, write_page(tmp_path / "review.html", docs, result))
    press(browser, "a", "x")
    assert text_of(browser, "review-counts") == "2 of 7 (1 accepted, 1 rejected, 0 skipped)"
    lines = exported(browser, tmp_path / "downloads")
    assert [(line["spans"][0]["label"], line["answer"]) for line in lines] == [("LOC", "accept"), ("LOC", "reject")]
    assert not list(tmp_path.glob("review-*.state.json"))  # nothing written beside the page


def test_review_cuts_text_by_code_points(browser, tmp_path):
    # spaCy's offsets count code points, JavaScript's strings UTF-16 units: a tweet's
    # emoji before the suspect shifted the marked text by one unit per emoji
    doc = make_doc(["I", "\u2764\ufe0f\U0001F600", "Berlin", "today"], [])
    result = make_result([doc], [suspect(0, 2, 3, "LOC", 0.8)])
    open_page(browser, write_page(tmp_path / "review.html", [doc], result))
    assert suspect_shown(browser) == ("Berlin", "LOC?")
    press(browser, "a")
    (line,) = exported(browser, tmp_path / "downloads")
    assert [token["text"] for token in line["tokens"]] == ["I", "\u2764\ufe0f\U0001F600", "Berlin", "today"]
    assert line["spans"][0]["start"] == doc[2].idx


def test_no_script_from_corpus_data_runs(browser, tmp_path):
    """Issue 43, H1: labels and texts that are markup ("<script>", "<img
    onerror>") reach the page as text; none runs, under the page's policy the
    page itself still draws and saves."""
    from .conftest import make_doc, make_result, suspect

    title = "<script>document.title='PWNED'</script>"
    image = "<img src=x onerror=\"document.title='PWNED'\">"
    docs = [make_doc(["Anna", image, "flew", title, "to", "Berlin", "."], [(0, 1, title)])]
    result = make_result(docs, [suspect(0, 5, 6, image, 0.9)], labels=[title, image])
    with served(tmp_path / "review.html", docs, result) as server:
        open_page(browser, server.page_url)
        assert browser.title == "spacy-imbalance audit: review"
        assert suspect_shown(browser) == ("Berlin", image + "?")
        press(browser, "a")
        assert json.loads(saved_text(browser, server))["answer"] == "accept"
        # the static view holds the strings as text
        assert browser.execute_script("return document.querySelectorAll('details.static img, details.static script').length") == 0
        assert browser.title == "spacy-imbalance audit: review"


def test_two_tabs_never_lose_each_others_decisions(browser, small_corpus, tmp_path):
    """Issue 43, H3: tab A saved suspect 0, tab B saved suspect 1 over it, A
    saved again: B's decision was gone. Now a save from an older read is
    refused and the page merges its own changes into the newer decisions."""
    docs, result = small_corpus
    with served(tmp_path / "review.html", docs, result) as server:
        open_page(browser, server.page_url)
        tab_a = browser.current_window_handle
        browser.switch_to.new_window("tab")
        open_page(browser, server.page_url)  # B reads the decisions before A saves any
        tab_b = browser.current_window_handle
        browser.switch_to.window(tab_a)
        press(browser, "a")  # A accepts the first suspect (Berlin)
        saved_text(browser, server)
        browser.switch_to.window(tab_b)
        press(browser, "j", "x")  # B, from its older read, rejects the second (United Nations)
        saved_text(browser, server)
        assert "Merged" in text_of(browser, "review-status")
        browser.switch_to.window(tab_a)
        press(browser, "j", "a")  # A, now behind B, accepts the third (Acme Corp)
        text = saved_text(browser, server)
    decided = {}
    for line in map(json.loads, text.splitlines()):
        span = line["spans"][0]
        decided[line["text"][span["start"] : span["end"]]] = line["answer"]
    assert decided == {"Berlin": "accept", "United Nations": "reject", "Acme Corp": "accept"}
