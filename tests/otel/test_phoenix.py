"""A real backend: Arize Phoenix, started on loopback, receives the demo's trace over OTLP and
returns it through its own client, tree and usage intact."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldfive.otel import OTelSink
from goldfive.settings import OTelSettings
from tests.otel.phoenix_server import Phoenix
from tests.otel.test_otel_export import run_demo


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    server = Phoenix(tmp_path_factory.mktemp("phoenix")).start()
    print(f"phoenix answered after {server.start_s:.1f}s")
    try:
        yield server
    finally:
        server.stop()


def _spans_of(phoenix: Phoenix, session: str, want: int) -> list[dict]:  # type: ignore[type-arg]
    from phoenix.client import Client

    client = Client(base_url=phoenix.url)
    deadline = time.monotonic() + 30
    found: list[dict] = []  # type: ignore[type-arg]
    while time.monotonic() < deadline:  # Phoenix writes what it received in batches
        spans = client.spans.get_spans(project_identifier="default", limit=1000)
        found = [s for s in spans if (s.get("attributes") or {}).get("session.id") == session]
        if len(found) >= want:
            return found
        time.sleep(0.5)
    return found


async def test_phoenix_receives_the_demo_trace_and_returns_it_through_its_client(phoenix: Phoenix) -> None:
    run_id = await run_demo(OTelSink(settings=OTelSettings(endpoint=phoenix.otlp_http)))
    spans = _spans_of(phoenix, run_id, want=20)
    by_id = {s["context"]["span_id"]: s for s in spans}
    [root] = [s for s in spans if s["name"] == "invoke_workflow goldfive"]
    assert not root.get("parent_id")
    assert root["attributes"]["gen_ai.conversation.id"] == run_id
    agents = [s for s in spans if s["name"].startswith("invoke_agent ")]
    assert len(agents) == 5 and all(by_id[s["parent_id"]] is root for s in agents)
    chats = [s for s in spans if s["name"] == "chat scripted"]
    assert chats and all(s["attributes"]["gen_ai.usage.input_tokens"] > 0 for s in chats)
    deck = next(s for s in spans if s["name"] == "execute_tool publish_deck")
    assert by_id[deck["parent_id"]]["attributes"]["goldfive.task.id"] == "publish"
    assert len({s["context"]["trace_id"] for s in spans}) == 1
