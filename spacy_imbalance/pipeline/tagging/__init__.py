"""What the token-tagging components use while they train and predict: tag
schemes (``token_ner``), the two-task heads and their decoding
(``two_task``), the threshold pair ``two_task_ner`` fits while it trains
(``fitted_thresholds``), and the constrained Viterbi decoder of tag
sequences. The threshold search on dev data is ``evaluation.thresholds``'s."""
