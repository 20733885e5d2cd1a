import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from spacy.training.initialize import init_nlp
from spacy.util import load_config

from spacy_imbalance.corpus.docs_io import load_docs


class InitOnlyTrainer:
    """Builds each fold's pipeline from the config and its training file
    without training steps (spaCy's init_nlp), and records which documents
    each fold was given: fast, and enough to check the cross-fitting."""

    def __init__(self) -> None:
        self.calls: List[Dict[str, Any]] = []

    def __call__(self, config: Path, output: Path, overrides: Dict[str, Any], gpu_id: int) -> None:
        cfg = load_config(config, overrides=overrides, interpolate=False)
        nlp = init_nlp(cfg)
        (output / "model-best").mkdir(parents=True, exist_ok=True)
        nlp.to_disk(output / "model-best")
        words = [tuple(t.text for t in doc) for doc in load_docs(overrides["paths.train"])]
        dev = [tuple(t.text for t in doc) for doc in load_docs(overrides["paths.dev"])]
        self.calls.append({"output": output, "train": words, "dev": dev})


@pytest.fixture
def init_only_trainer() -> InitOnlyTrainer:
    return InitOnlyTrainer()
