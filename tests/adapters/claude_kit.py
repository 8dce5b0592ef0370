"""Claude Code for real, offline: the CLI bundled in the claude-agent-sdk wheel, talking to a
scripted Messages API on loopback (the streaming form: ``message_start``, content blocks with
``text_delta`` / ``input_json_delta``, ``message_delta`` with its ``stop_reason``,
``message_stop``), with HOME in a temporary directory.

``MessagesServer(respond)``: ``respond(body)`` returns the blocks of each answer, ``("text",
str)`` or ``("tool_use", name, input, id)``; every request body is kept in ``requests``.
``cpu_s`` is the CPU time its handler threads spent (they run in this process: a benchmark
takes it apart from goldfive's). ``hold(n)`` keeps request ``n`` (0-based) unanswered until ``release()``; ``arrived(n)`` is an
asyncio.Event set when request ``n`` came in.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

Block = tuple[Any, ...]


class MessagesServer:
    def __init__(self, respond: Callable[[dict[str, Any]], list[Block]]) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self._holds: dict[int, threading.Event] = {}
        self._arrivals: dict[int, asyncio.Event] = {}
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        #: CPU seconds spent in the request handlers (reading, parsing and answering requests).
        self.cpu_s = 0.0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                cpu = time.thread_time()
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                    if "count_tokens" in self.path:
                        self._send(b'{"input_tokens": 10}', "application/json")
                        return
                    self._send(server._answer(body), "text/event-stream")
                finally:
                    with server._lock:
                        server.cpu_s += time.thread_time() - cpu

            def _send(self, data: bytes, kind: str) -> None:
                try:
                    self.send_response(200)
                    self.send_header("content-type", kind)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the CLI gave up on the request (an interrupt)
                    pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"

    def hold(self, n: int) -> None:
        self._holds[n] = threading.Event()

    def release(self) -> None:
        for gate in self._holds.values():
            gate.set()

    def arrived(self, n: int) -> asyncio.Event:
        with self._lock:
            event = self._arrivals.setdefault(n, asyncio.Event())
            if len(self.requests) > n:
                event.set()
        return event

    def close(self) -> None:
        self.release()
        self._http.shutdown()
        self._http.server_close()

    def _answer(self, body: dict[str, Any]) -> bytes:
        with self._lock:
            n = len(self.requests)
            self.requests.append(body)
            event = self._arrivals.get(n)
        if event is not None:
            self._loop.call_soon_threadsafe(event.set)
        gate = self._holds.get(n)
        if gate is not None:
            gate.wait(30)
        return _stream(str(body.get("model", "claude-test")), self.respond(body))


def _stream(model: str, blocks: list[Block]) -> bytes:
    usage = {"input_tokens": 100, "output_tokens": 1}
    out = [("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    stop = "end_turn"
    for i, block in enumerate(blocks):
        if block[0] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block[1]}
        else:
            stop = "tool_use"
            start, delta = {"type": "tool_use", "id": block[3], "name": block[1], "input": {}}, {"type": "input_json_delta", "partial_json": json.dumps(block[2])}
        out += [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    out += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}}), ("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in out).encode()


def options(server: MessagesServer, home: Path, **kw: Any) -> ClaudeAgentOptions:
    """Options for the bundled CLI on ``server``, offline, with HOME (and cwd) in ``home``."""
    env = {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-test-offline",
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    return ClaudeAgentOptions(env=env, model="claude-test", cwd=str(home), **kw)


# -- reading a request -------------------------------------------------------------------------


def last_user(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def texts(body: dict[str, Any]) -> list[str]:
    """Every text and tool result of the request's messages, in order."""
    out = []
    for m in body["messages"]:
        parts = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        for p in parts:
            if p.get("type") == "text":
                out.append(str(p["text"]))
            elif p.get("type") == "tool_result":
                c = p.get("content")
                out.append(c if isinstance(c, str) else json.dumps(c))
    return out


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    """tool_use_id -> the text of its result, for every tool result in the request (Claude Code
    reorders parts within a message, so the script goes by ids, not by position)."""
    out: dict[str, str] = {}
    for m in body["messages"]:
        for p in m["content"] if isinstance(m["content"], list) else []:
            if p.get("type") == "tool_result":
                c = p.get("content")
                out[str(p.get("tool_use_id"))] = c if isinstance(c, str) else " ".join(str(x.get("text", "")) for x in c or [])
    return out


def task_of(body: dict[str, Any]) -> str:
    """The id of the latest goldfive task prompt in the request ("" when none)."""
    import re

    found = re.findall(r"Do the current task \((\S+)\)", "\n".join(texts(body)))
    return found[-1] if found else ""


def claude_children() -> list[int]:
    """Pids of this process's children that are Claude Code."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and b"claude" in cmd:
            out.append(int(entry))
    return out
