"""Which methods ``advise`` tries on a corpus, and why: the rules are what
the benchmarks of docs/benchmarks/ measured (the README's "which method"
table), applied to the corpus statistics that decide them."""
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..corpus.stats import CorpusStats
from ..init_config import ConfigChoice

# spaCy's components: the recommendation is measured against the better of the two
BUILTINS = ("ner", "spancat_singlelabel")
# WCE-2 beat cross entropy on 200 sentences and was ahead of ner at 1,000 (low-resource study)
SMALL_CORPUS_SENTENCES = 1000
# AUC-2T beat ner at 1 % entity tokens, was level from 5 % (two-task study)
RARE_ENTITY_TOKEN_PCT = 2.0
# weighted negatives' evidence (WNUT-2016, vectors, half the entities missing) was measured with the first
# release's head: the candidate keeps it. Uniform sampling is tried as init-config writes it by default (the
# setting the never-worse grid measured against both built-ins, complete and half annotated)
WEIGHTED_HEAD = "v1"


@dataclass(frozen=True)
class Candidate:
    """A method ``advise`` trains: its name, its init-config choices, and the
    reason it is tried on this corpus."""

    name: str
    component: str
    sampler: Optional[str] = None
    loss: Optional[str] = None
    reason: str = ""
    head: Optional[str] = None

    def choice(self, encoder: str, lang: str) -> ConfigChoice:
        return ConfigChoice(self.component, sampler=self.sampler, loss=self.loss, head=self.head, encoder=encoder, lang=lang)


def select_candidates(
    stats: CorpusStats, encoder: str, miss_rate: Optional[float] = None
) -> Tuple[List[Candidate], List[Tuple[str, str]]]:
    """The candidates for a training corpus with ``stats`` (``miss_rate``:
    the audit's estimate, when there is one), and the methods left out, each
    with the reason."""
    tried = [
        Candidate("ner", "ner", reason="spaCy's transition-based NER, the baseline"),
        Candidate("spancat_singlelabel", "spancat_singlelabel", reason="spaCy's span categorizer, the other baseline"),
    ]
    missing = f"; the audit estimates {100 * miss_rate:.0f} % of the entities missing" if miss_rate is not None else ""
    tried.append(Candidate(
        "sampled_spancat", "sampled_spancat",
        reason="the default (uniform negatives drawn once per sentence, with those overlapping gold): the setting for "
        "data whose completeness is unknown, measured against both built-ins on complete and half-annotated data" + missing,
    ))
    # each further method: whether this corpus calls for it, the candidate, and why it is left out otherwise
    rules = [
        (
            encoder != "cnn",
            Candidate(
                "sampled_spancat_weighted", "sampled_spancat", sampler="weighted_v2", head=WEIGHTED_HEAD,
                reason="weighted negatives (v2): ahead of uniform on pretrained encoders with half the entities missing",
            ),
            "behind or level with uniform on the CNN encoder",
        ),
        (
            stats.sentences <= SMALL_CORPUS_SENTENCES,
            Candidate(
                "token_ner_wce2", "token_ner", loss="wce2",
                reason=f"{stats.sentences:,} training sentences (≤ {SMALL_CORPUS_SENTENCES:,}): WCE-2 helps small corpora",
            ),
            f"helps corpora of ≤ {SMALL_CORPUS_SENTENCES:,} sentences; this one has {stats.sentences:,}",
        ),
        (
            stats.entity_token_pct <= RARE_ENTITY_TOKEN_PCT,
            Candidate(
                "two_task_auc", "two_task_ner", loss="auc",
                reason=f"{stats.entity_token_pct:.1f} % entity tokens (≤ {RARE_ENTITY_TOKEN_PCT:g} %): AUC-2T wins only with very rare entities",
            ),
            f"wins only at ≤ {RARE_ENTITY_TOKEN_PCT:g} % entity tokens; this corpus has {stats.entity_token_pct:.1f} %",
        ),
    ]
    left_out = []
    for applies, candidate, why_not in rules:
        if applies:
            tried.append(candidate)
        else:
            left_out.append((candidate.name, why_not))
    left_out.extend([
        ("MoM, dice and focal losses", "level with cross entropy or behind in every benchmark"),
        ("resampling (sCRD) and undersampling", "no demonstrated gain (sCRD) or a loss (undersampling)"),
        ("Top-Neg sampling", "draws the missing entities as negatives 3-8x as often as uniform"),
    ])
    return tried, left_out
