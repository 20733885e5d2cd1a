"""spaCy's built-ins held to the rule of every method (issue 44, item 3):
`ner` stayed at 0.0 dev F1 at every evaluation, was kept as the baseline,
and `token_ner_wce2` was declared "better than spaCy's ner: +5.5". A trial
whose dev score never rose above its step-0 model's is untrained, a built-in
too: it is neither ranked nor a baseline to beat."""
import json
import re

import numpy
import pytest
from typer.testing import CliRunner

from spacy_imbalance.advise import Candidate, rank
from spacy_imbalance.advise.ranking import trained
from spacy_imbalance.advise.report import markdown
from spacy_imbalance.cli import app
from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path
from spacy_imbalance.corpus.docs_io import write_docbin
from spacy_imbalance.scorers.counts import MatchCounts

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = re.compile(r"[│╭╮╰╯─]")
N = 40  # dev sentences, one entity of type X each
LEARNED = [[0, 0.0], [200, 0.2], [400, 0.3]]
# the issue's ner: 0.0 at every evaluation (model-best is the last one, no better than step 0's)
FLAT = [[0, 0.0], [200, 0.0], [400, 0.0]]


def _plain(output):
    return " ".join(BOX.sub(" ", ANSI.sub("", output)).split())


def _report(found, curve):
    table = numpy.zeros((N, 1, 3), dtype="int64")
    table[:found, 0, 0] = 1
    table[found:, 0, 2] = 1
    return {"macro": {"f": 2 * found / (found + N)}, "counts": MatchCounts(["X"], table).to_sparse(),
            "dev_curve": curve, "train_seconds": 30.0}


CANDIDATES = [Candidate("ner", "ner"), Candidate("spancat_singlelabel", "spancat_singlelabel"),
              Candidate("token_ner_wce2", "token_ner", loss="wce2")]


def test_a_trial_at_its_step_0_score_at_every_evaluation_is_untrained():
    assert not trained({"dev_curve": FLAT})
    assert not trained({"dev_curve": [[0, 0.2], [200, 0.2], [400, 0.1]]})
    assert trained({"dev_curve": [[0, 0.0], [200, 0.01]]}) and trained({"dev_curve": LEARNED})


def test_a_builtin_that_never_learned_is_no_baseline():
    reports = {"ner": [_report(0, FLAT), _report(0, FLAT)], "spancat_singlelabel": [_report(10, LEARNED), _report(12, LEARNED)],
               "token_ner_wce2": [_report(30, LEARNED), _report(32, LEARNED)]}
    advice = rank(CANDIDATES, reports, [0, 1])
    assert advice.untrained == [("ner", "its dev score stayed at 0.00 from step 0 to step 400 (400 steps in 0.5 minutes)")]
    assert advice.baseline == "spancat_singlelabel" and [r.name for r in advice.ranking] == ["token_ner_wce2", "spancat_singlelabel"]
    assert advice.verdict.startswith("`token_ner_wce2` is better than spaCy's `spancat_singlelabel`: ")
    assert advice.verdict.endswith(
        " spaCy's `ner` did not train past its first update (`ner`: its dev score stayed at 0.00 from step 0 to step "
        "400 (400 steps in 0.5 minutes)), so it is not compared: a larger --budget or --max-steps would compare it too."
    )
    settings = {"encoder": "cnn", "budget_minutes": 4, "trial_minutes": 0.5, "max_steps": 400}
    md = markdown(advice, [], [], settings, None)
    assert (
        "Δ: paired bootstrap against `spancat_singlelabel`, the only built-in of spaCy that trained (`ner` did not "
        "train past its first update) (mean difference"
    ) in md
    assert "spaCy's better built-in here" not in md


def test_no_recommendation_when_neither_builtin_learned():
    # the trials: spancat_singlelabel's best was step 0 (left out before), ner flat at 0.0 (kept as the
    # baseline before), and token_ner_wce2 "better than spaCy's ner"
    fell = [[0, 0.05], [200, 0.02], [400, 0.0]]
    reports = {"ner": [_report(0, FLAT), _report(0, FLAT)], "spancat_singlelabel": [_report(2, fell), _report(1, LEARNED)],
               "token_ner_wce2": [_report(30, LEARNED), _report(32, LEARNED)]}
    with pytest.raises(ValueError) as err:
        rank(CANDIDATES, reports, [0, 1])
    assert str(err.value) == (
        "spaCy's built-in components did not train past their first update (ner: its dev score stayed at 0.00 from "
        "step 0 to step 400 (400 steps in 0.5 minutes); spancat_singlelabel: its best dev score was that of step 0, "
        "after one update (400 steps in 0.5 minutes)), so there is nothing to compare the other methods with and "
        "nothing is recommended. Give a larger --budget or --max-steps"
    )


def test_no_trial_that_learned_says_no_dev_score_rose():
    reports = {c.name: [_report(5, FLAT), _report(6, [[0, 0.3], [200, 0.2]])] for c in CANDIDATES}
    with pytest.raises(ValueError) as err:
        rank(CANDIDATES, reports, [0, 1])
    assert str(err.value).startswith(
        "No trial trained past its first update, so nothing is recommended: spaCy evaluates after the first update "
        "(step 0) and then every [training] eval_frequency steps, and no trial's dev score rose above that of step 0 "
        "(ner: its dev score stayed at 0.00 from step 0 to step 400 (400 steps in 0.5 minutes)"
    )


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    docs, _ = conll_to_docs(default_corpus_path())
    docs = [doc for doc in docs if doc.ents]
    folder = tmp_path_factory.mktemp("corpora")
    write_docbin(docs[:30], folder / "train.spacy")
    write_docbin(docs[30:40], folder / "dev.spacy")
    return folder / "train.spacy", folder / "dev.spacy"


def test_advise_does_not_call_a_method_better_than_an_untrained_ner(tmp_path, corpora, monkeypatch):
    # the issue: ner at 0.0 at every evaluation, and "token_ner_wce2 is better than spaCy's ner: +5.5"
    reports = {"ner": [_report(0, FLAT), _report(0, FLAT)], "spancat_singlelabel": [_report(10, LEARNED), _report(11, LEARNED)],
               "sampled_spancat": [_report(12, LEARNED), _report(12, LEARNED)],
               "token_ner_wce2": [_report(14, LEARNED), _report(15, LEARNED)]}

    def run_candidates(planned, settings, out, on_done=None):
        found = {}
        for candidate, seed, trial in planned:
            found.setdefault(candidate.name, []).append(reports[candidate.name][seed])
        return found

    monkeypatch.setattr("spacy_imbalance.cli.advise.run_candidates", run_candidates)
    out = tmp_path / "advice"
    result = CliRunner().invoke(app, ["advise", *map(str, corpora), "-o", str(out), "--budget", "4", "--max-steps", "400"])
    said = _plain(result.output)
    assert result.exit_code == 0, said
    assert (
        "ner is not ranked: its dev score stayed at 0.00 from step 0 to step 400 (400 steps in 0.5 minutes); its "
        "scores would be those of an untrained model"
    ) in said
    assert "than spaCy's `ner`" not in said and "over spaCy's `ner`" not in said and "Δ vs ner" not in said
    advice = json.loads((out / "advice.json").read_text(encoding="utf8"))
    assert advice["baseline"] == "spancat_singlelabel" and "ner" not in {r["name"] for r in advice["ranking"]}
    assert "spaCy's `ner` did not train past its first update" in advice["verdict"]
    md = (out / "advice.md").read_text(encoding="utf8")
    assert "- ner: trained, but not ranked: its dev score stayed at 0.00 from step 0 to step 400" in md
    assert (out / "recommended.cfg").exists()
