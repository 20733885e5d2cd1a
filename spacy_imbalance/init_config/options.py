"""What each ``init-config`` choice puts into a config: the blocks of the
samplers (the menu ``missampling`` reads too: ``spans.negatives.menu``),
losses and train readers, by the name the command line takes.

Names without a version take the newest registered function (the papers'
formulas, see docs/fidelity.md); ``*_v1`` names keep the first release's, so
that every shipped config can be written by ``init-config``.
"""
from typing import Dict, Tuple

# sampled_spancat's negatives, [components.sampled_spancat.negatives]: the one menu of samplers
from ..spans.negatives.menu import DEFAULT_SAMPLER, SAMPLERS, Block

COMPONENTS: Tuple[str, ...] = (
    "ner",
    "spancat",
    "spancat_singlelabel",
    "sampled_spancat",
    "token_ner",
    "two_task_ner",
)

_CE: Block = {"@losses": "spacy-imbalance.CrossEntropy.v1", "normalize": True}
_FOCAL: Block = {"@losses": "spacy-imbalance.FocalLoss.v1", "gamma": 2.0, "alpha": None}

# the per-item losses of token_ner and sampled_spancat, their [loss] block
LOSSES: Dict[str, Block] = {
    "ce": _CE,
    "wce1": {"@losses": "spacy-imbalance.WeightedCrossEntropy.v1", "scheme": "inverse_frequency", "beta": 1.0},
    "wce2": {"@losses": "spacy-imbalance.WeightedCrossEntropy.v1", "scheme": "log", "beta": 1.0},
    "focal": _FOCAL,
    "dice": {"@losses": "spacy-imbalance.DiceLoss.v1", "alpha": 0.1, "gamma": 1.0},
    "mom": {"@losses": "spacy-imbalance.MoMLoss.v2", "lambda_": 0.2, "max_length": 128, "base": _CE},
    "mom_focal": {"@losses": "spacy-imbalance.MoMLoss.v2", "lambda_": 0.2, "max_length": 128, "base": _FOCAL},
    "mom_v1": {"@losses": "spacy-imbalance.MoMLoss.v1", "lambda_": 0.2, "base": _CE},
    "mom_focal_v1": {"@losses": "spacy-imbalance.MoMLoss.v1", "lambda_": 0.2, "base": _FOCAL},
}

# two_task_ner's objectives: settings of the component (AUC-2T, COMAUC-2T, CE-2T)
TWO_TASK_LOSSES: Dict[str, Block] = {
    "auc": {"loss_mode": "auc", "lambda_": 100.0},
    "comauc": {"loss_mode": "compositional", "lambda_": 100.0},
    "bce": {"loss_mode": "bce", "lambda_": 1.0},
}

LOSS_COMPONENTS = ("token_ner", "sampled_spancat")

# sampled_spancat's span head by the name --head takes: its [model] settings
# and how its loss adds up, set over the template's (which are v1's). v1: the
# first release's (endpoints and a width embedding, a hidden layer of 256,
# head dropout 0.1, the loss averaged over the trained spans). v2, chosen on
# WNUT-2017 dev with frozen and fine-tuned MiniLM, complete and with half the
# entities missing (docs/benchmarks/never_worse.md): the width and summed loss
# of spancat_singlelabel's head (a hidden layer of 128, the loss summed over
# the trained spans), no head dropout, and the endpoints with the mean and max
# of the span's tokens. A setting the chosen loss lacks is left out.
HEADS: Dict[str, Block] = {
    "v1": {},
    "v2": {
        "model.representation": "endpoints_mean_max",
        "model.hidden_width": 128,
        "model.dropout": 0.0,
        "loss.normalize": False,
    },
}
DEFAULT_HEAD = "v2"
HEAD_COMPONENTS = ("sampled_spancat",)

# --scoped: the components that train on corpora annotating only some entity
# types (label scopes), and the losses of LOSSES with a partial-label form
# (token_ner's are pipeline.tagging.scopes.SCOPED_LOSSES; a test ties the two)
SCOPED_COMPONENTS = ("token_ner", "sampled_spancat")
SCOPED_LOSS_NAMES = ("ce", "wce1", "wce2", "focal")

_RESAMPLED: Block = {"@readers": "spacy-imbalance.ResampledCorpus.v1", "count": "tokens", "spans_key": None, "corpus": None}

# what --resample does to [corpora.train]: a reader in place of spacy.Corpus.v1
# (its settings merged in) or an augmenter on it
READERS: Dict[str, Block] = {
    "sC": {**_RESAMPLED, "method": "sC"},
    "sCR": {**_RESAMPLED, "method": "sCR"},
    "sCRD": {**_RESAMPLED, "method": "sCRD"},
    "nsCRD": {**_RESAMPLED, "method": "nsCRD"},
    "augment": {
        "@readers": "spacy-imbalance.AugmentedCorpus.v1",
        "method": "all",
        "p": 0.3,
        "n_copies": 1,
        "seed": "${system.seed}",
        "spans_key": None,
        "corpus": None,
    },
    "undersample": {
        "augmenter": {"@augmenters": "spacy-imbalance.balanced_undersampling.v1", "ratio": 3.0, "spans_key": None},
    },
}

# transformer_v1: the first release's fine-tuning (Adam at 5e-5 for every
# parameter, 250 warm-up steps, heads whose output layer starts at zero), which
# the first transformer study used; it predicts nothing for hundreds of updates
ENCODERS: Tuple[str, ...] = ("cnn", "vectors", "features", "transformer", "transformer_v1")
