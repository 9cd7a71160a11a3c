"""assistant-monitor: an OpenTelemetry sidecar that judges a RAG assistant's turns in its tenant."""

__version__ = "0.1.0"
