"""The checks every command shares, one per class of bad input (issue 31):

- ``check_output_file``: an output file is a regular file or a new path, not
  an input, in a folder that exists or can be made and is writable, checked
  before any work;
- ``check_docbin_output``: a file a command writes a DocBin to ends in .spacy;
- ``bounded``: a number is finite and in its range, the range in the message;
- ``check_spans_key``: a span key names a group that the documents have;
- ``check_output_folder``: an output folder is a folder or a new path;
- ``load_pipeline_or_fail``: a pipeline that spaCy cannot load, named.

Each exits with a clear message (``fail``) instead of a traceback, so the
commands call them first and do their work after.
"""
import math
import os
import stat
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from spacy.language import Language
from spacy.tokens import Doc

from ..corpus.docs_io import output_file_problem, parent_problem  # the rule's one home: the atomic writers apply it too
from ..evaluation.evaluate import EvaluationError, check_gold_key, load_pipeline
from ._app import _same_file, fail

Number = Union[int, float]


def check_output_file(output: Optional[Path], option: str, inputs: Iterable[Path] = ()) -> None:
    """Exit with a message naming ``option`` when ``output`` (a file a command
    will write; None when not given) cannot be written as a regular file or
    is one of ``inputs``. Call it before the command's work."""
    if output is None:
        return
    for input_path in inputs:
        if _same_file(Path(input_path), output):
            fail(f"{option} {output} is the input {input_path}: writing it would destroy the input. Give another output path")
    problem = output_file_problem(output)
    if problem is not None:
        fail(f"{option} {output} {problem}")


# what a file holding a DocBin must be named: spaCy's readers and ours
# (corpus.docs_io.load_docs) read a file of any other name as CoNLL or text
DOCBIN_SUFFIX = ".spacy"


def check_docbin_output(output: Optional[Path], option: str) -> None:
    """Exit with a message naming ``option`` when ``output`` (a file a
    command will write a DocBin to; None when not given) does not end in
    .spacy: `-o out.txt` would write a binary corpus that every later command
    reads as something else. Call it before the command's work."""
    if output is None or output.suffix == DOCBIN_SUFFIX:
        return
    fail(
        f"{option} {output} must end in {DOCBIN_SUFFIX}: the command writes a .spacy (DocBin) file, which spaCy "
        f"and these commands read only under that name (any other is read as CoNLL). Give e.g. "
        f"{output.with_name(output.stem + DOCBIN_SUFFIX)}"
    )


def bounded(
    value: Number, option: str, *, low: Optional[Number] = None, high: Optional[Number] = None,
    low_open: bool = False, high_open: bool = False, integer: bool = False,
) -> Number:
    """``value`` when it is finite and within [low, high] (an open end
    excluded); else exit with a message naming ``option`` and the range."""
    def interval() -> str:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        return f"{left}{'-inf' if low is None else low}, {'inf' if high is None else high}{right}"

    kind = "a whole number" if integer else "a finite number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"{option} must be {kind} in {interval()}, got {value!r}")
    if not math.isfinite(value) or (integer and value != int(value)):
        fail(f"{option} must be {kind} in {interval()}, got {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        fail(f"{option} must be in {interval()}, got {value!r}")
    return value


def check_spans_key(docs: Sequence[Doc], key: str, source: str, option: str = "--spans-key") -> None:
    """Exit when no document of ``source`` has spans under ``key``: a command
    would silently do nothing (mask nothing, score F = 0). The message names
    the keys the documents do have (``evaluation.evaluate.check_gold_key``);
    the readers raise the same one (``corpus.gold_checks.missing_gold``, the
    rule's one home)."""
    try:
        check_gold_key(docs, key, source, option)
    except EvaluationError as err:
        fail(str(err))


def output_folder_problem(path: Path) -> Optional[str]:
    """Why ``path`` cannot be an output folder, or None when it can: it
    exists as a file, device, named pipe or socket, it is a link to nothing,
    or the folder it would be made in is a file or not writable."""
    if os.path.islink(path) and not os.path.exists(path):
        return f"is a link to {os.readlink(path)}, which does not exist: give a folder"
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        # NotADirectoryError: a path under a file, said below
        mode = None
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    if mode is not None and stat.S_ISDIR(mode):
        return None if os.access(target, os.W_OK | os.X_OK) else "is a folder that is not writable"
    if mode is not None and stat.S_ISREG(mode):
        return "is a file: give a folder"
    if mode is not None:
        return "is not a folder (a device, named pipe or socket): give a folder"
    return parent_problem(target, "made")


def check_output_folder(output: Optional[Path], option: str = "--output") -> None:
    """Exit with a message naming ``option`` when ``output`` (a folder a
    command will write into; None when not given) cannot be one. Call it
    before the command's work: the commands that write folders (advise,
    audit, calibrate, tune-thresholds) would otherwise fail after it."""
    if output is None:
        return
    problem = output_folder_problem(output)
    if problem is not None:
        fail(f"{option} {output} {problem}")


def load_pipeline_or_fail(model: Union[str, Path], argument: str) -> Language:
    """The pipeline ``model`` (a package, a folder or blank:LANG); else exit
    with a message naming ``argument`` (e.g. "MODEL", "--model") and the
    model (``evaluation.evaluate.load_pipeline``)."""
    try:
        return load_pipeline(model, argument)
    except EvaluationError as err:
        fail(str(err))
