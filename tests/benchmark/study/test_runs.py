"""A study's runs (spacy_imbalance/benchmark/study/runs.py)."""
import pytest
import srsly

from spacy_imbalance.benchmark.study.markdown import dev_choice_markdown
from spacy_imbalance.benchmark.study.runs import collect, dev_choice


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
    choice = dev_choice(folder, "mom", [("l10", "0.1"), ("l50", "0.5")])
    assert choice["chosen"] == "0.1" and choice["best_on_test"] == "0.5"
    assert choice["settings"]["0.1"] == {"dev": pytest.approx(0.35), "test": pytest.approx(0.15), "runs": 2}
    text = dev_choice_markdown({"mom": choice}, "lambda")
    assert "| mom | 0.1 | 35.0 | 15.0 | 0.5 | 25.0 |" in text
    # a run from before records kept dev curves: no choice rather than a guess
    srsly.write_json(folder / "mom-l50-s2.json", {"macro": {"f": 0.9}})
    assert dev_choice(folder, "mom", [("l10", "0.1"), ("l50", "0.5")]) is None


def test_study_table_empty_tag_is_the_untagged_run(tmp_path):
    folder = tmp_path / "metrics" / "c" / "vectors"
    folder.mkdir(parents=True)
    for name, f in [("ner-s0", 0.2), ("ner-m50-s0", 0.1), ("ner_sCRD-s0", 0.9)]:
        srsly.write_json(folder / f"{name}.json", {"macro": {"f": f, "p": f, "r": f}, "micro": {"f": f}})
    runs = collect(folder.parent, ["vectors/ner"], ["", "m50"])
    # ner_sCRD-s0 is not an untagged ner run
    assert runs["vectors/ner", ""]["macro"] == [0.2]
    assert runs["vectors/ner", "m50"]["macro"] == [0.1]
