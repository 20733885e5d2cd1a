"""What a config's train reader yields (spacy_imbalance/benchmark/train_size.py)."""
import pytest

from spacy_imbalance.benchmark.layout import Layout
from spacy_imbalance.benchmark.train_size import train_set_size

from ..conftest import ROOT
from ..corpus._corpus import count_docbin_reads


def test_benchmark_word_factor_of_a_resampling_reader(tmp_path, monkeypatch):
    """The equal-epochs budget scales steps by words per epoch: sC repeats
    each sentence with an entity once more, so the factor is the corpus' words
    plus the entity sentences' words, over the corpus' words."""
    import spacy
    from spacy.tokens import Doc, DocBin

    nlp = spacy.blank("en")
    docs = [
        Doc(nlp.vocab, words=["Kate", "sings", "."], ents=["B-PER", "O", "O"]),
        Doc(nlp.vocab, words=["nothing", "here", "at", "all", "."], ents=["O"] * 5),
    ]
    (tmp_path / "corpus" / "c").mkdir(parents=True)
    DocBin(docs=docs).to_disk(tmp_path / "corpus" / "c" / "train.spacy")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "r.cfg").write_text((ROOT / "configs" / "ner_sC.cfg").read_text(encoding="utf8"), encoding="utf8")
    reads = count_docbin_reads(monkeypatch)
    size = train_set_size(Layout.at(tmp_path), "r", "c", 0, {})
    # the plain corpus is counted from the Docs the reader deserialised (a read costs far more than a copy)
    assert len(reads) == 1
    assert size["train_sentences"] == 2 and size["train_examples"] == 3
    assert size["word_factor"] == pytest.approx((3 + 5 + 3) / 8)
