"""Span helpers of ``sampled_spancat``: candidate enumeration, gold span
targets, the negative samplers (``negatives/``) and the missampling measure."""
