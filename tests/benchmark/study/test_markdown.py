"""A study's tables (spacy_imbalance/benchmark/study/markdown.py)."""
import pytest
import srsly

from spacy_imbalance.benchmark.study.markdown import dev_choice_markdown, markdown
from spacy_imbalance.benchmark.study.runs import collect, dev_choice


def test_study_table_collects_runs_into_markdown(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    for seed, (macro, micro) in enumerate([(0.1, 0.2), (0.3, 0.4)]):
        report = {"macro": {"f": macro, "p": 2 * macro, "r": macro / 2}, "micro": {"f": micro}}
        if seed == 1:
            report["missampling_rate"] = 0.01  # only sampled_spancat runs record it
        srsly.write_json(folder / f"ner-n50-s{seed}.json", report)
    runs = collect(folder, ["ner", "other"], ["n50"])
    assert runs["ner", "n50"]["macro"] == pytest.approx([0.1, 0.3]) and runs["ner", "n50"]["micro"] == pytest.approx([0.2, 0.4])
    assert runs["ner", "n50"]["macro_p"] == pytest.approx([0.2, 0.6]) and runs["ner", "n50"]["missampling"] == [0.01]
    text = markdown(runs, ["ner", "other"], [("n50", "50")], "macro", "sentences")
    assert "| ner | 20.0 ± 14.1 |" in text and "| other | – |" in text
    rates = markdown(runs, ["ner", "other"], [("n50", "50")], "missampling", "p")
    # two decimals, and the caption counts only systems that record a rate
    assert "| ner | 1.00 ± 0.00 |" in rates and "over 1 runs" in rates and "| other |" not in rates


def test_dev_choice_markdown(tmp_path):
    folder = tmp_path / "metrics" / "c"
    folder.mkdir(parents=True)
    for tag, dev, test in [("l10", 0.35, 0.15), ("l50", 0.25, 0.25)]:
        srsly.write_json(folder / f"mom-{tag}-s0.json", {"macro": {"f": test}, "dev_curve": [[0, 0.0], [100, dev]]})
    choice = dev_choice(folder, "mom", [("l10", "0.1"), ("l50", "0.5")])
    lines = dev_choice_markdown({"mom": choice}, "lambda").splitlines()
    assert lines[:2] == [
        "| system | lambda chosen on dev | its dev score | its test macro-F1 | best lambda on test | its test macro-F1 |",
        "| --- | --: | --: | --: | --: | --: |",
    ]
    assert lines[2] == "| mom | 0.1 | 35.0 | 15.0 | 0.5 | 25.0 |"
