"""Pure helpers of the benchmark scripts (scripts/ is not a package)."""
import importlib.util

import pytest
import srsly
import typer

from .conftest import ROOT


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


benchmark = load("benchmark")
study_table = load("study_table")
tune_runs = load("tune_runs")
headline_table = load("headline_table")


def test_benchmark_overrides_and_run_names():
    overrides = benchmark.parse_sets(["corpora.train.n_sentences=200", "corpora.train.seed={seed}"])
    assert overrides == {"corpora.train.n_sentences": "200", "corpora.train.seed": "{seed}"}
    assert benchmark.with_seed(overrides, 2)["corpora.train.seed"] == "2"
    assert benchmark.overrides_for_load({"a": "200", "b": "null", "c": "spacy.Corpus.v1"}) == {"a": 200, "b": None, "c": "spacy.Corpus.v1"}
    assert benchmark.run_name("ner", "n200") == "ner-n200" and benchmark.run_name("ner", None) == "ner"
    with pytest.raises(typer.BadParameter, match="KEY=VALUE"):
        benchmark.parse_sets(["no-equals-sign"])


def test_benchmark_seed_lists_and_only():
    assert benchmark.parse_seeds(["0,1,2"]) == [0, 1, 2] and benchmark.parse_seeds(["0", "2"]) == [0, 2]
    assert benchmark.parse_seeds(["1, 2,"]) == [1, 2]
    with pytest.raises(typer.BadParameter, match="--seed 0,1,2"):
        benchmark.parse_seeds(["a"])
    configs = ["ner", "spancat", "token_ner"]
    assert benchmark.selected(configs, None, "") == configs and benchmark.selected(configs, "m50", " ") == configs
    # run names, as in the metrics files: <config>, or <config>-<tag> for tagged runs
    assert benchmark.selected(configs, None, "token_ner,ner,spancat-m50") == ["ner", "token_ner"]
    assert benchmark.selected(configs, "m50", "ner,spancat-m50") == ["spancat"]
    assert benchmark.selected(configs, "m30", "ner,spancat-m50") == []


def test_tune_runs_skips_only_the_same_training_run(tmp_path):
    model = tmp_path / "model-best"
    run = {"config_sha256": "x", "max_steps": 10, "overrides": {}, "train_seconds": 12.5, "seed": 0}
    tuned = {**run, "tuned_from": str(model)}
    assert tune_runs.is_tuned(tuned, run, model)
    assert not tune_runs.is_tuned(tuned, run, tmp_path / "other")
    # the run was trained again into the same folder (another budget)
    assert not tune_runs.is_tuned(tuned, {**run, "max_steps": 2, "train_seconds": 1.0}, model)


def test_tune_runs_summary_keeps_only_fresh_pairs(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    run = {"config_sha256": "x", "max_steps": 10, "overrides": {}, "train_seconds": 12.5, "seed": 0}
    model = tmp_path / "training" / "c" / "a-s0" / "model-best"
    srsly.write_json(folder / "a-s0.json", run)
    # tuned from an earlier training run of the same name: not paired with this one
    srsly.write_json(folder / "a-tuned-s0.json", {**run, "max_steps": 2, "tuned_from": str(model)})
    output = tune_runs.write_summary(tmp_path, "c", ["a", "b"], [0, 1], "cal", None)
    assert output.read_text(encoding="utf8") == "No tuned run yet of a, b on c (seeds 0, 1).\n"


def test_benchmark_resume_needs_the_same_overrides(tmp_path):
    path = tmp_path / "run.json"
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10, "overrides": {"a": "1"}, "counts": {}})
    assert benchmark.is_done(path, "x", 10, True, {"a": "1"})
    assert not benchmark.is_done(path, "x", 10, True, {"a": "2"})
    assert not benchmark.is_done(path, "x", 20, True, {"a": "1"})
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10})  # written before --set existed
    assert benchmark.is_done(path, "x", 10, False, {}) and not benchmark.is_done(path, "x", 10, True, {})
    # a run at equal steps does not stand in for one at equal epochs, nor the reverse
    assert not benchmark.is_done(path, "x", 10, False, {}, "epochs")
    srsly.write_json(path, {"config_sha256": "x", "max_steps": 10, "budget": "epochs"})
    assert benchmark.is_done(path, "x", 10, False, {}, "epochs") and not benchmark.is_done(path, "x", 10, False, {})


def test_benchmark_word_factor_of_a_resampling_reader(tmp_path):
    """The equal-epochs budget scales steps by words per epoch: sC repeats
    each sentence with an entity once more, so the factor is the corpus' words
    plus the entity sentences' words, over the corpus' words."""
    import spacy
    from spacy.tokens import Doc, DocBin

    nlp = spacy.blank("en")
    docs = [
        Doc(nlp.vocab, words=["Kate", "sings", "."], ents=["B-PER", "O", "O"]),
        Doc(nlp.vocab, words=["nothing", "here", "at", "all", "."], ents=["O"] * 5),
    ]
    (tmp_path / "corpus" / "c").mkdir(parents=True)
    DocBin(docs=docs).to_disk(tmp_path / "corpus" / "c" / "train.spacy")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "r.cfg").write_text((ROOT / "configs" / "ner_sC.cfg").read_text(encoding="utf8"), encoding="utf8")
    size = benchmark.train_set_size(tmp_path, "r", "c", 0, {})
    assert size["train_sentences"] == 2 and size["train_examples"] == 3
    assert size["word_factor"] == pytest.approx((3 + 5 + 3) / 8)


def test_study_table_cells_and_markdown(tmp_path):
    assert study_table.cell([0.1, 0.2, 0.3]) == "20.0 ± 10.0"
    assert study_table.cell([0.25]) == "25.0 ± 0.0" and study_table.cell([]) == "–"
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    for seed, (macro, micro) in enumerate([(0.1, 0.2), (0.3, 0.4)]):
        report = {"macro": {"f": macro, "p": 2 * macro, "r": macro / 2}, "micro": {"f": micro}}
        if seed == 1:
            report["missampling_rate"] = 0.01  # only sampled_spancat runs record it
        srsly.write_json(folder / f"ner-n50-s{seed}.json", report)
    runs = study_table.collect(tmp_path, "c", ["ner", "other"], ["n50"])
    assert runs["ner", "n50"]["macro"] == pytest.approx([0.1, 0.3]) and runs["ner", "n50"]["micro"] == pytest.approx([0.2, 0.4])
    assert runs["ner", "n50"]["macro_p"] == pytest.approx([0.2, 0.6]) and runs["ner", "n50"]["missampling"] == [0.01]
    text = study_table.markdown(runs, ["ner", "other"], [("n50", "50")], "macro", "sentences")
    assert "| ner | 20.0 ± 14.1 |" in text and "| other | – |" in text
    rates = study_table.markdown(runs, ["ner", "other"], [("n50", "50")], "missampling", "p")
    # two decimals, and the caption counts only systems that record a rate
    assert "| ner | 1.00 ± 0.00 |" in rates and "over 1 runs" in rates and "| other |" not in rates


def test_study_table_chooses_each_systems_setting_on_dev(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    # (best dev scores of seeds 0 and 1, test macro-F1 of seeds 0 and 1) per lambda:
    # 0.1 is best on dev (mean 0.35), 0.5 best on test (mean 0.25)
    runs = {"l10": ((0.3, 0.4), (0.1, 0.2)), "l50": ((0.2, 0.3), (0.2, 0.3))}
    for tag, (devs, tests) in runs.items():
        for seed, (dev, test) in enumerate(zip(devs, tests)):
            curve = [[0, 0.0], [100, dev], [200, dev - 0.05]]
            srsly.write_json(folder / f"mom-{tag}-s{seed}.json", {"macro": {"f": test}, "dev_curve": curve})
    choice = study_table.dev_choice(tmp_path, "c", "mom", [("l10", "0.1"), ("l50", "0.5")])
    assert choice["chosen"] == "0.1" and choice["best_on_test"] == "0.5"
    assert choice["settings"]["0.1"] == {"dev": pytest.approx(0.35), "test": pytest.approx(0.15), "runs": 2}
    text = study_table.dev_choice_markdown({"mom": choice}, "lambda")
    assert "| mom | 0.1 | 35.0 | 15.0 | 0.5 | 25.0 |" in text
    # a run from before records kept dev curves: no choice rather than a guess
    srsly.write_json(folder / "mom-l50-s2.json", {"macro": {"f": 0.9}})
    assert study_table.dev_choice(tmp_path, "c", "mom", [("l10", "0.1"), ("l50", "0.5")]) is None


def test_benchmark_a_run_without_a_dev_curve_is_redone_only_when_asked(tmp_path):
    metrics = tmp_path / "run.json"
    srsly.write_json(metrics, {"config_sha256": "x", "max_steps": 10, "overrides": {}, "counts": {}})
    assert benchmark.is_done(metrics, "x", 10, True, {})
    assert not benchmark.is_done(metrics, "x", 10, True, {}, need_dev_curve=True)
    srsly.write_json(metrics, {"config_sha256": "x", "max_steps": 10, "overrides": {}, "counts": {}, "dev_curve": [[0, 0.1]]})
    assert benchmark.is_done(metrics, "x", 10, True, {}, need_dev_curve=True)


def test_missampling_record_reads_the_component_counts(tmp_path):
    model = tmp_path / "model-last"
    (model / "tok2vec").mkdir(parents=True)
    (model / "sampled_spancat").mkdir()
    srsly.write_json(model / "tok2vec" / "cfg", {})
    assert benchmark.missampling_record(model) == {}
    srsly.write_json(model / "sampled_spancat" / "cfg", {"missampled": [2, 8]})
    assert benchmark.missampling_record(model) == {"missampling_rate": 0.25, "missampled": [2, 8]}


def test_study_table_pairs_runs_by_seed(tmp_path):
    from spacy_imbalance.scorers.counts import MatchCounts
    import numpy

    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    # 4 test sentences, one label: the baseline finds 2 of 4 entities, the
    # system all 4 (seed 0) or the same 2 (seed 1); seed 2 only has a baseline
    def counts(tp):
        table = numpy.array([[[1, 0, 0]] if found else [[0, 0, 1]] for found in tp], dtype="int64")
        return MatchCounts(["X"], table).to_sparse()

    half = counts([1, 1, 0, 0])
    srsly.write_json(folder / "base-p1-s0.json", {"counts": half})
    srsly.write_json(folder / "base-p1-s1.json", {"counts": half})
    srsly.write_json(folder / "base-p1-s2.json", {"counts": half})
    srsly.write_json(folder / "sys-p1-s0.json", {"counts": counts([1, 1, 1, 1])})
    srsly.write_json(folder / "sys-p1-s1.json", {"counts": half})
    diff = study_table.paired(tmp_path, "c", "sys", "base", "p1")
    assert diff["seeds"] == [0, 1]
    # F1 2/3 -> 1 on seed 0, unchanged on seed 1: mean delta (1 - 2/3) / 2
    assert diff["macro_f"]["delta"] == pytest.approx(1 / 6)
    assert study_table.paired(tmp_path, "c", "sys", "base", "p2") is None
    text = study_table.paired_markdown({("sys", "p1"): diff}, ["base", "sys"], "base", [("p1", "1%"), ("p2", "2%")], "share")
    row = next(line for line in text.splitlines() if line.startswith("| sys |"))
    assert row.startswith("| sys | +16.7 [") and row.endswith(" | – |")
    srsly.write_json(folder / "sys-p1-s1.json", {"macro": {}})
    with pytest.raises(typer.BadParameter, match="sys-p1-s1.json"):
        study_table.paired(tmp_path, "c", "sys", "base", "p1")


def test_benchmark_stopped_at_shows_early_stopping():
    # early stopping shows as the steps trained out of the budget
    assert benchmark.stopped_at({"dev_curve": [[0, 0.0], [1400, 0.2]], "train_steps": 4000}) == "1400 of 4000"
    assert benchmark.stopped_at({"dev_curve": [[0, 0.0], [4000, 0.2]], "train_steps": 4000}) == "4000"


def test_study_table_empty_tag_is_the_untagged_run(tmp_path):
    folder = tmp_path / "metrics" / "c" / "vectors"
    folder.mkdir(parents=True)
    for name, f in [("ner-s0", 0.2), ("ner-m50-s0", 0.1), ("ner_sCRD-s0", 0.9)]:
        srsly.write_json(folder / f"{name}.json", {"macro": {"f": f, "p": f, "r": f}, "micro": {"f": f}})
    runs = study_table.collect(tmp_path, "c", ["vectors/ner"], ["", "m50"])
    # ner_sCRD-s0 is not an untagged ner run
    assert runs["vectors/ner", ""]["macro"] == [0.2]
    assert runs["vectors/ner", "m50"]["macro"] == [0.1]


def headline_run(folder, system, seed, found, support=4, seconds=60.0, curve=((0, 0.0), (200, 0.3), (400, 0.2))):
    """A run that finds the first ``found[label]`` of ``support`` entities of each label."""
    from spacy_imbalance.scorers.counts import MatchCounts
    import numpy

    labels = sorted(found)
    table = numpy.zeros((support, len(labels), 3), dtype="int64")
    for j, label in enumerate(labels):
        table[: found[label], j, 0] = 1  # tp
        table[found[label] :, j, 2] = 1  # fn
    per_type = {label: {"f": 2 * n / (n + support) if n else 0.0} for label, n in found.items()}
    macro = sum(t["f"] for t in per_type.values()) / len(per_type)
    tp = sum(found.values())
    micro = 2 * tp / (tp + support * len(labels))
    srsly.write_json(
        folder / f"{system}-s{seed}.json",
        {
            "macro": {"f": macro}, "micro": {"f": micro}, "per_type": per_type,
            "counts": MatchCounts(labels, table).to_sparse(), "train_seconds": seconds,
            "dev_curve": [list(point) for point in curve], "train_steps": 4000,
        },
    )


def test_headline_table_pairs_every_system_with_the_best_builtin(tmp_path):
    folder = tmp_path / "metrics" / "c" / "vectors"
    folder.mkdir(parents=True)
    for seed in (0, 1):
        headline_run(folder, "ner", seed, {"A": 2, "B": 0})
        headline_run(folder, "spancat_singlelabel", seed, {"A": 1, "B": 1})
        headline_run(folder, "sampled_spancat_uniform", seed, {"A": 4, "B": 0})
    # one seed only: shown as missing, not averaged over fewer seeds
    headline_run(folder, "token_ner", 0, {"A": 4, "B": 4})
    text, result, present = headline_table.table("c", "vectors", [0, 1], tmp_path)
    # F = 2 tp / (2 tp + fn): ner F(A) = 4/6, F(B) = 0 -> macro 1/3; spancat_singlelabel 2/5 and 2/5 -> 0.4,
    # the best built-in; the uniform sampler F(A) = 1, F(B) = 0 -> 0.5, so +0.1 on every resample
    assert result["reference"] == "spancat_singlelabel"
    uniform = result["systems"]["sampled_spancat_uniform"]
    assert uniform["macro_f"] == [pytest.approx(0.5)] * 2
    assert uniform["vs_reference"]["delta"] == pytest.approx(0.1)
    # B is found by a built-in, never by the uniform sampler
    assert uniform["types_at_zero"] == ["B"]
    assert uniform["steps"] == [(200, 400), (200, 400)]
    assert "token_ner" in result["missing"] and "token_ner" not in result["systems"]
    assert "`vectors/token_ner`" in text
    row = next(line for line in text.splitlines() if line.startswith("| spaCy spancat_singlelabel |"))
    assert "| reference |" in row


def test_compact_metrics_rewrites_only_the_counts(tmp_path):
    compact = load("compact_metrics")
    old = {"macro": {"f": 0.25}, "counts": {"labels": ["A", "B"], "n_examples": 4, "rows": [[1, 0, 1, 0, 0], [3, 1, 0, 2, 1]]}}
    (tmp_path / "wnut16").mkdir()
    srsly.write_json(tmp_path / "wnut16" / "ner-s0.json", old)
    srsly.write_json(tmp_path / "summary.json", [1, 2])  # not a run: left alone
    compact.main(root=tmp_path)
    new = srsly.read_json(tmp_path / "wnut16" / "ner-s0.json")
    assert new["macro"] == {"f": 0.25} and "rows" not in new["counts"] and new["counts"]["n_rows"] == 2
    table = compact.MatchCounts.from_sparse(new["counts"]).table
    assert table[1, 0].tolist() == [1, 0, 0] and table[3, 1].tolist() == [0, 2, 1] and int(table.sum()) == 4
    assert srsly.read_json(tmp_path / "summary.json") == [1, 2]


def test_advise_validation_reads_the_full_benchmark_of_a_setting(tmp_path, monkeypatch):
    advise_validation = load("advise_validation")
    monkeypatch.setattr(advise_validation, "ROOT", tmp_path)
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    for name, f in [("ner-m50-s0", 0.1), ("ner-m50-s1", 0.2), ("uniform-m50-s0", 0.3), ("uniform-m50-s1", 0.4),
                    ("top-m50-s0", 0.9), ("uniform-m0-s0", 0.5), ("uniform-m0-s1", 0.5)]:
        srsly.write_json(folder / f"{name}.json", {"macro": {"f": f}})
    runs = advise_validation.benchmark_runs("c", 0.5, [0, 1])
    # top has no seed 1: not part of the full benchmark of these seeds
    assert sorted(runs) == ["ner", "uniform"] and [r["macro"]["f"] for r in runs["uniform"]] == [0.3, 0.4]
    assert advise_validation.tag(0.5) == "m50" and advise_validation.tag(0.0) == "m0"


def test_advise_validation_wall_clock_spans_the_trials(tmp_path):
    import os

    advise_validation = load("advise_validation")
    for name, end, seconds in [("a", 1000.0, 100.0), ("b", 1300.0, 250.0)]:
        path = tmp_path / f"{name}.json"
        srsly.write_json(path, {"train_seconds": seconds})
        os.utime(path, (end, end))
    # from the first start (900) to the last end (1300)
    assert advise_validation.trials_wall_clock(tmp_path) == pytest.approx(400.0)


def test_benchmark_a_fresh_run_record_says_where_it_ran(tmp_path):
    from types import SimpleNamespace

    from spacy_imbalance import __version__

    trial = SimpleNamespace(output=str(tmp_path / "out"), metrics=str(tmp_path / "run.json"))
    report = {"macro": {"f": 0.1}, "dev_curve": [[100, 0.1]], "train_steps": 100, "train_seconds": 3.0}
    size = {"train_examples": 1, "train_sentences": 1, "size_factor": 1.0, "word_factor": 1.0}
    benchmark.record_run(report, "wnut16", "ner", 0, 100, -1, ROOT, {}, trial, size=size)
    written = srsly.read_json(tmp_path / "run.json")
    assert written["provenance"]["package_version"] == __version__
    assert written["provenance"]["device"] == "cpu" and written["provenance"]["cpu_cores"] >= 1
