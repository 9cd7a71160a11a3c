"""Emit: what leaves a stage for people and other systems (Prometheus metrics, the turn log)."""
