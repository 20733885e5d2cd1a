"""A CoNLL file converted to .spacy as a library function (corpus/convert.py):
its errors are exceptions, not exits; nothing is written unless all reads
(the `convert` command: tests/corpus/test_conll.py)."""
import pytest

from spacy_imbalance.corpus.conll import ConllFormatError
from spacy_imbalance.corpus.convert import convert_file, output_paths
from spacy_imbalance.corpus.docs_io import load_docs

from ._corpus import write_conll

TEXT = "".join(f"w{i} B-PER\nx O\n\n" for i in range(6))


def test_convert_file_writes_one_file_or_one_per_part(tmp_path, capsys):
    source = write_conll(tmp_path, TEXT)
    parts = convert_file(source, tmp_path / "all.spacy")
    written = load_docs(tmp_path / "all.spacy")
    assert list(parts) == [""] and len(written) == 6
    assert [(s.start, s.end, s.label_) for s in written[0].spans["sc"]] == [(0, 1, "PER")]
    assert f"{source}: 6 sentences, 12 tokens, 6 entities" in " ".join(capsys.readouterr().out.split())
    parts = convert_file(source, tmp_path / "split", split={"train": 0.5, "test": 0.5}, seed=1, spans_key="")
    assert {name: len(docs) for name, docs in parts.items()} == {"train": 3, "test": 3}
    assert sorted(p.name for p in (tmp_path / "split").iterdir()) == ["test.spacy", "train.spacy"]
    assert "sc" not in load_docs(tmp_path / "split" / "train.spacy")[0].spans
    assert output_paths(tmp_path / "split", {"train": 0.5, "test": 0.5}) == {
        "train": tmp_path / "split" / "train.spacy", "test": tmp_path / "split" / "test.spacy"
    }


def test_convert_file_raises_and_writes_nothing(tmp_path):
    bad = write_conll(tmp_path, "w1 B-PER\nw2\n", name="bad.conll")
    with pytest.raises(ConllFormatError, match=rf"{bad}, line 2"):
        convert_file(bad, tmp_path / "out" / "bad.spacy")
    with pytest.raises(ValueError, match=r"the part\(s\) 'train' would get no sentence: 1 sentence\(s\)"):
        convert_file(write_conll(tmp_path, "w1 B-PER\n"), tmp_path / "out", split={"train": 0.5, "test": 0.5})
    (tmp_path / "folder.spacy").mkdir()
    with pytest.raises(ValueError, match=r"folder\.spacy is a folder"):
        convert_file(write_conll(tmp_path, TEXT), tmp_path / "folder.spacy")
    assert not (tmp_path / "out").exists()
