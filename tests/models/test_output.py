"""The output width the entity components size by their labels
(models/output.py), on each of the package's architectures."""
import pytest
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.models.output import output_width, set_output_width
from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_SAMPLED_SPANCAT_MODEL
from spacy_imbalance.pipeline.token_ner import DEFAULT_TOKEN_NER_MODEL
from spacy_imbalance.pipeline.two_task_ner import DEFAULT_TWO_TASK_MODEL


@pytest.mark.parametrize("model_config", [DEFAULT_SAMPLED_SPANCAT_MODEL, DEFAULT_TOKEN_NER_MODEL, DEFAULT_TWO_TASK_MODEL])
def test_the_output_width_is_unset_until_set(model_config):
    model = registry.resolve(Config().from_str(model_config))["model"]
    assert output_width(model) is None
    set_output_width(model, 7)
    assert output_width(model) == 7 and model.get_ref("output_layer").get_dim("nO") == 7
