"""Span helpers of ``sampled_spancat`` and of the tools that read it:
candidate enumeration, gold span targets, the negative samplers
(``negatives/``) and the missampling measure for training; scoring documents
with a span model (``scoring``, the decision inputs of ``predictions``),
decoding scored spans to entities (``decoding``), gold matching of decoded
dev spans (``matching``) and the per-label decision thresholds
(``thresholds/``)."""
