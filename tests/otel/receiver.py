"""A small OTLP receiver on loopback (HTTP /v1/traces and gRPC TraceService) that decodes what
it gets with opentelemetry-proto, so tests check the trace an exporter really sent."""

from __future__ import annotations

import gzip
import threading
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


def value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


@dataclass
class Got:
    span: Span
    resource: dict[str, Any]

    @property
    def name(self) -> str:
        return self.span.name

    @property
    def attrs(self) -> dict[str, Any]:
        return {a.key: value(a.value) for a in self.span.attributes}

    @property
    def id(self) -> bytes:
        return self.span.span_id

    @property
    def parent(self) -> bytes:
        return self.span.parent_span_id

    def events(self, name: str) -> list[dict[str, Any]]:
        return [{a.key: value(a.value) for a in e.attributes} for e in self.span.events if e.name == name]


@dataclass
class Receiver:
    spans: list[Got] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, request: trace_service_pb2.ExportTraceServiceRequest, headers: dict[str, str]) -> None:
        with self.lock:
            self.headers.append(headers)
            for rs in request.resource_spans:
                resource = {a.key: value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    self.spans.extend(Got(s, resource) for s in ss.spans)

    def named(self, prefix: str) -> list[Got]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def children(self, parent: Got) -> list[Got]:
        return [s for s in self.spans if s.parent == parent.id]


class HttpReceiver(Receiver):
    def __init__(self) -> None:
        super().__init__()
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                req = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
                me.take(req, {k.lower(): v for k, v in self.headers.items()})
                out = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def __enter__(self) -> HttpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class GrpcReceiver(Receiver):
    def __init__(self) -> None:
        super().__init__()
        me = self

        class Service(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 (the service's name)
                me.take(request, {k: v for k, v in context.invocation_metadata()})
                return trace_service_pb2.ExportTraceServiceResponse()

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> GrpcReceiver:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(None)
