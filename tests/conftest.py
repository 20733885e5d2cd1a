from pathlib import Path
from typing import Iterator

import pytest
from thinc.api import Ops

from spacy_imbalance.corpus.conll import conll_to_docs
from spacy_imbalance.corpus.default_corpus import default_corpus_path
from spacy_imbalance.corpus.docs_io import copy_ents_to_spans, write_docbin

from .device import DEVICES, FakeCupyOps, device, fake_device, has_cupy_gpu

ROOT = Path(__file__).parent.parent


# the test units that take longest, longest first (measured on one core: the two parts of the project's `all`
# workflow, only with RUN_E2E=1; the configs trained, 3-4 minutes; the demo workflow, about 3; the fine-tuned
# collapse guard, about 3; advise's real trials, the sweeps' trials and the pipelines trained on a trained base,
# about 2 each), started first: under
# pytest-xdist (bash run.sh test, --dist loadscope) each module, or class, goes to one worker, so the longest
# are spread over the workers and the rest fills in
LONGEST_FIRST = (
    "tests/test_project.py::TestAllSecondPart", "tests/test_project.py::TestAllFirstPart",
    "tests/test_configs.py", "tests/test_demo.py", "tests/test_configs.py::TestCollapseGuard",
    "tests/advise/test_run.py", "tests/sweeps/test_runner.py", "tests/init_config/test_base.py", "tests/test_project.py",
)

# mypy over the package (about a minute on one core), last: it fills the wait of the worker that finishes first
LAST = "tests/test_types.py"


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        # the most specific prefix: a class listed apart from its module takes its own place
        matches = [(len(prefix), i) for i, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)]
        if item.nodeid.startswith(LAST):
            return len(LONGEST_FIRST) + 1
        return max(matches)[1] if matches else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every module keeps its own order


@pytest.fixture(autouse=True)
def _fresh_reader_announcements():
    """Readers print their summary once per process: start every test afresh."""
    from spacy_imbalance.corpus import source

    source._announced.clear()
    yield


@pytest.fixture(scope="session")
def toy_corpus(tmp_path_factory) -> Path:
    """60 training and 20 dev sentences of the default corpus, with entities
    in doc.ents and doc.spans["sc"]."""
    docs, _ = conll_to_docs(default_corpus_path())
    with_ents = [doc for doc in docs if doc.ents]
    copy_ents_to_spans(with_ents, "sc")
    folder = tmp_path_factory.mktemp("toy")
    write_docbin(with_ents[:60], folder / "train.spacy")
    write_docbin(with_ents[60:80], folder / "dev.spacy")
    return folder


@pytest.fixture(
    params=[
        pytest.param(name, marks=pytest.mark.skipif(name == "cupy" and not has_cupy_gpu, reason="needs cupy and a GPU"))
        for name in DEVICES
    ]
)
def device_ops(request) -> Iterator[Ops]:
    """The current ops for the test, once per device: numpy, the fake cupy of
    tests/device.py (host conversions raise, transfers are counted) and, where
    cupy finds a GPU, cupy. Models built inside the test use these ops."""
    with device(request.param) as ops:
        yield ops


@pytest.fixture
def fake_ops() -> Iterator[FakeCupyOps]:
    """The fake cupy ops as the current ops, counts from 0 (sync budgets)."""
    with fake_device() as ops:
        yield ops
