"""A span batch's label scopes (``spans/scopes.py``): each example's scope,
a gold span outside it refused by name, the distinct scopes of a corpus and
the trained rows' classes and columns, copied back in one transfer."""
import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import NumpyOps

from spacy_imbalance.corpus.scopes import set_label_scope
from spacy_imbalance.spans.gold import SpanTargets
from spacy_imbalance.spans.scopes import batch_scopes, selected_rows, training_scopes

NLP = spacy.blank("en")


def example(text, ents, scope=None, spans=None):
    eg = Example.from_dict(NLP.make_doc(text), {"entities": ents})
    if spans is not None:
        eg.reference.spans["gold"] = [eg.reference.char_span(s, e, label=label) for s, e, label in spans]
    if scope is not None:
        set_label_scope(eg.reference, scope)
    return eg


def test_batch_scopes_are_each_example_s_scope():
    examples = [example("Kate .", [(0, 4, "PER")], ["PER"]), example("Paris .", [(0, 5, "LOC")]), example("Oslo", [], ["LOC", "PER"])]
    assert batch_scopes(examples, None, "owner") == [frozenset({"PER"}), None, frozenset({"LOC", "PER"})]
    assert training_scopes(examples) == {frozenset({"PER"}), frozenset({"LOC", "PER"})}
    assert training_scopes([examples[1]]) == set()


def test_a_gold_span_outside_the_scope_names_the_example_and_where_it_is():
    examples = [example("Kate .", [(0, 4, "PER")], ["PER"]), example("Kate in Oslo", [], ["PER"], spans=[(8, 12, "LOC")])]
    assert batch_scopes(examples, None, "owner")[1] == frozenset({"PER"})  # the group is not the gold
    with pytest.raises(ValueError) as err:
        batch_scopes(examples, "gold", "sampled_spancat 'spans'")
    assert str(err.value) == (
        "sampled_spancat 'spans': example 1 of the batch: the entity 'Oslo' (tokens 2-3, in doc.spans['gold']) has the "
        "label 'LOC', outside the label scope ['PER']; add the label to the scope or remove the entity"
    )


def targets(known):
    classes = numpy.asarray([0, 2, -1, 0, 1], dtype="int32")
    out_of_scope = numpy.zeros((5, 3), dtype=bool)
    out_of_scope[[0, 1, 2], 1] = True
    return SpanTargets(classes, None, 2, 0, known, out_of_scope)


@pytest.mark.parametrize("known", [None, numpy.asarray([False, False, False, True, False])])
def test_selected_rows_are_the_trained_rows_on_the_host(known):
    gold, is_known, out_of_scope = selected_rows(NumpyOps(), targets(known), numpy.asarray([0, 1, 3], dtype="int32"))
    assert gold.tolist() == [0, 2, 0] and gold.dtype == numpy.int32
    assert out_of_scope.tolist() == [[False, True, False], [False, True, False], [False, False, False]]
    assert (is_known is None) if known is None else is_known.tolist() == [False, False, True]
    empty = selected_rows(NumpyOps(), targets(known), numpy.zeros((0,), dtype="int32"))
    assert empty[0].shape == (0,) and empty[2].shape == (0, 3)


def test_selected_rows_need_a_batch_with_scopes():
    with pytest.raises(ValueError, match="selected_rows needs targets whose out_of_scope is set"):
        selected_rows(NumpyOps(), targets(None)._replace(out_of_scope=None), numpy.asarray([0], dtype="int32"))
