"""Where a benchmark's files are, relative to the folder it runs in (a
user's project, or this repository): configs/<config>.cfg,
corpus/<corpus>/{train,dev,test}.spacy, the records in
metrics/<corpus>/<run>-s<seed>.json and the pipelines in
training/<corpus>/<run>-s<seed>/. Every folder may be put elsewhere."""
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layout:
    """The four folders of a benchmark (relative paths are read from the
    current folder; a sweep's trials make them absolute before they run)."""

    configs: Path = Path("configs")
    corpora: Path = Path("corpus")
    metrics: Path = Path("metrics")
    training: Path = Path("training")

    @classmethod
    def at(cls, root: Path, metrics: Path = Path("metrics"), training: Path = Path("training")) -> "Layout":
        """The layout of the project folder ``root`` (``metrics`` and ``training`` inside it)."""
        return cls(root / "configs", root / "corpus", root / metrics, root / training)

    def config(self, config: str) -> Path:
        """configs/<config>.cfg (a config name may hold a folder: vectors/ner)."""
        return self.configs / f"{config}.cfg"

    def corpus(self, corpus: str, split: str) -> Path:
        """corpus/<corpus>/<split>.spacy."""
        return self.corpora / corpus / f"{split}.spacy"

    def record(self, corpus: str, run: str, seed: int) -> Path:
        """metrics/<corpus>/<run>-s<seed>.json, the run's record."""
        return self.metrics / corpus / f"{run}-s{seed}.json"

    def output(self, corpus: str, run: str, seed: int) -> Path:
        """training/<corpus>/<run>-s<seed>, the run's pipelines (model-best, model-last)."""
        return self.training / corpus / f"{run}-s{seed}"
