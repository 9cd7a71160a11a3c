"""The on-call pages the admin server serves at /ui: the worst turns of a stream, and one turn
with its documents, claims, evidence, verdicts and corrections (monitor/ui/pages.py). HTML
rendered on the server from Jinja2 templates (templates/), one stylesheet (static/), no script."""

from monitor.ui.pages import Pages

__all__ = ["Pages"]
