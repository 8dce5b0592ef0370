"""A real local HTTP server speaking the chat-completions protocol with scripted replies.

Runs ThreadingHTTPServer on 127.0.0.1, port 0, in a thread. Replies are consumed in order;
once they run out every request gets a plain "ok" answer. Reusable by any test that needs a
model server (client, agent adapter, demo against a "real" server).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def chat_answer(
    content: str | None = "ok",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    refusal: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    if refusal is not None:
        message["refusal"] = refusal
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | str = field(default_factory=chat_answer)
    headers: dict[str, str] = field(default_factory=dict)
    #: Hold the request open (never answer) until the client closes the connection.
    hang: bool = False
    #: Answer only once this is set (the server sets ``gate_reached`` when it starts waiting).
    gate: threading.Event | None = None


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    client_port: int


class FakeChatServer:
    def __init__(self, replies: list[Reply] | None = None) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[Received] = []
        self.hang_started = threading.Event()
        self.hang_closed = threading.Event()
        self.gate_reached = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse is observable
            # Headers and body go out in two writes; with Nagle on, each answer stalls ~40 ms
            # on the client's delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                with server._lock:
                    server.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw or b"{}"), self.client_address[1])
                    )
                    reply = server.replies.pop(0) if server.replies else Reply()
                if reply.hang:
                    server.hang_started.set()
                    self.connection.settimeout(10)
                    try:
                        gone = self.connection.recv(1) == b""
                    except OSError:
                        gone = True
                    if gone:
                        server.hang_closed.set()
                    self.close_connection = True
                    return
                if reply.gate is not None:
                    server.gate_reached.set()
                    reply.gate.wait(10)
                data = reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval only makes shutdown() return sooner; requests are not polled.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FakeChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
