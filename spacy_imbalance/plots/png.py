"""Saving matplotlib figures small. The plots are committed beside the metrics
they show, and the working tree travels to a GPU machine with a size limit: a
palette of 256 colours holds a chart's few colours and their anti-aliasing in
about a third of the bytes of matplotlib's RGBA PNG (on average well under one
grey level from it)."""
from io import BytesIO
from pathlib import Path
from typing import Any, Union

# the most colours a PNG palette holds
PALETTE = 256


def compact_png(data: bytes) -> bytes:
    """The PNG ``data`` with its colours in a palette, or ``data`` itself where
    that is no smaller. An opaque image is quantised from RGB (median cut); one
    with transparency keeps it (fast octree, the method Pillow has for RGBA)."""
    from PIL import Image

    opened = Image.open(BytesIO(data))
    opened.load()
    if opened.mode not in ("RGB", "RGBA"):
        return data
    opaque = opened.mode == "RGBA" and opened.getchannel("A").getextrema()[0] == 255
    image = opened.convert("RGB") if opaque else opened
    method = Image.Quantize.MEDIANCUT if image.mode == "RGB" else Image.Quantize.FASTOCTREE
    out = BytesIO()
    dpi = {"dpi": opened.info["dpi"]} if "dpi" in opened.info else {}
    image.quantize(PALETTE, method=method).save(out, "PNG", optimize=True, **dpi)
    return out.getvalue() if out.tell() < len(data) else data


def save_figure(fig: Any, path: Union[str, Path], **savefig: Any) -> None:
    """``fig.savefig(path, **savefig)``, a PNG written compact (``compact_png``)."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        fig.savefig(path, **savefig)
        return
    buffer = BytesIO()
    fig.savefig(buffer, format="png", **savefig)
    path.write_bytes(compact_png(buffer.getvalue()))
