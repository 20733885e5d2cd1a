"""Issue 31, the property test: random option values and malformed files
thrown at every `spacy-imbalance` command. For each generated call:

- exit code 0 with a result that looks right (each file it says it wrote
  reads back with the number of sentences it says, never an empty corpus; a
  config that parses; a summary without inf or nan), or a non-zero exit with
  a message, never an uncaught exception (a traceback);
- every input file and folder byte for byte as it was, no temporary file of
  an atomic write left behind, and an output that is a symlink or a named
  pipe still one afterwards.

Each call runs in a fresh folder: the inputs (valid and malformed corpora,
metrics files, audit folders) in in/, the outputs in out/, the working
folder. A call gives every option a valid value or leaves it out, but for up
to three hostile ones (edges: 0, -1, nan, inf, 1e308, 1e-308, huge integers,
text that is no number; empty, blank, unicode, '..', '/', very long
strings), so that calls get past the first check to the later ones.

The commands that load or train a pipeline get no pipeline that could
train: MODEL is a missing path, a folder, a corpus file, blank:en or
blank:zz (`evaluate`, `compare`, `calibrate`, `tune-thresholds` check every
option before they load it, and cannot succeed), and `audit` and `advise`
stop where the first model would train (``_WorkStarted``), after every check
of their settings and data. The explicit examples pin the cases of issue 31
and the failures this test found.

Reproducible in CI: derandomized, no example database; under a minute.
SPACY_IMBALANCE_HOSTILE_SCALE=20 hunts with 20 times as many random calls.
"""
import contextlib
import json
import os
import stat
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union
from unittest import mock

from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab
from thinc.api import Config
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.init_config.options import COMPONENTS, ENCODERS, LOSSES, READERS, SAMPLERS, TWO_TASK_LOSSES

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = re.compile(r"[│╭╮╰╯─]")


def _plain(output: str) -> str:
    """CLI output without colours, boxes or line wrapping."""
    return " ".join(BOX.sub(" ", ANSI.sub("", output)).split())


# --- the files ----------------------------------------------------------------

# three sentences, two with an entity (as in test_bad_input.py)
CONLL = "Ann\tB-PER\nsings\tO\n\nBob\tB-PER\nLee\tI-PER\nruns\tO\n\nit\tO\nrains\tO\n"
SENTENCES = [
    (["Ann", "sings"], ["B-PER", "O"]),
    (["Bob", "Lee", "runs"], ["B-PER", "I-PER", "O"]),
    (["it", "rains"], ["O", "O"]),
]


def _docbin(docs: Sequence[Doc]) -> bytes:
    return DocBin(docs=docs, store_user_data=False).to_bytes()


def _gold_docs(vocab: Vocab, *, with_ents: bool = True) -> List[Doc]:
    docs = []
    for words, tags in SENTENCES:
        doc = Doc(vocab, words=words, ents=tags if with_ents else None)
        doc.spans["sc"] = list(doc.ents)
        docs.append(doc)
    return docs


def _spacy_files() -> Dict[str, bytes]:
    vocab = Vocab()
    valid = _gold_docs(vocab)
    zero_span = _gold_docs(vocab)
    zero_span[0].spans["sc"] = [Span(zero_span[0], 1, 1, label="PER")]
    spaced = _gold_docs(vocab)
    spaced[1].ents = [Span(spaced[1], 0, 2, label="A B")]
    spaced[1].spans["sc"] = list(spaced[1].ents)
    with_empty = [Doc(vocab, words=[]), *_gold_docs(vocab), Doc(vocab, words=[])]
    spans_only = _gold_docs(vocab)
    for doc in spans_only:
        doc.ents = []  # the gold only in doc.spans["sc"]
    overlapping = _gold_docs(vocab)
    overlapping[1].spans["sc"] = [Span(overlapping[1], 0, 2, label="PER"), Span(overlapping[1], 1, 3, label="PER")]
    return {
        "spans_only": _docbin(spans_only),
        "overlapping_spans": _docbin(overlapping),
        "valid": _docbin(valid),
        "no_entities": _docbin(_gold_docs(vocab, with_ents=False)),
        "empty_docs": _docbin(with_empty),
        "zero_length_span": _docbin(zero_span),
        "label_with_space": _docbin(spaced),
    }


def _report(name: str, f: object, seed: int) -> Dict[str, object]:
    """A metrics file as `evaluate --output` writes it (the keys summarize reads)."""
    scores = {"p": f, "r": f, "f": f}
    return {
        "name": name, "macro": scores, "micro": scores, "per_type": {"PER": scores}, "target": "ents",
        "data": "test.spacy", "data_sha256": "0" * 64, "seed": seed,
    }


def _file_contents() -> Dict[str, Tuple[str, bytes]]:
    """kind -> (file name, bytes), written afresh for every generated call."""
    spacy_files = _spacy_files()
    garbage = bytes(range(256)) * 3
    audit_total = {"label": "total", "rate": 0.1, "rate_low": 0.05, "rate_high": 0.2}
    return {
        # corpora
        "conll": ("corpus.conll", CONLL.encode()),
        "dev_conll": ("dev.conll", b"Cy\tB-PER\nwalks\tO\n\nDee\tB-PER\nsings\tO\n"),
        "odd_name": ("odd name;\n\u00e9 $x.conll", CONLL.encode()),
        "spacy": ("corpus.spacy", spacy_files["valid"]),
        "empty_conll": ("empty.conll", b""),
        "empty_spacy": ("empty.spacy", b""),
        "garbage_conll": ("garbage.conll", garbage),
        "garbage_spacy": ("garbage.spacy", garbage),
        "spacy_named_conll": ("docbin.conll", spacy_files["valid"]),
        "conll_named_spacy": ("text.spacy", CONLL.encode()),
        "cr_only": ("cr.conll", CONLL.replace("\n", "\r").encode()),
        "crlf": ("crlf.conll", CONLL.replace("\n", "\r\n").encode()),
        "broken_tags": ("broken.conll", b"Ann\tO\nx\tI-X\n\nBob\tB-\nLee\tI-PER\n\nit\tE-\nrains\tS-LOC\n"),
        "lone_tab": ("tab.conll", b"Ann\tB-PER\nsings\tO\n\t\nBob\tB-PER\nruns\tO\n"),
        "one_column": ("one.conll", b"Ann\nsings\n\nBob\n"),
        "latin1": ("latin1.conll", "Zoë\tB-PER\ncafé\tO\n".encode("latin-1")),
        "docstart_only": ("docstart.conll", b"-DOCSTART- -X- O O\n\n"),
        "no_entities": ("no_ents.spacy", spacy_files["no_entities"]),
        "empty_docs": ("empty_docs.spacy", spacy_files["empty_docs"]),
        "zero_length_span": ("zero_span.spacy", spacy_files["zero_length_span"]),
        "label_with_space": ("spaced.spacy", spacy_files["label_with_space"]),
        "spans_only": ("spans_only.spacy", spacy_files["spans_only"]),
        "overlapping_spans": ("overlapping.spacy", spacy_files["overlapping_spans"]),
        "multi_column": ("columns.conll", b"Ann NNP B-NP B-PER\nsings VBZ B-VP O\n\nBob NNP B-NP B-PER\n"),
        "bom": ("bom.conll", "\ufeff".encode() + CONLL.encode()),
        # metrics files of `evaluate --output`, for summarize
        "report": ("run0.json", json.dumps(_report("run", 0.5, 0)).encode()),
        "report_seed": ("run1.json", json.dumps(_report("run", 0.7, 1)).encode()),
        "report_other": ("other.json", json.dumps(_report("other", 0.6, 0)).encode()),
        "report_bad_scores": ("bad_scores.json", json.dumps({**_report("bad", 0.5, 0), "macro": "high"}).encode()),
        "report_text_score": ("text_score.json", json.dumps(_report("text", "high", 0)).encode()),
        "report_huge_score": ("huge.json", json.dumps(_report("huge", 1e308, 0)).encode()),
        "report_nan_score": ("nan.json", b'{"name": "nan", "macro": {"p": NaN, "r": NaN, "f": NaN}, "micro": {"p": NaN, "r": NaN, "f": NaN}, "per_type": {}}'),
        "report_list_name": ("list_name.json", json.dumps({**_report("x", 0.5, 0), "name": ["x"]}).encode()),
        "report_list_per_type": ("list_types.json", json.dumps({**_report("y", 0.5, 0), "per_type": ["PER"]}).encode()),
        "report_missing_f": ("missing_f.json", json.dumps({**_report("z", 0.5, 0), "macro": {"p": 0.5}}).encode()),
        "json_list": ("list.json", b"[1, 2]"),
        "bad_json": ("bad.json", b'{"name": "run", "macro":'),
        # output folders of `audit`, for advise --audit
        "audit": ("audit/summary.json", json.dumps({"labels": [audit_total], "n_docs": 3}).encode()),
        "audit_list": ("audit_list/summary.json", b"[1]"),
        "audit_rows": ("audit_rows/summary.json", json.dumps({"labels": [1, "total"]}).encode()),
        "audit_text_rate": ("audit_text/summary.json", json.dumps({"labels": [{**audit_total, "rate": "high"}]}).encode()),
        # what a model is not: a pipeline folder without config.cfg
        "folder": ("folder/readme.txt", b"not a corpus\n"),
    }


FILES = _file_contents()
# kinds that are a folder (the file named lies inside it) or nothing at all
FOLDER_KINDS = {"folder", "audit", "audit_list", "audit_rows", "audit_text_rate"}
MISSING = "missing"
DANGLING = "dangling"  # a symlink to nothing
EMPTY_PATH = "empty_path"  # '' on the command line


@dataclass(frozen=True)
class In:
    """An input of the call: a kind of FILES, MISSING (no such path),
    DANGLING (a link to nothing) or EMPTY_PATH ('')."""

    kind: str

    def __repr__(self) -> str:
        return f"In({self.kind})"


@dataclass(frozen=True)
class Out:
    """An output of the call: fresh (a new path), nested (in folders to
    make), existing (a file to replace), input (the first input of the call),
    link (a symlink to that input), link_new (a symlink to a new path), fifo
    (a named pipe), folder (an existing folder), under_file (a path below a
    regular file), stdout ('-': init-config's stdout, a file name elsewhere)."""

    kind: str
    ext: str = ".spacy"

    def __repr__(self) -> str:
        return f"Out({self.kind}, {self.ext})"


Token = Union[str, In, Out]


class World:
    """A fresh temporary folder with every input in ``in/`` and room for
    outputs in ``out/``."""

    def __init__(self, root: Path):
        self.inputs = root / "in"
        self.outputs = root / "out"
        self.inputs.mkdir()
        self.outputs.mkdir()
        for name, data in FILES.values():
            path = self.inputs / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (self.inputs / "dangling.conll").symlink_to(self.inputs / "nowhere.conll")
        (self.outputs / "folder").mkdir()
        for ext in (".spacy", ".json", ".md", ".cfg", ".png"):
            (self.outputs / f"existing{ext}").write_bytes(b"an old file\n")
        self._fds: List[int] = []  # the read ends held open on the named pipes
        self._links: List[Path] = []  # the outputs made links
        self._pipes: List[Path] = []  # the outputs made named pipes

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)

    def input_path(self, token: In) -> Path:
        if token.kind == MISSING:
            return self.inputs / "missing.spacy"
        if token.kind == DANGLING:
            return self.inputs / "dangling.conll"
        if token.kind == EMPTY_PATH:
            return Path("")  # '.', the working folder
        name = FILES[token.kind][0]
        return self.inputs / (name.split("/")[0] if token.kind in FOLDER_KINDS else name)

    def output_path(self, token: Out, first_input: Optional[Path]) -> str:
        if token.kind == "stdout":
            return "-"
        if token.kind in ("input", "link"):
            # a command without an input file: its output is some input file
            target = first_input if first_input is not None else self.input_path(In("conll"))
            if token.kind == "input":
                return str(target)
            link = self.outputs / f"link{token.ext}"
            if not link.is_symlink():
                link.symlink_to(target)
                self._links.append(link)
            return str(link)
        if token.kind == "link_new":
            # a link to a new file: the file is written, the link stays
            link = self.outputs / f"link_new{token.ext}"
            if not link.is_symlink():
                link.symlink_to(self.outputs / f"target{token.ext}")
                self._links.append(link)
            return str(link)
        if token.kind == "fifo":
            # a named pipe, which a write must not replace; a reader is kept
            # open so that a writer never blocks
            pipe = self.outputs / f"pipe{token.ext}"
            if not pipe.exists():
                os.mkfifo(pipe)
                self._pipes.append(pipe)
                self._fds.append(os.open(pipe, os.O_RDONLY | os.O_NONBLOCK))
            return str(pipe)
        return str({
            "fresh": self.outputs / f"result{token.ext}",
            "odd_name": self.outputs / f"odd name;\n\u00e9 $x{token.ext}",
            "nested": self.outputs / "new" / "sub" / f"result{token.ext}",
            "existing": self.outputs / f"existing{token.ext}",
            "folder": self.outputs / "folder",
            "under_file": self.outputs / f"existing{token.ext}" / f"result{token.ext}",
        }[token.kind])

    def argv(self, tokens: Sequence[Token]) -> List[str]:
        first = next((self.input_path(t) for t in tokens if isinstance(t, In)), None)
        return [
            ("" if t.kind == EMPTY_PATH else str(self.input_path(t))) if isinstance(t, In) else self.output_path(t, first) if isinstance(t, Out) else t
            for t in tokens
        ]

    def snapshot(self) -> Dict[str, bytes]:
        """Every path under in/ with its bytes, or what it is (a folder, a link)."""
        def contents(path: Path) -> bytes:
            if path.is_symlink():
                return f"<link to {os.readlink(path)}>".encode()
            return b"<folder>" if path.is_dir() else path.read_bytes()

        return {str(p.relative_to(self.inputs)): contents(p) for p in sorted(self.inputs.rglob("*"))}

    def replaced_outputs(self) -> List[str]:
        """The links and named pipes given as outputs that are no longer
        what they were: a link must be written through, a pipe never replaced."""
        links = [p for p in self._links if not p.is_symlink()]
        pipes = [p for p in self._pipes if not stat.S_ISFIFO(os.lstat(p).st_mode)]
        return [str(p) for p in links + pipes]

    def leftovers(self) -> List[str]:
        """Temporary files of an atomic write (``.NAME.HEX.tmp``) left anywhere."""
        root = self.inputs.parent
        return [str(p) for p in root.rglob(".*.tmp")]


class _WorkStarted(Exception):
    """Raised by a stub where `audit` or `advise` would start training: the
    call passed every check, which is all this test can afford to run."""


def _work_started(*args, **kwargs):
    raise _WorkStarted()


# --- strategies ---------------------------------------------------------------

# values that parse as the option's type, among them the edges of every range
INT_EDGES = ("0", "-1", "1", "2", "+1", "-0", str(2**31), str(2**63), str(-(2**63)), str(2**64 + 1), "9" * 40, "-" + "9" * 40)
FLOAT_EDGES = (
    "0", "-0", "-1", "1", "0.5", "nan", "-nan", "inf", "-inf", "1e308", "-1e308", "1e-308", "5e-324", "1e400",
    str(2**64 + 1), "9" * 40,
)
# values that do not parse: click's usage error (exit 2), kept rare so that
# most calls get past the parsing to the commands' own checks
NOT_INTS = ("abc", "", " ", "1.5", "nan", "inf", "1e3", "0x10", "True")
NOT_FLOATS = ("abc", "", " ", "1,5", "0x10", "True", "1/2")
EDGE_STRINGS = (
    "", " ", "  sc  ", "sc", "ents", "PER", "masked", "A B", "..", ".", "/", "a/b", "../x", "-", "--x",
    "ü", "名前", "\t", "\n", "\u200b", "x" * 300, "k" * 5000,
)


def weighted(*choices: Tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """One of the strategies, each as often as its weight; shrinks towards the first."""
    return st.sampled_from([s for weight, s in choices for _ in range(weight)]).flatmap(lambda s: s)


def _text() -> st.SearchStrategy[str]:
    # no NUL (argv cannot hold one) and no lone surrogates other than argv's own
    return st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


def integer(*valid: str) -> st.SearchStrategy[str]:
    """A whole-number option whose value does not make a call slow."""
    return weighted(
        (5, st.sampled_from(valid) if valid else st.integers(-3, 5).map(str)), (3, st.sampled_from(INT_EDGES)),
        (2, st.integers().map(str)), (1, st.sampled_from(NOT_INTS)),
    )


def real(*valid: str) -> st.SearchStrategy[str]:
    """A float option."""
    return weighted(
        (5, st.sampled_from(valid) if valid else st.floats(-2, 2).map(repr)), (3, st.sampled_from(FLOAT_EDGES)),
        (2, st.floats().map(repr)), (1, st.sampled_from(NOT_FLOATS)),
    )


def bounded_int(low: int, fast_high: int, high: int) -> st.SearchStrategy[str]:
    """A whole-number option whose valid values cost time (valid in [low,
    high]): valid values only up to ``fast_high``, any value out of range,
    and the edges (INT_EDGES holds no valid value above 2)."""
    return weighted(
        (5, st.integers(low, fast_high).map(str)), (3, st.sampled_from(INT_EDGES)),
        (2, st.one_of(st.integers(max_value=low - 1), st.integers(min_value=high + 1)).map(str)),
        (1, st.sampled_from(NOT_INTS)),
    )


def string(*valid: str) -> st.SearchStrategy[str]:
    """A string option: one of ``valid``, an edge string or any text."""
    if not valid:
        return weighted((2, st.sampled_from(EDGE_STRINGS)), (1, _text()))
    return weighted((4, st.sampled_from(valid)), (2, st.sampled_from(EDGE_STRINGS)), (1, _text()))


@dataclass(frozen=True)
class Opt:
    """An option of a command: ``valid`` draws values the command should
    accept (None: the option has none, it only appears hostile), ``hostile``
    any value (``valid``'s among them). A flag has neither: it is given or not."""

    name: str
    valid: Optional[st.SearchStrategy[str]] = None
    hostile: Optional[st.SearchStrategy[str]] = None
    required: bool = False
    repeat: int = 1  # the most times it is given (repeatable options)


def flag(name: str) -> Opt:
    return Opt(name)


@st.composite
def arguments(draw, positional: Sequence[st.SearchStrategy[List[Token]]], opts: Sequence[Opt]) -> List[Token]:
    """The arguments of a call: the positional parts (files), then every
    option given or left out, all valid but for up to three hostile ones, so
    that calls get past the first check to the later ones."""
    tokens: List[Token] = [t for part in positional for t in draw(part)]
    hostile = draw(st.sets(st.sampled_from(range(len(opts))), max_size=3)) if opts else set()
    for i, opt in enumerate(opts):
        if opt.valid is None and opt.hostile is None:
            if draw(st.booleans()):
                tokens.append(opt.name)
            continue
        value = opt.hostile if i in hostile or opt.valid is None else opt.valid
        if value is None or not (opt.required or i in hostile or draw(st.booleans())):
            continue
        for v in draw(st.lists(value, min_size=1, max_size=opt.repeat)):
            tokens += [opt.name, v]
    return tokens


def one(value: st.SearchStrategy[Token]) -> st.SearchStrategy[List[Token]]:
    return value.map(lambda v: [v])


def some(value: st.SearchStrategy[Token], max_size: int) -> st.SearchStrategy[List[Token]]:
    return st.lists(value, min_size=1, max_size=max_size)


VALID_CORPORA = ["conll", "spacy", "odd_name"]
CORPUS_KINDS = [k for k in FILES if not k.startswith(("report", "json", "bad_json", "audit"))] + [MISSING, DANGLING, EMPTY_PATH]
REPORT_KINDS = [k for k in FILES if k.startswith(("report", "json", "bad_json"))] + ["conll", "garbage_spacy", "empty_conll", "folder", MISSING]
AUDIT_KINDS = ["audit", "audit_list", "audit_rows", "audit_text_rate", "folder", "conll", MISSING]
MODEL_KINDS = ["folder", "spacy", MISSING]

# half the calls on a corpus that reads, half on any
corpora = weighted((1, st.sampled_from(VALID_CORPORA)), (1, st.sampled_from(CORPUS_KINDS))).map(In)
reports = weighted((2, st.sampled_from(["report", "report_seed", "report_other"])), (1, st.sampled_from(REPORT_KINDS))).map(In)
# stdout: '-', init-config's stdout, a file named '-' for the others
FILE_OUTPUTS = ("fresh", "nested", "existing", "input", "link", "link_new", "fifo", "folder", "under_file", "stdout", "odd_name")
# a folder a command writes into: the input file itself, a pipe or a path below a file is no folder
FOLDER_OUTPUTS = ("fresh", "nested", "input", "link", "fifo", "folder", "under_file", "odd_name")


def outputs(ext: str, kinds: Sequence[str] = FILE_OUTPUTS) -> st.SearchStrategy[Out]:
    """A good output half the time, else any."""
    good = [kind for kind in ("fresh", "nested", "existing") if kind in kinds]
    return weighted((1, st.sampled_from(good)), (1, st.sampled_from(kinds))).map(lambda kind: Out(kind, ext))


def output_option(name: str, ext: str, kinds: Sequence[str] = FILE_OUTPUTS) -> Opt:
    good = [kind for kind in ("fresh", "nested", "existing") if kind in kinds]
    return Opt(name, st.sampled_from(good).map(lambda k: Out(k, ext)), st.sampled_from(kinds).map(lambda k: Out(k, ext)))


spans_key = string("sc", "ents", "masked")
split_part = st.sampled_from(["train", "dev", "test", "train", "", ".", "..", "a/b", "ü", "x" * 300, "t e"])
split_spec = st.one_of(
    string("train=0.5,test=0.5", "train=0.7,dev=0.15,test=0.15", "train=1"),
    st.lists(st.tuples(split_part, real("0.5", "0.25", "1", "0.34")), min_size=1, max_size=4).map(
        lambda items: ",".join(f"{name}={value}" for name, value in items)
    ),
)
langs = string("en", "xx", "de", "zz", "EN", "en-US", "../en", "ja")


def gpu_id() -> Opt:
    # -1 the CPU; 0 and up need CuPy and a GPU, refused with a message where there are none
    return Opt("--gpu-id", st.just("-1"), integer("-1", "0", "1"))


def choice(name: str, valid: Sequence[str]) -> Opt:
    return Opt(name, st.sampled_from(list(valid)), string(*valid))


def whole(name: str, *valid: str) -> Opt:
    return Opt(name, st.sampled_from(valid), integer(*valid))


def fraction(name: str, *valid: str) -> Opt:
    return Opt(name, st.sampled_from(valid), real(*valid))


def key(name: str, *valid: str) -> Opt:
    return Opt(name, st.sampled_from(valid), spans_key)


# --- what a result must look like ----------------------------------------------

def _written_sentences(output: str, argv: List[str]) -> List[Tuple[int, str]]:
    """(count, path) of each "Wrote N sentences to PATH" line. A path may
    hold spaces and line breaks: it is the longest of the call's paths (an
    argument, or a part file NAME.spacy in one) that the line goes on with."""
    parts = ["train", "dev", "test"]  # default-corpus
    if "--split" in argv:
        parts += [item.partition("=")[0].strip() for item in argv[argv.index("--split") + 1].split(",")]
    paths = argv + [str(Path(arg) / f"{part}.spacy") for arg in argv for part in parts if part]
    plain = _plain(output)
    written = []
    for match in re.finditer(r"Wrote ([\d,]+) sentences to ", plain):
        rest = plain[match.end():]
        said = [path for path in paths if path and rest.startswith(" ".join(path.split()))]
        assert said, f"wrote to no path of the call: {rest[:200]}"
        written.append((int(match.group(1).replace(",", "")), max(said, key=len)))
    return written


def _check_docbins(result, argv: List[str]) -> None:
    """Each file a command says it wrote reads back with that many sentences."""
    written = _written_sentences(result.output, argv)
    assert written, f"exit 0 but no 'Wrote N sentences' line: {_plain(result.output)[:500]}"
    for n, path in written:
        docs = list(DocBin().from_disk(path).get_docs(Vocab()))
        assert len(docs) == n, f"{path}: said {n} sentences, holds {len(docs)}"
        assert n > 0, f"wrote an empty corpus {path} with exit 0"


def _flag_given(argv: List[str], flag: str) -> bool:
    """Whether ``flag`` is given as a flag, not as the value of an option
    (`--spans-key --json` sets the key '--json')."""
    return any(arg == flag and not (i > 0 and argv[i - 1] == "--spans-key") for i, arg in enumerate(argv))


def _check_stats(result, argv: List[str]) -> None:
    if _flag_given(argv, "--json"):
        stats = json.loads(result.stdout)
        assert stats["tokens"] >= 0 and stats["sentences"] >= 0, stats
    else:
        assert "sentences" in _plain(result.output)


def _check_missampling(result, argv: List[str]) -> None:
    assert "Missampling rate" in _plain(result.output)
    if "--output" in argv:
        data = json.loads(Path(argv[argv.index("--output") + 1]).read_text(encoding="utf8"))
        assert data["results"], data
    if "--plot" in argv:
        assert Path(argv[argv.index("--plot") + 1]).stat().st_size > 0


def _check_summarize(result, argv: List[str]) -> None:
    table = _plain(result.output)
    assert "| system | runs |" in table
    # scores are fractions: an inf, nan or a mean above 100 % is no summary
    assert not re.search(r"\b(nan|inf)\b", table, re.I), table
    if "--output" in argv:
        path = Path(argv[argv.index("--output") + 1])
        assert "| system | runs |" in path.read_text(encoding="utf8")
        json.loads(path.with_suffix(".json").read_text(encoding="utf8"))


def _check_init_config(result, argv: List[str]) -> None:
    text = result.stdout if argv[1] == "-" else Path(argv[1]).read_text(encoding="utf8")
    config = Config().from_str(text, interpolate=False)
    assert config["nlp"]["pipeline"], text[:500]


def _check_default_corpus(result, argv: List[str]) -> None:
    _check_docbins(result, argv)
    assert {Path(path).name for _, path in _written_sentences(result.output, argv)} == {"train.spacy", "dev.spacy", "test.spacy"}


def _never_succeeds(result, argv: List[str]) -> None:
    raise AssertionError("exit 0 without a pipeline to load or train")


# --- the property ---------------------------------------------------------------

Check = Callable[..., None]


@contextlib.contextmanager
def _stubbed(command: str) -> Iterator[None]:
    """Stop audit and advise where the first model would train."""
    if command == "audit":
        with mock.patch("spacy_imbalance.audit.run.train_fold", _work_started):
            yield
    elif command == "advise":
        with mock.patch("spacy_imbalance.cli.advise.run_candidates", _work_started):
            yield
    else:
        yield


def _outcome(result) -> str:
    if isinstance(result.exception, _WorkStarted):
        return "passed every check (training stubbed)"
    if result.exit_code == 0:
        return "exit 0"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"uncaught {type(result.exception).__name__}"
    text = _plain(result.output)
    # the message without the file names and values in it: a few kinds per command
    shape = re.sub(r"/tmp/\S*|[-+]?\d[\d.e+-]*", "_", text)
    return f"exit {result.exit_code}: {shape[:60]}"


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _check_call(command: str, tokens: Sequence[Token], check_success: Check) -> None:
    """Run ``command`` with ``tokens`` in a fresh World and assert the property."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp, contextlib.closing(World(Path(tmp))) as world, _cwd(world.outputs):
        # in out/: a relative output ('-' for a file named so) lands there, not in the repository
        argv = [command, *world.argv(tokens)]
        before = world.snapshot()
        with _stubbed(command):
            result = CliRunner().invoke(app, argv)
        shown = f"call: {argv!r}\noutput: {_plain(result.output)[:800]}"
        # what the calls came to (pytest --hypothesis-show-statistics)
        event(_outcome(result))
        if isinstance(result.exception, _WorkStarted):
            pass  # every check passed; the training is not run here
        elif result.exit_code == 0:
            check_success(result, argv)
        else:
            # a message, not a traceback: typer.Exit and click's usage errors are SystemExit
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                f"{shown}\nuncaught {type(result.exception).__name__}: {result.exception}"
            )
            assert "Traceback" not in result.output, shown
            assert len(_plain(result.output)) >= 10, f"exit {result.exit_code} without a message: {shown}"
        after = world.snapshot()
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        assert not changed, f"{shown}\ninputs changed: {changed}"
        assert not world.leftovers(), f"{shown}\ntemporary files left: {world.leftovers()}"
        assert not world.replaced_outputs(), f"{shown}\nreplaced by a regular file: {world.replaced_outputs()}"


# CI runs the same calls every time (derandomize); a hunt for more defects
# runs SCALE times as many fresh random calls: SPACY_IMBALANCE_HOSTILE_SCALE=20
SCALE = int(os.environ.get("SPACY_IMBALANCE_HOSTILE_SCALE", "1"))


def hostile(max_examples: int):
    return settings(
        max_examples=max_examples * SCALE, deadline=None, derandomize=SCALE == 1, database=None,
        # no explain phase: it reruns a failing call a hundred times to say which lines it ran
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    )


# --- the commands that write corpora --------------------------------------------

@hostile(50)
@given(arguments([one(corpora), one(outputs(".spacy"))], [
    key("--spans-key", "sc", ""), Opt("--split", st.sampled_from(["train=0.5,test=0.5", "a=0.34,b=0.66"]), split_spec),
    whole("--split-seed", "0", "13"),
]))
@example([In("conll"), Out("fresh"), "--split", ""])  # issue 31 L8
@example([In("spacy"), Out("fresh")])  # L7
@example([In("conll"), Out("fifo")])  # H1
def test_hostile_input_convert(args):
    _check_call("convert", args, _check_docbins)


# each call that succeeds converts 2,394 tweets (2 s): the outputs that must fail come as examples
@hostile(1)
@given(arguments([one(outputs("", ("fresh", "folder", "input", "under_file")))], [key("--spans-key", "sc", "")]))
@example([Out("input", "")])
@example([Out("under_file", "")])
@example([Out("fifo", "")])
@example([Out("link", ""), "--spans-key", ""])
def test_hostile_input_default_corpus(args):
    _check_call("default-corpus", args, _check_default_corpus)


@hostile(40)
@given(arguments([one(corpora)], [key("--spans-key", "sc"), flag("--json")]))
def test_hostile_input_stats(args):
    _check_call("stats", args, _check_stats)


@hostile(40)
@given(arguments([one(corpora), one(outputs(".spacy"))], [
    Opt("--p", st.sampled_from(["0", "0.3", "1"]), real("0", "0.3", "1"), required=True), whole("--seed", "0", "7"),
    key("--spans-key", "sc"), key("--masked-key", "masked", "dropped"),
]))
@example([In("spacy"), Out("fresh"), "--p", "0.5", "--spans-key", "nokey"])  # M8
@example([In("zero_length_span"), Out("fresh"), "--p", "0.5", "--spans-key", "sc"])  # L2
def test_hostile_input_mask(args):
    _check_call("mask", args, _check_docbins)


@hostile(40)
@given(arguments([one(corpora), one(outputs(".spacy"))], [
    choice("--method", ["none", "sC", "sCR", "sCRD", "nsCRD"]), choice("--count", ["tokens", "mentions"]), key("--spans-key", "sc"),
]))
def test_hostile_input_resample(args):
    _check_call("resample", args, _check_docbins)


@hostile(40)
@given(arguments([one(corpora), one(outputs(".spacy"))], [fraction("--ratio", "1", "3", "1000"), key("--spans-key", "sc")]))
@example([In("spacy"), Out("fresh"), "--ratio", "1e308"])  # M6
@example([In("no_entities"), Out("fresh")])  # M9
def test_hostile_input_undersample(args):
    _check_call("undersample", args, _check_docbins)


@hostile(40)
@given(arguments([one(corpora), one(outputs(".spacy"))], [
    Opt("--n", st.sampled_from(["1", "2", "3"]), integer("1", "2", "3", "4"), required=True),
    fraction("--entity-token-ratio", "0.05", "0.3", "0.5"), whole("--seed", "0", "7"),
    fraction("--tolerance", "0.005", "0.2", "0.5"), key("--spans-key", "sc"),
]))
@example([In("spacy"), Out("fresh"), "--n", "2", "--entity-token-ratio", "0.3", "--tolerance", "inf"])  # L6
def test_hostile_input_subsample(args):
    _check_call("subsample", args, _check_docbins)


@hostile(40)
@given(arguments([one(corpora), one(outputs(".spacy"))], [
    choice("--method", ["all", "label_wise_token_replacement", "mention_replacement", "shuffle_within_segments"]),
    fraction("--p", "0", "0.3", "1"), whole("--copies", "1", "2", "100"), whole("--seed", "0", "7"), key("--spans-key", "sc"),
]))
@example([In("spacy"), Out("fresh"), "--copies", "1000000000"])  # M7
def test_hostile_input_augment(args):
    _check_call("augment", args, _check_docbins)


# --- measuring and summarizing ------------------------------------------------

@hostile(30)
@given(arguments([one(corpora)], [
    Opt("--model", None, st.sampled_from(["blank:en", "blank:zz", "no-such-pipeline", ""])),
    # weighted and top draw from a model's outputs: without --model they are refused
    Opt("--sampler", st.sampled_from(["all", "uniform"]), string("all", "uniform", "weighted", "top"), repeat=2),
    Opt("--p", st.sampled_from(["0", "0.5", "1"]), real("0", "0.5", "1"), repeat=3),
    # every seed masks and samples the corpus once per p: valid counts kept small
    Opt("--seeds", st.sampled_from(["1", "2"]), bounded_int(1, 3, 1000)),
    fraction("--rate", "0.7", "1"), fraction("--mu", "0", "8"), fraction("--temperature", "1e-6", "1", "1e6"),
    fraction("--ratio", "0.05", "1"), Opt("--max-span-width", st.sampled_from(["1", "8"]), bounded_int(1, 8, 256)),
    key("--gold-key", "sc"), whole("--batch-size", "1", "64"), output_option("--output", ".json"),
    Opt("--plot", st.just(Out("fresh", ".png")), st.sampled_from(["input", "folder", "under_file", "fifo", "link_new"]).map(lambda k: Out(k, ".png"))),
    gpu_id(),
]))
@example([In("conll"), "--mu", "nan", "--output", Out("fresh", ".json")])  # M5
@example([In("conll"), "--sampler", "weighted", "--temperature", "inf"])  # L6
@example([In("conll"), "--model", "blank:zz"])  # found by this test: ImportError
def test_hostile_input_missampling(args):
    _check_call("missampling", args, _check_missampling)


@hostile(40)
@given(arguments([some(reports, 3)], [
    output_option("--output", ".md"),
    Opt("--plot", st.just(Out("fresh", ".png")), st.sampled_from(["input", "folder", "under_file", "fifo", "link_new"]).map(lambda k: Out(k, ".png"))),
    Opt("--title", st.just("Per-type F1"), string()),
]))
@example([In("report"), In("report")])  # H2: one run given twice
@example([In("report_bad_scores")])  # found by this test: malformed metrics files
@example([In("report_text_score")])
@example([In("report_missing_f")])
@example([In("report_list_name")])
@example([In("report_list_per_type")])
@example([In("report_huge_score")])
def test_hostile_input_summarize(args):
    _check_call("summarize", args, _check_summarize)


def _set_item() -> st.SearchStrategy[str]:
    keys = st.sampled_from([
        "training.max_steps", "training.seed", "components.sampled_spancat.max_span_width", "nlp.lang",
        "paths.train", "training", "x", "", " ", "training.nothing", "components", "nlp.batch_size",
    ])
    values = st.one_of(real(), integer(), string())
    return st.one_of(st.tuples(keys, values).map(lambda kv: f"{kv[0]}={kv[1]}"), string())


@hostile(30)
# no input: an existing file is an old config, which --force replaces
@given(arguments([one(outputs(".cfg", [k for k in FILE_OUTPUTS if k not in ("input", "link")]))], [
    Opt("--component", st.sampled_from(COMPONENTS), string(*COMPONENTS), required=True),
    choice("--sampler", list(SAMPLERS)), choice("--loss", [*LOSSES, *TWO_TASK_LOSSES]), choice("--resample", list(READERS)),
    choice("--encoder", ENCODERS), flag("--gpu"), Opt("--lang", st.sampled_from(["en", "de", "xx"]), langs),
    Opt("--set", st.sampled_from(["training.max_steps=100", "training.seed=1"]), _set_item(), repeat=2), flag("--force"),
]))
@example([Out("fifo", ".cfg"), "--component", "ner"])  # H1
def test_hostile_input_init_config(args):
    _check_call("init-config", args, _check_init_config)


# --- the commands that load or train a pipeline -------------------------------
# MODEL never loads, so these calls can only fail; they show that every option
# is checked with a message, and no input is touched, before the model is read.

models = st.sampled_from(MODEL_KINDS).map(In)
model_names = st.one_of(models, st.sampled_from(["blank:en", "blank:zz", ""]))


def _evaluation_options() -> List[Opt]:
    return [
        output_option("--output", ".json"), key("--spans-key", "sc"), whole("--n-bootstrap", "1", "10"),
        whole("--seed", "0", "7"), whole("--batch-size", "1", "64"), gpu_id(),
    ]


@hostile(25)
@given(arguments([one(model_names), one(corpora)], [Opt("--name", st.just("run"), string()), *_evaluation_options()]))
@example([In(MISSING), In("conll"), "--output", Out("folder", ".json")])  # M3
@example(["blank:zz", In("conll")])  # found by this test: ImportError
@example(["blank:en", In("spacy"), "--spans-key", "sc"])  # found by this test: no component, F = 0 by construction
def test_hostile_input_evaluate(args):
    _check_call("evaluate", args, _never_succeeds)


@hostile(25)
@given(arguments([one(corpora), some(model_names, 3)], _evaluation_options()))
@example([In("conll"), In(MISSING), In(MISSING), "--n-bootstrap", "0"])  # M4
@example([In("conll"), "blank:zz", "blank:zz"])  # found by this test: ImportError
@example([In("spacy"), "blank:en", "blank:en", "--spans-key", "sc"])  # found by this test: no component, F = 0 by construction
def test_hostile_input_compare(args):
    _check_call("compare", args, _never_succeeds)


def _tuning_options(component: str) -> List[Opt]:
    return [
        output_option("--output", "", FOLDER_OUTPUTS), flag("--in-place"), choice("--component", [component]),
        fraction("--step", "0.05", "0.005", "0.5"), whole("--batch-size", "1", "64"), gpu_id(),
    ]


@hostile(25)
@given(arguments([one(models), one(corpora)], [
    *_tuning_options("sampled_spancat"), output_option("--report", "", FOLDER_OUTPUTS),
    fraction("--min-gain", "0", "1", "99.9"), flag("--no-shared"),
]))
@example([In("folder"), In("conll"), "--in-place", "--step", "5e-324"])  # found by this test: OverflowError
def test_hostile_input_calibrate(args):
    _check_call("calibrate", args, _never_succeeds)


@hostile(25)
@given(arguments([one(models), one(corpora)], [*_tuning_options("two_task_ner"), output_option("--plot", ".png")]))
@example([In("folder"), In("conll"), "--in-place", "--step", "5e-324"])  # found by this test: OverflowError
def test_hostile_input_tune_thresholds(args):
    _check_call("tune-thresholds", args, _never_succeeds)


def _started_or_refused(result, argv: List[str]) -> None:
    raise AssertionError("exit 0, yet the stub stops the command before its first model trains")


@hostile(25)
@given(arguments([one(corpora)], [
    Opt("--output", st.just(Out("fresh", "")), st.sampled_from(FOLDER_OUTPUTS).map(lambda k: Out(k, "")), required=True),
    Opt("--dev", st.just(In("dev_conll")), corpora), Opt("--config", None, st.sampled_from([In("conll"), In("spacy"), In(MISSING)])),
    Opt("--vectors", None, string("en_core_web_md")), flag("--features"), Opt("--folds", st.sampled_from(["2", "3"]), integer("2", "3"), required=True),
    fraction("--threshold", "0.5", "0.9"), choice("--component", ["sampled_spancat"]), Opt("--spans-key", st.just("suspects"), spans_key),
    whole("--resamples", "0", "100", "500"), whole("--html-limit", "0", "300"), whole("--seed", "0", "7"), gpu_id(),
]).flatmap(
    # extra options override the config, as for spacy train
    lambda args: st.sampled_from([[], [], ["--training.max_steps", "2"], ["--training.max_steps", "nan"], ["--nothing"], ["--x.y", "1"], ["--paths.train", "v"]]).map(lambda extra: args + extra)
))
@example([In("conll"), "--output", Out("fresh", ""), "--folds", "2", "--spans-key", ""])  # L4
@example([In("empty_docs"), "--output", Out("fresh", ""), "--folds", "2"])  # M10
@example([In("conll"), "--output", Out("fresh", ""), "--folds", "2", "--nothing"])  # found by this test: click's NoSuchOption
def test_hostile_input_audit(args):
    _check_call("audit", args, _started_or_refused)


@hostile(20)
@given(arguments([one(corpora), one(weighted((1, st.just(In("dev_conll"))), (1, corpora)))], [
    Opt("--output", st.just(Out("fresh", "")), st.sampled_from(FOLDER_OUTPUTS).map(lambda k: Out(k, "")), required=True),
    fraction("--budget", "0.01", "20"), whole("--seeds", "2", "3"), choice("--encoder", ENCODERS),
    Opt("--vectors", None, string("en_core_web_md")), Opt("--audit", st.just(In("audit")), st.sampled_from(AUDIT_KINDS).map(In)),
    Opt("--lang", st.sampled_from(["en", "de"]), langs), whole("--workers", "1"), Opt("--address", None, string("auto")),
    gpu_id(), whole("--max-steps", "1", "2", "20000"),
]))
@example([In("conll"), In("dev_conll"), "--output", Out("fresh", ""), "--budget", "inf"])  # M1
@example([In("conll"), In("conll"), "--output", Out("fresh", "")])  # M2: TRAIN = DEV
@example([In("conll"), In("dev_conll"), "--output", Out("fresh", ""), "--lang", "zz"])  # L5
@example([In("conll"), In("dev_conll"), "--output", Out("fresh", ""), "--audit", In("audit_list")])  # found by this test: malformed audit summaries
@example([In("conll"), In("dev_conll"), "--output", Out("fresh", ""), "--audit", In("audit_rows")])
@example([In("conll"), In("dev_conll"), "--output", Out("fresh", ""), "--audit", In("audit_text_rate")])
def test_hostile_input_advise(args):
    _check_call("advise", args, _started_or_refused)
