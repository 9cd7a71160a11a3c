"""Honest doubles for what cannot be real here (a strong LLM), speaking the real protocols."""
