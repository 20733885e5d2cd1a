"""advise's plan and run: each trial's share of the budget, configs that are
init-config's with a time budget, and a resumable end-to-end run."""
import re

import pytest
import srsly
from spacy.util import load_config
from typer.testing import CliRunner

from spacy_imbalance.advise import AdviseSettings, Candidate
from spacy_imbalance.advise.run import candidate_config, read_miss_rate
from spacy_imbalance.cli import app
from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path
from spacy_imbalance.corpus.docs_io import write_docbin

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_trial_minutes_share_the_budget_among_rounds_of_workers():
    # 8 trials, 2 at a time: 4 rounds of 5 minutes, less 45 s of overhead each
    assert AdviseSettings(budget_minutes=20, workers=2).trial_minutes(8) == pytest.approx(4.25)
    assert AdviseSettings(budget_minutes=20, workers=1).trial_minutes(8) == pytest.approx(1.75)
    assert AdviseSettings(budget_minutes=1).trial_minutes(50) == 0.5  # never below the floor


@pytest.mark.parametrize("settings, named", [
    (AdviseSettings(seeds=1), "--seeds"), (AdviseSettings(budget_minutes=0), "--budget"),
    (AdviseSettings(encoder="elmo"), "--encoder"), (AdviseSettings(vectors="en_core_web_lg"), "--vectors"),
])
def test_settings_name_the_bad_option(settings, named):
    with pytest.raises(ValueError, match=named):
        settings.check()


def test_candidate_config_is_init_configs_with_a_time_budget():
    candidate = Candidate("sampled_spancat_weighted", "sampled_spancat", sampler="weighted", reason="why")
    settings = AdviseSettings(encoder="vectors", vectors="my/vectors")
    timed = load_config_text(candidate_config(candidate, settings, 2.5))
    assert timed["training"]["before_update"] == {"@callbacks": "spacy-imbalance.time_budget.v1", "minutes": 2.5}
    assert timed["paths"]["vectors"] == "my/vectors"
    assert timed["components"]["sampled_spancat"]["negatives"]["@misc"] == "spacy-imbalance.weighted_negatives.v2"
    recommended = load_config_text(candidate_config(candidate, settings, None))
    assert recommended["training"]["before_update"] is None


def load_config_text(text):
    from thinc.api import Config

    return Config().from_str(text, interpolate=False)


def test_read_miss_rate_names_a_folder_without_an_audit(tmp_path):
    with pytest.raises(ValueError, match="summary.json"):
        read_miss_rate(tmp_path)
    srsly.write_json(tmp_path / "summary.json", {"labels": [{"label": "total", "rate": 0.3, "rate_low": 0.2, "rate_high": 0.4}]})
    assert read_miss_rate(tmp_path) == {"rate": 0.3, "interval": [0.2, 0.4]}


@pytest.mark.slow
def test_advise_ranks_recommends_writes_and_resumes(tmp_path):
    docs, _ = conll_to_docs(default_corpus_path())
    write_docbin(docs[:150], tmp_path / "train.spacy")
    write_docbin(docs[150:200], tmp_path / "dev.spacy")
    out = tmp_path / "advice"
    args = ["advise", str(tmp_path / "train.spacy"), str(tmp_path / "dev.spacy"), "-o", str(out), "--budget", "1", "--max-steps", "4"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    text = " ".join(ANSI.sub("", result.output).split())
    assert "[8/8]" in text and "Recommended:" in text
    advice = srsly.read_json(out / "advice.json")
    assert [r["name"] for r in advice["ranking"]][0] in text
    # 150 sentences: the small-corpus loss is tried
    assert {r["name"] for r in advice["ranking"]} == {"ner", "spancat_singlelabel", "sampled_spancat_uniform", "token_ner_wce2"}
    assert advice["recommended"] in {r["name"] for r in advice["ranking"]}
    assert load_config(out / "recommended.cfg")["training"]["before_update"] is None
    assert (out / "advice.md").read_text(encoding="utf8").startswith("# Which method for this corpus")
    assert (out / "advice.png").stat().st_size > 0
    # the input is read, never written
    assert (out / "corpus" / "train.spacy").exists()
    # a second run reuses every trial
    stamps = {p: p.stat().st_mtime for p in (out / "trials").glob("*.json")}
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "[1/" not in ANSI.sub("", again.output)
    assert {p: p.stat().st_mtime for p in (out / "trials").glob("*.json")} == stamps
