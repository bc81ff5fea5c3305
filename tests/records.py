"""Game records (`resistance-record/1`, as plain dicts) shared by the record and deduction tests."""

from __future__ import annotations


def record_dict(record_id: str, players: int, spies: int, missions: list[dict], **rest) -> dict:
    """A record with these missions; `rest` adds the optional keys (outcome, source)."""
    return {
        "format": "resistance-record/1",
        "id": record_id,
        "players": players,
        "spies": spies,
        "missions": missions,
        **rest,
    }


def first_mission(proposals: list[dict], **fails) -> dict:
    """Mission 1 of a five-player game (a team of two, one Fail card fails it); `fails=n` once it was played."""
    return {"mission": 1, "team_size": 2, "fails_required": 1, "proposals": proposals, **fails}


def impossible_record() -> dict:
    """5 players; mission 1's team [0, 1] showed 2 Fail cards: both are spies."""
    return record_dict(
        "impossible",
        5,
        2,
        [first_mission([{"leader": 0, "team": [0, 1], "votes": [True] * 5}], fails=2)],
    )
