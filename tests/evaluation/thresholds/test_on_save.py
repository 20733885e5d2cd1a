"""spacy-imbalance.tuned_thresholds.v1: at each save of `spacy train` the
saved sampled_spancat carries the thresholds tuned on dev, while the model
being trained keeps its own decision rule."""
import json

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.evaluation.thresholds.on_save import create_tuned_thresholds_v1

from ...spans.scripted import NAME, gold_doc, scripted_nlp
from .test_spans import GOLD, LABELS, TABLE


@pytest.fixture
def rare(tmp_path):
    nlp = scripted_nlp(TABLE, LABELS)
    path = tmp_path / "dev.spacy"
    DocBin(docs=[gold_doc(nlp, text, ents) for text, ents in GOLD.items()]).to_disk(path)
    return nlp, path


def test_the_saved_component_decides_with_the_tuned_thresholds_and_the_trained_one_does_not(rare, tmp_path):
    """test_tuning's case: argmax never predicts RARE; the per-label search
    finds RARE 0.25 (dev macro-F1 2/3 -> 1)."""
    nlp, path = rare
    before_to_disk = create_tuned_thresholds_v1(path, shared=False, min_gain=0.0)
    assert before_to_disk(nlp) is nlp
    pipe = nlp.get_pipe(NAME)
    assert pipe.thresholds is None
    assert [e.text for e in nlp("Kate visited Xanadu .").ents] == ["Kate"]
    nlp.to_disk(tmp_path / "model")
    assert json.loads((tmp_path / "model" / NAME / "cfg").read_text())["thresholds"] == {"RARE": 0.25}
    # after saving it still decides as before
    assert pipe.thresholds is None and [e.text for e in nlp("Kate visited Xanadu .").ents] == ["Kate"]
    copy = scripted_nlp(TABLE, LABELS)
    copy.get_pipe(NAME).from_bytes(pipe.to_bytes())
    assert copy.get_pipe(NAME).thresholds == {"RARE": 0.25}
    assert [(e.text, e.label_) for e in copy("Kate visited Xanadu .").ents] == [("Kate", "PER"), ("Xanadu", "RARE")]


def test_thresholds_that_do_not_beat_the_current_decision_are_not_saved(rare, tmp_path):
    nlp, path = rare
    # with the shared stage first and a 0.5-point margin nothing in a 0.45 grid beats argmax here
    create_tuned_thresholds_v1(path, step=0.45)(nlp)
    nlp.to_disk(tmp_path / "model")
    assert json.loads((tmp_path / "model" / NAME / "cfg").read_text())["thresholds"] is None


def test_the_callback_resolves_from_a_training_config(rare):
    _, path = rare
    config = Config().from_str(f"""
[training]
[training.before_to_disk]
@callbacks = "spacy-imbalance.tuned_thresholds.v1"
path = "{path}"
step = 0.1
""")
    resolved = registry.resolve(config)
    assert callable(resolved["training"]["before_to_disk"])


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"step": 0.0}, r"\[training.before_to_disk\] step must be in"),
        ({"min_gain": 1.0}, r"min_gain is dev macro-F1 in \[0, 1\)"),
        ({"min_gain": float("nan")}, r"min_gain is dev macro-F1 in \[0, 1\)"),
        ({"batch_size": 0}, r"batch_size must be an integer >= 1"),
        ({"batch_size": True}, r"batch_size must be an integer >= 1"),
    ],
)
def test_settings_are_checked_when_the_config_is_read(rare, settings, message):
    _, path = rare
    with pytest.raises(ValueError, match=message):
        create_tuned_thresholds_v1(path, **settings)


def test_a_missing_dev_file_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"path: no dev file at '.*nowhere.spacy' \(set it, e.g. path = \$\{paths.dev\}\)"):
        create_tuned_thresholds_v1(tmp_path / "nowhere.spacy")


def test_a_pipeline_without_sampled_spancat_is_refused(rare):
    _, path = rare
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    with pytest.raises(ValueError, match=r"tunes sampled_spancat thresholds, and the pipeline has none \(its components: sentencizer\)"):
        create_tuned_thresholds_v1(path)(nlp)
