"""A hand-made corpus with suspects, a synthetic AuditResult around them (the
page needs no trained model), and headless Chromium to drive the page."""
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, List, Sequence, Tuple

import pytest
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_imbalance.audit.estimate import TOTAL, Calibration, MissRate
from spacy_imbalance.audit.folds import FoldPlan
from spacy_imbalance.audit.run import AuditResult, AuditSettings, Suspect

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

LABELS = ["DATE", "LOC", "ORG", "PER"]
VOCAB = Vocab()
# launch flags that work in a container without a display, a sandbox or a network
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def make_doc(words: Sequence[str], ents: Sequence[Tuple[int, int, str]] = ()) -> Doc:
    """A document of ``words`` separated by spaces (none after the last),
    with entities given as token ranges (end exclusive)."""
    doc = Doc(VOCAB, words=list(words), spaces=[True] * (len(words) - 1) + [False])
    doc.ents = [Span(doc, start, end, label=label) for start, end, label in ents]
    return doc


def make_result(docs: Sequence[Doc], suspects: List[Suspect], labels: Sequence[str] = LABELS) -> AuditResult:
    """An AuditResult with these suspects and a made-up estimate: what the
    audit's exports read of it, no model behind it."""
    names = [*labels, TOTAL]
    rate = MissRate(
        method=Calibration.DEV, labels=names, annotated=[10.0] * len(names), expected_missing=[1.0] * len(names),
        missing_interval=[[0.5, 2.0]] * len(names), rate=[0.1] * len(names), rate_interval=[[0.05, 0.2]] * len(names),
        n_resamples=0, level=0.95,
    )
    plan = FoldPlan(k=2, seed=0, assignment=[i % 2 for i in range(len(docs))], fingerprint="synthetic")
    return AuditResult(
        labels=list(labels), method=Calibration.DEV, plan=plan, suspects=suspects, miss_rate=rate, maps=[],
        probabilities={}, calibration=[], settings=AuditSettings(threshold=0.5), info={"n_docs": len(docs)},
    )


def suspect(doc: int, start: int, end: int, label: str, probability: float) -> Suspect:
    return Suspect(doc, start, end, label, probability, score=probability, fold=doc % 2)


@pytest.fixture
def small_corpus() -> Tuple[List[Doc], AuditResult]:
    """Three documents and seven suspects (probabilities all different, so
    the review order is theirs); document 2 holds text that would end a
    <script> element or fill a template placeholder if the page let it."""
    docs = [
        make_doc("Anna Schmidt flew from Berlin to New York on Monday .".split(), [(0, 2, "PER")]),
        make_doc("The United Nations met in Geneva on Friday .".split(), [(5, 6, "LOC")]),
        make_doc(["She", "typed", "</script><b>bold</b><!--", "and", "{{script}}", "into", "Acme", "Corp", "."]),
    ]
    suspects = [
        suspect(0, 4, 5, "LOC", 0.91),  # Berlin
        suspect(0, 7, 8, "LOC", 0.62),  # York
        suspect(0, 9, 10, "DATE", 0.51),  # Monday
        suspect(1, 0, 1, "PER", 0.55),  # The
        suspect(1, 1, 3, "LOC", 0.85),  # United Nations
        suspect(1, 6, 8, "DATE", 0.58),  # on Friday
        suspect(2, 6, 8, "ORG", 0.7),  # Acme Corp
    ]
    return docs, make_result(docs, suspects)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator["WebDriver"]:
    """Headless Chromium with a fresh profile (its own localStorage) that
    downloads into ``tmp_path / "downloads"``. Skipped only outside CI when
    Chromium is missing; in CI (.ci/run installs it) a missing browser fails."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        missing = "needs chromium and chromedriver (apt-get install chromium chromium-driver)"
        if "CI" not in os.environ:
            pytest.skip(f"the review page's browser test {missing}")
        pytest.fail(f"CI is set and the review page's browser test {missing}: .ci/run installs them", pytrace=False)
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the review page's browser test needs selenium: pip install -e '.[test]'", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads), "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    try:
        yield driver
    finally:
        driver.quit()
