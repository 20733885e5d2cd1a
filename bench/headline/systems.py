"""The systems of the headline table and the claims it re-tests."""

BUILTINS = [
    ("ner", "spaCy ner"),
    ("spancat_singlelabel", "spaCy spancat_singlelabel"),
    ("spancat", "spaCy spancat"),
]
METHODS = [
    ("sampled_spancat_uniform", "sampled_spancat, uniform negatives"),
    ("sampled_spancat_weighted_v2", "sampled_spancat, weighted negatives (v2)"),
    ("sampled_spancat_top_v2", "sampled_spancat, Top-Neg (v2)"),
    ("sampled_spancat_all", "sampled_spancat, all negatives"),
    ("token_ner", "token_ner, cross entropy"),
    ("token_ner_wce2", "token_ner, WCE-2"),
    ("token_ner_mom_v2-l50", "token_ner, MoM (v2, λ 0.5) over CE"),
    ("two_task_auc_type_head-fitted", "two_task_ner, AUC-2T (fitted thresholds)"),
    ("two_task_bce-fitted", "two_task_ner, CE-2T (fitted thresholds)"),
    ("ner_sCRD", "ner on sCRD-resampled data"),
]
# each system's name in the tables, built-ins first
LABELS = dict(BUILTINS + METHODS)
# each method's claim in its paper, in its direction: (method, reference)
CLAIMS = [
    ("token_ner_mom_v2-l50", "token_ner", "MoM over its base loss"),
    ("token_ner_wce2", "token_ner", "WCE-2 over cross entropy"),
    ("two_task_auc_type_head-fitted", "two_task_bce-fitted", "AUC-2T over CE-2T"),
    ("sampled_spancat_weighted_v2", "sampled_spancat_uniform", "weighted over uniform negatives"),
    ("sampled_spancat_top_v2", "sampled_spancat_uniform", "Top-Neg over uniform negatives"),
    ("sampled_spancat_top_v2", "sampled_spancat_all", "Top-Neg over all negatives"),
    ("sampled_spancat_uniform", "sampled_spancat_all", "uniform over all negatives"),
    ("ner_sCRD", "ner", "sCRD over no resampling"),
]
