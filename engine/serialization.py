"""Game state to and from plain JSON-compatible data, with a schema version.

Loading is strict: stored data is read back exactly or refused with `StateFormatError`,
never coerced, and a state that breaks a rule of the game is refused too
(`engine.invariants`), so a corrupted or foreign value cannot become a playable game.

Schema 1 (before each proposal named its mission and before missed deadlines were marked
seat by seat) is still read, so that games running across an upgrade go on.
"""

from __future__ import annotations

from typing import Any

from engine import rules
from engine.errors import StateFormatError
from engine.invariants import check_state
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Side, Variants

SCHEMA_VERSION = 2
READABLE_SCHEMAS = (1, 2)


def state_to_dict(state: GameState) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "version": state.version,
        "players": state.players,
        "spies": list(state.spies),
        "variants": {"targeting": state.variants.targeting, "blind_spies": state.variants.blind_spies},
        "leader": state.leader,
        "phase": state.phase.value,
        "rounds": [
            {
                "mission": r.mission,
                "team_size": r.team_size,
                "fails_required": r.fails_required,
                "proposals": [
                    {
                        "leader": p.leader,
                        "team": list(p.team),
                        "mission": p.mission,
                        "votes": None if p.votes is None else list(p.votes),
                        "auto_team": p.auto_team,
                        "auto_votes": list(p.auto_votes),
                    }
                    for p in r.proposals
                ],
                "fails": r.fails,
                "auto_cards": list(r.auto_cards),
            }
            for r in state.rounds
        ],
        "pending_votes": list(state.pending_votes),
        "pending_cards": [[seat, fail] for seat, fail in state.pending_cards],
        "winner": state.winner.value if state.winner else None,
        "end_reason": state.end_reason.value if state.end_reason else None,
    }


def _int(value: Any, name: str, low: int = 0, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        raise StateFormatError(f"{name}: expected a whole number from {low}{'' if high is None else f' to {high}'}")
    return value


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise StateFormatError(f"{name}: expected true or false")
    return value


def _list(value: Any, name: str, length: int | None = None) -> list:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise StateFormatError(f"{name}: expected a list" + ("" if length is None else f" of {length}"))
    return value


def _optional(value: Any, read, name: str):
    return None if value is None else read(value, name)


def state_from_dict(data: Any) -> GameState:
    if not isinstance(data, dict):
        raise StateFormatError("game state must be an object")
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema not in READABLE_SCHEMAS:
        raise StateFormatError(f"unsupported game state schema {schema!r}; this engine reads {READABLE_SCHEMAS}")
    state = _read(data, schema)
    check_state(state)
    return state


def _read(data: dict, schema: int) -> GameState:
    try:
        players = _int(data["players"], "players", rules.MIN_PLAYERS, rules.MAX_PLAYERS)
        seat = players - 1
        spies = tuple(_int(s, "spies[]", 0, seat) for s in _list(data["spies"], "spies", rules.spy_count(players)))
        variants = data["variants"]
        rounds = tuple(_round(r, players, schema) for r in _list(data["rounds"], "rounds"))
        pending_votes = tuple(
            _optional(v, _bool, "pending_votes[]") for v in _list(data["pending_votes"], "pending_votes")
        )
        if len(pending_votes) not in (0, players):
            raise StateFormatError(f"pending_votes: expected none or {players}")
        return GameState(
            players=players,
            spies=spies,
            variants=Variants(
                targeting=_bool(variants["targeting"], "variants.targeting"),
                blind_spies=_bool(variants["blind_spies"], "variants.blind_spies"),
            ),
            leader=_int(data["leader"], "leader", 0, seat),
            phase=Phase(data["phase"]),
            rounds=rounds,
            pending_votes=pending_votes,
            pending_cards=tuple(
                (_int(card[0], "pending_cards[][0]", 0, seat), _bool(card[1], "pending_cards[][1]"))
                for card in (_list(c, "pending_cards[]", 2) for c in _list(data["pending_cards"], "pending_cards"))
            ),
            winner=None if data["winner"] is None else Side(data["winner"]),
            end_reason=None if data["end_reason"] is None else EndReason(data["end_reason"]),
            version=_int(data["version"], "version"),
        )
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFormatError(f"malformed game state: {exc!r}") from exc


def _seats(value: Any, name: str, players: int) -> tuple[int, ...]:
    return tuple(_int(s, f"{name}[]", 0, players - 1) for s in _list(value, name))


def _round(r: Any, players: int, schema: int) -> MissionRound:
    mission = _int(r["mission"], "rounds[].mission", 1, rules.MISSION_COUNT)
    return MissionRound(
        mission=mission,
        team_size=_int(r["team_size"], "rounds[].team_size", 1, players),
        fails_required=_int(r["fails_required"], "rounds[].fails_required", 1, 2),
        proposals=tuple(_proposal(p, players, schema, mission) for p in _list(r["proposals"], "rounds[].proposals")),
        fails=_optional(r["fails"], lambda v, n: _int(v, n, 0, players), "rounds[].fails"),
        auto_cards=() if schema == 1 else _seats(r["auto_cards"], "rounds[].auto_cards", players),
    )


def _proposal(p: Any, players: int, schema: int, round_mission: int) -> Proposal:
    votes = (
        None
        if p["votes"] is None
        else tuple(_bool(v, "proposals[].votes[]") for v in _list(p["votes"], "proposals[].votes", players))
    )
    leader = _int(p["leader"], "proposals[].leader", 0, players - 1)
    team = _seats(p["team"], "proposals[].team", players)
    if schema == 1:
        # Schema 1 kept one mission per round, and a leader's missed turn as a proposal that
        # everyone "rejected": now a drawn team whose every vote the deadline filled in.
        missed = _bool(p.get("timed_out", False), "proposals[].timed_out")
        return Proposal(
            leader=leader,
            team=team,
            mission=round_mission,
            votes=votes,
            auto_team=missed,
            auto_votes=tuple(range(players)) if missed else (),
        )
    return Proposal(
        leader=leader,
        team=team,
        mission=_int(p["mission"], "proposals[].mission", 1, rules.MISSION_COUNT),
        votes=votes,
        auto_team=_bool(p["auto_team"], "proposals[].auto_team"),
        auto_votes=_seats(p["auto_votes"], "proposals[].auto_votes", players),
    )
