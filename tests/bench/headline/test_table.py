"""The headline table (bench/headline/table.py)."""
import numpy
import pytest
import srsly

from bench.headline.table import table
from spacy_imbalance.scorers.counts import MatchCounts


def headline_run(folder, system, seed, found, support=4, seconds=60.0, curve=((0, 0.0), (200, 0.3), (400, 0.2))):
    """A run that finds the first ``found[label]`` of ``support`` entities of each label."""
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
    text, result, present = table("c", "vectors", [0, 1], tmp_path)
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


def test_headline_table_names_the_machines_when_seeds_trained_on_several(tmp_path):
    folder = tmp_path / "metrics" / "c" / "transformer"
    folder.mkdir(parents=True)
    cpu = {"device": "cpu", "cpu": "AMD EPYC", "cpu_cores": 2}
    gpu = {**cpu, "device": "gpu", "gpu": "NVIDIA H200", "driver": "580", "cuda_runtime": "13.2", "cupy": "14.2.0", "torch": "2.11.0"}
    for seed, seconds in ((0, 3600.0), (1, 360.0), (2, 330.0)):
        for system in ("ner", "sampled_spancat_uniform"):
            headline_run(folder, system, seed, {"A": 2, "B": 1}, seconds=seconds)
            path = folder / f"{system}-s{seed}.json"
            srsly.write_json(path, {**srsly.read_json(path), "provenance": cpu if seed == 0 else gpu})
    text, result, _ = table("c", "transformer", [0, 1, 2], tmp_path)
    # a mean of 60 CPU minutes and 6 GPU minutes would describe neither: each seed's time instead
    row = next(line for line in text.splitlines() if line.startswith("| spaCy ner |"))
    assert "| 60.0 / 6.0 / 5.5 |" in row
    assert "seed 0 on AMD EPYC (2 cores)" in text
    assert "seeds 1, 2 on NVIDIA H200, driver 580, CUDA 13.2, CuPy 14.2.0, torch 2.11.0" in text
    assert result["systems"]["ner"]["devices"][0] == "AMD EPYC (2 cores)"


def test_headline_table_keeps_one_mean_time_on_one_machine(tmp_path):
    folder = tmp_path / "metrics" / "c" / "vectors"
    folder.mkdir(parents=True)
    for seed, seconds in ((0, 60.0), (1, 120.0)):
        headline_run(folder, "ner", seed, {"A": 2, "B": 1}, seconds=seconds)
    text, _, _ = table("c", "vectors", [0, 1], tmp_path)
    assert "| 1.5 |" in next(line for line in text.splitlines() if line.startswith("| spaCy ner |"))
    assert "more than one machine" not in text


def test_moms_row_is_the_lambda_the_corpus_chose():
    from bench.headline.systems import mom_tag, systems

    assert mom_tag(0.9) == "l90" and mom_tag(0.5) == "l50"
    with pytest.raises(ValueError, match="lambda is in"):
        mom_tag(1.0)
    labels, claims = systems("l90")
    assert labels["token_ner_mom_v2-l90"] == "token_ner, MoM (v2, λ 0.9) over CE" and "token_ner_mom_v2-l50" not in labels
    assert ("token_ner_mom_v2-l90", "token_ner", "MoM over its base loss") in claims


def test_the_table_reads_the_mom_runs_of_its_corpus_tag(tmp_path):
    folder = tmp_path / "metrics" / "c" / "vectors"
    folder.mkdir(parents=True)
    for seed in (0, 1):
        headline_run(folder, "ner", seed, {"A": 2, "B": 0})
        headline_run(folder, "token_ner", seed, {"A": 1, "B": 1})
        headline_run(folder, "token_ner_mom_v2-l90", seed, {"A": 4, "B": 0})
        headline_run(folder, "token_ner_mom_v2-l50", seed, {"A": 0, "B": 0})
    text, result, _ = table("c", "vectors", [0, 1], tmp_path, "l90")
    assert "token_ner_mom_v2-l90" in result["systems"] and "token_ner_mom_v2-l50" not in result["systems"]
    assert "| token_ner, MoM (v2, λ 0.9) over CE |" in text
    assert result["claims"]["MoM over its base loss"]["delta"] == pytest.approx(0.5 - 0.4)


def test_runs_without_provenance_are_not_a_machine_of_their_own():
    """Seeds that all trained on one machine, some recorded before records held provenance: one machine, one
    mean time (the note once said "seeds 0, 1, 2 on AMD EPYC; seeds 0, 1, 2 on unrecorded")."""
    from bench.headline.table import devices_note, train_minutes

    cpu = {"device": "cpu", "cpu": "AMD EPYC", "cpu_cores": 1}
    gpu = {"device": "gpu", "gpu": "NVIDIA H200", "cpu": "AMD EPYC", "cpu_cores": 16}
    recorded = [{"train_seconds": 60.0, "provenance": cpu}, {"train_seconds": 120.0, "provenance": cpu}]
    unrecorded = [{"train_seconds": 180.0}, {"train_seconds": 240.0}]
    assert devices_note({"ours": recorded, "ner": unrecorded}, [0, 1]) == []
    assert train_minutes(recorded + unrecorded) == "2.5"
    two = devices_note({"ours": [recorded[0], {"train_seconds": 6.0, "provenance": gpu}]}, [0, 1])
    assert len(two) == 2 and "seed 0 on" in two[1] and "seed 1 on" in two[1]
    assert train_minutes([recorded[0], {"train_seconds": 6.0, "provenance": gpu}]) == "1.0 / 0.1"
