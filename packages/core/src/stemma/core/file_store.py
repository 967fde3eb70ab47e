"""A store of JSON records, for installs of stemma-core without stemma-storage.

It keeps what the runner needs (the latest completed record of each fingerprint and of each
name, and an append-only event log) but none of the Delta tables, lineage queries or staging:
install ``stemma-storage`` for those. Every write is a whole-file ``os.replace``, so a reader
never sees half a record and a crash loses at most the attempt in flight.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from collections.abc import Collection, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from stemma.core.identity import hash_plain
from stemma.core.layout import RootLayout
from stemma.core.records import StepOutcome, StepRecord, StepSkipped, StepStarted, StepStatus


class FileStore:
    """JSON records under ``{root}/records``; safe across threads and processes."""

    def __init__(self, root: Path) -> None:
        self._layout = RootLayout(root)
        self._records = root / "records"
        self._lock = threading.Lock()

    @property
    def layout(self) -> RootLayout:
        """The directories under this store's root."""
        return self._layout

    def recover(self, step_name: str | None = None) -> int:
        """Nothing is ever staged here: each record is written whole, atomically."""
        return 0

    def completed(self, fingerprints: Collection[str]) -> dict[str, StepRecord]:
        """The latest completed record of each fingerprint that has one."""
        found: dict[str, StepRecord] = {}
        for fingerprint in fingerprints:
            record = self._read(self._by_fingerprint(fingerprint))
            if record is not None:
                found[fingerprint] = record
        return found

    def latest_by_name(self, name: str) -> StepRecord | None:
        """The most recent completed record of a step with this name."""
        return self._read(self._by_name(name))

    def record_started(self, event: StepStarted) -> None:
        """Append the ``running`` event to the event log."""
        self._append_event(event.step_run_id, event.step.fingerprint, StepStatus.RUNNING, None)

    def record_outcome(self, outcome: StepOutcome) -> None:
        """Write the completed record (by fingerprint, then by name) or log the failure."""
        started = outcome.started
        status = StepStatus.COMPLETED if outcome.success else StepStatus.FAILED
        if outcome.success:
            record = StepRecord(
                fingerprint=started.step.fingerprint,
                name=started.step.name,
                version=started.step.version,
                status=status,
                step_run_id=started.step_run_id,
                run_id=started.run_id,
                timestamp=outcome.ended_at,
                config=started.step.config,
                output_path=outcome.output.relative_path if outcome.output else None,
                output_artifact_id=outcome.output.artifact_id if outcome.output else None,
                value_json=outcome.value_json,
            )
            payload = {**asdict(record), "timestamp": record.timestamp.isoformat()}
            self._write(self._by_fingerprint(record.fingerprint), payload)
            self._write(self._by_name(record.name), payload)
        self._append_event(started.step_run_id, started.step.fingerprint, status, outcome.error)

    def record_skipped(self, events: Sequence[StepSkipped]) -> None:
        """Append each ``skipped`` event, with its reason, to the event log."""
        for event in events:
            self._append_event(
                event.step_run_id,
                event.step.fingerprint,
                StepStatus.SKIPPED,
                f"{event.reason}: {event.detail}",
            )

    def _by_fingerprint(self, fingerprint: str) -> Path:
        return self._records / "steps" / fingerprint[:2] / f"{fingerprint}.json"

    def _by_name(self, name: str) -> Path:
        return self._records / "names" / f"{hash_plain(name)}.json"

    def _read(self, path: Path) -> StepRecord | None:
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        data["status"] = StepStatus(data["status"])
        data["timestamp"] = dt.datetime.fromisoformat(data["timestamp"])
        return StepRecord(**data)

    def _write(self, path: Path, payload: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(json.dumps(payload, sort_keys=True))
        os.replace(temporary, path)

    def _append_event(
        self, step_run_id: str, fingerprint: str, status: StepStatus, error: str | None
    ) -> None:
        line = json.dumps(
            {
                "step_run_id": step_run_id,
                "fingerprint": fingerprint,
                "status": status,
                "error": error,
            }
        )
        self._records.mkdir(parents=True, exist_ok=True)
        with self._lock, (self._records / "events.jsonl").open("a") as log:
            log.write(line + "\n")
