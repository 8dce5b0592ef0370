"""What a hub keeps in memory of a connected run: after each group commit, only the last
``KEEP_IN_MEMORY`` events (each event held is an object the garbage collector walks; held for
seconds, it outlives the young collections and makes the older ones long). The rest is served
from the recording, the run whole and gap-free."""

from __future__ import annotations

from pathlib import Path

from goldfive.hub.connected import RunnerAttachment
from goldfive.hub.service import KEEP_IN_MEMORY
from goldfive.store.recorder import RunRecorder
from tests.hub.drive import run_events


async def test_a_group_commit_leaves_a_run_only_its_last_few_events_in_memory(tmp_path: Path) -> None:
    recorder = RunRecorder(tmp_path / "hub.sqlite", durability="batched", writer_thread=True)
    att = RunnerAttachment.new("r", recorder)
    total = KEEP_IN_MEMORY + 3  # more than it keeps, fewer than twice as many
    try:
        await att.ingest_batch(run_events("r", total))
        assert await recorder.commit()
        att.committed(total - 1, KEEP_IN_MEMORY)
        assert att.run.memory is not None
        assert [e.sequence for e in att.run.memory.events] == list(range(total - KEEP_IN_MEMORY, total))
        assert [e.sequence for e in att.run.events_after(-1)] == list(range(total))  # the rest from the recording
    finally:
        await recorder.close()
