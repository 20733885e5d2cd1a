"""spacy-imbalance init-config: writes the config it says, refuses to write
over a file, and names a bad option."""
import re

from spacy.util import load_config
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.init_config import ConfigChoice, build_config

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _invoke(*args):
    return CliRunner().invoke(app, ["init-config", *map(str, args)])


def test_init_config_writes_the_config_of_its_options(tmp_path):
    out = tmp_path / "cfg" / "weighted.cfg"
    result = _invoke(out, "--component", "sampled_spancat", "--sampler", "weighted", "--encoder", "vectors",
                     "--set", "components.sampled_spancat.max_span_width=12")
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf8")
    # the header says how to write it again
    assert text.startswith("# spacy-imbalance ") and "--sampler weighted --encoder vectors --set components.sampled_spancat.max_span_width=12" in text.splitlines()[0]
    expected = build_config(ConfigChoice("sampled_spancat", sampler="weighted", encoder="vectors",
                                         overrides={"components.sampled_spancat.max_span_width": 12}))
    assert load_config(out, interpolate=False) == expected


def test_init_config_head_v1_writes_the_first_release_s_head_and_says_so():
    result = _invoke("-", "--component", "sampled_spancat", "--head", "v1")
    assert result.exit_code == 0, result.output
    assert "--component sampled_spancat --head v1" in result.output.splitlines()[0]
    assert 'representation = "endpoints_width"' in result.output and "hidden_width = 256" in result.output
    default = _invoke("-", "--component", "sampled_spancat")
    assert 'representation = "endpoints_mean_max"' in default.output and "hidden_width = 128" in default.output
    assert "--head" not in default.output.splitlines()[0]


def test_init_config_gpu_means_a_transformer(tmp_path):
    result = _invoke("-", "--component", "token_ner", "--gpu")
    assert result.exit_code == 0, result.output
    assert '"transformer"' in result.output and "spacy-transformers.TransformerListener.v1" in result.output


def test_init_config_does_not_write_over_a_file(tmp_path):
    out = tmp_path / "config.cfg"
    out.write_text("mine", encoding="utf8")
    result = _invoke(out, "--component", "ner")
    assert result.exit_code == 1 and "--force" in ANSI.sub("", result.output)
    assert out.read_text(encoding="utf8") == "mine"
    assert _invoke(out, "--component", "ner", "--force").exit_code == 0
    assert load_config(out)["nlp"]["pipeline"] == ["tok2vec", "ner"]


def test_init_config_names_the_bad_option(tmp_path):
    out = tmp_path / "config.cfg"
    for args, named in [
        (["--component", "token_ner", "--loss", "auc"], "--loss"),
        (["--component", "ner", "--sampler", "top"], "--sampler"),
        (["--component", "ner", "--head", "v1"], "--head"),
        (["--component", "sampled_spancat", "--head", "v9"], "--head"),
        (["--component", "ner", "--set", "trainin.x=1"], "trainin"),
        (["--component", "ner", "--set", "training.max_step=5"], "max_step"),
        (["--component", "ner", "--set", "corpora.train.max_length=-"], "max_length"),
        (["--component", "ner", "--set", "max_steps=5"], "max_steps"),
        (["--component", "ner", "--lang", "zz"], "--lang"),
    ]:
        result = _invoke(out, *args)
        assert result.exit_code == 1, (args, result.output)
        assert named in " ".join(ANSI.sub("", result.output).split()), (args, result.output)
        assert not out.exists()


def test_init_config_refuses_a_setting_given_twice_and_a_folder(tmp_path):
    out = tmp_path / "config.cfg"
    twice = _invoke(out, "--component", "ner", "--set", "training.max_steps=5", "--set", "training.max_steps=6")
    assert twice.exit_code != 0 and "set twice" in " ".join(ANSI.sub("", twice.output).split())
    assert not out.exists()
    folder = _invoke(tmp_path, "--component", "ner", "--force")
    assert folder.exit_code == 1 and "is a folder" in " ".join(ANSI.sub("", folder.output).split())
    assert list(tmp_path.iterdir()) == []


def test_init_config_mixed_precision_turns_on_autocast_for_a_transformer(tmp_path):
    out = tmp_path / "mp.cfg"
    result = _invoke(out, "--component", "sampled_spancat", "--encoder", "transformer", "--mixed-precision")
    assert result.exit_code == 0, result.output
    config = load_config(out, interpolate=False)
    assert config["components"]["transformer"]["model"]["mixed_precision"] is True
    # the header says how to write it again
    assert "--set components.transformer.model.mixed_precision=true" in out.read_text(encoding="utf8").splitlines()[0]


def test_init_config_mixed_precision_needs_a_transformer(tmp_path):
    result = _invoke(tmp_path / "x.cfg", "--component", "ner", "--encoder", "vectors", "--mixed-precision")
    assert result.exit_code == 1 and "--mixed-precision applies to a fine-tuned transformer" in " ".join(ANSI.sub("", result.output).split())
    assert not (tmp_path / "x.cfg").exists()


def _folder_base(where):
    """A trained pipeline without a ner or a tok2vec: a sentencizer on spaCy's English tokenizer."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(where)


def test_init_config_base_folder_is_sourced_absolutely_and_a_base_without_ner_gets_doc_ents(tmp_path, monkeypatch):
    from spacy_imbalance.init_config import validate_config

    _folder_base(tmp_path / "sm")
    monkeypatch.chdir(tmp_path)
    result = _invoke("config.cfg", "--component", "token_ner", "--base", "sm",
                     "--set", "training.max_steps=7")
    output = " ".join(ANSI.sub("", result.output).split())
    assert result.exit_code == 0, output
    where = str((tmp_path / "sm").resolve())
    # the base has no ner: ours writes doc.ents, and the message says so
    assert "entities to doc.ents)" in output and "doc.spans" not in output
    text = (tmp_path / "config.cfg").read_text(encoding="utf8")
    assert text.splitlines()[0].endswith(f"--component token_ner --set training.max_steps=7 --base {where}")
    config = load_config(tmp_path / "config.cfg", interpolate=False)
    assert config["components"]["sentencizer"] == {"source": where} and config["training"]["max_steps"] == 7
    # spacy train from another folder finds the base (a relative "sm" failed there with E050)
    monkeypatch.chdir(tmp_path.parent)
    validate_config(config)


def test_init_config_base_entities_key_set_decides_where_the_entities_go(tmp_path):
    _folder_base(tmp_path / "sm")
    out = tmp_path / "config.cfg"
    result = _invoke(out, "--component", "token_ner", "--base", tmp_path / "sm", "--set", "components.token_ner.entities_key=mine")
    assert result.exit_code == 0, result.output
    assert "entities to doc.spans['mine'])" in " ".join(ANSI.sub("", result.output).split())
    assert load_config(out, interpolate=False)["components"]["token_ner"]["entities_key"] == "mine"
    assert "--set components.token_ner.entities_key=\"mine\"" in out.read_text(encoding="utf8").splitlines()[0]


def test_init_config_base_refuses_a_setting_it_writes_from_the_base(tmp_path):
    _folder_base(tmp_path / "sm")
    out = tmp_path / "config.cfg"
    for key, value, why in [
        ("training.frozen_components", "[]", "every component of the base, so that its annotations stay exactly as they are"),
        ("nlp.disabled", '["sentencizer"]', "the components the base disables, as the base has them"),
        ("nlp.pipeline", '["token_ner"]', "the base's components in their order, then ours"),
        ("training.annotating_components", '["sentencizer"]', "the listened-to tok2vec with --listen"),
    ]:
        result = _invoke(out, "--component", "token_ner", "--base", tmp_path / "sm", "--set", f"{key}={value}")
        output = " ".join(ANSI.sub("", result.output).split())
        assert result.exit_code == 1, (key, output)
        assert f"--set {key}: --base writes [{key}] from {(tmp_path / 'sm').resolve()}: {why}" in output
        # nothing written: no header records a value the config does not have
        assert not out.exists()
