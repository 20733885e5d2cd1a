"""The commands given bad input: a clear message naming the file, line or
setting, exit code 1, and nothing written or destroyed."""
import importlib.util

import pytest

from ._cli import CONLL, TRANSFORMS, _assert_failed, _invoke


# --- an output that is the input --------------------------------------------


def _same_file(path, how):
    """The input itself, another spelling of it, or a new symlink to it."""
    if how == "spelling":
        return path.parent / "." / ".." / path.parent.name / path.name
    if how == "symlink":
        link = path.parent / f"link-{path.name}"
        link.symlink_to(path)
        return link
    return path


@pytest.mark.parametrize("how", ["same", "spelling", "symlink"])
@pytest.mark.parametrize("command", list(TRANSFORMS))
def test_bad_input_transform_refuses_to_overwrite_its_input(spacy_path, command, how):
    before = spacy_path.read_bytes()
    output = _same_file(spacy_path, how)
    result = _invoke(command, spacy_path, output, *TRANSFORMS[command])
    _assert_failed(result, f"The output {output} is the input {spacy_path}")
    assert spacy_path.read_bytes() == before
    assert sorted(p.name for p in spacy_path.parent.iterdir()) == sorted(
        ["corpus.conll", "corpus.spacy"] + (["link-corpus.spacy"] if how == "symlink" else [])
    )


@pytest.mark.parametrize("how", ["same", "spelling", "symlink"])
def test_bad_input_convert_refuses_to_overwrite_its_input(conll_path, how):
    output = _same_file(conll_path, how)
    result = _invoke("convert", conll_path, output)
    _assert_failed(result, f"The output {output} is the input {conll_path}")
    assert conll_path.read_text(encoding="utf8") == CONLL


def test_bad_input_convert_split_refuses_to_overwrite_its_input(tmp_path):
    # a CoNLL file named like the part it would be split into
    path = tmp_path / "train.spacy"
    path.write_text(CONLL, encoding="utf8")
    result = _invoke("convert", path, tmp_path, "--split", "train=0.5,test=0.5")
    _assert_failed(result, f"The output {path} is the input {path}")
    assert path.read_text(encoding="utf8") == CONLL
    assert [p.name for p in tmp_path.iterdir()] == ["train.spacy"]


# --- settings ----------------------------------------------------------------


@pytest.mark.parametrize("ratio", ["inf", "nan", "-inf", "0.5"])
def test_bad_input_undersample_ratio_must_be_finite(spacy_path, tmp_path, ratio):
    output = tmp_path / "out.spacy"
    result = _invoke("undersample", spacy_path, output, "--ratio", ratio)
    _assert_failed(result, f"--ratio must be >= 1 and finite (kept tokens per entity token), got {float(ratio)!r}")
    assert not output.exists()


# --- files that do not read --------------------------------------------------


@pytest.mark.parametrize("data", [b"\x00\x01 random bytes \xff", b"", b"a\tO\n"], ids=["random", "empty", "conll"])
def test_bad_input_stats_corrupt_spacy_file_is_named(tmp_path, data):
    path = tmp_path / "broken.spacy"
    path.write_bytes(data)
    result = _invoke("stats", path)
    _assert_failed(result, f"{path}: not a .spacy (DocBin) file, or a damaged one")


def test_bad_input_transform_corrupt_spacy_file_is_named(tmp_path):
    path = tmp_path / "broken.spacy"
    path.write_bytes(b"\x00" * 64)
    output = tmp_path / "out.spacy"
    result = _invoke("resample", path, output)
    _assert_failed(result, f"{path}: not a .spacy (DocBin) file, or a damaged one")
    assert not output.exists()


# --- --gpu-id ----------------------------------------------------------------

HAS_CUPY = importlib.util.find_spec("cupy") is not None


def _gpu_args(command, tmp_path):
    # a pipeline and data that do not exist: the device is set up first
    missing = tmp_path / "no-such-pipeline"
    data = tmp_path / "no-such-data.spacy"
    return [command, missing, data] if command == "evaluate" else [command, data, missing, missing]


@pytest.mark.skipif(HAS_CUPY, reason="CuPy is installed: --gpu-id 0 may well work here")
@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_bad_input_gpu_id_without_cupy(tmp_path, command):
    result = _invoke(*_gpu_args(command, tmp_path), "--gpu-id", "0")
    _assert_failed(result, "--gpu-id 0 needs CuPy and a GPU: Cannot use GPU, CuPy is not installed")


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_bad_input_gpu_id_that_cuda_rejects(tmp_path, monkeypatch, command):
    def require_gpu(gpu_id):
        # what CuPy raises for a GPU id that does not exist
        raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")

    monkeypatch.setattr("spacy_imbalance.cli._app.require_gpu", require_gpu)
    result = _invoke(*_gpu_args(command, tmp_path), "--gpu-id", "7")
    _assert_failed(result, "--gpu-id 7 needs CuPy and a GPU: cudaErrorInvalidDevice: invalid device ordinal")
