"""The command-line values the scripts share (spacy_imbalance/benchmark/options.py)."""
import pytest
import typer

from spacy_imbalance.benchmark.options import only_names, overrides_for_load, parse_list, parse_seeds, selected, split_sets, with_seed


def test_benchmark_overrides():
    overrides = split_sets(["corpora.train.n_sentences=200", "corpora.train.seed={seed}"])
    assert overrides == {"corpora.train.n_sentences": "200", "corpora.train.seed": "{seed}"}
    assert with_seed(overrides, 2)["corpora.train.seed"] == "2"
    assert overrides_for_load({"a": "200", "b": "null", "c": "spacy.Corpus.v1"}) == {"a": 200, "b": None, "c": "spacy.Corpus.v1"}
    with pytest.raises(typer.BadParameter, match="KEY=VALUE"):
        split_sets(["no-equals-sign"])
    with pytest.raises(typer.BadParameter, match="a is set twice; set it once"):
        split_sets(["a=1", "a=2"])


def test_benchmark_seed_lists_and_only():
    assert parse_seeds(["0,1,2"]) == [0, 1, 2] and parse_seeds(["0", "2"]) == [0, 2]
    assert parse_seeds(["1, 2,"]) == [1, 2]
    with pytest.raises(typer.BadParameter, match="--seed 0,1,2"):
        parse_seeds(["a"])
    # no seed at all: nothing would train, and the summary would have no seed to name
    with pytest.raises(typer.BadParameter, match="expected at least one seed"):
        parse_seeds([","])
    configs = ["ner", "spancat", "token_ner"]
    assert selected(configs, None, "") == configs and selected(configs, "m50", " ") == configs
    # run names, as in the metrics files: <config>, or <config>-<tag> for tagged runs
    assert selected(configs, None, "token_ner,ner,spancat-m50") == ["ner", "token_ner"]
    assert selected(configs, "m50", "ner,spancat-m50") == ["spancat"]
    assert selected(configs, "m30", "ner,spancat-m50") == []


def test_comma_separated_lists():
    assert parse_list("0.1, 0.3,", float, "--p") == [0.1, 0.3]
    with pytest.raises(typer.BadParameter, match="comma-separated"):
        parse_list("0.1;0.3", float, "--p")
    assert only_names(" ner, ,audit/p30 ") == {"ner", "audit/p30"} and only_names("") == set()
