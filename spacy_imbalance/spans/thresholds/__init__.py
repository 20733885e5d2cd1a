"""Per-label decision thresholds of ``sampled_spancat``: the rule and its
checks (``rule``), the grid a search tries (``grid``) and the search on dev
data with its result set into a pipeline (``tuning``)."""
