"""A scripted OpenAI-compatible HTTP server for tests.

It speaks the real `/v1/chat/completions` protocol over real HTTP, so the real `openai` client
(and the instrumentors wrapping it) run unmodified. What it answers is scripted: a callable maps
each request body to a reply, which the server wraps in a well-formed completion.

    with ScriptedOpenAIServer(lambda req: Reply(content="Paris.")) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    """One scripted answer: text, tool calls, or an HTTP error."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name":..., "arguments": {...}}
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 10
    completion_tokens: int = 5
    model: str | None = None  # the model the reply says answered; None: the one requested
    body: str | None = None  # sent as is (application/json) instead of a completion: garbage


Script = Callable[[dict[str, Any]], Reply]


class ScriptedOpenAIServer:
    def __init__(self, script: Script, host: str = "127.0.0.1", delay_s: float = 0.0) -> None:
        self.script = script
        self.host = host
        self.delay_s = delay_s  # each answer this late, as a real model is (requests overlap)
        self.port = 0
        self.requests: list[dict[str, Any]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.delay_s:  # cut short when the server closes (a request left hanging)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.delay_s)
        reply = self.script(body)
        if reply.body is not None:
            return web.Response(text=reply.body, status=reply.status,
                                content_type="application/json")
        if reply.status != 200:
            error = {"error": {"message": reply.content or "scripted error", "type": "server_error"}}
            return web.json_response(error, status=reply.status, headers=reply.headers)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }
        if body.get("stream"):
            return await self._stream(request, completion)
        return web.json_response(completion, headers=reply.headers)

    async def _stream(self, request: web.Request, completion: dict[str, Any]) -> web.StreamResponse:
        """The same completion as server-sent chunks: the text word by word, then the finish."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        choice = completion["choices"][0]
        words = (choice["message"]["content"] or "").split(" ")
        deltas = [{"role": "assistant", "content": ""}] + [
            {"content": word if i == 0 else " " + word} for i, word in enumerate(words)]
        base = {k: completion[k] for k in ("id", "created", "model")}
        chunks = [{**base, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({**base, "object": "chat.completion.chunk", "choices": [
            {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
        if (self.requests[-1].get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "object": "chat.completion.chunk", "choices": [],
                           "usage": completion["usage"]})
        for chunk in chunks:
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def __enter__(self) -> ScriptedOpenAIServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._closing.set)
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
