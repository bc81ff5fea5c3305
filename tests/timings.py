"""Shorter locks, leases, grace periods and retry waits, for the tests that wait them out.

Production's are seconds long: a drain's outbox lock lives 2 s, a webhook update's lease 5 s, a
delivery that timed out is tried again after 0.5, 1 and 1.5 s. A test that shows what happens once
one lapses must wait for it to lapse, and those waits were most of the suite's time. The tests that
wait take the `short_timings` fixture (tests/conftest.py), which sets the values below for the test;
worker processes a test starts get them through `WORKER_COMMAND`. Each test still waits for the
lapse it shows (a lock of 0.5 s instead of 2 s): what the bot does around it is unchanged.

A value is set in the module that defines it and in every `tgbot` module that imported it under
its own name (`from tgbot.outbox import LOCK_SECONDS`), so that no module goes on with the long one:
a drain that took its lock for 2 s while Redis let it go after 0.5 s would send what another drain
sends.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Timings:
    outbox_lock: float = 0.5  # a drain's outbox lock (2 s), renewed four times in its life
    retry: float = 0.02  # a timed-out delivery's wait before its next try, times the tries made (0.5 s)
    pending_grace_ms: int = 500  # how fresh a pending outbox's mark is kept by an empty drain (3000 ms)
    creation: float = 0.1  # a group's pointer to a game not yet written, taken for a creation (1 s)
    start_retry: float = 0.1  # a worker waiting for Redis at its start asks again this often (1 s)
    update_lease: float = 1.5  # a webhook update's lease (5 s), renewed five times in its life

    def values(self) -> list[tuple[str, str, Any]]:
        """(module, name, value) of every constant these set."""
        return [
            ("tgbot.store", "OUTBOX_LOCK_SECONDS", self.outbox_lock),
            ("tgbot.outbox", "LOCK_SECONDS", self.outbox_lock),
            ("tgbot.outbox", "_LOCK_MS", int(self.outbox_lock * 1000)),
            ("tgbot.outbox", "RENEW_SECONDS", self.outbox_lock / 4),
            ("tgbot.outbox", "LEASE_MARGIN_SECONDS", self.outbox_lock / 4),
            ("tgbot.service", "RECOVERY_SECONDS", self.outbox_lock + 1),
            ("tgbot.outbox", "RETRY_SECONDS", self.retry),
            ("tgbot.indexes", "PENDING_GRACE_MS", self.pending_grace_ms),
            ("tgbot.indexes", "REMARK_SECONDS", self.pending_grace_ms / 2000),
            ("tgbot.store", "CREATION_SECONDS", self.creation),
            ("tgbot.app", "START_RETRY_SECONDS", self.start_retry),
            ("tgbot.webhook", "LEASE_SECONDS", self.update_lease),
            ("tgbot.webhook", "RENEW_SECONDS", self.update_lease / 5),
            ("tgbot.webhook", "BUSY_WAIT_SECONDS", self.update_lease + 1),
        ]


SHORT = Timings()


def shorten(timings: Timings = SHORT, set_value: Callable[[Any, str, Any], None] = setattr) -> Timings:
    """Set `timings` in every module that holds them; `set_value`: `monkeypatch.setattr` in a test."""
    for module_name, name, value in timings.values():
        module = importlib.import_module(module_name)
        original = getattr(module, name)
        holders = [
            held
            for held_name, held in list(sys.modules.items())
            if (held_name == "tgbot" or held_name.startswith("tgbot.")) and getattr(held, name, None) is original
        ]
        for holder in holders:
            set_value(holder, name, value)
    return timings


# A webhook worker (`tgbot.offline.workers.spawn_worker`) with the short timings; started in the
# repository, where `tests` is found.
WORKER_COMMAND = [
    sys.executable,
    "-c",
    "import sys; from tests.timings import shorten; shorten(); from tgbot.__main__ import main; sys.exit(main([]))",
]
