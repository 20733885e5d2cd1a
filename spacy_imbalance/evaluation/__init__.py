"""Tools that take a trained pipeline and a component's name, run it over
gold documents and measure or tune it: ``evaluate`` (a pipeline's report
on a data file), ``scoring`` (the pass over documents of a
``sampled_spancat``), its decision inputs kept on the host
(``predictions``), their gold matching (``matching``), the decision
thresholds searched on dev data (``thresholds/``) and the missampling rate
of a negative sampler (``missampling``).

The layer above ``pipeline/``: what a component uses while it trains and
predicts lives below, in ``spans/``, ``pipeline/tagging/`` and
``decisions/``; the commands, the audit and the studies call these tools.
"""
