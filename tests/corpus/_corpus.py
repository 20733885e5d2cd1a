"""What the corpus tests share: calling the app and reading its output,
writing corpus files, and building reader configs (nested or not) the way a
training config spells them, so that each test states only its settings."""
import re

import pytest
from spacy.util import registry
from thinc.api import Config
from typer.testing import CliRunner

from spacy_imbalance.cli import app
from spacy_imbalance.corpus.docs_io import write_docbin

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = re.compile(r"[│╭╮╰╯─]")


def plain(output: str) -> str:
    """CLI output without colours, boxes or line wrapping (wasabi and rich
    wrap long messages at spaces), so that messages can be searched."""
    return " ".join(BOX.sub(" ", ANSI.sub("", output)).split())


def says(output: str, message: str) -> bool:
    """Whether the CLI output holds ``message``, wherever the panel broke its
    lines: rich folds a word longer than the width (a temporary path) mid-word."""
    return "".join(message.split()) in "".join(plain(output).split())


def invoke(*args):
    """Run the command line on args (paths and numbers as strings)."""
    return CliRunner().invoke(app, [str(arg) for arg in args])


def write_conll(folder, text, name="in.conll"):
    """Write text (or bytes) as UTF-8 bytes, exactly (no newline translation)."""
    path = folder / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def write_docs(path, docs):
    """Write docs as a .spacy file at path; the path, for fixtures to return."""
    write_docbin(docs, path)
    return path


def corpus_config(*readers, path, section="corpus", augmenter=()):
    """The config text of nested readers, parsed: the first reader in
    [section], each next one as the `corpus` of the one before, and the path
    in the innermost. A reader is its name without prefix and version
    ("MaskedCorpus"), or another reader's registered name ("spacy.Corpus.v1"),
    followed by its setting lines ("p = 0.5"); ``augmenter``, the
    innermost reader's augmenter, likewise (its registered name first).
    Parsing is left to Config, as for a real config file, so values such as
    "1e400" or "0.5" for an integer reach the readers' validation as written."""
    blocks = []
    for depth, (name, *settings) in enumerate(readers):
        header = ".".join([section] + ["corpus"] * depth)
        registered = name if "." in name else f"spacy-imbalance.{name}.v1"
        blocks.append([f"[{header}]", f'@readers = "{registered}"', *settings])
    blocks[-1].append(f'path = "{path}"')
    if augmenter:
        name, *settings = augmenter
        blocks.append([f"[{header}.augmenter]", f'@augmenters = "{name}"', *settings])
    return Config().from_str("\n\n".join("\n".join(block) for block in blocks))


def assert_config_rejects(name, *settings, path, match, error=ValueError):
    """Resolving the config of reader name with settings on path raises error
    matching match: the readers check their settings when the config is
    resolved, before any training starts."""
    config = corpus_config((name, *settings), path=path)
    with pytest.raises(error, match=match):
        registry.resolve(config)


def count_docbin_reads(monkeypatch):
    """A list that grows by one each time a .spacy file is deserialised
    (DocBin.get_docs): a read costs far more than a copy of its Docs."""
    from spacy.tokens import DocBin

    reads = []
    get_docs = DocBin.get_docs
    monkeypatch.setattr(DocBin, "get_docs", lambda self, vocab: reads.append(1) or get_docs(self, vocab))
    return reads
