"""The validation of `spacy-imbalance advise` (bench/advise.py)."""
import pytest
import srsly

from bench.advise import benchmark_runs, tag, trials_wall_clock


def test_advise_validation_reads_the_full_benchmark_of_a_setting(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    for name, f in [("ner-m50-s0", 0.1), ("ner-m50-s1", 0.2), ("uniform-m50-s0", 0.3), ("uniform-m50-s1", 0.4),
                    ("top-m50-s0", 0.9), ("uniform-m0-s0", 0.5), ("uniform-m0-s1", 0.5)]:
        srsly.write_json(folder / f"{name}.json", {"macro": {"f": f}})
    runs = benchmark_runs(tmp_path, "c", 0.5, [0, 1])
    # top has no seed 1: not part of the full benchmark of these seeds
    assert sorted(runs) == ["ner", "uniform"] and [r["macro"]["f"] for r in runs["uniform"]] == [0.3, 0.4]
    assert tag(0.5) == "m50" and tag(0.0) == "m0"


def test_advise_validation_wall_clock_spans_the_trials(tmp_path):
    import os

    for name, end, seconds in [("a", 1000.0, 100.0), ("b", 1300.0, 250.0)]:
        path = tmp_path / f"{name}.json"
        srsly.write_json(path, {"train_seconds": seconds})
        os.utime(path, (end, end))
    # from the first start (900) to the last end (1300)
    assert trials_wall_clock(tmp_path) == pytest.approx(400.0)


def test_advise_validation_marks_the_settings_its_rule_was_not_designed_on(tmp_path):
    from bench.advise import write_summary

    record = {"recommended": "u", "best": "u", "test_macro_f": {"u": 0.25}, "recommended_minus_best": None,
              "within_interval": True, "advise_seconds": 600.0}
    for corpus, p in [("wnut17", 0.5), ("wnut17", 0.3)]:
        (tmp_path / "metrics" / corpus).mkdir(parents=True, exist_ok=True)
        srsly.write_json(tmp_path / "metrics" / corpus / f"advise_{tag(p)}.json", {**record, "p": p})
    rows = [line for line in write_summary(tmp_path).splitlines() if line.startswith("| wnut17")]
    assert [row.split(" | ")[1] for row in rows] == ["0.3", "0.5"]
    assert rows[0].endswith("| re-validation |") and rows[1].endswith("| design |")
    assert (tmp_path / "metrics" / "advise_validation.md").read_text(encoding="utf8").count("\n| wnut17") == 2


def test_advise_validation_records_where_when_and_how_it_ran(tmp_path, monkeypatch):
    import sys

    from bench import advise
    from spacy_imbalance.sweeps.provenance import missing_fields

    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    for name, f in [("ner-m0-s0", 0.1), ("ner-m0-s1", 0.2)]:
        srsly.write_json(folder / f"{name}.json", {"macro": {"f": f}})

    def run(command, check):  # advise, its recommendation written where -o says
        out = tmp_path / "work" / "c-m0" / "advice"
        (out / "trials").mkdir(parents=True)
        srsly.write_json(out / "advice.json", {"recommended": "ner", "verdict": "v", "ranking": [{"name": "ner", "mean": 0.3}]})
        assert command[command.index("-o") + 1] == str(out)

    real_run = advise.subprocess.run  # the module's: provenance reads git through it

    def advise_or_real(command, check=False, **kwargs):
        return run(command, check) if "advise" in command else real_run(command, check=check, **kwargs)

    monkeypatch.setattr(advise.subprocess, "run", advise_or_real)
    monkeypatch.setattr(sys, "argv", ["scripts/advise_validation.py", "--corpus", "c"])
    result = advise.validate(tmp_path, "c", 0.0, 1.0, 1, [0, 1], None, tmp_path / "work")
    assert result["recommended"] == result["best"] == "ner" and result["within_interval"]
    assert missing_fields(result["provenance"]) == []
    assert result["provenance"]["command"]["argv"] == ["scripts/advise_validation.py", "--corpus", "c"]
