"""A recording, OpenAI-compatible fake LLM server for cost benchmarks (aiohttp + stdlib only).

    with RecordingLLM() as llm:            # responder defaults to schema_faker
        client = openai.OpenAI(base_url=llm.base_url, api_key="unused")
        ...
        print(llm.calls("chat"), llm.tokens("chat"))

Serves POST /v1/chat/completions and POST /v1/embeddings on 127.0.0.1 (ephemeral port) from a
background thread, records every request and answers with a realistic `usage` block. Tokens are
counted as ceil(len(text) / 4) on both sides (no tokenizer), so every client of this server is
measured with the same ruler, whichever virtualenv it runs in.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

Responder = Callable[[dict], str]
EMBEDDING_DIM = 384
ARRAY_ITEMS = 3  # items per faked array (clamped to minItems/maxItems)


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / 4) if text else 0


def message_text(messages: list[dict]) -> str:
    """All text of a chat request's messages (string contents and text parts)."""
    parts = []
    for m in messages or []:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


# --------------------------------------------------------------------------- schema faking
def fake_from_schema(schema: dict, root: dict | None = None, name: str = "value",
                     depth: int = 0) -> Any:
    """A minimal valid instance of a JSON schema: enums -> first value, strings -> short text,
    arrays -> ARRAY_ITEMS items, numbers -> 1, booleans -> true; $ref/$defs/anyOf/allOf followed."""
    root = root if root is not None else schema
    if depth > 20:
        return None
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part] if part else target
        return fake_from_schema(target, root, name, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return fake_from_schema(options[0], root, name, depth + 1)
    if schema.get("allOf"):
        merged: dict = {}
        for sub in schema["allOf"]:
            value = fake_from_schema(sub, root, name, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        return {key: fake_from_schema(sub, root, key, depth + 1)
                for key, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 0), min(ARRAY_ITEMS, schema.get("maxItems", ARRAY_ITEMS)))
        prefix = schema.get("prefixItems") or []
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        singular = name[:-1] if name.endswith("s") else name
        values = [fake_from_schema(prefix[i] if i < len(prefix) else items, root, singular,
                                   depth + 1) for i in range(max(count, len(prefix)))]
        for i, value in enumerate(values):  # number items 1..n where they carry an "index"
            if isinstance(value, dict) and isinstance(value.get("index"), int):
                value["index"] = i + 1
        return values
    if kind in ("integer", "number"):
        value = 1
        if "minimum" in schema:
            value = max(value, schema["minimum"])
        if "exclusiveMinimum" in schema:
            value = max(value, schema["exclusiveMinimum"] + 1)
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    fmt = schema.get("format")
    if fmt == "date-time":
        return "2024-01-01T00:00:00Z"
    if fmt == "date":
        return "2024-01-01"
    words = name.replace("_", " ").strip() or "value"
    text = f"A short sample {words} written by the recording LLM."
    if "maxLength" in schema:
        text = text[:schema["maxLength"]]
    return text.ljust(schema.get("minLength", 0), "x")


_SCHEMA_MARKER = re.compile(r"json[ _]schema\s*:?", re.IGNORECASE)
_OUTPUT_MARKER = re.compile(r"output\s*:\s*", re.IGNORECASE)


def _json_after(text: str, pos: int) -> Any:
    start = text.find("{", pos)
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text, start)[0]
    except ValueError:
        return None


def schema_in_prompt(text: str) -> dict | None:
    """The first JSON schema embedded in a prompt after 'json_schema:' / 'JSON Schema:' (how
    RAGAS prompts and instructor's JSON mode state the expected output)."""
    for match in _SCHEMA_MARKER.finditer(text):
        candidate = _json_after(text, match.end())
        if isinstance(candidate, dict) and ({"properties", "type", "$defs", "$ref"} & candidate.keys()):
            return candidate
    return None


def schema_faker(request: dict) -> str:
    """Default responder: a parseable answer for whatever the request asks."""
    fmt = request.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    if isinstance(schema, dict):
        return json.dumps(fake_from_schema(schema))
    text = message_text(request.get("messages", []))
    schema = schema_in_prompt(text)
    if schema is not None:
        return json.dumps(fake_from_schema(schema))
    if re.search(r"\bjson\b", text, re.IGNORECASE) or fmt.get("type") == "json_object":
        # no schema: echo the shape of the first example output shown in the prompt, if any
        for match in _OUTPUT_MARKER.finditer(text):
            example = _json_after(text, match.end())
            if example:
                return json.dumps(example)
        return "{}"
    return "This is a short placeholder answer from the recording LLM."


def fake_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """Deterministic unit vector seeded by a hash of `text`."""
    rng = random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
    vector = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


# --------------------------------------------------------------------------- the server
class RecordingLLM:
    """OpenAI-compatible server on 127.0.0.1 in a background thread; records every request."""

    def __init__(self, responder: Responder = schema_faker, host: str = "127.0.0.1") -> None:
        self.responder = responder
        self.host = host
        self.port: int | None = None
        self.records: list[dict] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # ---- recording
    def _record(self, kind: str, prompt_tokens: int, completion_tokens: int, **extra: Any) -> None:
        with self._lock:
            self.records.append({"kind": kind, "prompt_tokens": prompt_tokens,
                                 "completion_tokens": completion_tokens, **extra})

    def calls(self, kind: str | None = "chat") -> int:
        """Requests recorded for `kind` ("chat" or "embeddings"; None: all)."""
        with self._lock:
            return sum(1 for r in self.records if kind is None or r["kind"] == kind)

    def tokens(self, kind: str | None = "chat") -> dict[str, int]:
        """Prompt/completion/total tokens for `kind` ("chat" or "embeddings"; None: all)."""
        with self._lock:
            rows = [r for r in self.records if kind is None or r["kind"] == kind]
        prompt = sum(r["prompt_tokens"] for r in rows)
        completion = sum(r["completion_tokens"] for r in rows)
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    def reset(self) -> None:
        with self._lock:
            self.records.clear()

    # ---- handlers
    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        prompt_tokens = count_tokens(message_text(body.get("messages", [])))
        tools = body.get("tools") or []
        forced = (body.get("tool_choice") or {}) if isinstance(body.get("tool_choice"), dict) else {}
        choices, completion_tokens = [], 0
        for i in range(max(1, int(body.get("n") or 1))):
            message: dict[str, Any] = {"role": "assistant", "content": None}
            tool = next((t["function"] for t in tools if t.get("type") == "function" and
                         t["function"]["name"] == forced.get("function", {}).get("name")), None)
            if tool is not None:  # forced function call (e.g. instructor's TOOLS mode)
                arguments = json.dumps(fake_from_schema(tool.get("parameters") or {}))
                message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                          "function": {"name": tool["name"], "arguments": arguments}}]
                completion_tokens += count_tokens(arguments)
                finish = "tool_calls"
            else:
                message["content"] = self.responder(body)
                completion_tokens += count_tokens(message["content"])
                finish = "stop"
            choices.append({"index": i, "message": message, "finish_reason": finish,
                            "logprobs": None})
        self._record("chat", prompt_tokens, completion_tokens, model=body.get("model"),
                     messages=len(body.get("messages", [])), n=len(choices))
        return web.json_response({
            "id": f"chatcmpl-{len(self.records)}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model") or "recording-llm",
            "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}})

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        inputs = body.get("input")
        if isinstance(inputs, str) or (isinstance(inputs, list) and inputs
                                       and isinstance(inputs[0], int)):
            inputs = [inputs]
        texts = [x if isinstance(x, str) else " ".join(map(str, x)) for x in inputs or []]
        prompt_tokens = sum(len(x) if isinstance(x, list) else count_tokens(x)
                            for x in inputs or [])
        dim = int(body.get("dimensions") or EMBEDDING_DIM)
        self._record("embeddings", prompt_tokens, 0, model=body.get("model"), inputs=len(texts))
        return web.json_response({
            "object": "list", "model": body.get("model") or "recording-embeddings",
            "data": [{"object": "embedding", "index": i, "embedding": fake_embedding(t, dim)}
                     for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}})

    # ---- lifecycle
    def start(self) -> RecordingLLM:
        ready = threading.Event()
        errors: list[BaseException] = []

        async def serve() -> None:
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_post("/v1/chat/completions", self._chat)
            app.router.add_post("/v1/embeddings", self._embeddings)
            self._runner = web.AppRunner(app, access_log=None)
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(serve())
            except BaseException as exc:  # surfaced to the starting thread
                errors.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, name="recording-llm", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors or self.port is None:
            raise RuntimeError(f"recording LLM failed to start: {errors}")
        return self

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = self._thread = self._runner = None

    def __enter__(self) -> RecordingLLM:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
