"""What ``sampled_spancat`` uses while it trains and predicts: candidate
enumeration (``candidates``), gold span targets (``gold``) and the
documents' label scopes (``scopes``), the negative samplers, their menu and
what the component draws with (``negatives/``), what its logits say about
each candidate, chosen on the device (``scoring``), and the decoding of
scored spans to entities (``decoding``). The tools that take a trained
pipeline (the pass over documents, gold matching, the threshold search, the
missampling measure, the lookup of a component by name) are in
``evaluation/``; the threshold rule and the softmax in ``decisions/``.
(``thresholds/``: old import paths only.)"""
