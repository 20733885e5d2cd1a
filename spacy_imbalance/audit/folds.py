"""k-fold cross-fitting: every document is scored by a model that never
trained on it.

The documents are split into k folds by a seeded permutation. The model of
fold f trains on the other k - 1 folds and scores fold f. Each fold's
training run lives in its own folder with a ``fold.json`` that records which
documents it trained on and which it scores; a finished fold is skipped when
the audit runs again (resume), and a folder made for another corpus or other
settings is refused rather than reused.
"""
import contextlib
import hashlib
import json
import os
import random
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from ..corpus.docs_io import write_docbin, write_text_atomic
from ..sweeps.trial import dev_curve_of

PLAN_FILE = "plan.json"
FOLD_FILE = "fold.json"
# a fold's ``spacy train`` console output, whose table gives its dev curve
TRAIN_LOG = "train.log"
# the fold of an empty document: it holds no span, so it can hold no missed
# entity, and a fold given only empty documents to train on cannot even
# initialise its model (spaCy's E923)
NO_FOLD = -1
# the key (``doc_key``) of an empty document
EMPTY_KEY: Tuple[str, ...] = ()
# without a dev set, each fold keeps this share of its training documents
# aside to pick its best checkpoint
HELD_OUT_SHARE = 0.1


@dataclass(frozen=True)
class FoldPlan:
    """Which fold scores each document, and what the folds were made from."""

    k: int
    seed: int
    # fold id of every document, in corpus order; NO_FOLD for an empty
    # document, which no fold trains on or scores
    assignment: List[int]
    # identifies the corpus and the training settings the folds belong to
    fingerprint: str

    def scored(self, fold: int) -> List[int]:
        return [i for i, f in enumerate(self.assignment) if f == fold]

    def trained(self, fold: int) -> List[int]:
        return [i for i, f in enumerate(self.assignment) if f != fold and f != NO_FOLD]

    def left_out(self) -> List[int]:
        """The documents in no fold: the empty ones."""
        return [i for i, f in enumerate(self.assignment) if f == NO_FOLD]

    def to_disk(self, path: Path) -> None:
        write_text_atomic(path, json.dumps(asdict(self)) + "\n")

    @classmethod
    def from_disk(cls, path: Path) -> "FoldPlan":
        data = json.loads(path.read_text(encoding="utf8"))
        return cls(int(data["k"]), int(data["seed"]), [int(f) for f in data["assignment"]], str(data["fingerprint"]))


def assign_folds(keys: Sequence[Hashable], k: int, seed: int) -> List[int]:
    """Fold ids 0..k-1 for documents identified by ``keys`` (their words):
    the distinct keys shuffled with the seed and dealt round robin, so fold
    sizes differ by at most one where no text repeats. Documents with the
    same key share a fold: a duplicate in another fold would let its model
    score a text it trained on. Empty documents (an empty key) get NO_FOLD."""
    groups: Dict[Hashable, int] = {}
    for key in keys:
        if key != EMPTY_KEY:
            groups.setdefault(key, len(groups))
    check_k(k, len(groups))
    order = list(range(len(groups)))
    random.Random(seed).shuffle(order)
    group_fold = [0] * len(groups)
    for rank, g in enumerate(order):
        group_fold[g] = rank % k
    return [NO_FOLD if key == EMPTY_KEY else group_fold[groups[key]] for key in keys]


def doc_key(doc: Doc) -> Tuple[str, ...]:
    return tuple(t.text for t in doc)


def check_k(k: int, n_docs: int, setting: str = "--folds") -> None:
    if not isinstance(k, int) or k < 2:
        raise ValueError(f"{setting} must be an integer >= 2 (each fold is scored by a model trained on the others), got {k!r}")
    if n_docs < k:
        raise ValueError(f"{setting} {k} is more than the {n_docs} distinct documents of the corpus (empty ones aside): each fold needs at least one")


def fingerprint(docs: Sequence[Doc], settings: Dict[str, Any]) -> str:
    """A digest of the documents (words and entities) and the settings that
    shape the folds' models: a resumed audit must find the same ones."""
    digest = hashlib.sha256()
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode("utf8"))
    for doc in docs:
        digest.update("\t".join(t.text for t in doc).encode("utf8"))
        digest.update(repr([(e.start, e.end, e.label_) for e in doc.ents]).encode("utf8"))
        digest.update(b"\n")
    return digest.hexdigest()


def corpus_fingerprint(docs: Sequence[Doc]) -> str:
    """A digest of the documents alone (their words and entities, in order):
    what an audit records of the corpus it audited, so that a reader of the
    audit (advise --audit) can tell it from another corpus of the same size.
    Words, not the text: the CoNLL file and the .spacy of a corpus agree."""
    return fingerprint(docs, {})


def prepare_plan(folder: Path, docs: Sequence[Doc], k: int, seed: int, settings: Dict[str, Any]) -> FoldPlan:
    """The plan saved in ``folder`` (resume) or a new one; a saved plan of
    another corpus or other settings is an error naming the folder."""
    plan = FoldPlan(k, seed, assign_folds([doc_key(doc) for doc in docs], k, seed), fingerprint(docs, {**settings, "k": k, "seed": seed}))
    path = folder / PLAN_FILE
    if path.exists():
        try:
            saved = FoldPlan.from_disk(path)
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path} cannot be read ({err!r}): delete {folder} to start over") from None
        if saved != plan:
            raise ValueError(
                f"{folder} holds folds of another audit (other documents, --folds, --seed or training settings). "
                "Give another output folder, or delete it to start over"
            )
        return saved
    folder.mkdir(parents=True, exist_ok=True)
    plan.to_disk(path)
    return plan


def fold_dir(folder: Path, fold: int) -> Path:
    return folder / f"fold-{fold}"


def fold_done(folder: Path, plan: FoldPlan, fold: int) -> bool:
    """Whether fold ``fold`` finished training under this plan: its record
    matches and its model is there (a record that cannot be read, or a
    deleted model, means training it again)."""
    path = fold_dir(folder, fold) / FOLD_FILE
    if not path.exists() or not (fold_dir(folder, fold) / "model-best" / "config.cfg").exists():
        return False
    try:
        record = json.loads(path.read_text(encoding="utf8"))
    except ValueError:
        return False
    return record.get("fingerprint") == plan.fingerprint and record.get("trained") == plan.trained(fold)


def held_out_split(indices: Sequence[int], seed: int) -> Dict[str, List[int]]:
    """Training documents of a fold split into those trained on and those kept
    to pick the best checkpoint (when no dev set is given)."""
    shuffled = list(indices)
    if len(shuffled) < 2:
        raise ValueError(
            f"a fold trains on {len(shuffled)} document: too few to keep one aside for picking the best "
            "checkpoint; give --dev, or fewer --folds"
        )
    random.Random(seed).shuffle(shuffled)
    n_held = min(max(1, round(HELD_OUT_SHARE * len(shuffled))), len(shuffled) - 1)
    return {"train": sorted(shuffled[n_held:]), "dev": sorted(shuffled[:n_held])}


# (config path, output folder, overrides, gpu id) -> None: spaCy's train()
Trainer = Callable[[Path, Path, Dict[str, Any], int], None]


@dataclass(frozen=True)
class FoldJob:
    """What training one fold takes: its folder, the overrides of spacy
    train (its corpora) and the documents that picked its checkpoint."""

    fold: int
    output: Path
    overrides: Dict[str, Any]
    checkpoint_docs: List[int]


def prepare_fold(
    folder: Path, plan: FoldPlan, fold: int, docs: Sequence[Doc], dev_docs: Optional[Sequence[Doc]], overrides: Dict[str, Any]
) -> FoldJob:
    """Write fold ``fold``'s training and checkpoint corpora into its folder."""
    out = fold_dir(folder, fold)
    out.mkdir(parents=True, exist_ok=True)
    trained = plan.trained(fold)
    if dev_docs is None:
        split = held_out_split(trained, plan.seed + fold)
        train_ids, dev_ids = split["train"], split["dev"]
        write_docbin([docs[i] for i in dev_ids], out / "dev.spacy")
    else:
        train_ids, dev_ids = trained, []
        write_docbin(dev_docs, out / "dev.spacy")
    write_docbin([docs[i] for i in train_ids], out / "train.spacy")
    paths = {"paths.train": str(out / "train.spacy"), "paths.dev": str(out / "dev.spacy")}
    return FoldJob(fold, out, {**overrides, **paths}, dev_ids)


def finish_fold(folder: Path, plan: FoldPlan, job: FoldJob) -> Path:
    """Check the trained model, keep model-best only and record the fold as
    done (what resuming looks for). Returns its ``model-best`` folder."""
    model = job.output / "model-best"
    if not model.exists():
        raise RuntimeError(f"training fold {job.fold} wrote no {model}")
    # only model-best scores the fold; model-last would double the disk used
    # (with static vectors each model holds a copy of them)
    shutil.rmtree(job.output / "model-last", ignore_errors=True)
    log = job.output / TRAIN_LOG
    record = {
        "fold": job.fold,
        "fingerprint": plan.fingerprint,
        # the no-leak guarantee, kept for anyone who checks: the documents this
        # model saw (trained on or picked its checkpoint on) and those it scores
        "trained": plan.trained(job.fold),
        "checkpoint_docs": job.checkpoint_docs,
        "scored": plan.scored(job.fold),
        # [step, dev score] of each evaluation: whether model-best learned past its first update
        # (``untrained_reason``); None when no log of its training is there (a trainer that keeps none)
        "dev_curve": dev_curve_of(log.read_text(encoding="utf8")) if log.is_file() else None,
    }
    write_text_atomic(job.output / FOLD_FILE, json.dumps(record) + "\n")
    return model


def train_fold(
    folder: Path,
    plan: FoldPlan,
    fold: int,
    docs: Sequence[Doc],
    dev_docs: Optional[Sequence[Doc]],
    *,
    config: Path,
    overrides: Dict[str, Any],
    gpu_id: int,
    trainer: Trainer,
) -> Path:
    """Train fold ``fold``'s model on the other folds (resumable: a finished
    fold is not trained again). Returns its ``model-best`` folder."""
    if fold_done(folder, plan, fold):
        return fold_dir(folder, fold) / "model-best"
    job = prepare_fold(folder, plan, fold, docs, dev_docs, overrides)
    trainer(config, job.output, job.overrides, gpu_id)
    return finish_fold(folder, plan, job)


def spacy_trainer(config: Path, output: Path, overrides: Dict[str, Any], gpu_id: int) -> None:
    """Train with ``spacy train``'s own function (model-best, model-last, the
    console log), its console output also in ``output/train.log`` as on Ray
    (``finish_fold`` reads the dev curve from it)."""
    from spacy.cli.train import train

    output.mkdir(parents=True, exist_ok=True)
    with (output / TRAIN_LOG).open("w", encoding="utf8") as log, contextlib.redirect_stdout(_Tee(sys.stdout, log)):
        train(config, output, use_gpu=gpu_id, overrides=overrides)


class _Tee:
    """A stdout that writes to the console and to a log (the console's other
    attributes, e.g. isatty, are the console's)."""

    def __init__(self, console: IO[str], log: IO[str]) -> None:
        self._console = console
        self._log = log

    def write(self, text: str) -> int:
        self._log.write(text)
        return self._console.write(text)

    def flush(self) -> None:
        self._log.flush()
        self._console.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console, name)


def fold_curve(folder: Path, fold: int) -> Optional[List[List[float]]]:
    """Fold ``fold``'s dev curve, [step, score] per evaluation: from its
    record, or from its training log for a fold recorded before records
    kept it; None when neither says (no log of its training)."""
    out = fold_dir(folder, fold)
    try:
        record = json.loads((out / FOLD_FILE).read_text(encoding="utf8"))
    except (OSError, ValueError):
        record = {}
    if isinstance(record, dict) and "dev_curve" in record:
        return record["dev_curve"]
    log = out / TRAIN_LOG
    return dev_curve_of(log.read_text(encoding="utf8")) if log.is_file() else None


# The project's plumbing tests (tests/test_project.py) run every study for two steps, which teach nothing:
# with this variable set to 1 no model counts as untrained, so that audit and advise go on to write their
# (meaningless) estimates and rankings. For those tests only, never for results.
PLUMBING_ONLY = "SPACY_IMBALANCE_PLUMBING_ONLY"


def untrained_reason(curve: Sequence[Sequence[float]]) -> Optional[str]:
    """Why a training run's model-best is an untrained model, or None when
    it learned past its first update. spaCy evaluates after the first update
    (step 0) and then every [training] eval_frequency steps, and keeps as
    model-best the last evaluation with the best score: unless a later
    evaluation scores *above* step 0's, model-best is no better on dev than
    the model after one update (whether it is that one, or a later one that
    never rose above it, e.g. 0.0 at every evaluation). ``curve``: [step,
    dev score] per evaluation (``sweeps.trial.dev_curve``)."""
    if os.environ.get(PLUMBING_ONLY) == "1":
        return None
    if not curve:
        return "no dev evaluation"
    later = [float(score) for step, score in curve if step > 0]
    if not later:
        return "no dev evaluation after step 0"
    first = next((float(score) for step, score in curve if step == 0), None)
    if first is None:
        # a log without step 0's row: whatever it learned, it scored above nothing
        return None if max(later) > 0 else f"its dev score was 0.00 at every evaluation, up to step {int(curve[-1][0])}"
    if max(later) > first:
        return None
    if max(later) < first:
        return "its best dev score was that of step 0, after one update"
    if min(later) == first:
        return f"its dev score stayed at {first:.2f} from step 0 to step {int(curve[-1][0])}"
    return f"no dev evaluation after step 0 (up to step {int(curve[-1][0])}) scored above its {first:.2f}"
