"""No miss rate from untrained folds (issue 44, item 3): with
--training.max_steps 50 every fold's model-best was its step-0 model, and the
audit printed "✔ 0 suspected missing entities; estimated miss rate 96.3 %
[88.4, 97.8]" where 39.7 % were missing. A fold whose best checkpoint is no
better on dev than its model after one update is refused, naming the
setting to raise; folds that learned little qualify the estimate."""
import json

import pytest

from spacy_imbalance.audit import run as audit_run
from spacy_imbalance.audit.folds import (
    FOLD_FILE, TRAIN_LOG, fold_curve, fold_dir, prepare_plan, spacy_trainer, train_fold, untrained_reason,
)
from spacy_imbalance.audit.run import DEFAULT_CONFIG, AuditSettings, check_folds_learned, learned_little, run_audit
from spacy_imbalance.corpus.docs_io import load_docs

from ._audit import audit_command, plain, summary_headline

# the default config's [training] with the issue's override
ISSUE_TRAINING = {"max_steps": 50, "eval_frequency": 200, "patience": 1000, "max_epochs": 0}


# --- the rule: a dev score above step 0's ---------------------------------------

@pytest.mark.parametrize("curve, reason", [
    ([], "no dev evaluation"),
    ([[0, 0.31]], "no dev evaluation after step 0"),
    ([[0, 0.2], [200, 0.1], [400, 0.15]], "its best dev score was that of step 0, after one update"),
    # the issue's ner: 0.0 at every evaluation; model-best is the last one, no better than step 0's
    ([[0, 0.0], [200, 0.0], [400, 0.0]], "its dev score stayed at 0.00 from step 0 to step 400"),
    ([[0, 0.1], [200, 0.1], [400, 0.05]], "no dev evaluation after step 0 (up to step 400) scored above its 0.10"),
    ([[200, 0.0], [400, 0.0]], "its dev score was 0.00 at every evaluation, up to step 400"),
    ([[0, 0.0], [200, 0.01]], None),
    ([[0, 0.3], [200, 0.1], [400, 0.31]], None),
    ([[200, 0.2]], None),
])
def test_a_run_is_untrained_unless_a_later_evaluation_scored_above_step_0s(curve, reason):
    assert untrained_reason(curve) == reason


# --- the refusal and which setting it names -------------------------------------

def test_the_issues_folds_are_refused_naming_max_steps_and_eval_frequency(tmp_path):
    with pytest.raises(ValueError) as err:
        check_folds_learned([[[0, 0.0]]] * 5, tmp_path / "folds", ISSUE_TRAINING)
    assert str(err.value) == (
        "No miss rate is estimated: in folds 1, 2, 3, 4, 5 of 5, the best checkpoint (model-best) is no better on dev "
        "than the model after one update (step 0), so the scores are those of an untrained model (folds 1, 2, 3, 4, 5: "
        "no dev evaluation after step 0). spaCy evaluates a fold's model after its first update (step 0) and then "
        "every 200 steps ([training] eval_frequency), and --training.max_steps 50 ends training before step 200: "
        "raise --training.max_steps well above 200, or lower --training.eval_frequency below 50, so that checkpoints "
        f"after step 0 are evaluated. Then run the audit again with another --output, or delete {tmp_path / 'folds'} "
        "first: its folds were trained with these settings, and an audit with other ones refuses that folder"
    )


def test_folds_that_never_rose_above_step_0_name_max_steps_and_patience(tmp_path):
    curves = [[[0, 0.0], [200, 0.0], [400, 0.0]], [[0, 0.0], [200, 0.3]], [[0, 0.2], [200, 0.1]]]
    with pytest.raises(ValueError) as err:
        check_folds_learned(curves, tmp_path, {**ISSUE_TRAINING, "max_steps": 400, "patience": 200})
    said = str(err.value)
    # fold 2 learned: only folds 1 and 3 are named
    assert said.startswith(
        "No miss rate is estimated: in folds 1, 3 of 3, the best checkpoint (model-best) is no better on dev than the "
        "model after one update (step 0), so the scores are those of an untrained model (fold 1: its dev score stayed "
        "at 0.00 from step 0 to step 400; fold 3: its best dev score was that of step 0, after one update). Where "
        "later evaluations scored no higher than step 0's, train the folds longer: raise --training.max_steps (now "
        "400) and --training.patience (now 200: training stops that many steps after its best evaluation). Then run"
    )


def test_a_training_that_ended_before_its_second_evaluation_names_epochs_and_patience(tmp_path):
    with pytest.raises(ValueError) as err:
        check_folds_learned([[[0, 0.0]], [[0, 0.1], [200, 0.4]]], tmp_path, {**ISSUE_TRAINING, "max_steps": 4000, "max_epochs": 1})
    assert (
        "(fold 1: no dev evaluation after step 0). spaCy evaluates a fold's model after its first update (step 0) and "
        "then every 200 steps ([training] eval_frequency), and training ended before step 200 (--training.max_epochs 1, "
        "--training.patience 1000): raise --training.max_epochs (0: no limit) or --training.patience, or lower "
        "--training.eval_frequency, so that checkpoints after step 0 are evaluated. Then run"
    ) in str(err.value)


def test_folds_without_a_recorded_curve_are_a_warning_not_a_refusal(tmp_path, capsys):
    check_folds_learned([None, [], [[0, 0.0], [200, 0.2]]], tmp_path, ISSUE_TRAINING)
    assert (
        "Folds 1, 2: no dev evaluation is recorded (no train.log of the training, or a [training.logger] that prints "
        "no table), so whether the model learned past its first update is not known"
    ) in " ".join(capsys.readouterr().out.split())


def test_folds_that_learned_little_qualify_the_estimate():
    assert learned_little([0.04, None, 0.02]) == (
        "The fold models learned little: their best dev scores (the score that picked each checkpoint, 0-1) are 0.04 "
        "(fold 1), 0.02 (fold 3), below 0.1 on average. Models this weak barely tell entities from other spans, so "
        "this estimate is rough and may be far off: train the folds longer (--training.max_steps) or on a stronger "
        "encoder (--vectors, --features) before relying on it."
    )
    assert learned_little([0.05, 0.15]) is None and learned_little([None, None]) is None


# --- through the audit: a fold trainer whose log is the issue's -----------------

def _row(step, score):
    """A row of spaCy's console table: epoch, step, losses, scores, then the score (0-1)."""
    return f"  0  {step:>6}  1.25  40.10  {100 * score:.2f}  {score:.2f}\n"


def _logging_trainer(init_only_trainer, curve):
    """The fixture's trainer (no training steps), with a console log whose
    table is ``curve``: what spacy_trainer or Ray would leave beside it."""
    def trainer(config, output, overrides, gpu_id):
        init_only_trainer(config, output, overrides, gpu_id)
        (output / TRAIN_LOG).write_text("".join(_row(step, score) for step, score in curve), encoding="utf8")
    return trainer


def test_run_audit_refuses_folds_whose_best_is_step_0_before_scoring(tmp_path, toy_corpus, init_only_trainer, monkeypatch):
    def no_scoring(*args, **kwargs):
        raise AssertionError("a fold was scored")

    monkeypatch.setattr(audit_run, "_score_fold", no_scoring)
    train = load_docs(toy_corpus / "train.spacy")[:12]
    trainer = _logging_trainer(init_only_trainer, [[0, 0.0]])
    with pytest.raises(ValueError) as err:
        run_audit(train, None, tmp_path, config=DEFAULT_CONFIG, overrides={"training.max_steps": 50},
                  settings=AuditSettings(folds=2, n_resamples=0), trainer=trainer)
    assert str(err.value).startswith(
        "No miss rate is estimated: in folds 1, 2 of 2, the best checkpoint (model-best) is no better on dev than the "
        "model after one update (step 0), so the scores are those of an untrained model (folds 1, 2: no dev evaluation "
        "after step 0). spaCy evaluates a fold's model after its first update (step 0) and then every 200 steps "
        "([training] eval_frequency), and --training.max_steps 50 ends training before step 200"
    )
    # the curve is recorded with the fold: a resumed audit refuses it again without training
    record = json.loads((fold_dir(tmp_path / "folds", 0) / FOLD_FILE).read_text(encoding="utf8"))
    assert record["dev_curve"] == [[0, 0.0]] and fold_curve(tmp_path / "folds", 1) == [[0, 0.0]]

    def refuse(*args):
        raise AssertionError("a finished fold was trained again")

    with pytest.raises(ValueError, match="no dev evaluation after step 0"):
        run_audit(train, None, tmp_path, config=DEFAULT_CONFIG, overrides={"training.max_steps": 50},
                  settings=AuditSettings(folds=2, n_resamples=0), trainer=refuse)


def _audit_cli(tmp_path, toy_corpus, trainer, monkeypatch):
    docs = load_docs(toy_corpus / "train.spacy")[:12]
    return audit_command(tmp_path, docs, trainer, monkeypatch, "--training.max_steps", "50")


def test_the_audit_command_prints_no_estimate_from_untrained_folds(tmp_path, toy_corpus, init_only_trainer, monkeypatch):
    result, out = _audit_cli(tmp_path, toy_corpus, _logging_trainer(init_only_trainer, [[0, 0.0]]), monkeypatch)
    said = plain(result.output)
    assert result.exit_code == 1, said
    assert "No miss rate is estimated: in folds 1, 2 of 2" in said and "raise --training.max_steps well above 200" in said
    assert "estimated miss rate" not in said
    # no page or summary repeats an estimate
    assert not any((out / name).exists() for name in ("summary.json", "summary.md", "review.html", "suspects.jsonl"))


def test_the_audit_command_says_the_folds_learned_little_beside_the_estimate(tmp_path, toy_corpus, init_only_trainer, monkeypatch):
    trainer = _logging_trainer(init_only_trainer, [[0, 0.0], [200, 0.03]])
    result, out = _audit_cli(tmp_path, toy_corpus, trainer, monkeypatch)
    assert result.exit_code == 0, result.output
    summary, line = summary_headline(out)
    note = ("The fold models learned little: their best dev scores (the score that picked each checkpoint, 0-1) are "
            "0.03 (fold 1), 0.03 (fold 2), below 0.1 on average.")
    # a warning, not a tick, and the note right after it
    assert f"⚠ {line} ⚠ {note}" in plain(result.output)
    assert f"✔ {line}" not in plain(result.output)
    assert summary["notes"][0].startswith(note)
    assert f"> {summary['notes'][0]}" in (out / "summary.md").read_text(encoding="utf8")


# --- the sequential trainer keeps the log the check reads (trains 2 steps) ----------

def test_spacy_trainer_keeps_its_console_log_and_the_fold_records_its_dev_curve(tmp_path, toy_corpus, capsys):
    docs = load_docs(toy_corpus / "train.spacy")[:12]
    folder = tmp_path / "folds"
    plan = prepare_plan(folder, docs, 2, 0, {})
    overrides = {"training.max_steps": 2, "training.eval_frequency": 1}
    train_fold(folder, plan, 0, docs, load_docs(toy_corpus / "dev.spacy")[:5], config=DEFAULT_CONFIG,
               overrides=overrides, gpu_id=-1, trainer=spacy_trainer)
    curve = fold_curve(folder, 0)
    assert [step for step, _ in curve] == [0, 1, 2]
    assert json.loads((fold_dir(folder, 0) / FOLD_FILE).read_text(encoding="utf8"))["dev_curve"] == curve
    log = (fold_dir(folder, 0) / TRAIN_LOG).read_text(encoding="utf8")
    # still on the console too
    assert "Saved pipeline to output directory" in log and "Saved pipeline to output directory" in capsys.readouterr().out


def test_the_plumbing_switch_lets_an_untrained_model_through_and_nothing_else_does(monkeypatch):
    """tests/test_project.py runs every study for two steps with
    SPACY_IMBALANCE_PLUMBING_ONLY=1; unset (or any other value) the rule holds."""
    from spacy_imbalance.audit.folds import PLUMBING_ONLY, untrained_reason

    flat = [[0, 0.0], [200, 0.0]]
    monkeypatch.delenv(PLUMBING_ONLY, raising=False)
    assert untrained_reason(flat) == "its dev score stayed at 0.00 from step 0 to step 200"
    monkeypatch.setenv(PLUMBING_ONLY, "true")
    assert untrained_reason(flat) is not None
    monkeypatch.setenv(PLUMBING_ONLY, "1")
    assert untrained_reason(flat) is None
