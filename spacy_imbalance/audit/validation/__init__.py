"""How well the audit finds the entities missing from an annotation,
measured where the truth is known (``spacy-imbalance audit-check``): a share
p of a corpus's training entities hidden (seeded), the audit run on what is
left, and the hidden entities looked for among its suspects (recall and
precision@k, per label, the miss-rate estimate against the realised rate).
Optional extras: cleanlab on a token tagger's out-of-fold probabilities
(``--cleanlab``), the suspects restored and a config retrained
(``--restore``), a simulated review (``--review``); the summary over seeds
(``summary``) and what Ray buys the audit (``workers``)."""
from .check import review, validate
from .matching import SpanKey
from .setting import Restoring, Setting

__all__ = ["Restoring", "Setting", "SpanKey", "review", "validate"]
