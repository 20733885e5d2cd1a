import os

import pytest
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from spacy_imbalance.corpus.docs_io import write_docbins


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
