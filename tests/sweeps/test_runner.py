"""The sweep runner: trials run one after another or on Ray, train the same
models either way, report progress, and name a failed trial and its log."""
import pytest
import srsly

from spacy_imbalance.sweeps import Trial, TrialFailed, ray_available, run_trials
from spacy_imbalance.sweeps import runner as runner_module
from spacy_imbalance.sweeps.provenance import missing_fields

from ..conftest import ROOT


def trials(toy_corpus, folder, configs=("ner", "token_ner"), steps=6):
    return [
        Trial(
            name=f"{config} seed 0", config=str(ROOT / "configs" / f"{config}.cfg"),
            output=str(folder / "training" / config), metrics=str(folder / "metrics" / f"{config}.json"),
            train=str(toy_corpus / "train.spacy"), dev=str(toy_corpus / "dev.spacy"), test=str(toy_corpus / "dev.spacy"),
            seed=0, max_steps=steps, overrides={"training.eval_frequency": "3"},
        )
        for config in configs
    ]


@pytest.fixture(scope="module")
def local_run(toy_corpus, tmp_path_factory):
    folder = tmp_path_factory.mktemp("local")
    progress, evaluations = [], []
    todo = trials(toy_corpus, folder)
    reports = run_trials(
        todo, workers=1, on_done=lambda trial, report, i, n: progress.append((trial.name, i, n)),
        on_progress=lambda trial, step, score, seconds: evaluations.append((trial.name, step, score, seconds)),
    )
    return todo, reports, progress, evaluations


@pytest.mark.slow
def test_run_trials_one_after_another_trains_evaluates_and_reports_progress(local_run):
    from spacy_imbalance import __version__

    todo, reports, progress, evaluations = local_run
    assert progress == [("ner seed 0", 1, 2), ("token_ner seed 0", 2, 2)]
    for trial, report in zip(todo, reports):
        assert srsly.read_json(trial.metrics) == report  # the file is the report
        assert 0.0 <= report["macro"]["f"] <= 1.0 and report["train_steps"] == 6
        assert [step for step, _ in report["dev_curve"]] == [0, 3, 6]
        # heard while training: each evaluation of the curve, in order, timed
        heard = [(step, score) for name, step, score, _ in evaluations if name == trial.name]
        assert [[step, score] for step, score in heard] == report["dev_curve"]
        seconds = [s for name, _, _, s in evaluations if name == trial.name]
        assert seconds == sorted(seconds) and seconds[-1] <= report["train_seconds"] <= report["wall_seconds"]
        # where it ran and how far it trained, in the record of a fresh run
        assert report["provenance"]["package_version"] == __version__
        assert report["provenance"]["device"] == "cpu" and report["provenance"]["cpu_cores"] >= 1
        # the training process's threads, not this one's
        assert report["provenance"]["omp_threads"] == report["provenance"]["torch_threads"] == trial.threads
        # every field of a full provenance block (commit, time, machine, libraries, command)
        assert missing_fields(report["provenance"]) == []
        assert report["steps_trained"] == 6 and isinstance(report["cut_by_step_cap"], bool)


@pytest.mark.slow
@pytest.mark.skipif(not ray_available(), reason="needs the ray extra")
def test_run_trials_on_ray_trains_the_same_models(local_run, toy_corpus, tmp_path, monkeypatch):
    todo, local_reports, _, local_evaluations = local_run
    progress, evaluations = [], []
    # paths in the overrides (or the config: a sourced pipeline) relative to the caller's folder, though Tune
    # starts each trial in a folder of its own
    monkeypatch.chdir(toy_corpus)
    relative = [Trial.from_dict({**trial.to_dict(), "overrides": {**trial.overrides, "corpora.train.path": "train.spacy"}})
                for trial in trials(toy_corpus, tmp_path)]
    reports = run_trials(
        relative, workers=2, storage=tmp_path / "ray",
        on_done=lambda trial, report, i, n: progress.append((i, n)),
        on_progress=lambda trial, step, score, seconds: evaluations.append((trial.name, step, score)),
    )
    assert sorted(progress) == [(1, 2), (2, 2)]
    # the workers' evaluations reach the driver as they happen
    assert sorted(evaluations) == sorted((name, step, score) for name, step, score, _ in local_evaluations)
    # same seeds, one thread each: the same predictions, wherever a trial ran
    assert [r["counts"] for r in reports] == [r["counts"] for r in local_reports]
    assert [r["dev_curve"] for r in reports] == [r["dev_curve"] for r in local_reports]


@pytest.mark.slow
def test_run_trials_names_the_failed_trial_and_its_log(toy_corpus, tmp_path):
    bad = trials(toy_corpus, tmp_path, configs=("ner",))[0]
    bad = Trial.from_dict({**bad.to_dict(), "overrides": {"training.dropout": "lots"}})
    with pytest.raises(TrialFailed, match=r"ner seed 0.*ner\.log"):
        run_trials([bad])


@pytest.mark.slow
def test_run_trials_names_a_trial_whose_evaluation_fails(toy_corpus, tmp_path):
    # the evaluation runs in this process on the CPU: its error is the trial's, not this process's exit
    bad = trials(toy_corpus, tmp_path, configs=("ner",), steps=1)[0]
    bad = Trial.from_dict({**bad.to_dict(), "test": str(tmp_path / "missing.spacy")})
    with pytest.raises(TrialFailed, match=r"(?s)Evaluating ner seed 0 failed: .*No such corpus file:.*missing\.spacy"):
        run_trials([bad])


def test_a_crash_inside_the_evaluation_is_the_trials_failure(toy_corpus, tmp_path, monkeypatch):
    from spacy_imbalance.evaluation import evaluate as evaluate_module
    from spacy_imbalance.sweeps import trial as trial_module

    def crash(*args, **kwargs):
        print("loading the pipeline")
        raise RuntimeError("CUDA error: out of memory")

    monkeypatch.setattr(evaluate_module, "evaluate_model", crash)
    trial = trials(toy_corpus, tmp_path, configs=("ner",))[0]
    with pytest.raises(TrialFailed, match=r"(?s)Evaluating ner seed 0 failed: RuntimeError: CUDA error: out of memory\nloading the pipeline"):
        trial_module._evaluate(trial, tmp_path / "model-best", tmp_path / "metrics.json", {})
    assert not (tmp_path / "metrics.json").exists()


def test_use_ray_falls_back_to_one_after_another_without_ray(monkeypatch, capsys):
    monkeypatch.setattr(runner_module, "ray_available", lambda: False)
    assert runner_module.use_ray(2, None) is False
    assert "one after another" in capsys.readouterr().out
    assert runner_module.use_ray(1, None) is False
    with pytest.raises(ImportError, match="--address"):
        runner_module.use_ray(1, "auto")


def test_trial_round_trips_through_a_dict():
    trial = Trial(name="x", config="c.cfg", output="o", metrics="m.json", train="t", dev="d", test="e", overrides={"a.b": "1"})
    assert Trial.from_dict(trial.to_dict()) == trial


def test_a_failed_ray_trial_is_named_by_its_config_or_else_its_folder():
    # issue 46: Tune keeps no config for a trial that failed before it
    # reported (Result.config is None), and config["trial"]["name"] raised a
    # TypeError in place of the trial's own error
    tune = pytest.importorskip("ray.tune")
    error = RuntimeError("boom")
    named = tune.Result(metrics={"config": {"trial": {"name": "ner seed 0"}}}, checkpoint=None, error=error, path="/runs/ray/ner_seed_0-abc")
    unnamed = tune.Result(metrics={"trial_id": "abc"}, checkpoint=None, error=error, path="/runs/ray/ner_seed_0-abc")
    assert runner_module._failed_trial(named) == "ner seed 0"
    assert runner_module._failed_trial(unnamed) == "the trial in /runs/ray/ner_seed_0-abc"
