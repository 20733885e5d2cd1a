"""What one check is (the corpus, the share p hidden, the seed, the audit's
settings and the optional extras) and the names and folders it gives."""
import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Set, Tuple

# what every model of a check trains on: the audit's default embeddings,
# static vectors (--vectors) or frozen MiniLM features (--features)
Encoder = Literal["default", "vectors", "features"]


def setting_name(p: float, seed: int) -> str:
    """``p30-s0`` for p = 0.3, seed 0 (the record's name)."""
    return f"p{round(100 * p):02d}-s{seed}"


def run_name(prefix: str, p: float) -> str:
    """The name --only selects: ``<records folder>/p30`` (``audit/p30``)."""
    return f"{prefix}/p{round(100 * p):02d}"


def selected_runs(ps: List[float], seeds: List[int], names: Set[str], prefix: str) -> List[Tuple[float, int]]:
    """The (p, seed) settings that --only ``names`` selects, in order: every
    seed of ``audit/p30``, one of ``audit/p30-s0``; all when ``names`` is empty."""
    return [
        (p, seed) for p in ps for seed in seeds
        if not names or run_name(prefix, p) in names or f"{run_name(prefix, p)}-s{seed}" in names
    ]


@dataclasses.dataclass(frozen=True)
class Restoring:
    """The optional retraining: ``config`` trained on the corpus with the
    entities hidden, with the suspects restored (or reviewed) and complete,
    each scored on ``test``. ``reference``: a finished record of ``config``
    on the complete corpus, ``{seed}`` filled in, reused when it is fresh
    (the same config, budget and overrides) instead of training it again."""

    config: Path
    test: Path
    steps: int = 4000
    patience: int = 1000
    reference: Optional[str] = None

    def reference_record(self, seed: int) -> Optional[Path]:
        return Path(self.reference.replace("{seed}", str(seed))) if self.reference else None


@dataclasses.dataclass(frozen=True)
class Setting:
    """One check: a share ``p`` of ``train``'s entities hidden with ``seed``
    (which also seeds the folds and the training), the audit calibrated on
    ``dev``; its files in ``work``, named after ``corpus``."""

    train: Path
    dev: Path
    corpus: str
    p: float
    seed: int
    work: Path
    folds: int = 5
    steps: int = 2000
    threshold: float = 0.5
    vectors: Optional[str] = None
    features: bool = False
    resamples: int = 500
    eval_frequency: Optional[int] = None
    limit: Optional[int] = None
    gpu_id: int = -1
    # a token tagger's config: cleanlab compared on its out-of-fold probabilities
    cleanlab: Optional[Path] = None
    restoring: Optional[Restoring] = None

    @property
    def name(self) -> str:
        return setting_name(self.p, self.seed)

    @property
    def encoder(self) -> Encoder:
        return "features" if self.features else "vectors" if self.vectors else "default"

    @property
    def folder(self) -> Path:
        # the vectors' folders carry no tag: they came first
        tag = "" if self.encoder == "vectors" else f"-{self.encoder}"
        return self.work / f"{self.corpus}{self.limit_tag}{tag}-{self.name}"

    @property
    def limit_tag(self) -> str:
        return f"-n{self.limit}" if self.limit else ""

    def vector_overrides(self) -> Dict[str, Any]:
        """paths.vectors with --vectors; the features and the default need none."""
        return {"paths.vectors": self.vectors} if self.encoder == "vectors" else {}

    def shaping(self) -> Dict[str, Any]:
        """What the work folder's contents depend on (the restore runs are
        checked by their own records)."""
        keys = ("corpus", "p", "seed", "folds", "steps", "vectors", "eval_frequency", "limit", "resamples")
        paths = {"train": str(self.train), "dev": str(self.dev)}
        return {**{k: getattr(self, k) for k in keys}, **paths, **({"encoder": self.encoder} if self.encoder != "vectors" else {})}

    def training_overrides(self) -> Dict[str, Any]:
        extra = {"training.eval_frequency": self.eval_frequency} if self.eval_frequency else {}
        return {"training.max_steps": self.steps, "system.seed": self.seed, **extra}

    def recorded(self) -> Dict[str, Any]:
        """The settings a record keeps (the summary reads folds, steps,
        threshold, encoder and the restored config)."""
        restoring = self.restoring
        return {
            "folds": self.folds, "steps": self.steps, "threshold": self.threshold, "vectors": self.vectors,
            "restore_steps": restoring.steps if restoring else None,
            "restore_patience": restoring.patience if restoring else None,
            "eval_frequency": self.eval_frequency, "limit": self.limit, "resamples": self.resamples, "encoder": self.encoder,
            "restore_config": str(restoring.config) if restoring else None,
            "cleanlab_config": str(self.cleanlab) if self.cleanlab else None,
        }
