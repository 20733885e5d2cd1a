"""The decision thresholds of a trained component tuned on dev data: the
grid a search tries (``grid``), the per-label thresholds of
``sampled_spancat`` (``spans``), the entity/begin pair of ``two_task_ner``
(``two_task``) and the callback that tunes at every save of ``spacy train``
(``on_save``). The rule they tune is ``decisions.thresholds``'s; the pair
``two_task_ner`` fits while it trains is ``pipeline.tagging.fitted_thresholds``'s.
"""
