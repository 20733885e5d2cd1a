"""The corpus commands (mask, resample, undersample, subsample, augment,
missampling) given bad input, round 2 (issue 31): a clear message naming the
file, document or option and its range, exit code 1, no traceback, nothing
written and the input unchanged."""
import os

import pytest
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from ._cli import TRANSFORMS, _assert_failed, _invoke, _plain


NO_ENTITY_CONLL = "it\tO\nrains\tO\n\nno\tO\none\tO\nsings\tO\n"


def _write_docs(path, docs):
    DocBin(docs=docs, store_user_data=False).to_disk(path)
    return path


@pytest.fixture
def zero_length_path(tmp_path):
    """Document 1 has a zero-length span in doc.spans["sc"] (as a DocBin can
    hold one), besides its entity."""
    vocab = Vocab()
    first = Doc(vocab, words=["Ann", "sings"], ents=["B-PER", "O"])
    first.spans["sc"] = [Span(first, 0, 1, "PER")]
    second = Doc(vocab, words=["Bob", "Lee", "runs"], ents=["B-PER", "I-PER", "O"])
    second.spans["sc"] = [Span(second, 0, 2, "PER"), Span(second, 2, 2, "LOC")]
    return _write_docs(tmp_path / "zero.spacy", [first, second])


# --- H1: an output that is not a regular file --------------------------------


@pytest.mark.parametrize("command", list(TRANSFORMS))
def test_bad_input_corpus_transform_refuses_a_named_pipe_before_reading(tmp_path, command):
    """A rename would replace the pipe by a regular file; the output is
    checked before the input is read (a damaged input is not reached)."""
    fifo = tmp_path / "out.pipe"
    os.mkfifo(fifo)
    damaged = tmp_path / "damaged.spacy"
    damaged.write_bytes(b"not a docbin")
    result = _invoke(command, damaged, fifo, *TRANSFORMS[command])
    _assert_failed(result, f"OUTPUT {fifo} is not a regular file")
    assert "damaged" not in _plain(result.output)
    assert fifo.is_fifo()


@pytest.mark.parametrize("option", ["--output", "--plot"])
def test_bad_input_corpus_missampling_refuses_a_named_pipe_before_the_work(tmp_path, spacy_path, option):
    fifo = tmp_path / "rates.pipe"
    os.mkfifo(fifo)
    # a reader at the other end, so that a write (the defect) cannot block
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        result = _invoke("missampling", spacy_path, "--seeds", "1", "--p", "0.5", option, fifo)
    finally:
        os.close(reader)
    _assert_failed(result, f"{option} {fifo} is not a regular file")
    assert "missampling" not in _plain(result.output).lower()
    assert fifo.is_fifo()


def test_bad_input_corpus_missampling_refuses_a_folder_before_the_work(tmp_path, spacy_path):
    """It used to measure every p and seed, then fail on the folder."""
    result = _invoke("missampling", spacy_path, "--seeds", "1", "--p", "0.5", "-o", tmp_path)
    _assert_failed(result, f"--output {tmp_path} is a folder")
    assert "p=0.50" not in _plain(result.output)


def test_bad_input_corpus_missampling_refuses_its_input_as_output(spacy_path):
    before = spacy_path.read_bytes()
    result = _invoke("missampling", spacy_path, "--seeds", "1", "--p", "0.5", "-o", spacy_path)
    _assert_failed(result, f"--output {spacy_path} is the input {spacy_path}")
    assert spacy_path.read_bytes() == before


# --- M5, L6: missampling's numeric options -----------------------------------


@pytest.mark.parametrize(
    "option,value,message",
    [
        # M5: nan reached the JSON output with the uniform sampler: OverflowError
        ("--mu", "nan", "--mu must be a finite number in [0, inf], got nan"),
        ("--mu", "-1", "--mu must be in [0, inf], got -1.0"),
        # L6: T = inf is no temperature (r / T = 0 for every weight)
        ("--temperature", "inf", "--temperature must be a finite number in [1e-06, 1000000.0], got inf"),
        ("--temperature", "0", "--temperature must be in [1e-06, 1000000.0], got 0.0"),
        ("--rate", "nan", "--rate must be a finite number in (0, 1], got nan"),
        ("--rate", "0", "--rate must be in (0, 1], got 0.0"),
        ("--ratio", "inf", "--ratio must be a finite number in (0, 1], got inf"),
        ("--p", "1.5", "--p must be in [0, 1], got 1.5"),
        ("--p", "nan", "--p must be a finite number in [0, 1], got nan"),
        ("--seeds", "0", "--seeds must be in [1, 1000], got 0"),
        ("--seeds", "1001", "--seeds must be in [1, 1000], got 1001"),
        ("--max-span-width", "0", "--max-span-width must be in [1, 256], got 0"),
        ("--max-span-width", "1000000", "--max-span-width must be in [1, 256], got 1000000"),
        ("--batch-size", "0", "--batch-size must be in [1, inf], got 0"),
    ],
)
def test_bad_input_corpus_missampling_options_are_bounded(tmp_path, spacy_path, option, value, message):
    output = tmp_path / "ms.json"
    result = _invoke("missampling", spacy_path, "--sampler", "uniform", option, value, "-o", output)
    _assert_failed(result, message)
    assert not output.exists()


# --- M6: undersample --ratio -------------------------------------------------


@pytest.mark.parametrize("ratio", ["1e308", "1001"])
def test_bad_input_corpus_undersample_ratio_is_bounded(spacy_path, tmp_path, ratio):
    """1e308 times the entity tokens overflowed to inf: OverflowError."""
    output = tmp_path / "out.spacy"
    result = _invoke("undersample", spacy_path, output, "--ratio", ratio)
    _assert_failed(result, f"--ratio must be >= 1 and finite (kept tokens per entity token), got {float(ratio)!r}", "[1, 1000]")
    assert not output.exists()


# --- M7: augment --copies ----------------------------------------------------


@pytest.mark.parametrize("copies", ["1000000000", "101", "0"])
def test_bad_input_corpus_augment_copies_is_bounded_before_reading(tmp_path, copies):
    """A billion copies were accepted and filled the memory; the bound is
    checked before the (here missing) corpus is read."""
    output = tmp_path / "out.spacy"
    result = _invoke("augment", tmp_path / "missing.spacy", output, "--copies", copies)
    _assert_failed(result, f"--copies must be in [1, 100], got {copies}")
    assert not output.exists()


def test_bad_input_corpus_augment_copies_at_the_bound_works(spacy_path, tmp_path):
    output = tmp_path / "out.spacy"
    result = _invoke("augment", spacy_path, output, "--copies", "100")
    assert result.exit_code == 0, result.output
    assert "Wrote 303 sentences" in _plain(result.output)


# --- M8: a span key that no document has -------------------------------------


@pytest.mark.parametrize("command", list(TRANSFORMS))
def test_bad_input_corpus_transform_refuses_an_absent_spans_key(spacy_path, tmp_path, command):
    """mask said "0 of 0 entities masked" and exited 0."""
    before = spacy_path.read_bytes()
    output = tmp_path / "out.spacy"
    result = _invoke(command, spacy_path, output, *TRANSFORMS[command], "--spans-key", "nokey")
    _assert_failed(result, f"{spacy_path}: no document has spans under --spans-key 'nokey'; the span keys with spans are 'sc'")
    assert not output.exists()
    assert spacy_path.read_bytes() == before


def test_bad_input_corpus_mask_refuses_ents_when_the_gold_is_a_span_group(tmp_path):
    """Without --spans-key mask reads doc.ents; with none there but spans in
    "sc", it would mask nothing and leave the spancat gold unmasked."""
    vocab = Vocab()
    doc = Doc(vocab, words=["Ann", "sings"])
    doc.spans["sc"] = [Span(doc, 0, 1, "PER")]
    path = _write_docs(tmp_path / "spans.spacy", [doc])
    output = tmp_path / "out.spacy"
    result = _invoke("mask", path, output, "--p", "0.5")
    _assert_failed(result, f"{path}: no document has entities in doc.ents", "'sc'", "masking would mask nothing")
    assert not output.exists()


def test_bad_input_corpus_missampling_refuses_an_absent_gold_key(spacy_path, tmp_path):
    """Every rate would be 0 by construction; it used to warn after the whole run."""
    output = tmp_path / "ms.json"
    result = _invoke("missampling", spacy_path, "--gold-key", "nokey", "--seeds", "1", "--p", "0.5", "-o", output)
    _assert_failed(result, f"{spacy_path}: no document has spans under --gold-key 'nokey'")
    assert not output.exists()


# --- M9: undersample without entities ----------------------------------------


def test_bad_input_corpus_undersample_refuses_a_corpus_without_entities(tmp_path):
    """It wrote an empty corpus and said "✔ Wrote 0 sentences"."""
    path = tmp_path / "none.conll"
    path.write_text(NO_ENTITY_CONLL, encoding="utf8")
    output = tmp_path / "out.spacy"
    result = _invoke("undersample", path, output)
    _assert_failed(result, f"{path}: none of its 2 sentences has an entity in doc.ents")
    assert "Wrote" not in _plain(result.output)
    assert not output.exists()
    assert path.read_text(encoding="utf8") == NO_ENTITY_CONLL


# --- L2: a zero-length span --------------------------------------------------


@pytest.mark.parametrize("command", ["mask", "undersample"])
def test_bad_input_corpus_transform_names_a_zero_length_span(zero_length_path, tmp_path, command):
    """mask failed with spaCy's E1052, undersample with an IndexError,
    neither naming file or document."""
    output = tmp_path / "out.spacy"
    args = ["--p", "1", "--spans-key", "sc"] if command == "mask" else []
    result = _invoke(command, zero_length_path, output, *args)
    _assert_failed(result, f"{zero_length_path}: document 1 has a zero-length span in doc.spans['sc'] (label 'LOC', at token 2)")
    assert "E1052" not in result.output
    assert not output.exists()


def test_bad_input_corpus_missampling_names_a_zero_length_span(zero_length_path):
    result = _invoke("missampling", zero_length_path, "--gold-key", "sc", "--seeds", "1", "--p", "1")
    _assert_failed(result, f"{zero_length_path}: document 1 has a zero-length span in doc.spans['sc']")
    assert "E1052" not in result.output


# --- L6: subsample --tolerance -----------------------------------------------


@pytest.mark.parametrize("tolerance", ["inf", "1"])
def test_bad_input_corpus_subsample_tolerance_below_one(spacy_path, tmp_path, tolerance):
    """A share differs from its target by less than 1: inf accepted any."""
    output = tmp_path / "out.spacy"
    result = _invoke("subsample", spacy_path, output, "--n", "2", "--entity-token-ratio", "0.3", "--tolerance", tolerance)
    _assert_failed(result, "tolerance must be in (0, 1)", f"got {float(tolerance)!r}")
    assert not output.exists()
