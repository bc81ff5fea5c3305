"""The `python -m deduction batch` protocol: JSON Lines in, one JSON answer per line out."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from deduction.analysis import deduce
from deduction.exact import ImpossibleRecord
from deduction.knowledge import SeenCard, Viewer
from deduction.missions import SPOTLIGHT, mission_facts
from engine import GameRecord, RecordError, parse_record
from engine.record import NotJSON, read_json


class BadRequest(ValueError):
    pass


REQUEST_FIELDS = ("record", "viewer", "known_spies", "known", "seen_cards", "history")


def _is_seat(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_viewer(request: dict, record: GameRecord) -> Viewer:
    players = record.players
    if "viewer" not in request:
        raise BadRequest("viewer: missing (a seat number, or null for an outsider)")
    seat = request["viewer"]
    knows_spies = "known_spies" in request
    roles = _known_roles(request.get("known", {}), players)
    cards = _seen_cards(request.get("seen_cards", []), players)
    if seat is None:
        if knows_spies:
            raise BadRequest("known_spies: only a spy viewer (a seat) can know the spies")
        if roles or cards:
            raise BadRequest("known, seen_cards: only a viewer at the table sees with Plot cards")
        return Viewer.outsider()
    if not _is_seat(seat) or not 0 <= seat < players:
        raise BadRequest(f"viewer: must be a seat from 0 to {players - 1}, or null")
    if (roles or cards) and not (record.variants is not None and record.variants.plot_cards):
        raise BadRequest("known, seen_cards: only a game with Plot cards shows a player a role or a card")
    _check_seen_against_record(cards, record)
    if not knows_spies:
        return Viewer.resistance(seat, roles, cards)
    # A spy knows every side already: what Plot cards showed them adds nothing.
    return Viewer.spy(seat, _known_spies(request["known_spies"], seat, record))


def _known_spies(raw: Any, seat: int, record: GameRecord) -> tuple[int, ...]:
    """`known_spies`: every spy, as a spy who was shown the others knows them."""
    if record.variants is not None and record.variants.blind_spies:
        raise BadRequest("known_spies: under Blind Spies a spy does not know the other spies")
    if not isinstance(raw, list) or not all(_is_seat(s) for s in raw):
        raise BadRequest("known_spies: must be a list of seat numbers")
    if len(set(raw)) != len(raw) or not all(0 <= s < record.players for s in raw):
        raise BadRequest(f"known_spies: must list distinct seats from 0 to {record.players - 1}")
    if seat not in raw:
        raise BadRequest("known_spies: must include the viewer, who is a spy")
    if len(raw) != record.spies:
        raise BadRequest(f"known_spies: must list all {record.spies} spies")
    return tuple(raw)


def _known_roles(raw: Any, players: int) -> tuple[tuple[int, bool], ...]:
    """`{"<seat>": "spy" | "resistance"}`: roles the viewer saw with Plot cards."""
    if not isinstance(raw, dict):
        raise BadRequest('known: must be an object like {"3": "spy"}')
    seat_names = {str(seat): seat for seat in range(players)}
    roles = []
    for key, role in raw.items():
        if key not in seat_names:
            raise BadRequest(f"known: {key!r} is not a seat from 0 to {players - 1}")
        if role not in ("spy", "resistance"):
            raise BadRequest(f'known.{key}: must be "spy" or "resistance"')
        roles.append((seat_names[key], role == "spy"))
    return tuple(roles)


def _seen_cards(raw: Any, players: int) -> tuple[SeenCard, ...]:
    """`[{"mission": m, "seat": s, "fail": bool}]`: mission cards the viewer watched."""
    if not isinstance(raw, list):
        raise BadRequest("seen_cards: must be a list")
    cards = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or set(item) != {"mission", "seat", "fail"}:
            raise BadRequest(f"seen_cards[{i}]: must have exactly mission, seat and fail")
        mission, seat, fail = item["mission"], item["seat"], item["fail"]
        if not _is_seat(mission) or not 1 <= mission <= 5:
            raise BadRequest(f"seen_cards[{i}].mission: must be a mission from 1 to 5")
        if not _is_seat(seat) or not 0 <= seat < players:
            raise BadRequest(f"seen_cards[{i}].seat: must be a seat from 0 to {players - 1}")
        if not isinstance(fail, bool):
            raise BadRequest(f"seen_cards[{i}].fail: must be true or false")
        cards.append(SeenCard(mission, seat, fail))
    return tuple(cards)


def _check_seen_against_record(cards: tuple[SeenCard, ...], record: GameRecord) -> None:
    """Cards a viewer watched must fit together with the mission they were played on: each card
    is seen once, one played face up in the spotlight is what the table saw, and the cards seen
    among the shuffled ones hold no more Fail cards, nor Success cards, than the mission had.
    (Each card alone is checked against the record where the answer is computed.)"""
    seen: dict[tuple[int, int], int] = {}
    for i, card in enumerate(cards):
        if (card.mission, card.seat) in seen:
            first = seen[(card.mission, card.seat)]
            raise BadRequest(
                f"seen_cards[{i}]: the card of seat {card.seat} on mission {card.mission} is also seen_cards[{first}]"
            )
        seen[(card.mission, card.seat)] = i
    for m in record.played_missions:
        facts = mission_facts(m)
        on_mission = [(i, card) for i, card in enumerate(cards) if card.mission == m.mission]
        for i, card in on_mission:
            shown = next((use for use in m.plot if use.kind == SPOTLIGHT and use.target == card.seat), None)
            if shown is not None and bool(shown.fail) != card.fail:
                raise BadRequest(f"seen_cards[{i}].fail: seat {card.seat} played that card face up in the spotlight")
        hidden = [(i, card) for i, card in on_mission if card.seat in facts.hidden_players]
        fails = [i for i, card in hidden if card.fail]
        successes = [i for i, card in hidden if not card.fail]
        if len(fails) > facts.hidden_fails:
            raise BadRequest(f"seen_cards[{fails[-1]}]: more Fail cards seen than mission {m.mission} had")
        if len(successes) > len(facts.hidden_players) - facts.hidden_fails:
            raise BadRequest(f"seen_cards[{successes[-1]}]: more Success cards seen than mission {m.mission} had")


def _read_request(line: str | bytes) -> Any:
    try:
        return read_json(line)
    except NotJSON as exc:  # not UTF-8, nested too deeply, a name given twice, NaN
        raise BadRequest(str(exc)) from None


def _in_request(record_field: str, where: str = "record") -> str:
    """A field of a record, named from the request that holds it."""
    return where if record_field == "record" else f"{where}.{record_field}"


def _check_history(raw: Any) -> None:
    """`history`: earlier finished records of the same players. This model reads no habits from
    them, so they are accepted and not read (parsing hundreds of records per request would cost
    more than the answer); only what is not a list of them at all is refused."""
    if not isinstance(raw, list):
        raise BadRequest("history: must be a list of records")


def answer(line: str | bytes, model: str) -> dict:
    """The answer to one request line; a broken request gets {"error": ...}."""
    try:
        request = _read_request(line)
        if not isinstance(request, dict):
            raise BadRequest("a request must be a JSON object")
        for name in request:
            if name not in REQUEST_FIELDS:
                raise BadRequest(f"{name}: unknown field")
        if "record" not in request:
            raise BadRequest("record: missing")
        record = parse_record(request["record"])
        viewer = parse_viewer(request, record)
        if "history" in request:
            _check_history(request["history"])
        result = deduce(record, viewer, model)
    except json.JSONDecodeError as exc:
        return {"error": f"not JSON: {exc.msg} at column {exc.colno}"}
    except RecordError as exc:
        return {"error": f"{_in_request(exc.field)}: {exc.problem}"}
    except (BadRequest, ImpossibleRecord, ValueError) as exc:
        return {"error": str(exc)}
    return {"spy_probability": list(result.spy_probability), "consistent": result.consistent}


def run(lines: Iterable[str | bytes], model: str) -> Iterator[str]:
    """One answer per request line, in order. A blank line holds no request and gets no answer,
    as a program that separates its requests with one expects."""
    for line in lines:
        if line.strip():
            yield json.dumps(answer(line, model))
