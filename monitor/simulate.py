"""A user simulator: an LLM user agent drives a target chatbot through a scenario.

    assistant-monitor simulate --scenarios golden.jsonl --tools tools.json \
        --user-base-url http://.../v1 --user-model m --target-base-url http://.../v1 \
        --target-model m --out conversations.jsonl

The user agent gets the scenario's instructions and completion condition and speaks as the user;
the target is any OpenAI-compatible chat endpoint with tools. Every function call the target
makes is recorded with its arguments and answered from the scenario (`tool_results` in the
scenario row, by function name, else {"status": "ok"}). The conversation stops when the user
agent says DONE, when every expected call has been made, or at `max_turns`. Each output line is
an `eval` dataset row: question, answer, recorded tool_calls, expected_tool_calls.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from monitor.judges.tool_match import match
from monitor.model import ToolCall

USER_PROMPT = """You are playing a user of a business assistant, to test it. Your goal:
{instructions}
The conversation is over when: {completion}
Write only the user's next message, short and natural. When the goal is reached, or the
assistant cannot help, answer with the single word DONE."""


def _flip(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The conversation as the user agent sees it: its own lines are `assistant`."""
    flipped = []
    for m in messages:
        if m["role"] == "user":
            flipped.append({"role": "assistant", "content": m["content"]})
        elif m["role"] == "assistant" and m.get("content"):
            flipped.append({"role": "user", "content": m["content"]})
    return flipped


async def simulate(scenario: dict[str, Any], user: openai.AsyncOpenAI, user_model: str,
                   target: openai.AsyncOpenAI, target_model: str, tools: list[dict[str, Any]],
                   max_turns: int = 8, max_tool_rounds: int = 5) -> dict[str, Any]:
    system = USER_PROMPT.format(instructions=scenario["instructions"],
                                completion=scenario.get("completion") or "the goal is reached")
    expected = [ToolCall(**c) for c in scenario.get("expected_tool_calls", [])]
    results = scenario.get("tool_results", {})
    conversation: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    stopped = "turn_limit"
    for _ in range(max_turns):
        said = await user.chat.completions.create(
            model=user_model, messages=[{"role": "system", "content": system},
                                        *_flip(conversation)])
        text = (said.choices[0].message.content or "").strip()
        if text.rstrip(".!").upper() == "DONE":
            stopped = "user_done"
            break
        conversation.append({"role": "user", "content": text})
        for _ in range(max_tool_rounds):
            reply = await target.chat.completions.create(model=target_model,
                                                         messages=conversation, tools=tools)
            message = reply.choices[0].message
            if not message.tool_calls:
                conversation.append({"role": "assistant", "content": message.content or ""})
                break
            conversation.append(message.model_dump(exclude_none=True))
            for tc in message.tool_calls:
                arguments = json.loads(tc.function.arguments or "{}")
                result = results.get(tc.function.name, {"status": "ok"})
                calls.append(ToolCall(name=tc.function.name, arguments=arguments, result=result,
                                      call_id=tc.id))
                conversation.append({"role": "tool", "tool_call_id": tc.id,
                                     "content": json.dumps(result)})
        if expected and match(expected, calls).perfect:
            stopped = "completed"
            break
    first = next((m["content"] for m in conversation if m["role"] == "user"), "")
    last = next((m["content"] for m in reversed(conversation)
                 if m["role"] == "assistant" and m.get("content")), None)
    return {"id": scenario.get("id"), "scenario_type": scenario.get("scenario_type", "all"),
            "question": first, "answer": last, "stopped": stopped,
            "tool_calls": [c.model_dump(exclude_none=True) for c in calls],
            "expected_tool_calls": scenario.get("expected_tool_calls", []),
            "conversation": conversation}
