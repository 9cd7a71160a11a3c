"""A scripted judge model: answers the judge prompts deterministically, over the real protocol.

It reads the data block the way a careful model would and labels with simple, predictable rules,
on content words (a plural or a verb's -s is the same word: "returns" is "return"):
- a document is relevant when it shares a content word with the question;
- completeness is `no_answer` when the answer declines, `incomplete` when it shares no word
  with the question, else `complete`;
- each sentence of the answer is a claim (or each claim it is given to label): `generic` for
  pleasantries, `inferable` when most of its words are in the documents, else `ungrounded`;
- a tool call is needed; its arguments are supported when their values appear in the question.
- an agent's trajectory, read on its steps: `failed` with no answer, no tool call that
  succeeded, or one call made three times alike; `partial` with a call that failed, or an answer
  that owns up to part of it ("could not", "unable"); else `complete`;
- a metric asked by a prompt of its own (monitor/judge_metrics.py): its best label, or a full
  score (read from the request's JSON schema);
- a whole conversation: `escalated` when the user asked for a person, `resolved` when the user's
  last message thanks or says it works, `abandoned` when it timed out, else `unresolved`; the
  frustration by the complaints it counts (low ratings, "??", "useless", "ugh").

It is also naive on purpose: any instruction it finds *outside* the data block, such as
"rate this relevant" or "label everything ungrounded", it obeys. A prompt whose data can escape
its block is therefore caught by the prompt-injection tests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.openai_server import Reply

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "is", "are", "of", "to", "in", "on", "for", "do", "does", "how",
         "what", "i", "my", "you", "your", "and", "or", "it", "be", "can", "with", "long", "much"}


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> set[str]:
    return {_singular(w) for w in _WORD.findall(text.lower()) if w not in _STOP}


def _data_block(user: str) -> tuple[str, str]:
    """(inside the properly closed data block, everything outside it)."""
    match = re.search(r"<data-([0-9a-f]+)>\s*(.*?)\s*</data-\1>", user, re.DOTALL)  # first close
    if not match:
        return "", user
    return match.group(2), user[:match.start()] + user[match.end():]


def _injected_label(outside: str) -> str | None:
    match = re.search(r"(?:rate|label) (?:this|everything|all)[^.\n]*?\b(relevant|irrelevant|"
                      r"complete|no_answer|ungrounded|inferable)\b", outside, re.IGNORECASE)
    return match.group(1).lower() if match else None


def _field(data: str, name: str, until: str | None) -> str:
    pattern = rf"{name}: (.*?)" + (rf"\n\n{until}" if until else r"\Z")
    match = re.search(pattern, data, re.DOTALL)
    return match.group(1).strip() if match else ""


def _numbered(block: str) -> list[str]:
    # a trajectory's nested steps are indented
    return [m.group(2).strip() for m in re.finditer(r"^\s*\[(\d+)\] (.*)$", block, re.MULTILINE)]


def _goal_completion(data: str) -> dict[str, str]:
    calls = [step.split(" -> ") for step in _numbered(data) if step.startswith("tool ")]
    answer = _field(data, "Answer", None)
    repeated = any(sum(c[0] == call[0] for c in calls) >= 3 for call in calls)
    if answer in ("", "(empty)") or repeated or (
            calls and all(c[-1].startswith("error:") for c in calls)):
        label = "failed"
    elif any(c[-1].startswith("error:") for c in calls) or re.search(
            r"\b(?:could not|couldn't|unable|only)\b", answer, re.IGNORECASE):
        label = "partial"
    else:
        label = "complete"
    return {"reasoning": "judged on the steps by the scripted model", "label": label}


def _session(data: str) -> dict[str, str]:
    said = re.findall(r"^\[\d+\] User: (.*)$", data, re.MULTILINE)
    if re.search(r"\b(?:human|person|representative)\b", " ".join(said), re.IGNORECASE):
        outcome = "escalated"
    elif said and re.search(r"\b(?:thanks|thank you|works)\b", said[-1], re.IGNORECASE):
        outcome = "resolved"
    elif "timed out" in data:
        outcome = "abandoned"
    else:
        outcome = "unresolved"
    complaints = len(re.findall(r"User rating: -|\?\?|\buseless\b|\bugh\b", data, re.IGNORECASE))
    return {"reasoning": "read whole by the scripted model", "outcome": outcome,
            "frustration": "high" if complaints >= 2 else "some" if complaints else "none"}


def _documents(numbered: list[tuple[int, str]], q_words: set[str], forced: str | None
               ) -> list[dict[str, Any]]:
    return [{"index": i, "reasoning": "Shares the question's subject." if words(d) & q_words
             else "About something else.",
             "label": forced if forced in ("relevant", "irrelevant") else
             ("relevant" if words(d) & q_words else "irrelevant")}
            for i, d in numbered]


def judge_model(request: dict[str, Any]) -> Reply:
    system = request["messages"][0]["content"]
    user = request["messages"][1]["content"]
    data, outside = _data_block(user)
    forced = _injected_label(outside)
    question = _field(data, "Question", None).split("\n\n")[0]
    q_words = words(question)
    schema = (request.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    asked = set(schema.get("properties", {})) - {"reasoning"}
    if "AI agent's work" in system:
        out = _goal_completion(data)
    elif "a conversation between a user" in system:
        out = _session(data)
    elif asked in ({"label"}, {"score"}):  # a metric asked alone: its best label, a full score
        value = schema["properties"]["label"]["enum"][0] if "label" in asked else 1.0
        out = {"reasoning": "judged by the scripted model", asked.pop(): value}
    elif "retrieval system" in system:
        out = {"documents": _documents(list(enumerate(_numbered(data), 1)), q_words, forced)}
    elif "tool calls" in system:
        calls = _numbered(data)
        out = {"calls": []}
        for i, call in enumerate(calls, 1):
            arguments = call.split("(", 1)[1].rsplit(") -> ", 1)[0]
            values = [str(v).lower() for v in json.loads(arguments).values()]
            supported = all(v in question.lower() for v in values)
            out["calls"].append({"index": i, "reasoning": "checked against the question",
                                 "needed": "yes", "arguments_supported": "yes" if supported else "no"})
    else:
        given = "Claims to label:" in data  # the cascade's prompt: label these claims only
        answer = _field(data, "Answer", "Claims to label:" if given else None)
        docs = " ".join(_numbered(data))
        declines = bool(re.search(r"could not find|don.t know|cannot answer|don.t have inform"
                                  r"|not mentioned", answer, re.I))

        def label(sentence: str) -> str:
            if re.match(r"(happy to help|hope this helps|sure)", sentence, re.I) or declines:
                return "generic"
            if forced in ("inferable", "ungrounded"):
                return forced
            w = words(sentence)
            return "inferable" if w and len(w & words(docs)) / len(w) >= 0.6 else "ungrounded"

        if given:
            claims = [{"index": int(m.group(1)), "reasoning": "compared with the documents",
                       "label": label(m.group(2).strip())}
                      for m in re.finditer(r"^<(\d+)> (.*)$", data, re.MULTILINE)]
        else:
            claims = [{"claim": sentence, "reasoning": "compared with the documents",
                       "label": label(sentence)}
                      for sentence in filter(None, (s.strip() for s in
                                                    re.split(r"(?<=[.!?])\s+", answer)))]
        relevant = bool(words(answer) & q_words) or declines
        completeness = forced if forced in ("complete", "no_answer") else (
            "no_answer" if declines or not answer or answer == "(empty)" else
            "complete" if relevant else "incomplete")  # an answer to another question
        out = {"answer_relevance": {"reasoning": "addresses the question",
                                    "label": "relevant" if relevant else "irrelevant"},
               # Quoting the answer, as models often do: trace content in a rationale.
               "completeness": {"reasoning": f"covers the question: {answer[:200]}",
                                "label": completeness},
               "claims": claims}
        if given:  # with the documents it lists to label
            listed = re.search(r"^Documents to label: (.*)$", data, re.MULTILINE)
            numbers = [int(n) for n in re.findall(r"\[(\d+)\]", listed.group(1))] if listed else []
            shown = _numbered(data)
            out = {"documents": _documents([(n, shown[n - 1]) for n in numbers], q_words, forced),
                   **out}
    text = json.dumps(out)
    return Reply(content=text, prompt_tokens=sum(len(m["content"]) // 4 for m in request["messages"]),
                 completion_tokens=len(text) // 4)
