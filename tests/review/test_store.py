"""The review server's files on disk (spacy_imbalance/review/store.py):
synced before they replace the old ones, the state before the JSONL, a save
cut short mended at the next start, and nothing planted at their paths read
unbounded (issue 43, L1, L15)."""
import json
import os

import pytest

from spacy_imbalance.audit.export import review_html
from spacy_imbalance.review import store
from spacy_imbalance.review.server import page_data
from spacy_imbalance.review.state import check_state, jsonl_lines
from spacy_imbalance.review.store import MAX_STATE, ReviewStore, StoreError

STATE = {"format": 1, "cursor": 1, "rows": [[0, "a", 1, 4, 5], [1, "r", 2, 1, 3]], "history": [], "time": 1}


@pytest.fixture
def page(small_corpus, tmp_path):
    docs, result = small_corpus
    path = tmp_path / "review.html"
    path.write_text(review_html(docs, result), encoding="utf8")
    return path


def save(kept: ReviewStore, data, state, revision):
    kept.save(json.dumps({**state, "revision": revision}), revision, jsonl_lines(data, check_state(state, data)))


def test_each_file_is_synced_before_it_replaces_the_old_and_the_state_goes_first(page, monkeypatch):
    """L1: nothing was fsynced; a power cut could leave an empty or old file
    under the new name."""
    data = page_data(page)
    kept = ReviewStore(page, data)
    events = []
    fsync, replace = os.fsync, os.replace

    def synced(fd):
        events.append(("fsync", "folder" if os.path.isdir(f"/proc/self/fd/{fd}") else "file"))
        fsync(fd)

    def replaced(source, target):
        events.append(("replace", os.path.basename(target)))
        replace(source, target)

    monkeypatch.setattr(store.os, "fsync", synced)
    monkeypatch.setattr(store.os, "replace", replaced)
    try:
        save(kept, data, STATE, 1)
    finally:
        kept.close()
    assert events == [
        ("fsync", "file"), ("replace", kept.state_path.name), ("fsync", "folder"),
        ("fsync", "file"), ("replace", kept.jsonl_path.name), ("fsync", "folder"),
    ]


def test_a_save_cut_short_is_mended_at_the_next_start(page):
    """L1: after SIGKILL during saves the JSONL and the state disagreed (5 of
    15), and the hidden .review-*.tmp files stayed for ever. A kill between
    the two renames leaves the new state and the old JSONL; a kill before a
    rename, a temporary file."""
    data = page_data(page)
    kept = ReviewStore(page, data)
    save(kept, data, {**STATE, "rows": []}, 1)
    old_jsonl = kept.jsonl_path.read_bytes()
    save(kept, data, STATE, 2)
    kept.close()
    kept.jsonl_path.write_bytes(old_jsonl)  # the second save's JSONL never landed
    ours = [page.with_name(f".{kept.state_path.name}.0123456789abcdef.tmp"), page.with_name(f".{kept.jsonl_path.name}.fedcba9876543210.tmp")]
    others = [page.with_name(".review-0123456789abcdef.jsonl.0123456789abcdef.tmp"), page.with_name(".notes.tmp"), page.with_name(f".{kept.jsonl_path.name}.tmp")]
    for path in ours + others:
        path.write_text("{", encoding="utf8")
    again = ReviewStore(page, data)
    try:
        assert (again.revision, again.rewritten, again.removed) == (2, True, 2)
        lines = [json.loads(line) for line in again.jsonl_path.read_text(encoding="utf8").splitlines()]
        assert [(line["answer"], line["spans"][0]["label"]) for line in lines] == [("accept", "LOC"), ("reject", "ORG")]
        assert not any(path.exists() for path in ours) and all(path.exists() for path in others)
    finally:
        again.close()
    # files that agree are left as they are
    agreed = ReviewStore(page, data)
    assert (agreed.revision, agreed.rewritten, agreed.removed) == (2, False, 0)
    agreed.close()


def test_a_state_the_page_cannot_have_saved_stops_the_start(page):
    data = page_data(page)
    kept = ReviewStore(page, data)
    kept.close()
    kept.state_path.write_text(json.dumps({**STATE, "rows": [[99, "a", 1, 4, 5]]}), encoding="utf8")
    with pytest.raises(StoreError) as err:
        ReviewStore(page, data)
    assert str(err.value) == (
        f"{kept.state_path}: not a state of this page the review server can read back (row 1 of 'state' ([99, 'a', 1, 4, 5]): "
        "no suspect 99 (the page has 7)); move it away to start this page's review afresh"
    )
    # and the lock it took is given back
    assert not page.with_name(f".review-{data['key']}.lock").exists()


def test_a_state_file_larger_than_any_state_is_refused_unread(page):
    """L15: what the server reads is bounded; a planted file is refused by its size."""
    data = page_data(page)
    kept = ReviewStore(page, data)
    kept.close()
    with open(kept.state_path, "wb") as file:
        file.truncate(MAX_STATE + 1)  # sparse: no 16 MB written
    with pytest.raises(StoreError) as err:
        ReviewStore(page, data)
    assert str(err.value) == (
        f"{kept.state_path} is {MAX_STATE + 1:,} bytes: larger than any state the review server writes ({MAX_STATE:,} bytes at most)"
    )


def test_the_command_says_what_it_mended(page, monkeypatch):
    from spacy_imbalance.cli import review as review_command

    from ..cli._cli import _invoke, _plain

    data = page_data(page)
    kept = ReviewStore(page, data)
    save(kept, data, STATE, 3)
    kept.close()
    kept.jsonl_path.write_text("", encoding="utf8")
    page.with_name(f".{kept.state_path.name}.0123456789abcdef.tmp").write_text("{", encoding="utf8")
    monkeypatch.setattr(review_command.ReviewServer, "serve_forever", lambda self: None)
    result = _invoke("review", page, "--no-browser", "--port", 0)
    assert result.exit_code == 0, result.output
    output = _plain(result.output)
    assert f"{kept.jsonl_path} was not the decisions of {kept.state_path} (revision 3; a save was cut short): written again from it" in output
    assert f"Removed 1 temporary file(s) of saves cut short, beside {page}" in output
    assert len(kept.jsonl_path.read_text(encoding="utf8").splitlines()) == 2
