"""A group's time zone, as a person types it and as it is stored.

Stored as an IANA name ("Europe/Madrid", which follows daylight saving time) or as a fixed offset
("UTC+03:00"). What a person types is matched without regard to case, and "+3", "UTC-5:30" and
"GMT+1" are read as offsets.
"""

from __future__ import annotations

import re
from datetime import UTC, timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

UTC_NAME = "UTC"
_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
MAX_OFFSET = timedelta(hours=14)  # the farthest any place on Earth sets its clocks from UTC


@lru_cache(maxsize=1)
def _names_by_lowercase() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


@lru_cache(maxsize=1)
def _names() -> frozenset[str]:
    return frozenset(available_timezones())


def normalized(typed: str) -> str | None:
    """The stored name of the zone a person typed, or None if it names none."""
    text = typed.strip()
    if text.lower() in ("utc", "gmt", "z"):
        return UTC_NAME
    offset = _OFFSET.match(text)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        if minutes >= 60 or timedelta(hours=hours, minutes=minutes) > MAX_OFFSET:
            return None
        if hours == minutes == 0:
            return UTC_NAME
        return f"UTC{sign}{hours:02d}:{minutes:02d}"
    name = _names_by_lowercase().get(text.lower().replace(" ", "_"))
    return name if name is not None and zone_named(name) is not None else None


@lru_cache(maxsize=256)
def zone_named(name: str) -> tzinfo | None:
    """The zone a stored name stands for, or None if it stands for none (a name a newer or older
    time zone database knows, in a document this one reads)."""
    if name == UTC_NAME:
        return UTC
    if name.startswith("UTC") and len(name) == 9:
        offset = _OFFSET.match(name)
        if offset is None:
            return None
        delta = timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0))
        return timezone(delta if offset.group(1) == "+" else -delta)
    if name not in _names():
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
