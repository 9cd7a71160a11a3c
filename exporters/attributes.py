"""Attribute names the assistant writes and the sidecar reads.

Where an OpenTelemetry GenAI attribute exists we use it; the `assistant.*` names cover what the
GenAI conventions do not have yet (the turn's question and final answer, the route, user
feedback). `monitor/` imports this module, so both sides agree on one spelling.
"""

from typing import Final

# OpenTelemetry GenAI semantic conventions (semantic-conventions-genai, model/gen-ai/).
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"  # chat, retrieval, execute_tool, invoke_agent
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_RETRIEVAL_QUERY_TEXT: Final = "gen_ai.retrieval.query.text"
GEN_AI_RETRIEVAL_DOCUMENTS: Final = "gen_ai.retrieval.documents"  # JSON [{"id","score","content"}]
GEN_AI_DATA_SOURCE_ID: Final = "gen_ai.data_source.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
ERROR_TYPE: Final = "error.type"

OPERATION_CHAT: Final = "chat"
OPERATION_RETRIEVAL: Final = "retrieval"
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
OPERATION_INVOKE_AGENT: Final = "invoke_agent"

# assistant-monitor's own attributes, set by exporters.record helpers.
ASSISTANT_QUESTION: Final = "assistant.question"  # the user's question for this turn
ASSISTANT_ANSWER: Final = "assistant.answer"  # the final answer shown to the user
ASSISTANT_ROUTE: Final = "assistant.route"  # a bounded name: "billing", "search", ...
ASSISTANT_FEEDBACK_SCORE: Final = "assistant.feedback.score"  # -1.0 (bad) .. 1.0 (good)
ASSISTANT_FEEDBACK_COMMENT: Final = "assistant.feedback.comment"
ASSISTANT_SCENARIO_ID: Final = "assistant.scenario.id"  # links a turn to a golden scenario
ASSISTANT_EXPECTED_TOOL_CALLS: Final = "assistant.expected_tool_calls"  # JSON [{name, arguments}]
ASSISTANT_SESSION_END: Final = "assistant.session.end"  # true: the conversation ends with this turn

# Resource attributes.
SERVICE_NAME: Final = "service.name"
TENANT_ID: Final = "tenant.id"
