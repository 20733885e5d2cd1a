"""The table of issue 42's dev trials (metrics/wnut17/never_worse_trials.md):
every trial of configs/never_worse_trials.yml, run or not, and for each
sampled_spancat every correction share its model-best was scored at."""
from pathlib import Path
from typing import Any, Dict, List

import srsly


def _pct(value: Any) -> str:
    return f"{100 * value:.1f}" if isinstance(value, (int, float)) else ""


def table(trials: Dict[str, Dict[str, Any]], folder: Path) -> str:
    head = (
        "| trial | config | train | settings | correction | dev macro-F1 | dev micro-F1 | macro P | macro R | predicted | TP | FP | ECE | best step | minutes |\n"
        "| --- | --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n"
    )
    rows: List[str] = []
    for name, spec in trials.items():
        # the sampler's version and its training-time correction (0) are the same for every
        # sampled trial: the correction column is the share applied at prediction
        shown = {k.rsplit(".", 1)[-1]: v for k, v in (spec.get("set") or {}).items() if not k.endswith(("@misc", ".correction"))}
        settings = ", ".join(f"{k} = {'null (from the data)' if v is None else v}" for k, v in shown.items()) or "as shipped"
        train = "p = 0.5" if spec.get("masked") else "complete"
        path = folder / f"{name}.json"
        if not path.exists():
            rows.append(f"| {name} | {spec['config']} | {train} | {settings} | | not run yet | | | | | | | | | |")
            continue
        record = srsly.read_json(path)
        best = max(record.get("dev_curve") or [[None, 0.0]], key=lambda point: point[1])[0]
        minutes = f"{record['train_seconds'] / 60:.0f}"
        decoded = record.get("decoded") or []
        if not decoded or "correction" not in decoded[0]:
            extra = decoded[0] if decoded else {}
            rows.append(
                f"| {name} | {spec['config']} | {train} | {settings} | | {_pct(record['macro']['f'])} | {_pct(record['micro']['f'])} "
                f"| {_pct(record['macro']['p'])} | {_pct(record['macro']['r'])} | {extra.get('predicted', '')} | {extra.get('tp', '')} | {extra.get('fp', '')} | | {best} | {minutes} |"
            )
            if extra:
                rows.append(
                    f"| {name} | {spec['config']} | {train} | spans decoded without overlap | | {_pct(extra['macro_f'])} | {_pct(extra['micro_f'])} "
                    f"| {_pct(extra['macro_p'])} | {_pct(extra['macro_r'])} | {extra['predicted']} | {extra['tp']} | {extra['fp']} | | {best} | {minutes} |"
                )
            continue
        for row in decoded:
            rows.append(
                f"| {name} | {spec['config']} | {train} | {settings} | {row['correction']:g} | {_pct(row['macro_f'])} | {_pct(row['micro_f'])} "
                f"| {_pct(row['macro_p'])} | {_pct(row['macro_r'])} | {row['predicted']} | {row['tp']} | {row['fp']} | {row['ece']:.3f} | {best} | {minutes} |"
            )
    return head + "\n".join(rows) + "\n"


def pairs(trials: Dict[str, Dict[str, Any]], folder: Path) -> str:
    """For each trial run on both the complete and the p = 0.5 train set
    (names ending -c and -m50), dev macro-F1 at every correction share and
    the mean of the two: the rule that picks the default, since a user who
    does not know how complete the annotation is gets one setting for both."""
    rows = []
    for name in trials:
        if not name.endswith("-c") or f"{name[:-2]}-m50" not in trials:
            continue
        paths = folder / f"{name}.json", folder / f"{name[:-2]}-m50.json"
        if not all(path.exists() for path in paths):
            continue
        complete, masked = ({row["correction"]: row["macro_f"] for row in srsly.read_json(path).get("decoded", []) if "correction" in row} for path in paths)
        shares = [share for share in complete if share in masked]
        if not shares:
            continue
        best = max(shares, key=lambda share: complete[share] + masked[share])
        for share in shares:
            mark = " (best)" if share == best else ""
            rows.append(
                f"| {name[:-2]} | {share:g}{mark} | {_pct(complete[share])} | {_pct(masked[share])} | {_pct((complete[share] + masked[share]) / 2)} |"
            )
    if not rows:
        return ""
    return (
        "| trials | correction | dev macro-F1, complete | dev macro-F1, p = 0.5 | mean |\n"
        "| --- | --: | --: | --: | --: |\n" + "\n".join(rows) + "\n"
    )


def overall(trials: Dict[str, Dict[str, Any]], folder: Path) -> str:
    """Dev macro-F1 at every correction share, averaged over every trial
    scored at every share (both encoders, both train sets, either draw):
    the rule that picks the default share, one setting for all."""
    scores: Dict[float, List[float]] = {}
    names = []
    for name in trials:
        path = folder / f"{name}.json"
        rows = [row for row in srsly.read_json(path).get("decoded", []) if "correction" in row] if path.exists() else []
        if not rows:
            continue
        names.append(name)
        for row in rows:
            scores.setdefault(row["correction"], []).append(row["macro_f"])
    shares = [share for share, values in scores.items() if len(values) == len(names)]
    if not shares:
        return ""
    best = max(shares, key=lambda share: sum(scores[share]))
    lines = [f"| {share:g}{' (best)' if share == best else ''} | {_pct(sum(scores[share]) / len(names))} |" for share in shares]
    return (
        f"| correction | mean dev macro-F1 over {len(names)} trials ({', '.join(names)}) |\n| --: | --: |\n" + "\n".join(lines) + "\n"
    )
