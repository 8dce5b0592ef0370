"""OTelSink: an EventSink that exports runs as OpenTelemetry traces (``pip install 'goldfive[otel]'``).

``OTelSink()`` builds its own TracerProvider from ``OTelSettings.from_env()`` (the standard
OTEL_* variables: endpoint, ``http/protobuf`` or ``grpc``, headers, service name); pass
``tracer_provider=`` to use one of yours (it is then yours to shut down). One sink may serve
many runs (a hub's): each run id gets its own trace. ``close()`` ends what is open and flushes
(the export itself runs in the SDK's batch thread, never on the event loop).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import TracerProvider as ApiTracerProvider

from goldfive.otel import semconv
from goldfive.otel.trace import RunTrace
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.settings import OTelSettings

__all__ = ["OTelSink", "exporter_for", "provider_for"]

log = logging.getLogger("goldfive.otel")
_TERMINAL = ("run_completed", "run_aborted")


def exporter_for(settings: OTelSettings) -> SpanExporter:
    """The OTLP span exporter the settings name (http/protobuf or grpc)."""
    headers = dict(settings.headers)
    if settings.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        insecure = settings.endpoint.startswith("http://")
        return GrpcExporter(endpoint=settings.endpoint, headers=headers or None, timeout=int(settings.timeout_s), insecure=insecure)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

    return HttpExporter(endpoint=settings.endpoint, headers=headers or None, timeout=settings.timeout_s)


def provider_for(settings: OTelSettings, exporter: SpanExporter | None = None) -> TracerProvider:
    resource = Resource.create({"service.name": settings.service_name, "goldfive.semconv": semconv.SEMCONV_VERSION})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter or exporter_for(settings)))
    return provider


class OTelSink:
    def __init__(
        self,
        *,
        settings: OTelSettings | None = None,
        tracer_provider: ApiTracerProvider | None = None,
        capture_content: bool | None = None,
    ) -> None:
        self.settings = settings or OTelSettings.from_env()
        self._own = tracer_provider is None
        self.provider: Any = tracer_provider if tracer_provider is not None else provider_for(self.settings)
        self.tracer = self.provider.get_tracer("goldfive", schema_url=semconv.SCHEMA_URL)
        self.capture_content = self.settings.capture_content if capture_content is None else capture_content
        self._runs: dict[str, RunTrace] = {}

    def handle(self, event: Event) -> None:
        """The span work for one event (synchronous: a hub calls it from its event hook)."""
        run = self._runs.get(event.run_id)
        if run is None:
            run = self._runs[event.run_id] = RunTrace(event.run_id, self.tracer, self.capture_content)
        try:
            run.handle(event)
        except Exception:  # isolation boundary: a tracing problem never stops a run
            log.exception("could not export event %s of run %s", event.sequence, event.run_id)
        if event.WhichOneof("payload") in _TERMINAL:
            self._runs.pop(event.run_id, None)

    async def emit(self, event: Event) -> None:
        self.handle(event)

    def end_all(self) -> None:
        """End the spans of the runs still open here (this process stops watching them)."""
        for run in self._runs.values():
            run.end()
        self._runs.clear()

    async def flush(self, timeout_s: float = 10.0) -> bool:
        flush = getattr(self.provider, "force_flush", None)
        if flush is None:
            return True
        return bool(await asyncio.to_thread(flush, int(timeout_s * 1000)))

    async def close(self) -> None:
        """A run's end (the Runner closes its sinks): what is done so far goes out."""
        if not await self.flush(self.settings.timeout_s):
            log.warning("OTel export did not finish within %.0fs", self.settings.timeout_s)

    async def shutdown(self) -> None:
        """This process is done with the sink: open spans end, everything is exported, the
        provider (when the sink made it) is shut down."""
        self.end_all()
        await self.close()
        if self._own:
            await asyncio.to_thread(self.provider.shutdown)
