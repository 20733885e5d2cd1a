"""A component calls its model; it does not open it (issue 46): no module of
pipeline/ names a layer of a model, reaches for its refs or indexes its
layers. What the components need of a model's inside is a function of the
model's own module (``models.span_scorer``, ``models.two_task_tagger``,
``models.output``)."""
import ast
from pathlib import Path
from typing import List, Set

from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.pipeline.sampled_spancat import DEFAULT_SAMPLED_SPANCAT_MODEL
from spacy_imbalance.pipeline.token_ner import DEFAULT_TOKEN_NER_MODEL
from spacy_imbalance.pipeline.two_task_ner import DEFAULT_TWO_TASK_MODEL

from ..conftest import ROOT

PIPELINE = ROOT / "spacy_imbalance" / "pipeline"
REF_METHODS = {"get_ref", "has_ref", "set_ref", "ref_names"}


def layer_names() -> Set[str]:
    """Every ref name of the components' default models, at every depth."""
    names: Set[str] = set()
    for model_config in (DEFAULT_SAMPLED_SPANCAT_MODEL, DEFAULT_TOKEN_NER_MODEL, DEFAULT_TWO_TASK_MODEL):
        model = registry.resolve(Config().from_str(model_config))["model"]
        for node in model.walk():
            names.update(node.ref_names)
    return names


def reaches_inside(path: Path, names: Set[str]) -> List[str]:
    """Each place of ``path`` that calls a ref method, reads ``.layers`` or
    holds a layer's name as a string (a dict key aside: the factories'
    ``"scorer"`` setting is a component's, not a layer's)."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    keys = {id(key) for node in ast.walk(tree) if isinstance(node, ast.Dict) for key in node.keys}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr in REF_METHODS or node.attr == "layers"):
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names and id(node) not in keys:
            found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    return found


def test_the_default_models_have_the_layer_names_looked_for():
    # the check below is only as good as this list
    assert {"tok2vec", "output_layer", "span_repr", "head", "scorer", "hidden", "auc_params"} <= layer_names()


def test_no_component_names_a_layer_of_its_model():
    names = layer_names()
    found = [place for path in sorted(PIPELINE.rglob("*.py")) for place in reaches_inside(path, names)]
    assert found == [], found


def test_the_check_finds_a_component_that_opens_its_model(tmp_path):
    path = tmp_path / "component.py"
    path.write_text('def f(model):\n    return model.get_ref("output_layer"), model.layers[0]\n')
    assert reaches_inside(path, {"output_layer"}) == [
        "component.py:2: .get_ref", "component.py:2: 'output_layer'", "component.py:2: .layers",
    ]


def test_an_update_calls_the_model_once_as_spancat_does(monkeypatch):
    """sampled_spancat's update is one call of its model (on SampledSpans,
    in training), as spaCy's SpanCategorizer.update calls
    ``model.begin_update((docs, spans))``."""
    from spacy_imbalance.models.span_scorer import SampledSpans

    from .test_sampled_spancat import SAMPLERS, make_nlp
    from .test_token_ner import make_examples

    nlp = make_nlp(SAMPLERS["weighted"])
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    model = nlp.get_pipe("sampled_spancat").model
    calls, original = [], model._func
    monkeypatch.setattr(model, "_func", lambda m, X, is_train: calls.append((type(X), is_train)) or original(m, X, is_train))
    nlp.update(examples, losses={})
    assert calls == [(SampledSpans, True)]
