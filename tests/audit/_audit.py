"""What the tests of the `spacy-imbalance audit` command share: running it
with its folds trained by a test's trainer, reading its output without
colours, and the headline its summary.json says it printed."""
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from click.testing import Result
from spacy.tokens import Doc
from typer.testing import CliRunner

from spacy_imbalance.audit import run as audit_run
from spacy_imbalance.audit.estimate import Calibration
from spacy_imbalance.audit.run import headline
from spacy_imbalance.cli import app
from spacy_imbalance.corpus.docs_io import write_docbin

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plain(output: str) -> str:
    """Command output without colours or line wrapping."""
    return " ".join(ANSI.sub("", output).split())


def audit_command(tmp_path: Path, docs: List[Doc], trainer: Any, monkeypatch: Any, *options: str) -> Tuple[Result, Path]:
    """`spacy-imbalance audit` of ``docs`` (written to tmp_path/train.spacy)
    in 2 folds without resamples, plus ``options``, each fold trained by
    ``trainer``: its result and its output folder (tmp_path/audit)."""
    train_fold = audit_run.train_fold

    def fast(*args: Any, **kwargs: Any) -> Any:
        return train_fold(*args, **{**kwargs, "trainer": trainer})

    monkeypatch.setattr(audit_run, "train_fold", fast)
    train = tmp_path / "train.spacy"
    write_docbin(docs, train)
    out = tmp_path / "audit"
    result = CliRunner().invoke(app, ["audit", str(train), "-o", str(out), "--folds", "2", "--resamples", "0", *options])
    return result, out


def summary_headline(out: Path) -> Tuple[Dict[str, Any], str]:
    """An audit's summary.json and the headline of its total row (threshold
    0.5, self calibration: the command's defaults)."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf8"))
    total = summary["labels"][-1]
    line = headline(total["suspects"], 0.5, {k: v for k, v in total.items() if k not in ("label", "suspects")}, Calibration.SELF)
    return summary, line
