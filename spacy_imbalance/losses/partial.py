r"""The partial-label (marginal likelihood) loss, for documents that annotate
only some entity types (their label scope, ``spacy_imbalance.corpus.scopes``).

A row (a span candidate or a token) has a set A of allowed classes: its gold
class alone when it is annotated, and in a scoped document "no entity (O)
or any type outside the scope" when it is not. The loss is the negative log
of the probability of that set,

.. math::

    \ell = -\log \sum_{k \in A} \mathrm{softmax}(z)_k
         = \operatorname{logsumexp}_k z_k - \operatorname{logsumexp}_{k \in A} z_k,

with gradient :math:`\partial \ell / \partial z_k = p_k - [k \in A]\, p_k / p_A`
(Greenberg et al., EMNLP 2018, "Marginal likelihood training of BiLSTM-CRF
for biomedical named entity recognition from disjoint label sets", per row
rather than per sequence). With one allowed class it is softmax
cross-entropy, and this module computes it as ``CrossEntropy`` does, to the
last bit (tests/losses/test_partial.py).

Columns follow the components: column 0 is O, column k is the k-th label
(``sampled_spancat``'s classes) or tag (``token_ner``'s). A row that allows
no class is missing: no loss and a gradient row of exact zeros, as a
negative gold id is for every loss of this package.

The components train through ``losses.scoped.scoped_loss``: the configured
loss on the rows that allow one class, its partial-label form on the rows
that allow several. ``scope_rows`` turns the documents' scopes into those
rows' columns, per batch.
"""
from typing import AbstractSet, Optional, Sequence, Tuple, Union, cast

import numpy
from thinc.api import get_array_module, to_numpy
from thinc.types import ArrayXd, Floats1d, Floats2d, Ints1d

from ..decisions.softmax import softmax_parts
from .base import DeviceLoss, check_normalizer, on_host

# a bool mask: thinc's array types have no bool kind, so a host one is a numpy array
BoolArray = Union[ArrayXd, numpy.ndarray]

__all__ = [
    "scope_columns",
    "scope_table",
    "scope_rows",
    "allowed_mask",
    "partial_label_terms",
    "partial_label_loss",
    "partial_label_loss_on_device",
]


def scope_columns(labels: Sequence[str], scope: Optional[AbstractSet[str]]) -> numpy.ndarray:
    """The columns a row left unannotated in a document of ``scope`` may
    also be: a bool per column (O first), True where the column's type is
    outside ``scope``; all False when there is no scope (every type annotated).

    labels (Sequence[str]): the entity type of columns 1..K, in order (a
        type may repeat: token_ner's B-X and I-X columns are both X).
    scope (Optional[AbstractSet[str]]): the document's annotated types.
    """
    columns = numpy.zeros((len(labels) + 1,), dtype=bool)
    if scope is None:
        return columns
    if not scope:
        raise ValueError("a label scope needs at least one label, got an empty one")
    unknown = sorted(set(scope) - set(labels))
    if unknown:
        raise ValueError(
            f"label scope {sorted(scope)} names labels the model does not have: {', '.join(repr(u) for u in unknown)} "
            f"(its labels: {', '.join(sorted(set(labels)))}); add them to the component's labels or fix the scope"
        )
    columns[1:] = [label not in scope for label in labels]
    return columns


def scope_table(labels: Sequence[str], scopes: Sequence[Optional[AbstractSet[str]]]) -> numpy.ndarray:
    """``scope_columns`` for each of several documents: bool (n_docs, K + 1).
    Indexed by each row's document, it is ``allowed_mask``'s ``out_of_scope``."""
    table = numpy.zeros((len(scopes), len(labels) + 1), dtype=bool)
    for i, scope in enumerate(scopes):
        table[i] = scope_columns(labels, scope)
    return table


def scope_rows(
    labels: Sequence[str], scopes: Sequence[Optional[AbstractSet[str]]], counts: Sequence[int], owner: str
) -> Optional[numpy.ndarray]:
    """Per row (``counts`` rows per document, in order: tokens or span
    candidates), the columns outside its document's scope: bool
    (sum(counts), K + 1), on the host; None when no document leaves a type
    out, so that the caller trains exactly as without scopes.

    labels (Sequence[str]): the type of columns 1..K (``scope_columns``).
    owner (str): the component, for the error that names the example of the
        batch whose scope names a label outside ``labels``.
    """
    table = numpy.zeros((len(scopes), len(labels) + 1), dtype=bool)
    for i, scope in enumerate(scopes):
        try:
            table[i] = scope_columns(labels, scope)
        except ValueError as err:
            raise ValueError(f"{owner}: example {i} of the batch: {err}") from None
    if not table.any():
        return None
    return numpy.repeat(table, numpy.asarray(counts, dtype="int64"), axis=0)


def allowed_mask(gold: Ints1d, out_of_scope: numpy.ndarray, *, known_negative: Optional[BoolArray] = None) -> ArrayXd:
    """The classes each row may be, bool (n, K + 1), on the device of ``gold``.

    gold (Ints1d): per row, k >= 1 for a gold entity of column k (only k is
        allowed); 0 for a row not annotated as an entity (O, plus its
        out-of-scope columns); negative for missing annotation (nothing
        allowed: the row is ignored). The components' gold ids mean just
        that (``span_targets``, ``gold_tag_ids``).
    out_of_scope (numpy.ndarray): on the host, bool (K + 1,) for one scope
        or (n, K + 1) per row (``scope_table`` indexed by each row's doc).
    known_negative (Optional[BoolArray]): bool (n,), rows known not to be
        entities (a reviewer's rejections): O only, whatever the scope.
    """
    xp = get_array_module(gold)
    host = numpy.asarray(gold) if on_host(gold) else to_numpy(gold)
    out_of_scope = numpy.asarray(out_of_scope)
    n_columns = out_of_scope.shape[-1]
    _check_allowed_inputs(host, out_of_scope, known_negative)
    if host.size and int(host.max()) >= n_columns:
        row = int(host.argmax())
        raise ValueError(f"row {row}: gold class {int(host[row])} is out of range for {n_columns} columns (O and {n_columns - 1} labels)")
    rows = numpy.broadcast_to(out_of_scope, (host.shape[0], n_columns))
    gold_rows = numpy.flatnonzero(host > 0)
    outside = gold_rows[rows[gold_rows, host[gold_rows]]]
    if outside.size:
        # the reader refuses such a corpus (ScopedCorpus.v1); here a scope set by hand
        raise ValueError(
            f"row {int(outside[0])}: gold class {int(host[outside[0]])} is outside the row's label scope "
            f"({outside.size} such row(s)): a document cannot annotate a type it says it does not annotate"
        )
    device_gold = gold if not on_host(gold) else xp.asarray(host)
    is_gold = xp.arange(n_columns)[None, :] == device_gold.reshape((-1, 1))
    open_rows = device_gold == 0
    if known_negative is not None:
        open_rows = open_rows & ~xp.asarray(known_negative, dtype=bool)
    # (K + 1,) broadcasts over the rows as (1, K + 1)
    return is_gold | (open_rows[:, None] & xp.asarray(out_of_scope))


def _check_allowed_inputs(gold: numpy.ndarray, out_of_scope: numpy.ndarray, known_negative: Optional[BoolArray]) -> None:
    if gold.ndim != 1 or (gold.size and gold.dtype.kind not in "iu"):
        raise ValueError(f"gold must be a 1-d array of class ids, got shape {gold.shape} and dtype {gold.dtype}")
    if out_of_scope.dtype != bool or out_of_scope.ndim not in (1, 2) or out_of_scope.shape[-1] < 2:
        raise ValueError(
            f"out_of_scope must be bool, (K + 1,) or (n, K + 1) with K >= 1, got shape {out_of_scope.shape} and dtype {out_of_scope.dtype}"
        )
    if out_of_scope.ndim == 2 and out_of_scope.shape[0] != gold.shape[0]:
        raise ValueError(f"out_of_scope has {out_of_scope.shape[0]} rows but gold has {gold.shape[0]}")
    if out_of_scope[..., 0].any():
        raise ValueError("out_of_scope marks column 0 (O), which is never outside a scope")
    if known_negative is not None and tuple(known_negative.shape) != (gold.shape[0],):
        raise ValueError(f"known_negative must have shape ({gold.shape[0]},) to match gold, got {tuple(known_negative.shape)}")


def partial_label_terms(logits: Floats2d, allowed: ArrayXd) -> Tuple[Floats1d, Floats2d]:
    """Per-row loss -log p_A and its gradient d loss / d logits, unreduced;
    ``allowed`` (bool, the shape of ``logits``) on the same device. Rows that
    allow nothing are computed as if they allowed O: the caller drops them.

    Two forms of the loss, each accurate where it is used: with one allowed
    class, -(log p_c), cross-entropy's own arithmetic; with several and most
    of the mass on them, -log1p(-p_out) from the mass outside, which stays
    accurate when the loss is tiny (1 - p_A would round to 0 in float32).
    The gradient of an allowed column, p_k - p_k / p_A, is written
    (p_k / p_A) * expm1(-loss) for the same reason.
    """
    xp = get_array_module(logits)
    n_rows, n_columns = logits.shape
    columns = xp.arange(n_columns)
    allowed = xp.where(allowed.any(axis=1)[:, None], allowed, columns[None, :] == 0)
    parts = softmax_parts(logits)
    # log p_A = log p_best + log1p(sum over the other allowed classes of p_k / p_best),
    # the ratios from the logits themselves (exact to float precision, unlike
    # differences of log p, which carry the rounding of log p's size)
    best = xp.where(allowed, logits, -xp.inf).argmax(axis=1)
    log_p_best = parts.log_p[xp.arange(n_rows), best]
    # where() inside exp keeps the entries not allowed from overflowing
    ratios = xp.where(allowed, xp.exp(xp.where(allowed, logits - logits[xp.arange(n_rows), best][:, None], 0)), 0)
    rest = xp.where(columns[None, :] != best[:, None], ratios, 0).sum(axis=1)
    log_p_allowed = log_p_best + xp.log1p(rest)
    p_out = xp.where(allowed, 0, parts.p).sum(axis=1)
    from_outside = (allowed.sum(axis=1) > 1) & (p_out < 0.5)
    # minimum(): the branch not taken must not take log1p(-1)
    losses = xp.where(from_outside, -xp.log1p(-xp.minimum(p_out, 0.5)), -log_p_allowed).astype(logits.dtype, copy=False)
    share = ratios / (1 + rest)[:, None]  # p_k / p_A on the allowed columns, 0 elsewhere
    d_logits = xp.where(allowed, share * xp.expm1(-losses)[:, None], parts.p)
    return losses, d_logits.astype(logits.dtype, copy=False)


def partial_label_loss_on_device(
    logits: Floats2d, allowed: ArrayXd, *, weights: Optional[Floats1d] = None, normalizer: Optional[float] = None
) -> Tuple[DeviceLoss, Floats2d]:
    """``partial_label_loss`` with the loss left on the device, to be added
    to other terms (``DeviceLoss.plus``) and copied back once."""
    xp = get_array_module(logits)
    present_host = _checked_present(logits, allowed, normalizer)
    allowed = xp.asarray(allowed)
    if normalizer is None:
        # present_host is known (None only with a normalizer given): the mean over rows that allow something
        normalizer = float(max(int(cast(numpy.ndarray, present_host).sum()), 1))
    check_normalizer(normalizer)
    if present_host is not None and not present_host.any():
        return DeviceLoss(), xp.zeros_like(logits)
    losses, d_logits = partial_label_terms(logits, allowed)
    if weights is not None:
        row_weights = xp.asarray(_checked_weights(weights, logits.shape[0]), dtype=logits.dtype)
        losses = losses * row_weights
        d_logits = d_logits * row_weights[:, None]
    present: ArrayXd = allowed.any(axis=1)
    # where() rather than multiplying by a mask, as TokenwiseLoss: ignored rows are exactly zero
    total = xp.where(present, losses, 0).sum()
    grad = xp.where(present[:, None], d_logits / normalizer, 0)
    return DeviceLoss.term(total, normalizer), grad.astype(logits.dtype, copy=False)


def partial_label_loss(
    logits: Floats2d, allowed: ArrayXd, *, weights: Optional[Floats1d] = None, normalizer: Optional[float] = None
) -> Tuple[float, Floats2d]:
    """The partial-label loss of a batch and its gradient (spaCy's order).

    logits (Floats2d): unnormalised scores, n x (K + 1), column 0 = O.
    allowed (ArrayXd): bool, n x (K + 1): the classes each row may be
        (``allowed_mask``). Best given on the host, where it is checked
        and uploaded once; on the device it is copied back once when the
        normalizer is to be counted.
    weights (Optional[Floats1d]): a weight >= 0 per row, scaling its loss
        and gradient (the mean is over rows, not over weights).
    normalizer (Optional[float]): what the summed row losses are divided by;
        None: the number of rows that allow some class (a mean, as
        ``CrossEntropy`` with normalize=True).
    RETURNS (Tuple[float, Floats2d]): the loss and d loss / d logits.
    """
    loss, d_logits = partial_label_loss_on_device(logits, allowed, weights=weights, normalizer=normalizer)
    return loss.to_float(), d_logits


def _checked_present(logits: Floats2d, allowed: ArrayXd, normalizer: Optional[float]) -> Optional[numpy.ndarray]:
    """Whether each row allows some class, on the host, after checking the
    mask's shape and dtype; None for a device mask with a normalizer given
    (nothing to count, so nothing to copy back)."""
    if logits.ndim != 2:
        raise ValueError(f"Logits must be 2-dimensional (n_rows, n_classes), got shape {logits.shape}")
    if tuple(allowed.shape) != tuple(logits.shape) or allowed.dtype != bool:
        raise ValueError(
            f"allowed must be a bool mask of the logits' shape {logits.shape}, got shape {tuple(allowed.shape)} "
            f"and dtype {allowed.dtype}"
        )
    if on_host(allowed):
        return numpy.asarray(allowed).any(axis=1)
    if normalizer is not None:
        return None
    return to_numpy(allowed.any(axis=1))


def _checked_weights(weights: Floats1d, n_rows: int) -> Floats1d:
    """Row weights checked on the host (device weights are copied back once):
    finite and >= 0, one per row."""
    host = numpy.asarray(weights) if on_host(weights) else to_numpy(weights)
    if host.shape != (n_rows,):
        raise ValueError(f"weights must have shape ({n_rows},), one per row, got shape {host.shape}")
    if not numpy.isfinite(host).all() or (host < 0).any():
        raise ValueError(f"weights must be finite and >= 0, got {host[~(numpy.isfinite(host) & (host >= 0))][:3].tolist()} among them")
    # the checked host copy is a Floats1d as the weights were
    return weights if not on_host(weights) else cast(Floats1d, host)
