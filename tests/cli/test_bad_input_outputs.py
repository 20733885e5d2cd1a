"""Issue 31, round 2: outputs that are not regular files (devices, named pipes,
folders, symlinks), runs that must not be pooled, and the misleading messages
of convert, evaluate, compare, init-config, summarize and stats. Each test
fails without its fix: a clear message naming the file or setting, exit code
1, and nothing written, replaced or destroyed."""
import json
import os
import shutil
import stat

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.docs_io import write_docbin
from ._cli import CONLL, _assert_failed, _invoke, _plain


GOLD = [
    (["Alice", "visited", "Paris", "."], ["B-PER", "O", "B-LOC", "O"]),
    (["Bob", "likes", "Rome"], ["B-PER", "O", "B-LOC"]),
]
RULES = [{"label": "PER", "pattern": "Alice"}, {"label": "LOC", "pattern": "Rome"}]


def _gold_docs(spans_key=None):
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words=words, ents=tags) for words, tags in GOLD]
    if spans_key is not None:
        for doc in docs:
            doc.spans[spans_key] = list(doc.ents)
    return docs


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "test.spacy"
    write_docbin(_gold_docs(spans_key="sc"), path)
    return path


@pytest.fixture
def rules(tmp_path):
    """A pipeline that writes doc.ents (entity_ruler)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns(RULES)
    nlp.to_disk(tmp_path / "rules")
    return tmp_path / "rules"


@pytest.fixture
def span_rules(tmp_path):
    """A pipeline that writes doc.spans["sc"] (span_ruler), scored with --spans-key sc."""
    nlp = spacy.blank("en")
    nlp.add_pipe("span_ruler", config={"spans_key": "sc"}).add_patterns(RULES)
    nlp.to_disk(tmp_path / "span-rules")
    return tmp_path / "span-rules"


@pytest.fixture
def fifo(tmp_path):
    """A named pipe held open for reading, so that a command that (wrongly)
    writes into it does not block but finishes and shows the defect."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    yield path
    os.close(reader)


def _is_fifo(path):
    return stat.S_ISFIFO(os.lstat(path).st_mode)


# --- H1: an output that is a named pipe, a folder or a symlink ----------------

NOT_REGULAR = "is not a regular file (a device, named pipe or socket), which a write would replace"


def _writing_command(name, tmp_path, data, rules, output):
    """The arguments of each command that writes an output file."""
    conll = tmp_path / "c.conll"
    conll.write_text(CONLL, encoding="utf8")
    metrics = tmp_path / "run.json"
    if name == "summarize":
        assert _invoke("evaluate", rules, data, "-o", metrics, "--n-bootstrap", "5").exit_code == 0
    return {
        "convert": ["convert", conll, output],
        "evaluate": ["evaluate", rules, data, "-o", output, "--n-bootstrap", "5"],
        "compare": ["compare", data, rules, rules, "-o", output, "--n-bootstrap", "5"],
        "init-config": ["init-config", output, "--component", "ner", "--force"],
        "summarize": ["summarize", metrics, "-o", output],
    }[name]


@pytest.mark.parametrize("command", ["convert", "evaluate", "compare", "init-config", "summarize"])
def test_bad_input_outputs_named_pipe_is_refused_not_replaced(tmp_path, data, rules, fifo, command):
    result = _invoke(*_writing_command(command, tmp_path, data, rules, fifo))
    _assert_failed(result, f"{fifo} {NOT_REGULAR}")
    assert _is_fifo(fifo)


def test_bad_input_outputs_summarize_json_beside_output_is_checked(tmp_path, data, rules, fifo):
    # summarize -o pipe.md writes pipe.json beside it: a folder there is refused first
    (tmp_path / "table.json").mkdir()
    args = _writing_command("summarize", tmp_path, data, rules, tmp_path / "table.md")
    result = _invoke(*args)
    _assert_failed(result, f"the .json beside --output {tmp_path / 'table.json'} is a folder")
    assert not (tmp_path / "table.md").exists()


def test_bad_input_outputs_convert_writes_through_a_symlink(tmp_path, conll_path):
    target = tmp_path / "real" / "corpus.spacy"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "link.spacy"
    link.symlink_to(target)
    result = _invoke("convert", conll_path, link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(list(DocBin().from_disk(target).get_docs(spacy.blank("en").vocab))) == 3
    assert sorted(p.name for p in target.parent.iterdir()) == ["corpus.spacy"]  # no temp file left


# --- M3: evaluate/compare -o FOLDER, refused before the evaluation -------------


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_bad_input_outputs_evaluation_output_folder_refused_first(tmp_path, data, command):
    folder = tmp_path / "metrics"
    folder.mkdir()
    # a pipeline that does not exist: the output is checked before it is loaded
    missing = tmp_path / "no-such-pipeline"
    args = ["evaluate", missing, data] if command == "evaluate" else ["compare", data, missing, missing]
    result = _invoke(*args, "-o", folder)
    _assert_failed(result, f"--output {folder} is a folder: give a file path")
    assert list(folder.iterdir()) == []


# --- M4: compare --n-bootstrap 0 -------------------------------------------------


@pytest.mark.parametrize("command", ["evaluate", "compare"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_bad_input_outputs_n_bootstrap_must_be_positive(tmp_path, data, rules, command, value):
    args = ["evaluate", rules, data] if command == "evaluate" else ["compare", data, rules, rules]
    output = tmp_path / "out.json"
    result = _invoke(*args, "--n-bootstrap", value, "-o", output)
    _assert_failed(result, f"--n-bootstrap must be in [1, inf], got {value}")
    assert not output.exists()


# --- M8: evaluate/compare --spans-key with a key the gold data lacks -------------


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_bad_input_outputs_evaluation_refuses_a_spans_key_the_gold_lacks(tmp_path, data, span_rules, command):
    args = ["evaluate", span_rules, data] if command == "evaluate" else ["compare", data, span_rules, span_rules]
    result = _invoke(*args, "--spans-key", "nokey", "--n-bootstrap", "5")
    _assert_failed(result, f"{data}: no document has spans under --spans-key 'nokey'; the span keys with spans are 'sc'")
    # the key the gold data has is scored as before
    result = _invoke(*args, "--spans-key", "sc", "--n-bootstrap", "5")
    assert result.exit_code == 0, result.output


def test_bad_input_outputs_evaluate_spancat_key_missing_from_gold(tmp_path):
    """A spancat pipeline is scored on its own key: gold without it is refused,
    while an ents pipeline on the same gold (no spans at all) still scores."""
    data = tmp_path / "ents-only.spacy"
    write_docbin(_gold_docs(), data)
    nlp = spacy.blank("en")
    nlp.add_pipe("spancat").add_label("LOC")
    nlp.initialize()
    nlp.to_disk(tmp_path / "spancat")
    result = _invoke("evaluate", tmp_path / "spancat", data, "--n-bootstrap", "5")
    _assert_failed(result, f"no document has spans under the spans key of the pipeline {tmp_path / 'spancat'} 'sc'")
    rules = spacy.blank("en")
    rules.add_pipe("entity_ruler").add_patterns(RULES)
    rules.to_disk(tmp_path / "rules")
    assert _invoke("evaluate", tmp_path / "rules", data, "--n-bootstrap", "5").exit_code == 0


# --- H2: summarize pools only runs of one experiment ----------------------------


def _evaluate(rules, data, output, *options):
    result = _invoke("evaluate", rules, data, "-o", output, "--name", "run", "--n-bootstrap", "5", *options)
    assert result.exit_code == 0, result.output
    return output


def test_bad_input_outputs_summarize_refuses_a_file_given_twice(tmp_path, data, rules):
    run = _evaluate(rules, data, tmp_path / "a.json")
    copy = tmp_path / "copy.json"
    shutil.copy(run, copy)
    for second in (run, tmp_path / "." / "a.json", copy):
        result = _invoke("summarize", run, second)
        _assert_failed(result, "are the same run (the same file, or a copy of it): give each run once")


def test_bad_input_outputs_summarize_refuses_runs_on_other_data(tmp_path, data, rules):
    other = tmp_path / "dev.spacy"
    write_docbin(_gold_docs(spans_key="sc")[:1], other)
    a, b = _evaluate(rules, data, tmp_path / "a.json"), _evaluate(rules, other, tmp_path / "b.json")
    result = _invoke("summarize", a, b)
    _assert_failed(result, f"the runs {a} and {b} are both named 'run' but differ in data")


def test_bad_input_outputs_summarize_refuses_runs_of_other_targets(tmp_path, data, rules, span_rules):
    a = _evaluate(rules, data, tmp_path / "a.json")
    b = _evaluate(span_rules, data, tmp_path / "b.json", "--spans-key", "sc")
    result = _invoke("summarize", a, b)
    _assert_failed(result, "differ in what was scored (ents or spans:KEY): 'ents' and 'spans:sc'")


def test_bad_input_outputs_summarize_refuses_runs_of_other_configs(tmp_path, data, rules):
    paths = []
    for seed, sha in ((1, "aaa"), (2, "bbb")):
        report = json.loads(_evaluate(rules, data, tmp_path / f"s{seed}.json", "--seed", str(seed)).read_text())
        report["config_sha256"] = sha  # as benchmark.py records it
        (tmp_path / f"s{seed}.json").write_text(json.dumps(report))
        paths.append(tmp_path / f"s{seed}.json")
    result = _invoke("summarize", *paths)
    _assert_failed(result, "differ in config (SHA-256): 'aaa' and 'bbb'")


def test_bad_input_outputs_summarize_pools_seeds_of_one_experiment(tmp_path, data, rules, monkeypatch):
    """Seeds of one config on the same data pool, however the data was spelled."""
    monkeypatch.chdir(tmp_path)
    paths = []
    for seed, spelling in ((1, data.name), (2, str(data))):
        report = json.loads(_evaluate(rules, spelling, tmp_path / f"s{seed}.json", "--seed", str(seed)).read_text())
        report["config_sha256"] = "same"
        (tmp_path / f"s{seed}.json").write_text(json.dumps(report))
        paths.append(tmp_path / f"s{seed}.json")
    result = _invoke("summarize", *paths, "-o", tmp_path / "summary.md")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "summary.json").read_text())["run"]["runs"] == 2


# --- M13: init-config to an output that cannot be written -----------------------


def test_bad_input_outputs_init_config_full_disk(tmp_path, monkeypatch):
    def full_disk(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pathlib.Path.write_text", full_disk)
    output = tmp_path / "config.cfg"
    result = _invoke("init-config", output, "--component", "ner")
    _assert_failed(result, f"Could not write OUTPUT {output}: No space left on device")
    assert list(tmp_path.iterdir()) == []  # no half config, no temporary file


def test_bad_input_outputs_init_config_folder_that_cannot_be_made(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    output = afile / "config.cfg"
    result = _invoke("init-config", output, "--component", "ner")
    _assert_failed(result, f"OUTPUT {output} cannot be made: {afile} is a file")
    assert afile.read_text() == "x"


def test_bad_input_outputs_init_config_stdout_still_works():
    result = _invoke("init-config", "-", "--component", "ner")
    assert result.exit_code == 0, result.output
    assert "[components.ner]" in result.stdout


# --- M12: stats --spans-key: overlapping spans of one type, zero-length spans ---


def test_bad_input_outputs_stats_counts_overlapping_spans_once(tmp_path):
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["w"] * 10)
    # LOC 0-6 and 2-8 overlap: 8 tokens, not 12; the zero-length PER span is no mention
    doc.spans["sc"] = [Span(doc, 0, 6, "LOC"), Span(doc, 2, 8, "LOC"), Span(doc, 9, 9, "PER")]
    path = tmp_path / "overlap.spacy"
    write_docbin([doc], path)
    result = CliRunner().invoke(app, ["stats", str(path), "--spans-key", "sc", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["per_type"]["LOC"]["tokens"] == 8 and stats["per_type"]["LOC"]["mentions"] == 2
    assert stats["per_type"]["LOC"]["token_pct"] == pytest.approx(80.0)
    assert "PER" not in stats["per_type"] and stats["entity_types"] == 1
    warning = f"{path}: 1 zero-length span(s) not counted as mentions: document 1 ('PER' at token 9)"
    assert warning in " ".join(result.stderr.split())


# --- L7: misleading messages of convert; labels with a space ---------------------


def test_bad_input_outputs_convert_a_spacy_input_says_so(tmp_path, data):
    before = data.read_bytes()
    output = tmp_path / "x.spacy"
    result = _invoke("convert", data, output)
    _assert_failed(result, f"{data} is a .spacy file, not CoNLL: convert reads a CoNLL file")
    assert "No such input file" not in _plain(result.output)
    assert data.read_bytes() == before and not output.exists()


def test_bad_input_outputs_convert_a_folder_input_says_so(tmp_path):
    result = _invoke("convert", tmp_path, tmp_path / "x.spacy")
    _assert_failed(result, f"{tmp_path} is a folder: convert reads one CoNLL file")
    assert "No such input file" not in _plain(result.output)


@pytest.mark.parametrize("space", ["\u00a0", "\u3000"], ids=["nbsp", "ideographic"])
def test_bad_input_outputs_convert_refuses_a_label_with_a_space(tmp_path, space):
    path = tmp_path / "spaced.conll"
    path.write_text(f"Ann\tB-PER\nsings\tO\n\nin\tO\nNew\tB-NEW{space}YORK\n", encoding="utf8")
    output = tmp_path / "out.spacy"
    result = _invoke("convert", path, output)
    _assert_failed(result, f"{path}, line 5: the entity type {'NEW' + space + 'YORK'!r}", "has a space in it")
    assert not output.exists()


def test_bad_input_outputs_stats_warns_of_a_label_with_a_space(tmp_path):
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["in", "New", "York"])
    doc.ents = [Span(doc, 1, 3, "NEW YORK")]
    path = tmp_path / "spaced.spacy"
    write_docbin([doc], path)
    result = _invoke("stats", path)
    assert result.exit_code == 0, result.output
    assert f"{path}: the label 'NEW YORK' (first in document 1) has a space in it" in _plain(result.output)


# --- L8: convert --split '' ------------------------------------------------------


@pytest.mark.parametrize("split", ["", " "])
def test_bad_input_outputs_convert_refuses_an_empty_split(tmp_path, conll_path, split):
    output = tmp_path / "out"
    result = _invoke("convert", conll_path, output, "--split", split)
    _assert_failed(result, "--split is empty")
    assert not output.exists()


# --- found by the property test: a pipeline spaCy cannot load (blank:zz) --------


@pytest.mark.parametrize("command", ["evaluate", "compare", "missampling"])
def test_bad_input_outputs_pipeline_of_an_unknown_language_is_named(conll_path, command):
    # spaCy raises ImportError [E048] for blank:LANG of an unknown language, not OSError
    args = {
        "evaluate": ["evaluate", "blank:zz", conll_path],
        "compare": ["compare", conll_path, "blank:zz", "blank:zz"],
        "missampling": ["missampling", conll_path, "--model", "blank:zz", "--seeds", "1"],
    }[command]
    argument = {"evaluate": "MODEL", "compare": "MODELS", "missampling": "--model"}[command]
    before = conll_path.read_bytes()
    result = _invoke(*args)
    _assert_failed(result, f"{argument} 'blank:zz' cannot be loaded as a spaCy pipeline", "[E048]")
    assert conll_path.read_bytes() == before


# --- found by the property test: audit with an extra option that is no override --


def test_bad_input_outputs_audit_extra_option_without_a_dot_is_named(tmp_path, conll_path):
    # spaCy raises the real click's NoSuchOption, which typer's own click copy does not catch
    output = tmp_path / "audit"
    result = _invoke("audit", conll_path, "-o", output, "--folds", "2", "--nothing")
    _assert_failed(result, "No such option '--nothing': an extra option of audit overrides a config setting", "--training.max_steps")
    assert not output.exists()
