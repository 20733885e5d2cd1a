"""What the benchmark records of a run (bench/records.py)."""
import srsly

from bench.records import compact_counts, missampling_record, read_json, stopped_at


def test_missampling_record_reads_the_component_counts(tmp_path):
    model = tmp_path / "model-last"
    (model / "tok2vec").mkdir(parents=True)
    (model / "sampled_spancat").mkdir()
    srsly.write_json(model / "tok2vec" / "cfg", {})
    assert missampling_record(model) == {}
    srsly.write_json(model / "sampled_spancat" / "cfg", {"missampled": [2, 8]})
    assert missampling_record(model) == {"missampling_rate": 0.25, "missampled": [2, 8]}


def test_benchmark_stopped_at_shows_early_stopping():
    # early stopping shows as the steps trained out of the budget
    assert stopped_at({"dev_curve": [[0, 0.0], [1400, 0.2]], "train_steps": 4000}) == "1400 of 4000"
    assert stopped_at({"dev_curve": [[0, 0.0], [4000, 0.2]], "train_steps": 4000}) == "4000"


def test_read_json_gives_floats_back_as_written(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"p": 0.3}', encoding="utf8")
    assert read_json(path) == {"p": 0.3}


def test_compact_metrics_rewrites_only_the_counts(tmp_path):
    from spacy_imbalance.scorers.counts import MatchCounts

    old = {"macro": {"f": 0.25}, "counts": {"labels": ["A", "B"], "n_examples": 4, "rows": [[1, 0, 1, 0, 0], [3, 1, 0, 2, 1]]}}
    (tmp_path / "wnut16").mkdir()
    srsly.write_json(tmp_path / "wnut16" / "ner-s0.json", old)
    srsly.write_json(tmp_path / "summary.json", [1, 2])  # not a run: left alone
    assert compact_counts(tmp_path) == 1
    new = srsly.read_json(tmp_path / "wnut16" / "ner-s0.json")
    assert new["macro"] == {"f": 0.25} and "rows" not in new["counts"] and new["counts"]["n_rows"] == 2
    table = MatchCounts.from_sparse(new["counts"]).table
    assert table[1, 0].tolist() == [1, 0, 0] and table[3, 1].tolist() == [0, 2, 1] and int(table.sum()) == 4
    assert srsly.read_json(tmp_path / "summary.json") == [1, 2]


def test_name_runs_names_trial_named_records_by_their_run(tmp_path):
    from bench.records import name_runs, read_json

    folder = tmp_path / "wnut17" / "transformer"
    folder.mkdir(parents=True)
    srsly.write_json(folder / "ner-m50-s2.json", {"name": "wnut17 transformer/ner-m50 seed 2", "corpus": "wnut17", "seed": 2, "macro": {"f": 0.3}})
    srsly.write_json(tmp_path / "wnut17" / "ner-s0.json", {"name": "ner", "corpus": "wnut17", "seed": 0})
    srsly.write_json(tmp_path / "wnut17" / "summary.json", {"name": "wnut17 x seed 0"})
    assert name_runs(tmp_path) == 1
    assert read_json(folder / "ner-m50-s2.json") == {"name": "transformer/ner-m50", "corpus": "wnut17", "seed": 2, "macro": {"f": 0.3}}
    assert srsly.read_json(tmp_path / "wnut17" / "ner-s0.json")["name"] == "ner"
    assert name_runs(tmp_path) == 0
