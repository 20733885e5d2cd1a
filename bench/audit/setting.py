"""The settings of one validation (corpus, p, seed, ...) and the names and
folders they give."""
import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

ENCODERS = ("vectors", "features")


def setting_name(p: float, seed: int) -> str:
    """``p30-s0`` for p = 0.3, seed 0 (the metrics file's name)."""
    return f"p{round(100 * p):02d}-s{seed}"


def config_name(encoder: str) -> str:
    """The restore runs' config, in configs/."""
    return f"{encoder}/sampled_spancat_uniform"


def token_config(encoder: str) -> Path:
    """The cleanlab baseline's token model."""
    return Path("configs") / encoder / "token_ner.cfg"


def audit_folder(encoder: str) -> str:
    """The metrics folder's name (and --only's prefix): the vectors runs came first."""
    return "audit" if encoder == "vectors" else f"audit-{encoder}"


def metrics_folder(metrics_dir: Path, corpus: str, encoder: str) -> Path:
    return metrics_dir / corpus / audit_folder(encoder)


def summary_path(metrics_dir: Path, corpus: str, encoder: str) -> Path:
    return metrics_dir / corpus / ("audit_validation.md" if encoder == "vectors" else f"audit_validation_{encoder}.md")


def run_name(p: float, encoder: str = "vectors") -> str:
    """The name --only selects, as in metrics/<corpus>/: ``audit/p30``
    (``audit-features/p30`` for the features encoder)."""
    return f"{audit_folder(encoder)}/p{round(100 * p):02d}"


def selected_runs(ps: List[float], seeds: List[int], names: Set[str], encoder: str = "vectors") -> List[Tuple[float, int]]:
    """The (p, seed) settings that --only ``names`` selects, in order: every
    seed of ``audit/p30``, one of ``audit/p30-s0``; all when ``names`` is empty."""
    return [
        (p, seed) for p in ps for seed in seeds
        if not names or run_name(p, encoder) in names or f"{run_name(p, encoder)}-s{seed}" in names
    ]


# settings first run after the audit's estimator and default search were frozen (issue 32, at c1af138):
# they played no part in the design, which saw WNUT-2016 at p = 0.1, 0.3 and 0.5 and WNUT-2017 at 0.3 (seed 0)
REVALIDATION = {
    ("vectors", "wnut17", 0.1, 0), ("vectors", "wnut17", 0.5, 0),
    ("vectors", "wnut16", 0.3, 3), ("vectors", "wnut16", 0.3, 4), ("vectors", "wnut16", 0.3, 5),
}


def row_label(encoder: str, corpus: str, p: float, seed: int) -> str:
    """The summary row of a setting: its p, marked when it re-validates the frozen design."""
    return f"{p:g} (re-validation)" if (encoder, corpus, p, seed) in REVALIDATION else f"{p:g}"


@dataclasses.dataclass
class Setting:
    corpus: str
    p: float
    seed: int
    folds: int
    steps: int
    threshold: float
    vectors: str
    restore_steps: int
    restore_patience: int
    eval_frequency: Optional[int]
    limit: Optional[int]
    resamples: int
    gpu_id: int
    work: Path
    encoder: str = "vectors"

    @property
    def name(self) -> str:
        return setting_name(self.p, self.seed)

    @property
    def encoder_tag(self) -> str:
        return "" if self.encoder == "vectors" else f"-{self.encoder}"

    @property
    def folder(self) -> Path:
        return self.work / f"{self.corpus}{self.limit_tag}{self.encoder_tag}-{self.name}"

    @property
    def config(self) -> str:
        return config_name(self.encoder)

    def vector_overrides(self) -> Dict[str, Any]:
        """paths.vectors for the vectors encoder; the features need none."""
        return {"paths.vectors": self.vectors} if self.encoder == "vectors" else {}

    @property
    def limit_tag(self) -> str:
        return f"-n{self.limit}" if self.limit else ""

    def shaping(self) -> Dict[str, Any]:
        """What the work folder's contents depend on (the restore runs are
        checked by the benchmark's own resume test)."""
        keys = ("corpus", "p", "seed", "folds", "steps", "vectors", "eval_frequency", "limit", "resamples")
        # the encoder is named only where it is not the first one, so that vectors work folders resume
        return {**{k: getattr(self, k) for k in keys}, **({"encoder": self.encoder} if self.encoder != "vectors" else {})}

    def training_overrides(self) -> Dict[str, Any]:
        extra = {"training.eval_frequency": self.eval_frequency} if self.eval_frequency else {}
        return {"training.max_steps": self.steps, "system.seed": self.seed, **extra}
