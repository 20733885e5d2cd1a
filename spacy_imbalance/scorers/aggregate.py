"""Micro and macro precision, recall and F1 from match counts.

Works on any leading batch shape, so the bootstrap scores all its resamples in
one call: ``totals`` is ``(..., n_labels, 3)`` with tp, fp, fn last.
"""
from typing import Any, Dict, List, Optional

import numpy

from .counts import FN, FP, TP


def _ratio(num: numpy.ndarray, den: numpy.ndarray) -> numpy.ndarray:
    out = numpy.zeros(numpy.broadcast(num, den).shape, dtype="float64")
    numpy.divide(num, den, out=out, where=den > 0)
    return out


def prf(totals: numpy.ndarray) -> Dict[str, numpy.ndarray]:
    """Per-label P/R/F over the last axis but one, plus micro and macro.

    Macro averages run over the labels present in gold or predictions
    (tp + fp + fn > 0): a label with gold entities but no prediction counts
    with P = R = F = 0, a label absent from both does not count at all.
    F is 2tp / (2tp + fp + fn), the harmonic mean of P and R.
    """
    tp, fp, fn = totals[..., TP], totals[..., FP], totals[..., FN]
    p, r, f = _ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn)
    present = (tp + fp + fn) > 0
    n_present = present.sum(axis=-1)
    macro = {name: _ratio((v * present).sum(axis=-1), n_present) for name, v in (("p", p), ("r", r), ("f", f))}
    stp, sfp, sfn = tp.sum(axis=-1), fp.sum(axis=-1), fn.sum(axis=-1)
    return {
        "p": p, "r": r, "f": f, "present": present,
        "micro_p": _ratio(stp, stp + sfp),
        "micro_r": _ratio(stp, stp + sfn),
        "micro_f": _ratio(2 * stp, 2 * stp + sfp + sfn),
        "macro_p": macro["p"], "macro_r": macro["r"], "macro_f": macro["f"],
        "n_present": n_present,
    }


def scores_dict(totals: numpy.ndarray, labels: List[str], prefix: str) -> Dict[str, Any]:
    """spaCy-style score keys: ``{prefix}_p/_r/_f``, ``{prefix}_per_type`` and
    ``{prefix}_macro_p/_r/_f``. All are None when nothing was scored."""
    s = prf(totals)
    keys = ("p", "r", "f", "macro_p", "macro_r", "macro_f")
    if not s["n_present"]:
        out: Dict[str, Optional[Any]] = {f"{prefix}_{k}": None for k in keys}
        out[f"{prefix}_per_type"] = None
        return out
    per_type = {
        label: {"p": float(s["p"][j]), "r": float(s["r"][j]), "f": float(s["f"][j])}
        for j, label in enumerate(labels)
        if s["present"][j]
    }
    return {
        f"{prefix}_p": float(s["micro_p"]),
        f"{prefix}_r": float(s["micro_r"]),
        f"{prefix}_f": float(s["micro_f"]),
        f"{prefix}_per_type": per_type,
        f"{prefix}_macro_p": float(s["macro_p"]),
        f"{prefix}_macro_r": float(s["macro_r"]),
        f"{prefix}_macro_f": float(s["macro_f"]),
    }
