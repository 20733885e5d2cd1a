import contextlib
import functools
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, NoReturn, Optional, Tuple, Type

import typer
from thinc.api import require_gpu
from wasabi import msg

# the --set parsing every command shares with the benchmark (cli/__init__.py exports them)
from ..benchmark.options import setting_value, split_sets  # noqa: F401

# Rich draws --help and reads a bracket that opens with a lower-case letter as a
# style tag, which it drops: a help text writes \\[ for a literal [, as in
# pip install 'spacy-imbalance\\[minilm]' (tests/cli/test_help.py checks them all)
app = typer.Typer(
    name="spacy-imbalance",
    help=(
        "Imbalanced and partly annotated data for spaCy NER: corpus tools, training configs, scores with "
        "intervals, and a hunt for the entities annotators missed.\n\n"
        "Corpora: convert, default-corpus, stats; resample, undersample, augment, subsample (rebalanced or "
        "smaller sets); mask (synthetic missing entities); scope-split (parts that annotate different types).\n"
        "Training, with python -m spacy train: init-config (a config with the imbalance methods), "
        "advise (which method fits a corpus), tune-thresholds (alias calibrate).\n"
        "Scores: evaluate (macro-F1 with bootstrap intervals), compare (paired bootstrap), summarize (over seeds).\n"
        "Missing annotations: audit, review, apply-review; audit-check run, audit-check summary, audit-check workers (how well "
        "the audit finds entities hidden from your corpus); missampling (how often samplers draw them as negatives).\n"
        "Benchmarks: benchmark run (configs x corpora x seeds, resumable), benchmark speed, benchmark sweep-speed, "
        "benchmark tune, benchmark table (a study's tables)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# the extra that installs matplotlib, for every command that draws a plot
PLOTS_EXTRA = "pip install 'spacy-imbalance[plots]'"
def has_matplotlib() -> bool:
    """Whether matplotlib imports (an import, not a look-up: a broken
    install is as good as none)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def warn_without_matplotlib(command: str, plots: str) -> None:
    """Say before the work of ``command`` that it leaves out ``plots`` (the
    files it draws beside its reports unasked) when matplotlib is missing:
    an audit that runs for an hour should not end with them silently gone."""
    if not has_matplotlib():
        msg.warn(f"{command} leaves out {plots}: they are drawn with matplotlib, which is not installed ({PLOTS_EXTRA})")


def require_matplotlib(what: str) -> None:
    """Exit before any work when ``what`` (e.g. "--plot draws the chart"),
    asked for by an option, needs matplotlib and it is not installed: the
    plots come after the work, which would be lost to a traceback."""
    if not has_matplotlib():
        fail(f"{what} with matplotlib, which is not installed: {PLOTS_EXTRA}")


def alias(name: str, command: str, function: Callable[..., None]) -> None:
    """Register ``name`` as another name of ``command`` (run by
    ``function``): it takes the same arguments and options, says in one line
    that it is an alias, then does what ``command`` does."""

    # wraps: typer reads the parameters from the wrapped function's signature
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> None:
        msg.info(f"`{name}` is an alias of `{command}`")
        function(*args, **kwargs)

    app.command(name, help=f"An alias of `{command}`: the same arguments and options.")(run)


def fail(message: str) -> NoReturn:
    """Print a clear message and exit with code 1, instead of a traceback."""
    msg.fail(message)
    raise typer.Exit(1)


@contextlib.contextmanager
def clear_errors(*extra: Type[BaseException]) -> Iterator[None]:
    """A bad setting, file or failed step as a message naming it (exit code 1), not a traceback: a
    typer.BadParameter, ValueError, OSError or failed subprocess, and the exception types in `extra`."""
    caught: Tuple[Type[BaseException], ...] = (ValueError, OSError, subprocess.CalledProcessError, *extra)
    try:
        yield
    except typer.BadParameter as err:
        fail(err.format_message())
    except caught as err:
        fail(str(err))


def use_gpu(gpu_id: int) -> None:
    """Set up the device of --gpu-id: GPU ``gpu_id``, or the CPU for -1."""
    if gpu_id < 0:
        return
    try:
        require_gpu(gpu_id)
    except (ValueError, RuntimeError) as err:
        # ValueError: thinc finds no CuPy or no GPU; RuntimeError: CuPy's CUDA
        # errors, e.g. for a GPU id that does not exist
        fail(f"--gpu-id {gpu_id} needs CuPy and a GPU: {err}. Use --gpu-id -1 for the CPU")


def check_outputs_are_not_inputs(inputs: Iterable[Path], outputs: Iterable[Optional[Path]]) -> None:
    """Exit before anything is written when an output would replace an input:
    the same path, or the same file spelled differently or reached by a link.
    Outputs that are None (an option not given) are skipped."""
    input_paths = list(inputs)
    for output in outputs:
        if output is None:
            continue
        for input_path in input_paths:
            if _same_file(input_path, output):
                fail(
                    f"The output {output} is the input {input_path}: writing it would destroy "
                    "the input. Give another output path"
                )


def check_save_target(model: Path, output: Optional[Path], in_place: bool, what: str) -> None:
    """The rule of the commands that tune a pipeline: it is saved either to
    a copy (--output) or into MODEL (--in-place), one of the two and only one,
    so that MODEL is never overwritten by accident. ``what``: "tuned",
    "calibrated"."""
    if output is None and not in_place:
        fail(f"say where the {what} pipeline goes: --output DIR for a {what} copy of {model}, or --in-place to overwrite its thresholds")
    if output is not None and in_place:
        fail("--output and --in-place exclude each other: --in-place saves into MODEL")
    if output is not None and output.resolve() == model.resolve():
        fail(f"--output {output} is MODEL itself: use --in-place to save the tuned thresholds into it")


def check_not_a_file(output: Optional[Path], option: str = "--output") -> None:
    """A folder output that exists as a file: an error, not a traceback."""
    if output is not None and output.exists() and not output.is_dir():
        fail(f"{option} {output} is a file: give a folder")


def _same_file(a: Path, b: Path) -> bool:
    # resolve() follows symlinks and removes "." and ".."; samefile() also sees
    # hard links and case-insensitive file systems, but needs both files to exist
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


# --split part names become file names in the output folder: no path
# separators, no "..", nothing a shell or another system reads differently
PART_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def parse_split(value: str) -> Dict[str, float]:
    """'train=0.7,dev=0.15,test=0.15' -> {'train': 0.7, 'dev': 0.15, 'test': 0.15}."""
    parts: Dict[str, float] = {}
    for item in value.split(","):
        name, _, fraction = (x.strip() for x in item.partition("="))
        if name in parts:
            raise typer.BadParameter(f"the part {name!r} is named twice in {value!r}")
        try:
            parts[name] = float(fraction)
        except ValueError:
            name = ""
        if not name:
            raise typer.BadParameter(f"expected name=fraction pairs like train=0.7,dev=0.15,test=0.15, got {item!r}")
        if not PART_NAME.fullmatch(name) or name in (".", ".."):
            raise typer.BadParameter(
                f"the part name {name!r} is not a plain file name: use letters, digits, '-', '_' "
                "and '.' (but not '.' or '..' alone), as it names the file NAME.spacy in the output folder"
            )
    return parts
