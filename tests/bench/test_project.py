"""bench/project.py: project.yml written from studies.yml, each setting typed once."""
import pytest
import srsly

from bench.project import StudyError, render_project, study_deps, study_script

from ..conftest import ROOT

HEAD = 'title: "t"\n\nvars:\n  # a comment that must survive\n  seeds: "0,1"\n\n'

MASKING = {
    "help": "masking",
    "steps": [
        {"benchmark": {
            "corpus": ["wnut16"], "config": ["ner", "sampled_spancat_uniform"], "max-steps": "${vars.masking_steps}",
            "summary": "masking_{tag}", "set": ["corpora.train.seed={seed}"],
            "settings": {"key": "corpora.train.p", "values": {"m0": "0.0", "m50": "0.5"}, "labels": {"m0": "0"}},
        }},
        {"table": {"name": "masking", "xlabel": "masking probability p", "detail": True}},
    ],
}


def test_settings_expand_into_one_benchmark_call_each_and_the_table_reads_them():
    lines = study_script("study-masking", MASKING)
    common = (
        "python scripts/benchmark.py --corpus wnut16 --config ner --config sampled_spancat_uniform "
        "--max-steps ${vars.masking_steps}"
    )
    defaults = '--seed ${vars.seeds} --only "${vars.only}" --gpu-id ${vars.gpu_id} --jobs ${vars.jobs}'
    assert lines == [
        f"{common} --summary masking_m0 --set corpora.train.seed={{seed}} --set corpora.train.p=0.0 {defaults} --tag m0",
        f"{common} --summary masking_m50 --set corpora.train.seed={{seed}} --set corpora.train.p=0.5 {defaults} --tag m50",
        # the labels given, else the value; the corpora and configs are the study's
        'python scripts/study_table.py masking --corpus wnut16 --config ner --config sampled_spancat_uniform '
        '--xlabel "masking probability p" --detail --setting m0=0 --setting m50=0.5',
    ]


def test_a_benchmark_step_depends_on_its_configs_corpora_and_the_harness():
    assert study_deps({**MASKING, "deps": ["scripts/extra.py", "bench"]}) == [
        "scripts/benchmark.py", "bench", "spacy_imbalance", "configs/ner.cfg", "configs/sampled_spancat_uniform.cfg",
        "corpus/wnut16", "scripts/study_table.py", "scripts/extra.py",
    ]


def test_the_head_is_copied_with_its_comments_and_the_study_becomes_a_command():
    text = render_project(HEAD + "studies:\n  " + srsly.yaml_dumps({"study-masking": MASKING}).replace("\n", "\n  ").rstrip() + "\n")
    assert "  # a comment that must survive\n" in text
    project = srsly.yaml_loads(text)
    (command,) = project["commands"]
    assert command["name"] == "study-masking" and len(command["script"]) == 3
    assert project["vars"] == {"seeds": "0,1"}


@pytest.mark.parametrize(
    "study,message",
    [
        ({"help": "h", "steps": [{"train": "x"}]}, "a step is one of benchmark, table, run"),
        ({"help": "h", "steps": [{"benchmark": {"summary": "s", "settings": {"key": "k", "values": {"a": 1}}}}]},
         "summary with {tag}"),
        ({"help": "h", "steps": [{"benchmark": {"summary": "s_{tag}", "settings": {"values": {"a": 1}}}}]},
         "settings need `key` and `values`"),
    ],
)
def test_a_malformed_study_is_refused_naming_the_problem(study, message):
    with pytest.raises(StudyError, match=message.replace("{", r"\{").replace("}", r"\}")):
        study_script("s", study)


def test_an_unknown_study_key_is_refused():
    with pytest.raises(StudyError, match="studies.yml, s: unknown keys workflow"):
        render_project(HEAD + "studies:\n  s:\n    help: h\n    steps: []\n    workflow: all\n")


def test_project_yml_is_what_studies_yml_gives():
    text = render_project((ROOT / "studies.yml").read_text(encoding="utf8"))
    assert (ROOT / "project.yml").read_text(encoding="utf8") == text, "run python scripts/write_project.py"
    assert text.count("\n") < 500


def test_yaml_that_does_not_parse_is_refused_naming_the_line():
    # HEAD is 7 lines: the study is line 8
    with pytest.raises(StudyError, match=r"(?s)studies.yml is not valid YAML: .*line 8, column 24"):
        render_project(HEAD + "studies:\n  s: {help: h, steps: [{run: a ${vars.x} b}]}\n")
