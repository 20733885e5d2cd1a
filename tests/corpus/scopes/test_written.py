"""Label scopes in the .spacy files the commands write (issue 47): every
writer stores user data, so a scoped corpus that is masked, resampled or
otherwise transformed keeps its scopes (they were dropped, and the output
read as completely annotated)."""
import pytest

from spacy_imbalance.corpus.docs_io import load_docs, write_docbin, write_docbins
from spacy_imbalance.corpus.scopes.scopes import SCOPE_KEY, get_label_scope, set_label_scope

from ...cli._cli import TRANSFORMS as COMMAND_TRANSFORMS
from .._corpus import invoke
from ._docs import PEOPLE, product_doc, two_sentences

# each corpus-transforming command with the settings it needs besides INPUT and OUTPUT:
# two sentences of three subsampled, so that one of the scoped doc's is among them
TRANSFORMS = {**COMMAND_TRANSFORMS, "subsample": ["--n", "2"]}


def scoped_docs(vocab):
    """A doc of two sentences scoped PER/ORG, and one without scope (every type annotated)."""
    people = two_sentences(vocab, ["Bob", "sings", "."], ["B-PER", "O", "O"])
    set_label_scope(people, PEOPLE)
    return [people, product_doc(vocab)]


def test_written_docs_keep_their_scope_and_other_user_data(tmp_path, nlp):
    docs = scoped_docs(nlp.vocab)
    docs[1].user_data[("._.", "source", None, None)] = "wiki"
    write_docbin(docs, tmp_path / "one.spacy")
    write_docbins({tmp_path / "a.spacy": docs[:1], tmp_path / "b.spacy": docs[1:]})
    for read in (load_docs(tmp_path / "one.spacy"), [*load_docs(tmp_path / "a.spacy"), *load_docs(tmp_path / "b.spacy")]):
        assert [get_label_scope(doc) for doc in read] == [PEOPLE, None]
        assert read[1].user_data == {("._.", "source", None, None): "wiki"}
        assert SCOPE_KEY not in read[1].user_data


@pytest.mark.parametrize("command", list(TRANSFORMS))
def test_each_transform_command_keeps_the_scopes_of_its_input(tmp_path, nlp, command):
    source = tmp_path / "in.spacy"
    write_docbin(scoped_docs(nlp.vocab), source)
    output = tmp_path / "out.spacy"
    result = invoke(command, source, output, *TRANSFORMS[command])
    assert result.exit_code == 0, result.output
    written = load_docs(output)
    assert written
    # the commands work on sentences: a scoped doc's sentences keep its scope, the other doc has none
    expected = [None if "Paris" in doc.text or "iPhone" in doc.text else PEOPLE for doc in written]
    assert [get_label_scope(doc) for doc in written] == expected
    assert PEOPLE in expected
