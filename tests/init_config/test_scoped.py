"""init-config --scoped PATH=LABEL,LABEL (issue 47, item 3): a train corpus of
several scoped corpora, the union of their labels, refusals that name the
option, and a written config that trains with `spacy train`."""
import re

import pytest
import spacy
from spacy.util import load_config, registry
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.scopes import get_label_scope
from spacy_imbalance.init_config import ConfigChoice, build_config, fill_config, validate_config
from spacy_imbalance.init_config.options import LOSSES, SCOPED_LOSS_NAMES
from spacy_imbalance.pipeline.tagging.scopes import check_scoped_loss

from ..pipeline._scoped import train_with_spacy, write_corpora

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SCOPED = (("corpus/people.spacy", ("PER", "ORG")), ("corpus/products.spacy", ("PRODUCT", "LOC")))


def _invoke(*args):
    result = CliRunner().invoke(app, ["init-config", *map(str, args)])
    return result, " ".join(ANSI.sub("", result.output).split())


@pytest.mark.parametrize("component", ["token_ner", "sampled_spancat"])
def test_scoped_changes_only_the_train_corpus_the_labels_and_the_o_weight(component):
    plain = build_config(ConfigChoice(component))
    config = build_config(ConfigChoice(component, scoped=SCOPED))
    reader = {"spans_key": None, "corpus": None, "gold_preproc": True, "max_length": 0, "limit": 0, "augmenter": None}
    assert config["corpora"].pop("train") == {
        "@readers": "spacy-imbalance.CombinedCorpus.v1",
        "corpora": {
            "people": {"@readers": "spacy-imbalance.ScopedCorpus.v1", "path": "corpus/people.spacy", "labels": ["ORG", "PER"], **reader},
            "products": {"@readers": "spacy-imbalance.ScopedCorpus.v1", "path": "corpus/products.spacy", "labels": ["LOC", "PRODUCT"], **reader},
        },
    }
    assert config["initialize"]["components"].pop(component) == {"labels": ["LOC", "ORG", "PER", "PRODUCT"]}
    # the weight chosen on dev for sampled_spancat; token_ner keeps its default (never tried on dev)
    assert config["components"][component].pop("scope_o_weight") == {"sampled_spancat": 0.1, "token_ner": 0.0}[component]
    assert plain["components"][component].pop("scope_o_weight") == 0.0
    plain["corpora"].pop("train")
    assert config == plain


def test_scoped_config_is_filled_and_valid():
    config = build_config(ConfigChoice("token_ner", loss="focal", scoped=SCOPED))
    validate_config(config)
    assert fill_config(config) == config


def test_scoped_readers_check_the_gold_group_of_sampled_spancat():
    config = build_config(ConfigChoice("sampled_spancat", scoped=SCOPED, overrides={"components.sampled_spancat.gold_key": "gold"}))
    assert [reader["spans_key"] for reader in config["corpora"]["train"]["corpora"].values()] == ["gold", "gold"]
    validate_config(config)


def test_scoped_names_of_the_same_file_name_are_numbered():
    config = build_config(ConfigChoice("token_ner", scoped=(("a/train.spacy", ("PER",)), ("b/train.spacy", ("LOC",)))), fill=False)
    assert list(config["corpora"]["train"]["corpora"]) == ["train", "train_2"]


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_scoped_loss_names_are_the_losses_token_ner_trains_scopes_with(name):
    loss = registry.resolve({"loss": LOSSES[name]})["loss"]
    if name in SCOPED_LOSS_NAMES:
        check_scoped_loss(loss, "token_ner")
    else:
        with pytest.raises(ValueError, match=f"the loss {type(loss).__name__} has no partial-label form"):
            check_scoped_loss(loss, "token_ner")


@pytest.mark.parametrize(
    "choice, message",
    [
        (ConfigChoice("ner", scoped=SCOPED), "--scoped trains on corpora that annotate only some entity types, which --component ner cannot"),
        (ConfigChoice("spancat", scoped=SCOPED), "which --component spancat cannot"),
        (ConfigChoice("spancat_singlelabel", scoped=SCOPED), "which --component spancat_singlelabel cannot"),
        (ConfigChoice("two_task_ner", scoped=SCOPED), "which --component two_task_ner cannot"),
        (ConfigChoice("token_ner", loss="dice", scoped=SCOPED), "--scoped with --loss dice: the loss has no partial-label form"),
        (ConfigChoice("token_ner", loss="mom", scoped=SCOPED), "--scoped with --loss mom: "),
        (ConfigChoice("sampled_spancat", loss="mom_focal_v1", scoped=SCOPED), "--scoped with --loss mom_focal_v1: "),
        (ConfigChoice("token_ner", resample="sCR", scoped=SCOPED), "--scoped with --resample sCR: "),
        (ConfigChoice("token_ner", scoped=(("a.spacy", ("PER",)), ("a.spacy", ("LOC",)))), "--scoped a.spacy is given twice"),
        (ConfigChoice("token_ner", scoped=(("a.spacy", ("PER", "PER")),)), "--scoped a.spacy: a label scope names each label once, got 'PER' more than once"),
        (ConfigChoice("token_ner", scoped=(("a.spacy", ("PER", "")),)), "--scoped a.spacy: a label is a non-empty string without spaces, got ''"),
    ],
)
def test_scoped_refusals_name_the_option(choice, message):
    with pytest.raises(ValueError) as err:
        build_config(choice)
    assert str(err.value).startswith(message) if message.startswith("--") else message in str(err.value)


def test_init_config_cli_refuses_a_bad_scoped_value(tmp_path):
    out = tmp_path / "config.cfg"
    (tmp_path / "a.spacy").write_bytes(b"")
    for args, message in [
        (["--scoped", "a.spacy"], "--scoped 'a.spacy': give PATH=LABEL,LABEL"),
        (["--scoped", f"{tmp_path / 'nowhere.spacy'}=PER"], f"no such file or folder: {tmp_path / 'nowhere.spacy'}"),
        (["--scoped", f"{tmp_path / 'a.spacy'}=PER,"], "a label is a non-empty string without spaces, got ''"),
        (["--component", "ner", "--scoped", f"{tmp_path / 'a.spacy'}=PER"], "which --component ner cannot"),
    ]:
        result, output = _invoke(out, *(["--component", "token_ner"] if "--component" not in args else []), *args)
        assert result.exit_code == 1 and message in output, (args, output)
        assert not out.exists()


PEOPLE = [("Kate met Tim at IBM .", [(0, 4, "PER"), (9, 12, "PER")]), ("Ask Kate in Paris .", [(4, 8, "PER")])]
PLACES = [("Kate flew to Paris .", [(13, 18, "LOC")]), ("Berlin and Paris .", [(0, 6, "LOC"), (11, 16, "LOC")])]
DEV = [("Kate lives in Berlin .", [(0, 4, "PER"), (14, 20, "LOC")])]


def test_init_config_scoped_trains_with_spacy_train_on_scoped_docs(tmp_path):
    write_corpora(tmp_path, people=PEOPLE, places=PLACES, dev=DEV)
    out = tmp_path / "scoped.cfg"
    people, places = f"{tmp_path / 'people.spacy'}=PER,ORG", f"{tmp_path / 'places.spacy'}=LOC"
    result, output = _invoke(out, "--component", "token_ner", "--scoped", people, "--scoped", places)
    assert result.exit_code == 0, output
    assert f"--scoped {people} --scoped {places}" in out.read_text(encoding="utf8").splitlines()[0]
    assert "--paths.train" not in output and "--paths.dev DEV.spacy" in output
    config = load_config(out, interpolate=False)
    assert config["initialize"]["components"]["token_ner"] == {"labels": ["LOC", "ORG", "PER"]}
    # its train corpus yields the docs of each file with that file's scope
    corpus = registry.resolve(load_config(out, overrides={"paths.dev": str(tmp_path / "dev.spacy")}).interpolate()["corpora"])["train"]
    scopes = [(eg.reference.text, get_label_scope(eg.reference)) for eg in corpus(spacy.blank("en"))]
    assert scopes == [(text, frozenset({"ORG", "PER"})) for text, _ in PEOPLE] + [(text, frozenset({"LOC"})) for text, _ in PLACES]
    trained = train_with_spacy(out, tmp_path / "dev.spacy", tmp_path / "model")
    assert trained.get_pipe("token_ner").labels == ("LOC", "ORG", "PER")
