"""spacy-imbalance.TransformerFeatures.v1: settings validation, the layer mix
by hand and by finite differences, and the architecture in trained pipelines
(saved and loaded without the model files, two listeners on one tok2vec,
multiprocessing, empty docs, the feature cache). The shim underneath:
tests/layers/test_frozen_transformer.py."""
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, List, NamedTuple, Tuple

import numpy
import pytest
import spacy
from spacy.language import Language
from spacy.training import Example
from spacy.util import fix_random_seed, load_model_from_config, registry
from thinc.api import Config

from spacy_imbalance.layers.frozen_transformer import FrozenTransformerShim
from spacy_imbalance.layers.transformer_mix import transformer_mix

from ..conftest import ROOT
from ..layers.test_frozen_transformer import HIDDEN, save_tiny_bert
from ..pipeline.test_token_ner import TRAIN_DATA
from .test_span_scorer import check_setting_refused

TEXTS = [text for text, _ in TRAIN_DATA]
# sentences the pipelines never train on
NEW_TEXTS = ["Paris and Kate .", "Kate likes New York and London .", "Bush sings here ."]
WIDTH = 96  # the encoder's width in the shipped configs

EMBED_CONFIG = """
[model]
@architectures = "spacy-imbalance.TransformerFeatures.v1"
name = "nothing/is/loaded/when/the/model/is/built"
width = 32
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@contextmanager
def moved_away(folder: Path):
    """The model folder is gone while the block runs (and back afterwards)."""
    hidden = folder.with_name(folder.name + "_moved")
    folder.rename(hidden)
    try:
        yield
    finally:
        hidden.rename(folder)


def features_config(cfg_name: str, model_folder: Path) -> Config:
    config = spacy.util.load_config(ROOT / "configs" / "features" / cfg_name)
    embed = config["components"]["tok2vec"]["model"]["embed"]
    embed["name"] = str(model_folder)
    embed["layers"] = 3  # all the tiny model has
    # windows of 6 wordpieces (+ [CLS], [SEP]): the longer sentences take two
    embed["window"], embed["stride"] = 8, 4
    return config


def the_shim(nlp: Language) -> FrozenTransformerShim:
    return nlp.get_pipe("tok2vec").model.get_ref("embed").get_ref("transformer").shims[0]


def make_examples(nlp: Language):
    return [Example.from_dict(nlp.make_doc(text), {"entities": ents}) for text, ents in TRAIN_DATA]


class Trained(NamedTuple):
    nlp: Language
    model_folder: Path  # a copy of the tiny model, which a test may move away
    losses: List[Dict[str, float]]  # of every update
    lookups: List[Tuple[int, int]]  # the shim's (hits, misses) after initialize and every update


def train(nlp: Language, model_folder: Path, n_iter: int = 40) -> Trained:
    """Overfit the four sentences."""
    fix_random_seed(0)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(get_examples=lambda: examples)
    shim = the_shim(nlp)
    trained = Trained(nlp, model_folder, [], [(shim.hits, shim.misses)])
    for _ in range(n_iter):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        trained.losses.append(losses)
        trained.lookups.append((shim.hits, shim.misses))
    return trained


def annotations(docs):
    """Entities and every span group, as plain tuples."""
    return [
        (
            [(e.start_char, e.end_char, e.label_) for e in doc.ents],
            {key: [(s.start, s.end, s.label_) for s in group] for key, group in doc.spans.items()},
        )
        for doc in docs
    ]


def assert_vectors_equal(got, want):
    assert len(got) == len(want)
    for x, y in zip(got, want):
        numpy.testing.assert_array_equal(x, y)


def gold_ents(nlp: Language):
    return [[(e.start_char, e.end_char, e.label_) for e in eg.reference.ents] for eg in make_examples(nlp)]


def falls(losses, factor=10):
    return losses[-1] < losses[0] / factor


# -- settings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "setting,value,message",
    [
        ("width", 0, "'width' = 0, must be >= 1"),
        ("layers", 0, "'layers' = 0, must be >= 1"),
        ("window", 1, "'window' = 1, must be >= 2"),
        ("stride", 0, "'stride' = 0, must be >= 1"),
        ("stride", 128, "'stride' = 128 must be smaller than 'window' = 128"),
        ("max_batch_items", 0, "'max_batch_items' = 0, must be >= 1"),
        ("cache_size", -1, "'cache_size' = -1, must be >= 0"),
        ("rows", [100, 200], "'rows' has 2 entries, 'attrs' 1"),
    ],
)
def test_invalid_settings(setting, value, message):
    check_setting_refused(EMBED_CONFIG, setting, value, message)


def test_building_loads_nothing():
    model = registry.resolve(Config().from_str(EMBED_CONFIG))["model"]
    mix = model.get_ref("transformer")
    assert not mix.shims[0].is_loaded and not mix.has_dim("nO")
    assert mix.get_dim("nL") == 4


# -- the layer mix -------------------------------------------------------------------


def make_mix(tiny, layers=3):
    shim = FrozenTransformerShim(str(tiny), layers=layers, window=64, stride=32, max_batch_items=4096, cache_size=100)
    model = transformer_mix(shim)
    model.initialize()
    return model, shim


def mix_docs():
    nlp = spacy.blank("en")
    return [nlp.make_doc("Kate Bush sings in New York ."), nlp.make_doc(""), nlp.make_doc("Unbelievably  so")]


def test_mix_starts_even_at_the_transformers_scale(tiny):
    model, shim = make_mix(tiny)
    assert model.get_dim("nO") == HIDDEN and model.get_dim("nL") == 3
    assert model.get_param("mix").tolist() == [0.0, 0.0, 0.0]
    assert model.get_param("gamma").tolist() == [1.0]
    docs = mix_docs()
    Y = model.predict(docs)
    H = shim.features([[t.text for t in doc] for doc in docs])
    assert [y.shape for y in Y] == [(7, HIDDEN), (0, HIDDEN), (3, HIDDEN)]
    for y, h in zip(Y, H):
        numpy.testing.assert_allclose(y, h.mean(axis=1), atol=1e-6)


def test_mix_by_hand(tiny):
    model, shim = make_mix(tiny)
    model.set_param("mix", numpy.asarray([0.5, -1.0, 2.0], dtype="f"))
    model.set_param("gamma", numpy.asarray([1.7], dtype="f"))
    w = numpy.exp([0.5, -1.0, 2.0]) / numpy.exp([0.5, -1.0, 2.0]).sum()
    docs = mix_docs()
    H = shim.features([[t.text for t in doc] for doc in docs])
    for y, h in zip(model.predict(docs), H):
        numpy.testing.assert_allclose(y, 1.7 * (h * w[None, :, None]).sum(axis=1), atol=1e-5)
    # a batch of empty documents
    nlp = spacy.blank("en")
    Y, backprop = model([nlp.make_doc(""), nlp.make_doc("")], is_train=True)
    assert [y.shape for y in Y] == [(0, HIDDEN), (0, HIDDEN)]
    assert backprop([y.copy() for y in Y]) == []
    assert model.get_grad("mix").tolist() == [0.0, 0.0, 0.0] and model.get_grad("gamma").tolist() == [0.0]


def weighted_sum(model, docs, R) -> float:
    """The loss sum(Y * R), in float64."""
    return sum(float((y.astype("d") * r).sum()) for y, r in zip(model.predict(docs), R))


def finite_differences(model, name: str, docs, R, eps: float) -> numpy.ndarray:
    value = model.get_param(name).copy()
    numeric = numpy.zeros(value.shape)
    for i in range(value.size):
        for sign in (1, -1):
            shifted = value.copy()
            shifted[i] += sign * eps
            model.set_param(name, shifted)
            numeric[i] += sign * weighted_sum(model, docs, R) / (2 * eps)
    model.set_param(name, value)
    return numeric


def test_mix_gradients_match_finite_differences(tiny):
    """With float64 parameters the mix (of float32 features) is computed in
    float64, so the central differences are accurate to ~1e-9."""
    model, _ = make_mix(tiny)
    rng = numpy.random.default_rng(0)
    model.set_param("mix", rng.normal(size=3))
    model.set_param("gamma", numpy.asarray([1.3]))
    docs = mix_docs()
    Y, backprop = model(docs, is_train=True)
    assert Y[0].dtype == numpy.float64
    R = [rng.normal(size=y.shape) for y in Y]
    # the documents get no gradient: the transformer is frozen
    assert backprop(R) == []
    for name in ("mix", "gamma"):
        numeric = finite_differences(model, name, docs, R, eps=1e-6)
        assert numpy.abs(numeric).max() > 1e-3  # a check that can fail
        numpy.testing.assert_allclose(model.get_grad(name), numeric, rtol=1e-5, atol=1e-7)


def test_mix_gradients_accumulate_and_float32_agrees(tiny):
    """The float32 parameters of a real run give the same gradients, within
    float32 finite differences (eps 1e-3, 1% relative)."""
    model, _ = make_mix(tiny)
    rng = numpy.random.default_rng(1)
    model.set_param("mix", rng.normal(size=3).astype("f"))
    model.set_param("gamma", numpy.asarray([0.8], dtype="f"))
    docs = mix_docs()
    Y, backprop = model(docs, is_train=True)
    assert Y[0].dtype == numpy.float32
    R = [rng.normal(size=y.shape).astype("f") for y in Y]
    backprop(R)
    once = {name: model.get_grad(name).copy() for name in ("mix", "gamma")}
    backprop(R)
    for name, grad in once.items():
        numpy.testing.assert_allclose(model.get_grad(name), 2 * grad, rtol=1e-6)
        numeric = finite_differences(model, name, docs, R, eps=1e-3)
        numpy.testing.assert_allclose(grad, numeric, rtol=1e-2, atol=1e-3)


# -- in pipelines ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def spancat(tiny, tmp_path_factory):
    """tok2vec + sampled_spancat from the shipped config, on a copy of the
    tiny model that a test may move away, overfit on four sentences."""
    folder = tmp_path_factory.mktemp("spancat") / "model"
    shutil.copytree(tiny, folder)
    config = features_config("sampled_spancat_uniform.cfg", folder)
    return train(load_model_from_config(config, auto_fill=True), folder)


@pytest.fixture(scope="module")
def two_heads(tiny, tmp_path_factory):
    """tok2vec + spaCy's ner (the shipped config) + a token_ner, both
    listening to the one tok2vec; token_ner writes to its own span group, so
    that each head's predictions can be told apart."""
    folder = tmp_path_factory.mktemp("two_heads") / "model"
    shutil.copytree(tiny, folder)
    config = features_config("ner.cfg", folder)
    config["nlp"]["pipeline"] = ["tok2vec", "ner", "token_ner"]
    config["components"]["token_ner"] = {
        "factory": "token_ner",
        "spans_key": "token_ner",
        "model": {
            "@architectures": "spacy-imbalance.TokenTagger.v1",
            "nO": None,
            "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": WIDTH, "upstream": "*"},
        },
    }
    return train(load_model_from_config(config, auto_fill=True), folder)


def test_spancat_overfits_and_trains_the_mix(spancat):
    nlp = spancat.nlp
    assert falls([losses["sampled_spancat"] for losses in spancat.losses])
    mix = nlp.get_pipe("tok2vec").model.get_ref("embed").get_ref("transformer")
    # the gradient reaches the mix through the listener
    assert numpy.abs(mix.get_param("mix")).max() > 0 and mix.get_param("gamma")[0] != 1.0
    assert [ents for ents, _ in annotations(nlp.pipe(TEXTS))] == gold_ents(nlp)


def test_two_listeners_share_the_features(two_heads):
    nlp = two_heads.nlp
    assert nlp.get_pipe("tok2vec").listening_components == ["ner", "token_ner"]
    for name in ("ner", "token_ner"):
        assert falls([losses[name] for losses in two_heads.losses]), name
    # both heads learnt the sentences: ner's doc.ents (token_ner keeps them),
    # token_ner's own span group
    got = annotations(nlp.pipe(TEXTS))
    assert [ents for ents, _ in got] == gold_ents(nlp)
    gold_tokens = [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in make_examples(nlp)]
    assert [spans["token_ner"] for _, spans in got] == gold_tokens
    # one pass of the features per update for both heads: after initialize
    # computed them, each update reads every sentence once from the cache
    assert two_heads.lookups[0][1] == len(TRAIN_DATA)
    steps = numpy.diff(numpy.asarray(two_heads.lookups), axis=0)
    assert steps.tolist() == [[len(TRAIN_DATA), 0]] * len(two_heads.losses)


@pytest.mark.parametrize("pipeline", ["spancat", "two_heads"])
def test_saved_pipeline_loads_without_the_model_files(pipeline, request, tmp_path):
    nlp, folder, _, _ = request.getfixturevalue(pipeline)
    texts = TEXTS + NEW_TEXTS
    # cold caches on both sides, filled by the same batch: the same bits
    the_shim(nlp).cache.clear()
    expected = annotations(nlp.pipe(texts))
    vectors = nlp.get_pipe("tok2vec").predict([nlp.make_doc(text) for text in texts])
    nlp.to_disk(tmp_path / "pipeline")
    with moved_away(folder):
        loaded = spacy.load(tmp_path / "pipeline")
        assert annotations(loaded.pipe(texts)) == expected
        got = loaded.get_pipe("tok2vec").predict([loaded.make_doc(text) for text in texts])
    assert_vectors_equal(got, vectors)
    assert (the_shim(loaded).hits, the_shim(loaded).misses) == (len(texts), len(texts))


# Run in its own interpreter: if forked workers hang, only that process waits
# (and the test fails on the timeout) instead of the whole suite.
TWO_PROCESSES = """
import json, sys
import spacy, torch
nlp = spacy.load(sys.argv[1])
shim = nlp.get_pipe("tok2vec").model.get_ref("embed").get_ref("transformer").shims[0]
# the parent's torch thread pool is up, as after training: forked workers
# that use it wait forever
torch.set_num_threads(2)
shim.compute([["warm", "the", "threads"]])
assert not shim.cache  # cold: the children compute the features themselves
docs = nlp.pipe(json.loads(sys.argv[2]), n_process=2, batch_size=3)
print(json.dumps([[[e.start_char, e.end_char, e.label_] for e in doc.ents] for doc in docs]))
"""


def test_pipe_with_two_processes_equals_one(spancat, tmp_path):
    nlp = spancat.nlp
    texts = (TEXTS + NEW_TEXTS) * 2
    nlp.to_disk(tmp_path / "nlp")
    # the forked children share nothing with the tokenizers' thread pool
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    result = subprocess.run(
        [sys.executable, "-c", TWO_PROCESSES, str(tmp_path / "nlp"), json.dumps(texts)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    expected = [[[e.start_char, e.end_char, e.label_] for e in doc.ents] for doc in nlp.pipe(texts, n_process=1)]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == expected
    assert any(expected), "the pipeline finds entities, so the comparison says something"


def test_empty_docs_pass(spancat, two_heads):
    for nlp in (spancat.nlp, two_heads.nlp):
        assert nlp("").ents == ()
        docs = list(nlp.pipe(["", "Talk to Kate .", ""]))
        assert [len(doc) for doc in docs] == [0, 4, 0] and docs[0].ents == docs[2].ents == ()


def test_cache_hits_and_a_cold_cache_give_the_same_vectors(spancat):
    nlp = spancat.nlp
    tok2vec = nlp.get_pipe("tok2vec")
    shim = the_shim(nlp)
    # sentences no other test reads, so that the first pass misses
    docs = [nlp.make_doc(text) for text in ("Only here .", "Kate and Paris sing .", "A cold cache , in London .")]
    before = (shim.hits, shim.misses)
    first = tok2vec.predict(docs)
    second = tok2vec.predict(docs)
    # the first pass computes, the second reads the cache
    assert (shim.hits - before[0], shim.misses - before[1]) == (len(docs), len(docs))
    assert_vectors_equal(second, first)
    fresh = load_model_from_config(nlp.config, auto_fill=False).from_bytes(nlp.to_bytes())
    assert len(the_shim(fresh).cache) == 0
    # the same batch on a cold cache: computed again, to the same bits
    assert_vectors_equal(fresh.get_pipe("tok2vec").predict(docs), first)
    assert (the_shim(fresh).hits, the_shim(fresh).misses) == (0, len(docs))
