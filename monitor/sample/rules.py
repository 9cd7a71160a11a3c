"""Rules that always keep a turn: small named predicates, one table."""

from __future__ import annotations

from collections.abc import Callable

from monitor.model import AssistantTurn

Rule = Callable[[AssistantTurn], bool]


def negative_feedback(turn: AssistantTurn) -> bool:
    return turn.feedback is not None and turn.feedback.score < 0


def no_documents(turn: AssistantTurn) -> bool:
    """A RAG turn that retrieved nothing (turns with tool calls only are not RAG turns)."""
    return not turn.documents and not turn.tool_calls


def error_status(turn: AssistantTurn) -> bool:
    return turn.error is not None


def failed_tool_call(turn: AssistantTurn) -> bool:
    return any(call.error for call in turn.tool_calls)


ALWAYS_KEEP: dict[str, Rule] = {
    "negative_feedback": negative_feedback,
    "no_documents": no_documents,
    "error_status": error_status,
    "failed_tool_call": failed_tool_call,
}
