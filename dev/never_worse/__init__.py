"""Issue 42's trials: what closes sampled_spancat's gap to the best built-in
on WNUT-2017 dev (scripts/never_worse_trials.py)."""
