"""Per-label thresholds fitted on dev each time ``spacy train`` saves, for
users with a complete dev set who want them without a second command:

    [training.before_to_disk]
    @callbacks = "spacy-imbalance.tuned_thresholds.v1"
    path = ${paths.dev}

At every save (model-last at each evaluation, model-best copied from it)
each ``sampled_spancat`` of the pipeline gets the thresholds the search of
``tune-thresholds`` finds on ``path`` (``evaluation.thresholds.spans``), and
the saved pipeline decides with them. The model being trained keeps its own
decision rule, so the checkpoint is still chosen on untuned dev scores: a
search on the same dev set at every evaluation would otherwise choose the
checkpoint whose thresholds fit dev best. The cost is one more prediction
pass over dev per save. A config has one ``before_to_disk``, so each save is
also atomic, as with ``spacy-imbalance.atomic_save.v1`` (``training.saving``).
"""
import logging
from pathlib import Path
from typing import Callable, List, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import registry

from ...corpus.docs_io import load_docs
from ...pipeline.sampled_spancat import SampledSpanCategorizer
from ...training.saving import save_atomically
from .grid import default_grid
from .spans import DEFAULT_MIN_GAIN, tune_span_thresholds

logger = logging.getLogger("spacy")
SETTING = "[training.before_to_disk]"


@registry.callbacks("spacy-imbalance.tuned_thresholds.v1")
def create_tuned_thresholds_v1(
    path: Path, step: float = 0.05, min_gain: float = DEFAULT_MIN_GAIN, shared: bool = True, batch_size: int = 128
) -> Callable[[Language], Language]:
    """A ``[training.before_to_disk]`` callback: every ``sampled_spancat``
    is saved with the per-label thresholds that maximise macro-F1 on the
    gold docs at ``path`` (never the test split).

    path (Path): dev data with gold entities, ``.spacy`` or CoNLL.
    step (float): the grid step of the thresholds (0.05: 0.05 ... 0.95).
    min_gain (float): dev macro-F1 (0-1) a per-label threshold must add.
    shared (bool): start from the best threshold shared by every label.
    batch_size (int): docs predicted at once.
    """
    grid = default_grid(step, setting=f"{SETTING} step")
    if isinstance(min_gain, bool) or not 0.0 <= min_gain < 1.0:
        raise ValueError(f"{SETTING} min_gain is dev macro-F1 in [0, 1) a per-label threshold must add, got {min_gain!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"{SETTING} batch_size must be an integer >= 1, got {batch_size!r}")
    if not str(path) or not Path(path).is_file():
        raise ValueError(f"{SETTING} path: no dev file at {str(path)!r} (set it, e.g. path = ${{paths.dev}})")
    loaded: List[List[Doc]] = []

    def before_to_disk(nlp: Language) -> Language:
        components = [(name, pipe) for name, pipe in nlp.pipeline if isinstance(pipe, SampledSpanCategorizer)]
        if not components:
            raise ValueError(
                f"{SETTING} spacy-imbalance.tuned_thresholds.v1 tunes sampled_spancat thresholds, and the pipeline "
                f"has none (its components: {', '.join(nlp.pipe_names) or 'none'}): remove the callback"
            )
        if not loaded:
            # read once, at the first save: the vocab is the pipeline's by then
            loaded.append(load_docs(path, nlp.vocab))
        for name, pipe in components:
            search = tune_span_thresholds(
                nlp, name, loaded[0], grid=grid, shared=shared, min_gain=min_gain, batch_size=batch_size
            )
            tuned: Optional[dict] = search.best if search.improves else search.current
            pipe.save_with_thresholds(tuned or None)
            logger.info(
                "%s: saved with thresholds %s (dev macro-F1 %.1f, %.1f with its own)",
                name, tuned or "none (argmax)", 100 * search.best_macro_f, 100 * search.current_macro_f,
            )
        return save_atomically(nlp)

    return before_to_disk
