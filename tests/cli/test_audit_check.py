"""``spacy-imbalance audit-check`` (cli/audit_check.py): a bad setting is
refused before any work with a message naming it; the summary of a folder of
reports end to end (the checks themselves train: audit/validation's tests
run their steps with stand-ins)."""
import sys

import pytest
import srsly

from ._cli import _assert_failed, _invoke, _plain


@pytest.fixture
def corpus(tmp_path):
    for name in ("train.spacy", "dev.spacy", "test.spacy", "x.cfg"):
        (tmp_path / name).touch()
    return tmp_path


def run(corpus, *args):
    return _invoke("audit-check", "run", corpus / "train.spacy", "--dev", corpus / "dev.spacy", "-o", corpus / "out", *args)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--p", "1.5"], "--p must be in (0.0, 1.0), got 1.5"),
        (["--p", "0.3,x"], "expected a comma-separated list, got '0.3,x'"),
        (["--seed", "-1"], "--seed must be in [0, inf], got -1"),
        (["--folds", "1"], "--folds must be in [2, inf], got 1"),
        (["--threshold", "1"], "--threshold must be in (0.0, 1.0), got 1.0"),
        (["--vectors", "v", "--features"], "--vectors and --features both choose the embeddings: give one"),
        (["--test", "{dir}/test.spacy"], "--test needs --restore CONFIG: the config to retrain"),
        (["--review", "--reference", "r-s{seed}.json"], "--reference, --review need --restore CONFIG: the config to retrain"),
        (["--restore", "{dir}/x.cfg"], "--restore needs --test TEST: the corpus its runs are scored on"),
        (["--restore", "{dir}/nowhere.cfg", "--test", "{dir}/test.spacy"], "No such file: {dir}/nowhere.cfg (--restore)"),
        (["--restore", "{dir}/x.cfg", "--test", "{dir}/test.spacy", "--restore-steps", "0"], "--restore-steps must be in [1, inf], got 0"),
        (["--cleanlab", "{dir}/nowhere.cfg"], "No such file: {dir}/nowhere.cfg (--cleanlab)"),
        (["--cleanlab", "{dir}/x.cfg", "--review", "--restore", "{dir}/x.cfg", "--test", "{dir}/test.spacy"],
         "--cleanlab compares the audit's suspects with cleanlab's; a --review reads the audit's ranking alone: give one"),
    ],
)
def test_a_bad_setting_is_refused_naming_it_before_any_work(corpus, args, message):
    result = run(corpus, *[arg.replace("{dir}", str(corpus)) for arg in args])
    _assert_failed(result, message.replace("{dir}", str(corpus)))
    assert not (corpus / "out").exists()


def test_missing_inputs_are_named(corpus):
    result = _invoke("audit-check", "run", corpus / "nowhere.spacy", "--dev", corpus / "dev.spacy", "-o", corpus / "out")
    _assert_failed(result, f"No such file: {corpus / 'nowhere.spacy'} (TRAIN)")
    result = _invoke("audit-check", "run", corpus / "train.spacy", "--dev", corpus / "nowhere.spacy", "-o", corpus / "out")
    _assert_failed(result, f"No such file: {corpus / 'nowhere.spacy'} (--dev)")


def test_without_cleanlab_the_comparison_names_the_extra_before_any_work(corpus, monkeypatch):
    for name in ["cleanlab", *(m for m in sys.modules if m.startswith("cleanlab."))]:
        monkeypatch.setitem(sys.modules, name, None)
    result = run(corpus, "--cleanlab", corpus / "x.cfg")
    _assert_failed(result, "--cleanlab compares with cleanlab, which is not installed: pip install 'spacy-imbalance[cleanlab]'")
    assert not (corpus / "out").exists()


def test_only_selecting_nothing_does_nothing(corpus):
    result = run(corpus, "--p", "0.1,0.3", "--only", "records/p50")
    assert result.exit_code == 0, result.output
    assert "--only records/p50: no audit check is selected" in result.output and not (corpus / "out").exists()


def test_the_summary_tables_a_folder_of_reports(tmp_path):
    records = tmp_path / "audit"
    records.mkdir()
    estimate = {"true": 0.3, "estimate": 0.32, "low": 0.25, "high": 0.4, "error": 0.02, "covered": True}
    for seed in (0, 3):
        srsly.write_json(records / f"p30-s{seed}.json", {
            "corpus": "mine", "p": 0.3, "seed": seed, "settings": {"folds": 5, "steps": 20, "threshold": 0.5, "encoder": "default"},
            "masking": {"removed": 10}, "estimate": {"total": estimate, "labels": {}},
            "audit": {"selected": {"n": 4, "exact": {"p": 0.5, "r": 0.2}}, "at_k": {"exact": {"p": 0.4}, "overlap": {"p": 0.6}}},
        })
    srsly.write_json(records / "review-p30-s0.json", {"corpus": "mine", "p": 0.3, "seed": 0, "k": 10})
    out = tmp_path / "summary.md"
    result = _invoke("audit-check", "summary", records, "-o", out, "--revalidation", "p30-s3")
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf8")
    assert text.startswith("# Audit validation on mine, default encoder\n")
    assert "| 0.3 | 1 | 10 | 4 | 50.0 | 20.0 | 40.0 | 60.0 |" in text and "| 0.3 (re-validation) | 1 |" in text
    # a review not asked to be summarised is said, not dropped
    assert f"1 simulated reviews in {records} are not summarised: give --review-output FILE" in _plain(result.output)
    result = _invoke("audit-check", "summary", records, "-o", out, "--review-output", tmp_path / "review.md")
    assert result.exit_code == 0 and (tmp_path / "review.md").read_text(encoding="utf8").startswith("# The review loop on mine")


def test_the_summary_refuses_a_bad_setting(tmp_path):
    _assert_failed(_invoke("audit-check", "summary", tmp_path, "-o", tmp_path / "s.md", "--revalidation", "p30,s3"),
                   "--revalidation names settings as p30-s3 (p in percent, the seed), got p30, s3")
    (tmp_path / "file").touch()
    _assert_failed(_invoke("audit-check", "summary", tmp_path / "file", "-o", tmp_path / "s.md"),
                   f"RECORDS {tmp_path / 'file'} is a file: give the folder of the reports")
    # no report yet: a page that says so
    result = _invoke("audit-check", "summary", tmp_path / "none", "-o", tmp_path / "s.md", "--name", "mine")
    assert result.exit_code == 0
    assert (tmp_path / "s.md").read_text(encoding="utf8") == (
        f"# Audit validation on mine\n\nNo validation run yet ({(tmp_path / 'none').as_posix()}/ is empty).\n")


def test_workers_refuses_a_bad_setting(corpus):
    args = ["audit-check", "workers", corpus / "train.spacy", "--dev", corpus / "dev.spacy", "-o", corpus / "out", "--record", corpus / "w.json"]
    _assert_failed(_invoke(*args, "--workers", "1"), "--workers must be in [2, inf], got 1")
    _assert_failed(_invoke(*args, "--folds", "4,1"), "--folds must be in [2, inf], got 1")
    result = _invoke(*args, "--only", "audit-workers/k9")
    assert result.exit_code == 0 and "--only: no setting of this benchmark is selected" in result.output
    assert not (corpus / "w.md").exists()
