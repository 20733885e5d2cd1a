"""What Ray buys a sweep: the benchmark's trials, timed one after another
and on Ray (scripts/sweep_speed.py)."""
from pathlib import Path
from typing import TYPE_CHECKING, List

if TYPE_CHECKING:
    from spacy_imbalance.sweeps import Trial


def trials_for(root: Path, corpus: str, configs: List[str], seeds: List[int], steps: int, folder: Path) -> List["Trial"]:
    """The trials of configs x seeds on corpus/<corpus>, trained into ``folder``."""
    from spacy_imbalance.sweeps import Trial

    data = root / "corpus" / corpus
    return [
        Trial(
            name=f"{config} seed {seed}", config=str(root / "configs" / f"{config}.cfg"),
            output=str(folder / f"{config}-s{seed}"), metrics=str(folder / f"{config}-s{seed}.json"),
            train=str(data / "train.spacy"), dev=str(data / "dev.spacy"), test=str(data / "test.spacy"),
            seed=seed, max_steps=steps,
        )
        for config in configs
        for seed in seeds
    ]
