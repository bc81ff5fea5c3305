"""Game state to and from plain JSON-compatible data, with a schema version."""

from __future__ import annotations

from typing import Any

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


def state_from_dict(data: Any) -> GameState:
    if not isinstance(data, dict):
        raise StateFormatError("game state must be an object")
    schema = data.get("schema")
    if schema != SCHEMA_VERSION:
        raise StateFormatError(f"unsupported game state schema {schema!r}; this engine reads schema {SCHEMA_VERSION}")
    try:
        variants = data["variants"]
        return GameState(
            players=int(data["players"]),
            spies=tuple(int(s) for s in data["spies"]),
            variants=Variants(targeting=bool(variants["targeting"]), blind_spies=bool(variants["blind_spies"])),
            leader=int(data["leader"]),
            phase=Phase(data["phase"]),
            rounds=tuple(
                MissionRound(
                    mission=int(r["mission"]),
                    team_size=int(r["team_size"]),
                    fails_required=int(r["fails_required"]),
                    proposals=tuple(
                        Proposal(
                            leader=int(p["leader"]),
                            team=tuple(int(s) for s in p["team"]),
                            votes=None if p["votes"] is None else tuple(bool(v) for v in p["votes"]),
                        )
                        for p in r["proposals"]
                    ),
                    fails=None if r["fails"] is None else int(r["fails"]),
                )
                for r in data["rounds"]
            ),
            pending_votes=tuple(None if v is None else bool(v) for v in data["pending_votes"]),
            pending_cards=tuple((int(seat), bool(fail)) for seat, fail in data["pending_cards"]),
            winner=None if data["winner"] is None else Side(data["winner"]),
            end_reason=None if data["end_reason"] is None else EndReason(data["end_reason"]),
            version=int(data["version"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFormatError(f"malformed game state: {exc!r}") from exc
