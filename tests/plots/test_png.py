"""spacy_imbalance/plots/png.py: figures saved as palette PNGs."""
import io

import numpy
import pytest

from spacy_imbalance.plots import compact_png, save_figure

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
Image = pytest.importorskip("PIL.Image")


def chart():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    for i, color in enumerate(("tab:blue", "tab:orange", "tab:green")):
        ax.errorbar([0, 0.5], [30 - 5 * i, 20 + i], yerr=[1, 2], marker="o", color=color, label=f"system {i}")
    ax.legend()
    ax.set_title("macro-F1 by masking probability")
    return fig


def pixels(data: bytes) -> numpy.ndarray:
    """What is seen: the colours weighted by their alpha (a fully transparent pixel's colour shows nowhere),
    then the alpha."""
    rgba = numpy.asarray(Image.open(io.BytesIO(data)).convert("RGBA")).astype(float)
    return numpy.concatenate([rgba[..., :3] * rgba[..., 3:] / 255, rgba[..., 3:]], axis=-1)


@pytest.mark.parametrize("transparent", [False, True])
def test_save_figure_writes_a_smaller_palette_png_that_looks_the_same(tmp_path, transparent):
    fig = chart()
    plain = io.BytesIO()
    fig.savefig(plain, format="png", dpi=100, transparent=transparent)
    save_figure(fig, tmp_path / "chart.png", dpi=100, transparent=transparent)
    written = (tmp_path / "chart.png").read_bytes()
    assert Image.open(io.BytesIO(written)).mode == "P" and len(written) < 0.6 * len(plain.getvalue())
    before, after = pixels(plain.getvalue()), pixels(written)
    assert before.shape == after.shape
    # on average well under one grey level, and transparency (the alpha channel) kept where there was some
    assert numpy.abs(before - after).mean() < 0.5
    assert (after[..., 3] == 0).sum() == (before[..., 3] == 0).sum() > 0 if transparent else after[..., 3].min() == 255


def test_save_figure_leaves_other_formats_and_small_pngs_as_they_are(tmp_path):
    fig = chart()
    save_figure(fig, tmp_path / "chart.svg")
    assert (tmp_path / "chart.svg").read_text(encoding="utf8").lstrip().startswith("<?xml")
    # a PNG that a palette cannot shrink (one pixel) comes back unchanged
    tiny = io.BytesIO()
    Image.new("RGB", (1, 1), (255, 0, 0)).save(tiny, "PNG")
    assert compact_png(tiny.getvalue()) == tiny.getvalue()
