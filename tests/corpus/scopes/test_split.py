"""Splitting a fully annotated corpus into parts that annotate some types
(spacy_imbalance/corpus/scopes/split.py and the scope-split command)."""
import json

import pytest
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.scopes import get_label_scope
from spacy_imbalance.corpus.scopes.split import check_groups, split_by_types

LABELS = ["LOC", "ORG", "PER"]


def make_docs(n: int):
    vocab = Vocab()
    docs = []
    for i in range(n):
        doc = Doc(vocab, words=["Ann", "of", "Acme", "in", "Rome", str(i)])
        doc.ents = [Span(doc, 0, 1, "PER"), Span(doc, 2, 3, "ORG"), Span(doc, 4, 5, "LOC")]
        docs.append(doc)
    return docs


def test_each_part_keeps_its_types_only_and_carries_them_as_its_scope():
    docs = make_docs(5)
    parts = split_by_types(docs, [("PER",), ("LOC", "ORG")], seed=0)
    assert [len(part) for part in parts] == [3, 2]  # dealt in turn: sizes differ by at most one
    for part, group in zip(parts, [{"PER"}, {"LOC", "ORG"}]):
        for doc in part:
            assert {ent.label_ for ent in doc.ents} == group
            assert get_label_scope(doc) == group
            # the removed types are plain text now: O, not missing
            removed = [token for token in doc if token.ent_type_ == "" and token.i in (0, 2, 4)]
            assert all(token.ent_iob_ == "O" for token in removed)
    # every document in exactly one part; the input untouched
    assert sorted(doc[5].text for part in parts for doc in part) == [str(i) for i in range(5)]
    assert all(len(doc.ents) == 3 and get_label_scope(doc) is None for doc in docs)


def test_a_removed_entity_leaves_every_span_group_too():
    """spancat and spancat_singlelabel train on doc.spans["sc"]: the naive merge
    must not hand them the types a part does not annotate. Spans that are no
    removed entity (another label, another extent) stay, with the group's attrs."""
    docs = make_docs(2)
    for doc in docs:
        doc.spans["sc"] = list(doc.ents)
        doc.spans["other"] = [Span(doc, 0, 2, "PER"), Span(doc, 4, 5, "LOC")]
        doc.spans["other"].attrs["note"] = "kept"
    parts = split_by_types(docs, [("PER",), ("LOC", "ORG")], seed=0)
    for part, group in zip(parts, [{"PER"}, {"LOC", "ORG"}]):
        for doc in part:
            assert [(s.start, s.end, s.label_) for s in doc.spans["sc"]] == [(e.start, e.end, e.label_) for e in doc.ents]
            assert {s.label_ for s in doc.spans["sc"]} == group
            # (0, 2, PER) was never an entity: it stays in both parts; (4, 5, LOC) leaves the PER part
            other = [(s.start, s.end, s.label_) for s in doc.spans["other"]]
            assert other == ([(0, 2, "PER")] if group == {"PER"} else [(0, 2, "PER"), (4, 5, "LOC")])
            assert doc.spans["other"].attrs["note"] == "kept"
    assert all(len(doc.spans["sc"]) == 3 for doc in docs)  # the input untouched


def test_the_deal_follows_the_seed():
    docs = make_docs(8)
    first = [[doc[5].text for doc in part] for part in split_by_types(docs, [("PER",), ("ORG",)], seed=0)]
    assert first == [[doc[5].text for doc in part] for part in split_by_types(docs, [("PER",), ("ORG",)], seed=0)]
    assert first != [[doc[5].text for doc in part] for part in split_by_types(docs, [("PER",), ("ORG",)], seed=1)]


@pytest.mark.parametrize("groups, message", [
    ([["PER"]], "at least two groups"),
    ([["PER"], ["PER", "ORG"]], "'PER' is in groups 1 and 2"),
    ([["PER"], ["MISC"]], "no entity of type 'MISC' in the corpus (its types: LOC, ORG, PER)"),
    ([["PER"], []], "needs at least one label"),
])
def test_bad_groups_are_refused_with_the_reason(groups, message):
    with pytest.raises(ValueError) as err:
        check_groups(groups, LABELS)
    assert message in str(err.value)


def test_the_command_writes_scoped_parts_the_naive_merge_and_a_summary(tmp_path):
    source = tmp_path / "train.spacy"
    DocBin(docs=make_docs(4)).to_disk(source)
    out = tmp_path / "split"
    result = CliRunner().invoke(app, ["scope-split", str(source), str(out), "--group", "PER", "--group", "ORG"])
    assert result.exit_code == 0, result.output
    vocab = Vocab()
    part_1 = list(DocBin().from_disk(out / "part-1.spacy").get_docs(vocab))
    merged = list(DocBin().from_disk(out / "merged.spacy").get_docs(vocab))
    assert [get_label_scope(doc) for doc in part_1] == [{"PER"}, {"PER"}]
    assert len(merged) == 4 and all(get_label_scope(doc) is None for doc in merged)
    assert sorted(ent.label_ for doc in merged for ent in doc.ents) == ["ORG", "ORG", "PER", "PER"]
    summary = json.loads((out / "parts.json").read_text())
    assert summary["entities"] == 12 and summary["kept"] == 4 and summary["left_out_types"] == ["LOC"]
    assert [(p["file"], p["labels"], p["docs"]) for p in summary["parts"]] == [("part-1.spacy", ["PER"], 2), ("part-2.spacy", ["ORG"], 2)]
    assert "types in no group, removed everywhere: LOC" in result.output


def test_the_command_names_the_bad_group(tmp_path):
    source = tmp_path / "train.spacy"
    DocBin(docs=make_docs(2)).to_disk(source)
    result = CliRunner().invoke(app, ["scope-split", str(source), str(tmp_path / "out"), "--group", "PER", "--group", "PER,ORG"])
    assert result.exit_code == 1 and "--group: 'PER' is in groups 1 and 2" in result.output


def test_the_merge_takes_the_name_given_so_the_folder_is_a_corpus(tmp_path):
    source = tmp_path / "train-complete.spacy"
    DocBin(docs=make_docs(4)).to_disk(source)
    out = tmp_path / "split"
    result = CliRunner().invoke(app, ["scope-split", str(source), str(out), "--group", "PER", "--group", "ORG", "--merged", "train.spacy"])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == ["part-1.spacy", "part-2.spacy", "parts.json", "train.spacy"]
    assert len(list(DocBin().from_disk(out / "train.spacy").get_docs(Vocab()))) == 4
    assert json.loads((out / "parts.json").read_text())["merged"] == "train.spacy"


@pytest.mark.parametrize("name", ["sub/train.spacy", "train.json", "part-1.spacy"])
def test_a_bad_merge_name_is_refused_naming_the_option(tmp_path, name):
    source = tmp_path / "train.spacy"
    DocBin(docs=make_docs(2)).to_disk(source)
    result = CliRunner().invoke(app, ["scope-split", str(source), str(tmp_path / "out"), "--group", "PER", "--merged", name])
    assert result.exit_code == 1 and f"--merged: a file name ending in .spacy, not a path nor part-N.spacy (the parts' names), got {name!r}" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()
