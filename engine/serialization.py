"""Game state to and from plain JSON-compatible data, with a schema version.

Loading is strict: stored data is read back exactly or refused with `StateFormatError`,
never coerced, so a corrupted or foreign value cannot become a playable game.
"""

from __future__ import annotations

from typing import Any

from engine import rules
from engine.errors import StateFormatError
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Side, Variants

SCHEMA_VERSION = 1


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
                        "votes": None if p.votes is None else list(p.votes),
                        "timed_out": p.timed_out,
                    }
                    for p in r.proposals
                ],
                "fails": r.fails,
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
    if not isinstance(schema, int) or isinstance(schema, bool) or schema != SCHEMA_VERSION:
        raise StateFormatError(f"unsupported game state schema {schema!r}; this engine reads schema {SCHEMA_VERSION}")
    try:
        players = _int(data["players"], "players", rules.MIN_PLAYERS, rules.MAX_PLAYERS)
        seat = players - 1
        spies = tuple(_int(s, "spies[]", 0, seat) for s in _list(data["spies"], "spies", rules.spy_count(players)))
        variants = data["variants"]
        rounds = tuple(_round(r, players) for r in _list(data["rounds"], "rounds"))
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


def _round(r: Any, players: int) -> MissionRound:
    seat = players - 1
    return MissionRound(
        mission=_int(r["mission"], "rounds[].mission", 1, rules.MISSION_COUNT),
        team_size=_int(r["team_size"], "rounds[].team_size", 1, players),
        fails_required=_int(r["fails_required"], "rounds[].fails_required", 1, 2),
        proposals=tuple(
            Proposal(
                leader=_int(p["leader"], "proposals[].leader", 0, seat),
                team=tuple(_int(s, "proposals[].team[]", 0, seat) for s in _list(p["team"], "proposals[].team")),
                votes=None
                if p["votes"] is None
                else tuple(_bool(v, "proposals[].votes[]") for v in _list(p["votes"], "proposals[].votes", players)),
                timed_out=_bool(p.get("timed_out", False), "proposals[].timed_out"),
            )
            for p in _list(r["proposals"], "rounds[].proposals")
        ),
        fails=_optional(r["fails"], lambda v, n: _int(v, n, 0, players), "rounds[].fails"),
    )
