"""Helpers of the token-tagging components: tag schemes (``token_ner``), the
two-task heads and thresholds (``two_task_ner``), and the constrained Viterbi
decoder of tag sequences."""
