#!/usr/bin/env bash
# The two entry points of this repository, each from a fresh machine with Python 3.11 and pip:
#   bash run.sh demo   # virtual env + install, then the demo workflow on the embedded corpus (into runs/demo/)
#   bash run.sh test   # virtual env + install, then the test suite
# Settings: PYTHON (default python3), VENV (default .venv),
#           TORCH, the torch requirement installed first (default torch==2.13.0, a local CPU build on
#           this project's machines; e.g. TORCH="torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu"),
#           and, for test, RUN_MYPY=0: skip the type check (mypy, tests/test_types.py),
#           RUN_E2E=1: also run `spacy project run all` end to end, shrunk (tests/test_project.py's two
#           TestAll* tests, every workflow command on shrunk corpora; without it they skip and the project is checked
#           statically), e.g. RUN_E2E=1 bash run.sh test tests/test_project.py
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH=${TORCH:-torch==2.13.0}

setup() {
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  local pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
  # torch first and pinned: left to the resolver, `torch>=2.1` pulls a multi-GB CUDA build
  # shellcheck disable=SC2086
  "${pip[@]}" $TORCH
  "${pip[@]}" -e ".[transformers,corpora,minilm,plots,cleanlab,ray,test]"
  # bench/, the benchmark harness scripts/ import, is no part of the installed package (a top-level
  # `bench` in site-packages would shadow others): this clone's root goes on the environment's path
  "$VENV/bin/python" -c 'import sys, sysconfig, pathlib; pathlib.Path(sysconfig.get_path("purelib"), "spacy_imbalance_clone.pth").write_text(sys.argv[1] + "\n")' "$PWD"
}

case "${1:-}" in
  demo)
    setup
    shift
    # extra arguments go to the workflow, e.g. --vars.demo_steps 200 for a quicker look
    "$VENV/bin/python" -m spacy project run demo . "$@"
    ;;
  test)
    setup
    shift
    # two workers (PYTEST_WORKERS; 0 for one process), each test module on one of them so that its
    # trained fixtures are built once; tests/conftest.py starts the longest modules first. With more
    # than one worker each runs on one thread (set OMP_NUM_THREADS to change it): a thread pool per
    # worker on as many cores as workers oversubscribes them, and torch's and BLAS's pools spin-wait
    if [ "${PYTEST_WORKERS:-2}" != "0" ] && [ "${PYTEST_WORKERS:-2}" != "1" ]; then
      export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
    fi
    # --durations: the slowest tests end the output, where CI's log keeps them (the suite's budget is ~20 minutes)
    "$VENV/bin/python" -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadscope --no-loadscope-reorder --durations 25 tests "$@"
    ;;
  *)
    echo "usage: bash run.sh demo [--vars.NAME VALUE ...] | test [pytest arguments]" >&2
    exit 2
    ;;
esac
