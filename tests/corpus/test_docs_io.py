import os
import re
import zlib

import pytest
import srsly
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from spacy_imbalance.corpus.docs_io import load_docs, write_docbins, write_text_atomic


def test_docs_io_write_docbins_is_all_or_nothing(tmp_path, monkeypatch):
    vocab = Vocab()
    parts = {tmp_path / "train.spacy": [Doc(vocab, words=["a"])], tmp_path / "test.spacy": [Doc(vocab, words=["b"])]}
    real_to_disk, calls = DocBin.to_disk, []

    def fail_second(self, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        return real_to_disk(self, path)

    monkeypatch.setattr(DocBin, "to_disk", fail_second)
    with pytest.raises(OSError, match="disk full"):
        write_docbins(parts)
    assert list(tmp_path.iterdir()) == []  # neither the first part nor a temp file is left


def test_docs_io_write_docbins_writes_every_part(tmp_path):
    vocab = Vocab()
    parts = {tmp_path / "a.spacy": [Doc(vocab, words=["x", "y"])], tmp_path / "sub" / "b.spacy": []}
    assert write_docbins(parts) == {tmp_path / "a.spacy": 1, tmp_path / "sub" / "b.spacy": 0}
    assert [[t.text for t in d] for d in DocBin().from_disk(tmp_path / "a.spacy").get_docs(vocab)] == [["x", "y"]]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002], ids=oct)
def test_docs_io_written_files_respect_the_umask(tmp_path, umask):
    """Files get 0666 less the umask, as spaCy's own DocBin.to_disk gives them
    (the temporary file used to be mkstemp's 0600, kept by the rename)."""
    vocab = Vocab()
    old = os.umask(umask)
    try:
        write_docbins({tmp_path / "a.spacy": [Doc(vocab, words=["x"])], tmp_path / "sub" / "b.spacy": []})
        DocBin(docs=[Doc(vocab, words=["x"])]).to_disk(tmp_path / "spacy.spacy")
    finally:
        os.umask(old)
    for path in [tmp_path / "a.spacy", tmp_path / "sub" / "b.spacy", tmp_path / "spacy.spacy"]:
        assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~umask), path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.spacy", "spacy.spacy", "sub"]  # no temp file left


# damaged .spacy files fail in each step of DocBin's decoding, with its own exception type
DAMAGED = {
    "random": b"\x00\x01 not zlib \xff",  # zlib: spaCy's E1014 ValueError
    "empty": b"",
    "not-msgpack": zlib.compress(b"hello world"),  # msgpack ExtraData
    "msgpack-list": zlib.compress(srsly.msgpack_dumps([1, 2])),  # TypeError
    "missing-key": zlib.compress(srsly.msgpack_dumps({"attrs": [1]})),  # KeyError
    "bad-arrays": zlib.compress(
        srsly.msgpack_dumps({"attrs": [1], "tokens": b"abc", "spaces": b"x", "lengths": b"zz", "strings": []})
    ),  # numpy ValueError
}


@pytest.mark.parametrize("data", list(DAMAGED.values()), ids=list(DAMAGED))
def test_docs_io_load_docs_names_a_damaged_spacy_file(tmp_path, data):
    path = tmp_path / "damaged.spacy"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=re.escape(f"{path}: not a .spacy (DocBin) file, or a damaged one (")):
        load_docs(path)


def test_docs_io_load_docs_reads_what_write_docbins_wrote(tmp_path):
    vocab = Vocab()
    write_docbins({tmp_path / "a.spacy": [Doc(vocab, words=["x", "y"], ents=["B-PER", "O"])]})
    docs = load_docs(tmp_path / "a.spacy")
    assert [([t.text for t in d], [(e.start, e.end, e.label_) for e in d.ents]) for d in docs] == [(["x", "y"], [(0, 1, "PER")])]


def test_write_text_atomic_replaces_whole_or_leaves_the_old_file(tmp_path):
    path = tmp_path / "record.json"
    write_text_atomic(path, '{"a": 1}\n')
    write_text_atomic(path, '{"a": 2}\n')
    assert path.read_text(encoding="utf8") == '{"a": 2}\n'
    with pytest.raises(TypeError):
        write_text_atomic(path, None)  # fails while writing
    assert path.read_text(encoding="utf8") == '{"a": 2}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


# --- issue 31 H1: the atomic writers never replace what is not a regular file ---


def _fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("make", [_fifo, lambda tmp_path: tmp_path / "folder"], ids=["named-pipe", "folder"])
def test_docs_io_writers_refuse_what_is_not_a_regular_file(tmp_path, make):
    path = make(tmp_path)
    if path.name == "folder":
        path.mkdir()
    kind = os.lstat(path).st_mode
    with pytest.raises(ValueError, match=re.escape(str(path))):
        write_docbins({path: [Doc(Vocab(), words=["x"])]})
    with pytest.raises(ValueError, match=re.escape(str(path))):
        write_text_atomic(path, "text")
    assert os.lstat(path).st_mode == kind  # still the pipe or folder it was
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temp file left


def test_docs_io_writers_write_through_a_symlink(tmp_path):
    target = tmp_path / "real" / "a.spacy"
    target.parent.mkdir()
    link = tmp_path / "link.spacy"
    link.symlink_to(target)  # to a file that does not exist yet
    write_docbins({link: [Doc(Vocab(), words=["x", "y"])]})
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert [[t.text for t in d] for d in load_docs(target)] == [["x", "y"]]
    text_link = tmp_path / "record.json"
    text_link.symlink_to(tmp_path / "real" / "record.json")
    write_text_atomic(text_link, "one\n")
    write_text_atomic(text_link, "two\n")
    assert text_link.is_symlink() and (tmp_path / "real" / "record.json").read_text(encoding="utf8") == "two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.spacy", "record.json"]  # temps beside the target, gone
