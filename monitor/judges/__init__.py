"""Judges: turn in, verdicts out. `base.Judge` is the one interface every judge implements."""
