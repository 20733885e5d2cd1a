"""spacy-imbalance.atomic_save.v1 (issue 43): a SIGTERM while `spacy train`
saved model-last left it half-written and unloadable; now a save is written
beside the folder and renamed into place, with SIGTERM and SIGINT delivered
once it is there."""
import multiprocessing
import os
import signal
import time

import pytest
import spacy
from spacy.language import Language
from spacy.pipeline import Sentencizer
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.training.loop import create_before_to_disk_callback
from spacy.util import registry
from thinc.api import Config

from spacy_imbalance.evaluation.thresholds.on_save import create_tuned_thresholds_v1
from spacy_imbalance.training.saving import create_atomic_save_v1, save_atomically, to_disk_atomically

from ..spans.scripted import NAME, gold_doc, scripted_nlp
from ..evaluation.thresholds.test_spans import GOLD, LABELS, TABLE

ORIGINAL_TO_DISK = Sentencizer.to_disk


def sentencizer_nlp(punct_chars):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer", config={"punct_chars": punct_chars})
    return nlp


def punct_chars(path):
    return sorted(spacy.load(path).get_pipe("sentencizer").punct_chars)


def siblings(path):
    return sorted(p.name for p in path.parent.iterdir() if p != path)


def cut_short(path):
    """What a write stopped midway leaves: the sentencizer's file, empty."""
    path.with_suffix(".json").write_bytes(b"")


@pytest.fixture
def target(tmp_path):
    """A complete save of a pipeline whose sentencizer splits on '.'."""
    sentencizer_nlp(["."]).to_disk(tmp_path / "model-last")
    return tmp_path / "model-last"


def test_the_saved_pipeline_loads_and_predicts_as_the_live_one(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")
    examples = [Example.from_dict(nlp.make_doc("I like green eggs"), {"tags": ["PRP", "VBP", "JJ", "NNS"]})]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    texts = ["I like green eggs", "eggs like I", "green"]
    returned = create_atomic_save_v1()(nlp)
    assert returned is nlp
    returned.to_disk(tmp_path / "model-last")
    # the shadowing to_disk is gone after its one save
    assert "to_disk" not in nlp.__dict__
    loaded = spacy.load(tmp_path / "model-last")
    tagger, loaded_tagger = nlp.get_pipe("tagger"), loaded.get_pipe("tagger")
    live, saved = tagger.model.predict([nlp(t) for t in texts]), loaded_tagger.model.predict([loaded(t) for t in texts])
    assert all((a == b).all() for a, b in zip(live, saved))
    assert [[t.tag_ for t in loaded(text)] for text in texts] == [[t.tag_ for t in nlp(text)] for text in texts]
    assert siblings(tmp_path / "model-last") == []


def test_a_save_replaces_the_folder_whole(target):
    # spaCy's to_disk writes into the folder and leaves what it does not overwrite
    (target / "ner").mkdir()
    (target / "ner" / "model").write_bytes(b"stale")
    to_disk_atomically(sentencizer_nlp(["!"]), target)
    assert sorted(p.name for p in target.iterdir()) == ["config.cfg", "meta.json", "sentencizer.json", "tokenizer", "vocab"]
    assert punct_chars(target) == ["!"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_the_write_is_delivered_once_the_folder_is_complete(target, monkeypatch, signum):
    seen = []

    def handler(received, frame):
        # what a handler that stops the process would leave on disk
        seen.append((received, punct_chars(target), siblings(target)))

    def write_then_signal(self, path, *, exclude=()):
        cut_short(path)
        signal.raise_signal(signum)
        ORIGINAL_TO_DISK(self, path, exclude=exclude)

    monkeypatch.setattr(Sentencizer, "to_disk", write_then_signal)
    previous = signal.signal(signum, handler)
    try:
        save_atomically(sentencizer_nlp(["!"])).to_disk(target)
        assert signal.getsignal(signum) is handler
    finally:
        signal.signal(signum, previous)
    # once, after the swap: the new pipeline complete, nothing beside it
    assert seen == [(signum, ["!"], [])]


def test_sigint_raises_keyboard_interrupt_after_the_save(target, monkeypatch):
    def write_then_interrupt(self, path, *, exclude=()):
        cut_short(path)
        signal.raise_signal(signal.SIGINT)
        ORIGINAL_TO_DISK(self, path, exclude=exclude)

    monkeypatch.setattr(Sentencizer, "to_disk", write_then_interrupt)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            save_atomically(sentencizer_nlp(["!"])).to_disk(target)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert punct_chars(target) == ["!"] and siblings(target) == []


def _slow_save(target, writing, done):
    """In a forked child: the save spacy train makes with the callback, its
    sentencizer's write held up midway."""
    def slow(self, path, *, exclude=()):
        cut_short(path)
        writing.set()
        time.sleep(1.5)
        ORIGINAL_TO_DISK(self, path, exclude=exclude)

    Sentencizer.to_disk = slow
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    before_to_disk = create_before_to_disk_callback(registry.get("callbacks", "spacy-imbalance.atomic_save.v1")())
    before_to_disk(sentencizer_nlp(["!"])).to_disk(target)
    done.touch()


def test_sigterm_mid_write_ends_the_process_after_the_save_with_the_folder_complete(target):
    context = multiprocessing.get_context("fork")
    writing = context.Event()
    done = target.parent / "continued after the save"
    child = context.Process(target=_slow_save, args=(target, writing, done))
    child.start()
    try:
        assert writing.wait(30), "the child never started writing"
        os.kill(child.pid, signal.SIGTERM)
        child.join(30)
    finally:
        if child.is_alive():
            child.kill()
    # killed by the SIGTERM, delivered after the save and before anything after it
    assert child.exitcode == -signal.SIGTERM
    assert not done.exists()
    assert punct_chars(target) == ["!"] and siblings(target) == []


def test_a_failed_write_leaves_the_previous_folder_and_the_signal_handlers(target, monkeypatch):
    def full_disk(self, path, *, exclude=()):
        cut_short(path)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Sentencizer, "to_disk", full_disk)
    handlers = [signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)]
    with pytest.raises(OSError, match="No space left on device"):
        save_atomically(sentencizer_nlp(["!"])).to_disk(target)
    assert punct_chars(target) == ["."] and siblings(target) == []
    assert [signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)] == handlers


def test_the_leftovers_of_a_killed_save_are_removed_by_the_next_one(target):
    parent = target.parent
    for name in (".model-last.saving-1-dead", ".model-last.replaced-1-dead"):
        (parent / name).mkdir()
        (parent / name / "tokenizer").write_bytes(b"")
    # not ours: another folder's, or a name that only starts alike
    keep = [".model-best.saving-1-dead", ".model-last.notes", "model-last.saving-1"]
    for name in keep:
        (parent / name).write_text("keep")
    to_disk_atomically(sentencizer_nlp(["!"]), target)
    assert siblings(target) == sorted(keep)
    assert punct_chars(target) == ["!"]


def test_a_folder_killed_between_the_renames_is_put_back(target, monkeypatch):
    # killed after model-last was moved aside and before the new one took its place
    target.rename(target.parent / ".model-last.replaced-1-dead")
    (target.parent / ".model-last.saving-1-dead").mkdir()

    def full_disk(self, path, *, exclude=()):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Sentencizer, "to_disk", full_disk)
    with pytest.raises(OSError):
        to_disk_atomically(sentencizer_nlp(["!"]), target)
    # the next save failed too, and model-last is the complete one it had
    assert punct_chars(target) == ["."] and siblings(target) == []


def test_the_callback_resolves_from_a_training_config():
    config = Config().from_str("""
[training]
[training.before_to_disk]
@callbacks = "spacy-imbalance.atomic_save.v1"
""")
    callback = registry.resolve(config)["training"]["before_to_disk"]
    nlp = spacy.blank("en")
    # spaCy's own wrapper, which refuses anything but a Language (E914)
    returned = create_before_to_disk_callback(callback)(nlp)
    assert returned is nlp and isinstance(returned, Language)


def test_tuned_thresholds_saves_atomically_too(tmp_path):
    nlp = scripted_nlp(TABLE, LABELS)
    dev = tmp_path / "dev.spacy"
    DocBin(docs=[gold_doc(nlp, text, ents) for text, ents in GOLD.items()]).to_disk(dev)
    target = tmp_path / "model-last"
    nlp.to_disk(target)
    (target / "stale").mkdir()
    create_tuned_thresholds_v1(dev, shared=False, min_gain=0.0)(nlp).to_disk(target)
    # replaced whole (spaCy's to_disk keeps "stale"), with the tuned thresholds
    assert not (target / "stale").exists() and siblings(target) == ["dev.spacy"]
    assert spacy.load(target).get_pipe(NAME).thresholds == {"RARE": 0.25}
