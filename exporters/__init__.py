"""What an assistant imports: attribute names and helpers that record a turn on its spans.

Light on purpose: it depends on opentelemetry-api/sdk only and never imports `monitor`.
"""

from exporters import attributes, record

__all__ = ["attributes", "record"]
