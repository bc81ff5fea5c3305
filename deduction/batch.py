"""The `python -m deduction batch` protocol: JSON Lines in, one JSON answer per line out."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from deduction.analysis import deduce
from deduction.exact import ImpossibleRecord
from deduction.knowledge import Viewer
from engine import RecordError, parse_record


class BadRequest(ValueError):
    pass


def _is_seat(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_viewer(request: dict, players: int) -> Viewer:
    if "viewer" not in request:
        raise BadRequest("viewer: missing (a seat number, or null for an outsider)")
    seat = request["viewer"]
    known = request.get("known_spies")
    if seat is None:
        if known is not None:
            raise BadRequest("known_spies: only a spy viewer (a seat) can know the spies")
        return Viewer.outsider()
    if not _is_seat(seat) or not 0 <= seat < players:
        raise BadRequest(f"viewer: must be a seat from 0 to {players - 1}, or null")
    if known is None:
        return Viewer.resistance(seat)
    if not isinstance(known, list) or not all(_is_seat(s) for s in known):
        raise BadRequest("known_spies: must be a list of seat numbers")
    if seat not in known:
        raise BadRequest("known_spies: must include the viewer, who is a spy")
    return Viewer.spy(seat, tuple(known))


def answer(line: str, model: str) -> dict:
    """The answer to one request line; a broken request gets {"error": ...}."""
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise BadRequest("a request must be a JSON object")
        if "record" not in request:
            raise BadRequest("record: missing")
        record = parse_record(request["record"])
        viewer = parse_viewer(request, record.players)
        result = deduce(record, viewer, model)
    except json.JSONDecodeError as exc:
        return {"error": f"not JSON: {exc.msg} at column {exc.colno}"}
    except RecordError as exc:
        return {"error": f"record.{exc.field}: {exc.problem}"}
    except (BadRequest, ImpossibleRecord, ValueError) as exc:
        return {"error": str(exc)}
    return {"spy_probability": list(result.spy_probability), "consistent": result.consistent}


def run(lines: Iterable[str], model: str) -> Iterator[str]:
    for line in lines:
        if line.strip():
            yield json.dumps(answer(line, model))
