"""Whether Redis still holds what the bot stored there: a marker written once, read again by every tick.

A Redis that restarts without its files (no persistence, a lost volume, a replica promoted empty) comes
back answering as if nothing had happened, and every game, lobby and record is gone. Nothing else tells
a worker: a press on a lost game reads as a press on a game that ended and was forgotten. So the first
worker to start writes a marker (`rb:dataset`, an id of its own), and each worker remembers the id it
read. A marker that is missing, or that names another id, means the data the worker knew is gone; the
first worker to see it writes a new marker saying when (`lost_at`), so that workers started after the
loss know of it too.

On a Redis Cluster the marker lives on one master: a master that comes back empty without it is found
game by game instead (`Store.remembered_active`: a press on a game this worker saw running that is no
longer stored).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis

from tgbot import keys


@dataclass(frozen=True)
class Marker:
    id: str
    since: float
    lost_at: float | None = None  # when a worker found the data of the marker before this one gone

    def dumps(self) -> str:
        return json.dumps({"id": self.id, "since": self.since, "lost_at": self.lost_at})

    @classmethod
    def loads(cls, raw: str) -> Marker | None:
        try:
            data = json.loads(raw)
            lost_at = data.get("lost_at")
            return cls(str(data["id"]), float(data["since"]), None if lost_at is None else float(lost_at))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None  # not ours: taken as a marker that names another id


class Dataset:
    """This worker's view of the marker. `clock`: the shared clock's time (seconds since the epoch)."""

    def __init__(self, redis: Redis, clock: Callable[[], float]) -> None:
        self.redis = redis
        self.clock = clock
        self._raw: str | None = None
        self.marker: Marker | None = None

    async def start(self) -> None:
        """Write the marker if Redis has none (a first start, or one after a loss nobody saw) and read it."""
        await self.redis.set(keys.DATASET, Marker(secrets.token_hex(8), self.clock()).dumps(), nx=True)
        self._adopt(await self.redis.get(keys.DATASET))

    async def check(self) -> bool:
        """True if the data this worker knew is gone since the last check (this worker is the first to
        say so, or another worker was); the marker is then the one that says when."""
        raw = await self.redis.get(keys.DATASET)
        if raw is not None and raw == self._raw:
            return False
        if raw is None:
            now = self.clock()
            await self.redis.set(keys.DATASET, Marker(secrets.token_hex(8), now, lost_at=now).dumps(), nx=True)
            raw = await self.redis.get(keys.DATASET)
        known = self._raw is not None
        self._adopt(raw)
        return known

    def lost_within(self, seconds: float) -> bool:
        """Whether the data was found gone less than `seconds` ago."""
        lost_at = None if self.marker is None else self.marker.lost_at
        return lost_at is not None and self.clock() - lost_at < seconds

    def _adopt(self, raw: str | None) -> None:
        self._raw = raw
        self.marker = None if raw is None else Marker.loads(raw)
