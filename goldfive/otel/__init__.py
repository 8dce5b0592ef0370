"""Runs as OpenTelemetry traces following the GenAI semantic conventions (``goldfive[otel]``).

``OTelSink`` is an EventSink; ``--otel`` on ``run``, ``demo``, ``serve`` and ``resume`` adds one,
configured by the standard OTEL_* variables (``goldfive.settings.OTelSettings``)."""

from goldfive.otel.semconv import SEMCONV_VERSION
from goldfive.otel.sink import OTelSink, exporter_for, provider_for

__all__ = ["SEMCONV_VERSION", "OTelSink", "exporter_for", "provider_for"]
