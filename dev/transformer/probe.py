"""How much gradient a fine-tuned config sends its encoder, over its first
updates (scripts/transformer_probe.py)."""
from pathlib import Path
from typing import Any, Dict, List

from spacy_imbalance.benchmark.tables import head, row

from .configs import config_at_revision


def probe(config_path: Path, train: Path, n_sentences: int, n_updates: int, seed: int) -> List[float]:
    """The squared gradient that reaches the ``transformer`` component (its
    entry in ``losses``) in each of the first ``n_updates`` updates."""
    import spacy
    from spacy.training import Corpus
    from spacy.util import fix_random_seed, load_config

    fix_random_seed(seed)
    config = load_config(config_path, overrides={"paths.train": str(train), "paths.dev": str(train)}, interpolate=True)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    examples = list(Corpus(str(train), gold_preproc=True)(nlp))[:n_sentences]
    optimizer = nlp.initialize(lambda: examples)
    squared = []
    for _ in range(n_updates):
        losses: Dict[str, float] = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        squared.append(float(losses.get("transformer", 0.0)))
    return squared


def config_file(root: Path, name: str, folder: Path) -> Path:
    """configs/<name>.cfg, or for REV:NAME the file at git revision REV, copied into ``folder``."""
    if ":" not in name:
        return root / "configs" / f"{name}.cfg"
    rev, path = name.split(":", 1)
    out = folder / f"{rev}-{path.replace('/', '-')}.cfg"
    out.write_text(config_at_revision(root, rev, path), encoding="utf8")
    return out


def table(report: Dict[str, Any]) -> str:
    n = report["updates"]
    lines = [
        f"Squared gradient reaching the fine-tuned encoder (`losses['transformer']`) in each of the first {n} updates "
        f"on {report['sentences']} {report['corpus']} train sentences (CPU, seed {report['seed']}); REV:config is the config at git revision REV.",
        "",
        *head(["config", *(f"update {i + 1}" for i in range(n))], "l" + "r" * n),
    ]
    for config, values in report["configs"].items():
        cells = [f"{v:.3g}" for v in values] if values is not None else ["not measured yet"] + [""] * (n - 1)
        lines.append(row([config, *cells]))
    return "\n".join(lines) + "\n"
