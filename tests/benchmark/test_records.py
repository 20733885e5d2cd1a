"""What the benchmark records of a run (spacy_imbalance/benchmark/records.py)."""
import srsly

from spacy_imbalance.benchmark.records import device_words, missampling_record, read_json, stopped_at


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


def test_device_words_name_the_cpu_or_the_gpu_with_its_stack():
    cpu = {"device": "cpu", "cpu": "Xeon", "cpu_cores": 2}
    assert device_words(cpu) == "Xeon (2 cores)"
    assert device_words({**cpu, "cpu_cores": 1}) == "Xeon (1 core)"
    gpu = {**cpu, "device": "gpu", "gpu": "H200", "driver": "570", "cuda_runtime": "12.8", "cupy": "13.4", "torch": "2.7"}
    assert device_words(gpu) == "H200, driver 570, CUDA 12.8, CuPy 13.4, torch 2.7; host Xeon (2 cores)"
    # what a record does not say is a question mark, not a guess
    assert device_words({**cpu, "device": "gpu"}) == "an unnamed GPU, driver ?, CUDA ?, CuPy ?, torch ?; host Xeon (2 cores)"
