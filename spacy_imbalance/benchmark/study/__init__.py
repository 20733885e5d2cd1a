"""A study: systems x settings (training-set sizes, entity-token shares, a
loss weight), each run tagged with its setting, as tables and a plot
(``spacy-imbalance benchmark table``)."""
