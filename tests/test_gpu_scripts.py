"""The GPU scripts (dev/gpu/): what can be checked without a GPU.

gather.py stands alone (it runs on the GPU machine before anything is
installed there): its functions are imported from dev/ (a folder of the
project root, which pytest puts on sys.path), not from bench."""
import io
import json
import tarfile

import pytest
import typer

from dev.gpu import collect, gather, reload_check

from .conftest import ROOT


def test_gather_bundles_pin_every_package_once():
    bundles = {name: gather.requirements(ROOT / "dev" / "gpu" / f"{name}.txt") for name in ("spacy", "transformers")}
    assert "spacy==3.8.18" in bundles["spacy"] and "transformers==4.53.2" in bundles["transformers"]
    names = [pin.split("==")[0].lower().replace("-", "_") for pins in bundles.values() for pin in pins]
    assert all("==" in pin for pins in bundles.values() for pin in pins)  # pip download --no-deps needs exact versions
    assert len(names) == len(set(names))  # two versions of one package stop the install


def test_gather_download_removes_wheels_that_are_not_pinned(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(gather.subprocess, "run", lambda command, check: calls.append(command))
    pinned = tmp_path / "spacy_legacy-3.0.12-py2.py3-none-any.whl"
    stale = tmp_path / "spacy_legacy-3.0.11-py2.py3-none-any.whl"
    other = tmp_path / "numpy-2.0.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    for wheel in (pinned, stale, other):
        wheel.write_bytes(b"")
    gather.download("spacy", tmp_path)
    assert pinned.exists() and not stale.exists() and not other.exists()
    command = calls[0]
    assert "--no-deps" in command and command[command.index("--python-version") + 1] == "3.12"
    assert "spacy==3.8.18" in command


def test_gather_halves_the_weights_and_restores_their_dtypes(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    source = tmp_path / "model"
    source.mkdir()
    # values that float16 holds exactly, so the round trip is exact
    weights = {"layer.weight": torch.tensor([[0.5, -1.25], [2.0, 0.0]]), "position_ids": torch.arange(4)}
    save_file(weights, source / "model.safetensors")
    (source / "config.json").write_text("{}")
    (source / "vocab.txt").write_text("[PAD]\n")
    gather.halve(source, tmp_path / "half")
    half = load_file(tmp_path / "half" / "model.safetensors")
    assert half["layer.weight"].dtype == torch.float16 and half["position_ids"].dtype == torch.int64
    assert (tmp_path / "half" / "model.safetensors").stat().st_size < (source / "model.safetensors").stat().st_size + 200
    gather.restore(tmp_path / "half", tmp_path / "restored")
    restored = load_file(tmp_path / "restored" / "model.safetensors")
    assert restored["layer.weight"].dtype == torch.float32
    assert torch.equal(restored["layer.weight"], weights["layer.weight"]) and torch.equal(restored["position_ids"], weights["position_ids"])
    assert (tmp_path / "restored" / "config.json").is_file() and (tmp_path / "restored" / "vocab.txt").is_file()


def add(tar, name, text):
    data = text.encode("utf8")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def test_collect_keeps_tables_runs_and_failures_compactly(tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "ROOT", tmp_path)
    archive = tmp_path / "call.tgz"
    run = {"macro": {"f": 0.25}, "micro": {"f": 0.5}, "per_sentence": [[1, 2, 3]] * 100, "config": "transformer/ner",
           "seed": 0, "train_steps": 400, "train_seconds": 12.0, "dev_curve": [[0, 0.0], [200, 0.125]], "gpu_id": 0,
           "provenance": {"device": "gpu", "gpu": "NVIDIA H100 80GB HBM3", "driver": "580.1", "cuda_runtime": "13.0",
                          "cupy": "13.6.0", "torch": "2.11.0+cu130", "cpu_cores": 16}}
    with tarfile.open(archive, "w:gz") as tar:
        add(tar, "metrics/wnut17/speed_gpu_cnn.md", "| table |\n")
        add(tar, "metrics/wnut17/transformer/ner-s0.json", json.dumps(run))
        add(tar, "metrics/wnut16/transformer/ner-s0.json", json.dumps(run))  # another corpus: not this study's
        add(tar, "training/wnut17/transformer/ner-s0.log", "step 200\n")
        add(tar, "training/wnut17/transformer/ner-s1.log", "Traceback (most recent call last):\n  ...\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    collect.main(archive, study="trf", corpus="wnut17")
    out = tmp_path / "metrics" / "wnut17" / "gpu"
    assert (out / "speed_gpu_cnn.md").read_text() == "| table |\n"
    record = json.loads((out / "trf.json").read_text())
    assert list(record["runs"]) == ["ner-s0"] and "per_sentence" not in record["runs"]["ner-s0"]
    assert record["runs"]["ner-s0"]["macro_f"] == 0.25
    assert record["failed"] == {"ner-s1": "torch.OutOfMemoryError: CUDA out of memory."}
    table = (out / "trf.md").read_text()
    assert "| ner-s0 | 25.0 | 50.0 | 400 | 12 | 0: 0, 200: 12 |" in table and "failed: torch.OutOfMemoryError" in table
    # the table says where the runs ran
    assert record["runs"]["ner-s0"]["provenance"]["gpu"] == "NVIDIA H100 80GB HBM3"
    assert table.startswith("Ran on NVIDIA H100 80GB HBM3 (driver 580.1, CUDA 13.0, CuPy 13.6.0, torch 2.11.0+cu130, 16 CPU cores).")


def test_check_configs_names_a_missing_config():
    from dev.gpu import check_configs as check

    with pytest.raises(typer.BadParameter, match="no such config in configs/: nope"):
        check.main(configs=["ner", "nope"], globs=[], skip=[], corpus="wnut17", max_steps=1, gpu_id=-1, jobs=1, sets=[],
                   name="x", child="")


def test_reload_check_reads_the_allocator_a_config_interpolates(tmp_path):
    # the shipped transformer configs name it through ${system.gpu_allocator}; read
    # uninterpolated, that string reached thinc's set_gpu_allocator on the H200 and
    # failed every model ("Available allocators are: 'pytorch', 'tensorflow'")
    config = (ROOT / "configs" / "transformer" / "ner.cfg").read_text(encoding="utf8")
    assert "gpu_allocator = ${system.gpu_allocator}" in config
    (tmp_path / "config.cfg").write_text(config, encoding="utf8")
    assert reload_check.saved_allocator(tmp_path) == "pytorch"


def test_reload_check_records_where_it_ran_when_every_model_fails(tmp_path, monkeypatch):
    # the H200's first reload check failed on every model and its record said nowhere where it ran
    monkeypatch.setattr(reload_check, "ROOT", tmp_path)
    reload_check.main([tmp_path / "missing"], corpus="wnut17", gpu_id=-1, name="reload", child_device=-2, reload=False)
    record = json.loads((tmp_path / "metrics" / "wnut17" / "reload.json").read_text(encoding="utf8"))
    assert record["provenance"]["device"] == "cpu" and "cpu_cores" in record["provenance"]
    (result,) = record["models"].values()
    assert "no pipeline at" in result["error"]
    assert "error: no pipeline at" in (tmp_path / "metrics" / "wnut17" / "reload.md").read_text(encoding="utf8")


def test_gather_strips_debug_information_and_rehashes_the_record(tmp_path):
    import base64
    import ctypes
    import hashlib
    import shutil
    import subprocess
    import zipfile

    if shutil.which("gcc") is None or shutil.which("strip") is None:
        pytest.skip("needs gcc and strip (binutils)")
    source = tmp_path / "twice.c"
    source.write_text("int twice(int x) { return 2 * x; }\n")
    library = tmp_path / "twice.so"
    subprocess.run(["gcc", "-g", "-O0", "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    compiled = library.read_bytes()
    wheel = tmp_path / "twice-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    init = b"from .twice import *\n"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("twice/twice.so", compiled)
        archive.writestr("twice/__init__.py", init)
        archive.writestr(
            "twice-1.0.dist-info/RECORD",
            f"twice/twice.so,sha256=stale,{len(compiled)}\ntwice/__init__.py,sha256=kept,{len(init)}\ntwice-1.0.dist-info/RECORD,,\n",
        )
    saved = gather.strip_wheel(wheel)
    with zipfile.ZipFile(wheel) as archive:
        stripped = archive.read("twice/twice.so")
        record = archive.read("twice-1.0.dist-info/RECORD").decode().splitlines()
        assert archive.read("twice/__init__.py") == init
    assert saved > 0 and len(stripped) < len(compiled)
    digest = base64.urlsafe_b64encode(hashlib.sha256(stripped).digest()).rstrip(b"=").decode()
    assert record == [f"twice/twice.so,sha256={digest},{len(stripped)}", f"twice/__init__.py,sha256=kept,{len(init)}",
                      "twice-1.0.dist-info/RECORD,,"]
    (tmp_path / "loaded.so").write_bytes(stripped)
    assert ctypes.CDLL(str(tmp_path / "loaded.so")).twice(21) == 42  # the code is unchanged
