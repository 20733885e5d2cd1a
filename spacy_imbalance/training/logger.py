"""``spacy-imbalance.ConsoleLogger.v1``: spaCy's console table, plus what a
person needs to follow a run in it:

    [training.logger]
    @loggers = "spacy-imbalance.ConsoleLogger.v1"
    progress_every = 50
    progress_bar = false

- a progress line every ``progress_every`` steps between evaluations (the
  step, the epoch, each component's loss since the previous line, words per
  second since then and the time since training started), so that a run of
  100 steps under ``eval_frequency = 200`` shows more than its step 0. The
  evaluations stay where ``training.eval_frequency`` puts them: evaluating
  more often would change which checkpoint becomes model-best;
- at the start, a warning when ``training.max_steps`` ends the run before
  its first evaluation after step 0 (model-best would be step 0's model);
- once at the start, for each encoder (``tok2vec``, ``transformer``) that one
  of our components (``sampled_spancat``, ``token_ner``, ``two_task_ner``)
  listens to, a line saying what its loss column is. spaCy writes there only
  the squared gradients the listeners pass back to it; ours train the
  encoder through their own loss, and the gradients of a mean loss (over
  spans or tokens: ``sampled_spancat``, ``token_ner``) are so small that the
  column reads 0.00, which users took for an encoder that does not learn.

The table is spaCy's own (``spacy.ConsoleLogger.v2``, the same rows as v1's),
so the logs that read the dev curve from it (``sweeps.trial.dev_curve_of``)
read this one; no progress line starts as a row does (with a number).
"""
import sys
import time
from datetime import timedelta
from types import FrameType
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from spacy.training import loop
from spacy.training.loggers import console_logger
from spacy.util import registry
from wasabi import Printer

from .checks import check_number

if TYPE_CHECKING:
    from spacy.language import Language

LogStep = Callable[[Optional[Dict[str, Any]]], None]
Finalize = Callable[[], None]
SetupLogger = Callable[["Language", IO, IO], Tuple[LogStep, Finalize]]

SETTING = "[training.logger]"
# the factories whose loss is the only one their encoder is trained by
OUR_FACTORIES = ("sampled_spancat", "token_ner", "two_task_ner")


@registry.loggers("spacy-imbalance.ConsoleLogger.v1")
def create_console_logger_v1(progress_every: int = 50, progress_bar: bool = False) -> SetupLogger:
    """spaCy's console logger with a progress line every ``progress_every``
    steps between evaluations and, for an encoder our components train
    through their own loss, a line saying what its loss column is.

    progress_every (int): Steps between progress lines (0: none). A step that
        is evaluated prints its table row instead.
    progress_bar (bool): spaCy's progress bar up to the next evaluation (on
        stderr, shown only on a terminal), as ``spacy.ConsoleLogger.v1``.
    """
    every = int(check_number(
        f"{SETTING} progress_every", progress_every, low=0, integer=True,
        note=" (the steps between progress lines; 0 prints none)",
    ))
    if not isinstance(progress_bar, bool):
        raise ValueError(f"{SETTING} progress_bar must be true or false, got {progress_bar!r}")
    table = console_logger(progress_bar=progress_bar)

    def setup_printer(nlp: "Language", stdout: IO = sys.stdout, stderr: IO = sys.stderr) -> Tuple[LogStep, Finalize]:
        def write(text: str) -> None:
            print(text, file=stdout, flush=True)

        msg = Printer(no_print=True)
        for line in encoder_notes(nlp):
            write(msg.info(line))
        short = short_budget_warning(nlp.config["training"])
        if short is not None:
            write(msg.warn(short))
        log_row, finalize = table(nlp, stdout, stderr)
        progress = _Progress(every, write, msg)

        def log_step(info: Optional[Dict[str, Any]]) -> None:
            if info is None:
                progress.step(sys._getframe(1))
            else:
                progress.evaluated(info)
            log_row(info)

        return log_step, finalize

    return setup_printer


def encoder_notes(nlp: "Language") -> List[str]:
    """A line for each trained encoder of ``nlp`` that a trained component
    of ours listens to (none for spaCy's own components)."""
    trained = {name for name, pipe in nlp.pipeline if getattr(pipe, "is_trainable", False)}
    notes = []
    for name, pipe in nlp.pipeline:
        listeners = getattr(pipe, "listening_components", []) if name in trained else []
        ours = [c for c in listeners if c in trained and nlp.get_pipe_meta(c).factory in OUR_FACTORIES]
        if ours:
            one = len(ours) == 1
            notes.append(
                f"{name}'s loss column is not a loss: {', '.join(ours)} backpropagate{'s' if one else ''} into {name} "
                f"and report{'s' if one else ''} one loss, {'its' if one else 'their'} own; the column sums the squared "
                f"gradients passed back, so 0.00 there does not mean that {name} is not learning"
            )
    return notes


def short_budget_warning(training: Dict[str, Any]) -> Optional[str]:
    """A warning when ``max_steps`` ends the run before its first evaluation
    after step 0: model-best is then the model after one update (the
    audit's folds trained that way, issue 44)."""
    steps, every = training.get("max_steps"), training.get("eval_frequency")
    if not (isinstance(steps, int) and isinstance(every, int) and 0 < steps < every):
        return None
    return (
        f"training.max_steps = {steps} ends the run before its first evaluation after step 0 (training.eval_frequency "
        f"= {every}), so model-best will be the model after one update: evaluate more often, e.g. "
        f"--training.eval_frequency {max(1, steps // 10)}"
    )


class _Progress:
    """The progress lines between evaluations. spaCy's loop calls a logger
    with the step's info only when it evaluated (``log_step(None)``
    otherwise, spacy/training/loop.py ``train``), so a progress line reads
    that info from the loop's own frame: the same step, epoch, losses
    (summed since the last evaluation), words and seconds that the loop
    computed. Each line gives the losses and the rate since the line or
    evaluation before it."""

    def __init__(self, every: int, write: Callable[[str], None], msg: Printer) -> None:
        self.every = every
        self.write = write
        self.msg = msg
        self.enabled = every > 0
        self.step_no = -1
        self._since: Dict[str, Any] = {"step": 0, "losses": {}, "words": 0, "time": time.perf_counter()}

    def evaluated(self, info: Dict[str, Any]) -> None:
        self.step_no = info["step"]
        # the loop starts a new losses dict after each evaluation; the time
        # is taken after the evaluation, so that the next rate is training's
        self._since = {"step": info["step"], "losses": {}, "words": info["words"], "time": time.perf_counter()}

    def step(self, caller: Optional[FrameType]) -> None:
        # the loop calls log_step once per step, so the count is the step
        self.step_no += 1
        if not self.enabled or self.step_no % self.every:
            return
        info = _loop_info(caller)
        if info is None:
            self.enabled = False
            self.write(self.msg.warn(
                f"{SETTING} progress_every: no progress lines, as the logger is not called by spaCy's training "
                "loop (spacy.training.loop.train), whose step info they read; the table follows as usual"
            ))
            return
        self.write(self._line(info))

    def _line(self, info: Dict[str, Any]) -> str:
        now = time.perf_counter()
        since = self._since
        losses = {name: float(value) - since["losses"].get(name, 0.0) for name, value in info["losses"].items()}
        rate = (info["words"] - since["words"]) / max(now - since["time"], 1e-9)
        loss_text = ", ".join(f"{name} {value:.2f}" for name, value in losses.items()) or "none"
        line = (
            f"step {info['step']}  epoch {info['epoch']}  loss since step {since['step']}: {loss_text}  "
            f"{rate:,.0f} words/s  {timedelta(seconds=int(info['seconds']))} elapsed"
        )
        self._since = {"step": info["step"], "losses": dict(info["losses"]), "words": info["words"], "time": now}
        # plain, one line: wasabi would wrap it at 80 columns, and a wrapped
        # part could start with a number as the table's rows do
        return line


def _loop_info(frame: Optional[FrameType]) -> Optional[Dict[str, Any]]:
    """The step's ``info`` of spaCy's training loop, from its frame at or
    above ``frame`` (a logger that wraps this one is in between); None when
    no such frame calls the logger."""
    while frame is not None:
        if frame.f_code is loop.train.__code__:
            info = frame.f_locals.get("info")
            return info if isinstance(info, dict) and {"step", "epoch", "losses", "words", "seconds"} <= set(info) else None
        frame = frame.f_back
    return None
