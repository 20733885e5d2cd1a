"""Issue 43, L11: every command that writes a DocBin to a file the user
names (convert, the corpus transforms, apply-review) refuses a name that
does not end in .spacy, before any work: every reader, ours and spaCy's,
reads any other name as CoNLL."""
import pytest

from ._cli import TRANSFORMS, _assert_failed, _invoke

DOCBIN_WRITERS = ["convert", *TRANSFORMS]


@pytest.mark.parametrize("name", ["o.txt", "o.conll", "o", "o.SPACY", "o.spacy.bak"])
@pytest.mark.parametrize("command", DOCBIN_WRITERS)
def test_a_docbin_output_must_end_in_spacy(tmp_path, conll_path, spacy_path, command, name):
    output = tmp_path / name
    source = conll_path if command == "convert" else spacy_path
    result = _invoke(command, source, output, *TRANSFORMS.get(command, []))
    _assert_failed(
        result, f"OUTPUT {output} must end in .spacy: the command writes a .spacy (DocBin) file, which spaCy and these "
        "commands read only under that name (any other is read as CoNLL)",
    )
    assert not output.exists()


@pytest.mark.parametrize("command", DOCBIN_WRITERS)
def test_a_docbin_output_named_spacy_is_written(tmp_path, conll_path, spacy_path, command):
    output = tmp_path / "out.spacy"
    source = conll_path if command == "convert" else spacy_path
    result = _invoke(command, source, output, *TRANSFORMS.get(command, []))
    assert result.exit_code == 0, result.output
    assert output.stat().st_size > 0
