"""``evaluation.components.span_component``: the tools' lookup of a
``sampled_spancat`` by name, and its errors that list the pipeline."""
import pytest
import spacy

import spacy_imbalance.pipeline.sampled_spancat as sampled_spancat
from spacy_imbalance.evaluation.components import span_component


def test_span_component_finds_the_sampled_spancat_by_name():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    pipe = nlp.add_pipe("sampled_spancat", name="spans")
    assert span_component(nlp, "spans") is pipe


@pytest.mark.parametrize(
    "names, asked, message",
    [
        ([], "spans", "the pipeline has no component 'spans'; its components: none"),
        (["sentencizer", "spans"], "ner", "the pipeline has no component 'ner'; its components: sentencizer, spans"),
        (["sentencizer", "spans"], "sentencizer",
         "the component 'sentencizer' is a Sentencizer, not a sampled_spancat; the pipeline's components: sentencizer, spans"),
    ],
)
def test_span_component_errors_list_the_components(names, asked, message):
    nlp = spacy.blank("en")
    for name in names:
        nlp.add_pipe("sampled_spancat" if name == "spans" else name, name=name)
    with pytest.raises(ValueError) as err:
        span_component(nlp, asked)
    assert str(err.value) == message


def test_the_lookup_lives_with_the_tools_not_the_component():
    # the component's module is below evaluation/ and keeps no copy of it
    assert not hasattr(sampled_spancat, "span_component")
