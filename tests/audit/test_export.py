import json

import pytest

from spacy_imbalance.audit.export import FILES, SPANS_KEY, audited_docs, jsonl_records, write_outputs
from spacy_imbalance.audit.run import DEFAULT_CONFIG, AuditSettings, run_audit
from spacy_imbalance.corpus.docs_io import load_docs
from spacy_imbalance.corpus.masking.masking import mask_entities


@pytest.fixture
def audited(tmp_path, toy_corpus, init_only_trainer):
    docs = mask_entities(load_docs(toy_corpus / "train.spacy"), 0.3, seed=0)
    settings = AuditSettings(folds=2, n_resamples=100, threshold=0.05)
    result = run_audit(docs, load_docs(toy_corpus / "dev.spacy"), tmp_path, config=DEFAULT_CONFIG, overrides={"training.max_steps": 1}, settings=settings, trainer=init_only_trainer)
    assert result.suspects
    return docs, result, tmp_path


def test_jsonl_records_follow_the_schema(audited):
    docs, result, _ = audited
    records = list(jsonl_records(docs, result))
    assert [r["meta"]["doc"] for r in records] == sorted({s.doc for s in result.suspects})
    for record in records:
        doc = docs[record["meta"]["doc"]]
        assert record["text"] == doc.text
        assert [t["text"] for t in record["tokens"]] == [t.text for t in doc]
        for token in record["tokens"]:
            assert record["text"][token["start"] : token["end"]] == token["text"]
        sources = {span["source"] for span in record["spans"]}
        assert "suspect" in sources
        for span in record["spans"]:
            # token_end is inclusive, as Prodigy has it
            assert record["text"][span["start"] : span["end"]] == doc[span["token_start"] : span["token_end"] + 1].text
            assert ("score" in span) == (span["source"] == "suspect")
            if span["source"] == "suspect":
                assert 0.05 <= span["score"] <= 1
        assert sum(span["source"] == "annotation" for span in record["spans"]) == len(doc.ents)
    json.dumps(records)


def test_audited_corpus_holds_the_suspects_and_keeps_the_input(audited):
    docs, result, out = audited
    before = [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs]
    paths = write_outputs(docs, result, out)
    assert set(FILES) - set(paths) <= {"miss_rate_plot", "calibration_plot"}
    reloaded = load_docs(paths["corpus"])
    assert [[(e.start, e.end, e.label_) for e in doc.ents] for doc in reloaded] == before
    assert [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs] == before
    got = [(i, s.start, s.end, s.label_) for i, doc in enumerate(reloaded) for s in doc.spans[SPANS_KEY]]
    assert got == [(s.doc, s.start, s.end, s.label) for s in result.suspects]
    scores = [x for doc in reloaded for x in doc.spans[SPANS_KEY].attrs["scores"]]
    assert scores == pytest.approx([s.probability for s in result.suspects])
    assert "masked" in reloaded[0].spans
    summary = json.loads(paths["summary_json"].read_text())
    assert summary["labels"][-1]["label"] == "total"
    assert summary["labels"][-1]["suspects"] == len(result.suspects)
    html = paths["html"].read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("document ") >= 1
    lines = paths["spans"].read_text().splitlines()
    assert lines[0].split("\t")[:4] == ["doc", "start", "end", "label"]
    probs = [float(line.split("\t")[4]) for line in lines[1:]]
    assert probs == sorted(probs, reverse=True)
    assert len(lines) - 1 == sum(len(d) for d in result.info["decoded"].values())


def test_an_existing_span_group_is_not_overwritten(audited):
    docs, result, _ = audited
    with pytest.raises(ValueError, match="--spans-key"):
        audited_docs(docs, result, spans_key="masked")


def test_the_plots_draw_an_interval_that_misses_its_point(audited):
    # a percentile bootstrap interval need not hold the point estimate (the
    # decoding recall divides each replicate differently): still a plot, not an error
    pytest.importorskip("matplotlib")
    docs, result, out = audited
    rate = result.miss_rate
    rate.rate_interval = [[r + 0.01, r + 0.02] for r in rate.rate]
    paths = write_outputs(docs, result, out / "shifted")
    assert paths["miss_rate_plot"].stat().st_size > 0


def test_summary_names_the_held_out_recall_and_the_estimate_with_it():
    from spacy_imbalance.audit.export import summary_markdown

    row = {"label": "total", "annotated": 100, "suspects": 10, "expected_missing": 50.0, "missing_low": 40.0,
           "missing_high": 60.0, "rate": 1 / 3, "rate_low": 0.29, "rate_high": 0.38}
    data = {"n_docs": 50, "folds": 2, "seed": 0, "method": "dev", "threshold": 0.5, "level": 0.95, "n_resamples": 100,
            "labels": [row], "decoding_recall": [0.6, 0.5], "held_out_recall": [0.72, 0.7], "held_out_rate": 0.3012, "notes": []}
    text = summary_markdown(data)
    assert "found 60, 50 % of the dev entities" in text
    assert "held-out training documents they found 72, 70 %; with that share instead the miss rate would be 30.1 %." in text
    # a fold that found none: the recalls are shown, no second estimate
    text = summary_markdown({**data, "held_out_recall": [0.0, 0.7], "held_out_rate": None})
    assert "they found 0, 70 %." in text and "instead" not in text
    # an audit without the check (no dev, or written before it) says nothing of it
    assert "held-out" not in summary_markdown({k: v for k, v in data.items() if k not in ("held_out_recall", "held_out_rate")})


@pytest.mark.parametrize("key", ["", " "])
def test_a_blank_spans_key_is_refused(audited, key):
    # issue 31 L4: the suspects went to doc.spans[''], where nobody finds them
    docs, result, out = audited
    with pytest.raises(ValueError, match="--spans-key must name a span group"):
        write_outputs(docs, result, out / "blank", spans_key=key)
    assert not (out / "blank" / "audited.spacy").exists()
