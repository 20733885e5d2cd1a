"""The missampling measure (Eq. 12) and its CLI command."""
import pytest
import spacy
import srsly
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example
from spacy.util import fix_random_seed
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.masking.masking import mask_entities
from spacy_imbalance.evaluation.missampling import measure_missampling
from spacy_imbalance.spans.negatives import AllNegatives, TopNegatives
from spacy_imbalance.spans.negatives.menu import SAMPLERS

WORDS = [["Kate", "met", "Bob", "in", "Rome"], ["Ann", "left"], ["nothing", "here"]]
ENTS = [[(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")], [(0, 1, "PER")], []]


def gold_docs(vocab):
    docs = []
    for words, ents in zip(WORDS, ENTS):
        doc = Doc(vocab, words=words)
        doc.set_ents([Span(doc, s, e, label=l) for s, e, l in ents], default="outside")
        docs.append(doc)
    return docs


def expected_rate(docs, p, seed, max_width):
    """All negatives are drawn: masked entities among the negative candidates, by hand."""
    masked = mask_entities(docs, p, seed=seed)
    n_masked = sum(len(doc.spans["masked"]) for doc in masked)
    n_candidates = sum(min(max_width, len(d)) * len(d) - min(max_width, len(d)) * (min(max_width, len(d)) - 1) // 2 for d in docs)
    n_gold = sum(len(doc.ents) for doc in masked)
    return n_masked / (n_candidates - n_gold)


@pytest.fixture(scope="module")
def data_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("missampling") / "train.spacy"
    DocBin(docs=gold_docs(spacy.blank("en").vocab)).to_disk(path)
    return path


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_all_negatives_rate_is_exact(p):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("sampled_spancat", config={"max_span_width": 2})
    pipe.add_label("PER")
    pipe.add_label("LOC")
    docs = gold_docs(nlp.vocab)
    results = measure_missampling(pipe, AllNegatives(), docs, [p], [0, 1, 2], batch_size=2)
    assert results[0].rates == pytest.approx([expected_rate(docs, p, seed, 2) for seed in (0, 1, 2)])
    assert pipe.negatives.name == "uniform_v2"  # the component's own sampler (the default) is restored


def test_a_component_without_masked_key_is_measured_all_the_same():
    """masked_key = null turns the training-log rate off; the measure still
    reads the masks it writes (it used to count nothing: a rate of 0)."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("sampled_spancat", config={"max_span_width": 2, "masked_key": None})
    pipe.add_label("PER")
    pipe.add_label("LOC")
    docs = gold_docs(nlp.vocab)
    results = measure_missampling(pipe, AllNegatives(), docs, [0.5], [0, 1], batch_size=2)
    assert results[0].rates == pytest.approx([expected_rate(docs, 0.5, seed, 2) for seed in (0, 1)])
    assert sum(results[0].masked_drawn) > 0
    assert pipe.cfg["masked_key"] is None  # restored


def test_cli_writes_rates_and_plot(data_path, tmp_path):
    out, plot = tmp_path / "rates.json", tmp_path / "rates.png"
    result = CliRunner().invoke(
        app,
        ["missampling", str(data_path), "--sampler", "all", "--sampler", "uniform", "--p", "0.5", "--p", "1.0",
         "--seeds", "2", "--max-span-width", "2", "--output", str(out), "--plot", str(plot)],
    )
    assert result.exit_code == 0, result.output
    report = srsly.read_json(out)
    docs = gold_docs(spacy.blank("en").vocab)
    assert report["results"]["all"][0]["rates"] == pytest.approx([expected_rate(docs, 0.5, s, 2) for s in (0, 1)])
    # p = 1: every entity is masked; the uniform sample holds some of them
    assert 0 < report["results"]["uniform"][1]["mean"] <= 1
    assert plot.stat().st_size > 0
    # without --rate each sampler's own, as init-config writes it
    assert report["settings"]["rate"] == {"all": None, "uniform": SAMPLERS["uniform"]["rate"]}


def test_cli_rate_replaces_every_sampler_s(data_path, tmp_path):
    out = tmp_path / "rates.json"
    result = CliRunner().invoke(
        app, ["missampling", str(data_path), "--sampler", "uniform", "--sampler", "uniform_v1", "--p", "0.5", "--seeds", "1",
              "--max-span-width", "2", "--rate", "0.3", "--output", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert srsly.read_json(out)["settings"]["rate"] == pytest.approx({"uniform": 0.3, "uniform_v1": 0.3})


def test_masked_entities_are_counted_per_seed():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("sampled_spancat", config={"max_span_width": 2})
    pipe.add_label("PER")
    pipe.add_label("LOC")
    docs = gold_docs(nlp.vocab)
    seeds = [0, 1, 2, 3, 4]
    results = measure_missampling(pipe, AllNegatives(), docs, [0.0, 0.1, 1.0], seeds, batch_size=2)
    expected = [[sum(len(d.spans["masked"]) for d in mask_entities(docs, p, seed=s)) for s in seeds] for p in (0.0, 0.1, 1.0)]
    assert [r.masked for r in results] == expected
    assert results[0].masked == [0] * 5 and results[0].seeds_without_masks == 5
    assert results[2].masked == [4] * 5 and results[2].seeds_without_masks == 0
    assert results[1].to_dict()["masked"] == expected[1]


def said(result):
    return " ".join(result.output.split())


def test_cli_warns_when_nothing_was_masked(data_path, tmp_path):
    """p = 0 masks nothing, so the rate is 0 whatever the sampler draws: it
    used to be reported like any other."""
    out = tmp_path / "rates.json"
    result = CliRunner().invoke(
        app,
        ["missampling", str(data_path), "--sampler", "all", "--p", "0", "--p", "0.1", "--p", "0.5",
         "--seeds", "5", "--max-span-width", "2", "--output", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "p=0.00: no entity was masked (p = 0 masks nothing), so the missampling rate is 0 by construction" in said(result)
    docs = gold_docs(spacy.blank("en").vocab)
    unmasked = {p: sum(1 for s in range(5) if not any(d.spans["masked"] for d in mask_entities(docs, p, seed=s))) for p in (0.1, 0.5)}
    assert 0 < unmasked[0.1] < 5 and unmasked[0.5] == 0  # the data and seeds show both cases
    assert f"p=0.10: {unmasked[0.1]} of 5 seeds masked no entity; their rate of 0 is by construction" in said(result)
    assert "p=0.50:" not in said(result)  # no warning where every seed masked something
    assert srsly.read_json(out)["results"]["all"][0]["masked"] == [0] * 5


def test_cli_warns_about_a_corpus_without_entities(tmp_path):
    path = tmp_path / "no_ents.spacy"
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=["nothing", "here"]), Doc(vocab, words=["Kate", "met", "Bob"])]).to_disk(path)
    result = CliRunner().invoke(app, ["missampling", str(path), "--sampler", "uniform", "--p", "0.5", "--seeds", "2"])
    assert result.exit_code == 0, result.output
    assert f"{path} has no gold entities: nothing could be masked, so every missampling rate is 0 by construction" in said(result)


def test_cli_needs_a_model_for_model_based_samplers(data_path):
    result = CliRunner().invoke(app, ["missampling", str(data_path), "--sampler", "weighted"])
    assert result.exit_code == 1
    assert "the weighted sampler draws from a model's outputs: pass a trained pipeline with --model" in " ".join(result.output.split())
    result = CliRunner().invoke(app, ["missampling", str(data_path), "--sampler", "best"])
    assert result.exit_code == 1 and "unknown --sampler best" in result.output


def test_cli_with_a_trained_model_runs_weighted_and_top(data_path, tmp_path):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("sampled_spancat", config={"max_span_width": 2})
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in gold_docs(nlp.vocab)]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(10):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "model")
    out = tmp_path / "rates.json"
    result = CliRunner().invoke(
        app,
        ["missampling", str(data_path), "--model", str(tmp_path / "model"), "--sampler", "weighted", "--sampler", "top",
         "--p", "0.5", "--seeds", "2", "--ratio", "0.5", "--output", str(out)],
    )
    assert result.exit_code == 0, result.output
    report = srsly.read_json(out)
    assert set(report["results"]) == {"weighted", "top"}
    assert all(0 <= row["mean"] <= 1 and sum(row["drawn"]) > 0 for rows in report["results"].values() for row in rows)


LISTENER_CONFIG = """
[nlp]
lang = "en"
pipeline = ["tok2vec", "sampled_spancat"]

[components]

[components.tok2vec]
factory = "tok2vec"

[components.tok2vec.model]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 32
depth = 1
embed_size = 500
window_size = 1
maxout_pieces = 2
subword_features = false

[components.sampled_spancat]
factory = "sampled_spancat"
max_span_width = 2

[components.sampled_spancat.model]
@architectures = "spacy-imbalance.SpanScorer.v1"

[components.sampled_spancat.model.tok2vec]
@architectures = "spacy.Tok2VecListener.v1"
width = 32
upstream = "tok2vec"
"""


def test_a_listener_model_needs_its_upstream_tok2vec(data_path, tmp_path):
    """With a shared tok2vec the docs must go through it first (a listener
    reads doc.tensor, zeros when unset): sample_negatives says so, and the
    command runs the upstream components."""
    from thinc.api import Config

    fix_random_seed(0)
    nlp = spacy.util.load_model_from_config(Config().from_str(LISTENER_CONFIG), auto_fill=True)
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in gold_docs(nlp.vocab)]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    pipe = nlp.get_pipe("sampled_spancat")
    pipe.negatives = TopNegatives(0.5)
    with pytest.raises(ValueError, match="no doc.tensor; run them through the pipeline"):
        pipe.sample_negatives(examples)
    nlp.to_disk(tmp_path / "model")
    result = CliRunner().invoke(
        app,
        ["missampling", str(data_path), "--model", str(tmp_path / "model"), "--sampler", "weighted", "--sampler", "top",
         "--p", "0.5", "--seeds", "2", "--ratio", "0.5"],
    )
    assert result.exit_code == 0, result.output


def test_over_epochs_a_fresh_draw_reaches_more_masked_entities_and_a_kept_draw_no_more():
    """Issue 42: the per-draw rate is the same for both uniform samplers; over
    13 epochs a fresh draw reaches many more masked entities, a draw kept per
    sentence exactly those of epoch 1."""
    import spacy
    from spacy.tokens import Doc, Span

    from spacy_imbalance.evaluation.missampling import measure_missampling
    from spacy_imbalance.spans.negatives import UniformNegatives, UniformNegativesV2

    nlp = spacy.blank("en")
    docs = []
    for i in range(60):
        doc = Doc(nlp.vocab, words=[f"w{i}", "lives", "in", f"city{i}", "and", "likes", f"band{i}", "."])
        doc.ents = [Span(doc, 0, 1, "PER"), Span(doc, 3, 4, "LOC"), Span(doc, 6, 7, "ORG")]
        docs.append(doc)
    pipe = nlp.add_pipe("sampled_spancat", config={"max_span_width": 3})
    for label in ("PER", "LOC", "ORG"):
        pipe.add_label(label)
    fresh, = measure_missampling(pipe, UniformNegatives(0.7), docs, [0.5], [0], epochs=13)
    kept, = measure_missampling(pipe, UniformNegativesV2(0.7, correction=0.0, fixed=True), docs, [0.5], [0], epochs=13)
    assert kept.reached_over_epochs == kept.reached
    assert 0 < kept.reached[0] < 0.5
    assert fresh.reached_over_epochs[0] > 2 * fresh.reached[0]
    # the per-draw rate is the paper's, and the same kind of number for both
    assert 0 < fresh.rates[0] < 0.2 and 0 < kept.rates[0] < 0.2
