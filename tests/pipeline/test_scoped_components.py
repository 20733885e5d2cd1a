"""What token_ner and sampled_spancat do alike on documents with a label
scope (issue 47), checked for both: the refusals that name the component
(a scope naming a label it lacks, a loss without a partial-label form) and
scoped training on each device equal to numpy's. What each does on its own
is in test_token_ner_scopes and test_sampled_spancat_scopes."""
import pytest

from ._scoped import ScopedComponent, assert_history_is_numpy_s, initialize_error, refusals_without_partial_form
from .test_sampled_spancat_scopes import COMPONENT as SAMPLED_SPANCAT
from .test_token_ner_scopes import COMPONENT as TOKEN_NER

COMPONENTS = [pytest.param(component, id=component.name) for component in (TOKEN_NER, SAMPLED_SPANCAT)]
# the losses each refuses with scopes, and the class its error names (sampled_spancat
# refuses MoMLoss.v2 whatever the scopes: it averages per sentence)
REFUSED = [
    pytest.param(component, loss, loss_class, id=f"{component.name}-{loss}")
    for component, losses in ((TOKEN_NER, ("dice", "mom", "mom_v2")), (SAMPLED_SPANCAT, ("dice", "mom")))
    for loss, loss_class in zip(losses, ("DiceLoss", "MoMLoss", "MoMLossV2"))
]


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_scope_naming_a_label_the_component_lacks_is_refused_at_initialize(component: ScopedComponent):
    nlp = component.make_nlp()
    nlp.config["initialize"]["components"][component.name] = {"labels": component.labels}
    error = initialize_error(nlp, component.make_examples(nlp, scopes=[["PER", "MISC"], None, None]))
    assert error.startswith(
        f"{component.owner}: the training data's label scope ['MISC', 'PER'] names labels the model does not have: 'MISC'"
    )


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_scope_outside_the_labels_in_a_batch_names_the_example(component: ScopedComponent):
    nlp, _ = component.initialized("ce")
    examples = component.make_examples(nlp, scopes=[None, None, ["LOC", "MISC"]])
    with pytest.raises(ValueError) as err:
        nlp.update(examples)
    assert str(err.value).startswith(
        f"{component.owner}: example 2 of the batch: label scope ['LOC', 'MISC'] names labels the model does not have: 'MISC'"
    )


@pytest.mark.parametrize("component,loss,loss_class", REFUSED)
def test_a_loss_without_partial_form_is_refused_naming_it(component: ScopedComponent, loss: str, loss_class: str):
    refusal = (
        f"{component.owner}: the training data has label scopes (documents that annotate only some entity types), "
        f"and the loss {loss_class} has no partial-label form"
    )
    # at initialize, and where scopes appear only in training batches, at the update
    at_initialize, at_update = refusals_without_partial_form(component, loss)
    assert at_initialize.startswith(refusal) and at_update.startswith(refusal)


@pytest.mark.parametrize("loss", ["ce", "focal_alpha"])
@pytest.mark.parametrize("component", COMPONENTS)
def test_scoped_training_on_device_is_numpy_s(device_ops, component: ScopedComponent, loss: str):
    assert_history_is_numpy_s(device_ops, lambda: component.seeded_history(loss, n_updates=3))
