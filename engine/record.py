"""The public record of a game in the `resistance-record/1` format: model, validator, export, replay.

The format is a contract with other programs (see docs/architecture.md). The validator
reads plain JSON data, checks every rule of the format in document order and names the
first offending field; nothing is guessed or repaired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import rules
from engine.actions import CastVote, PlayCard, ProposeTeam
from engine.errors import RecordError
from engine.game import apply, new_game
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Side, Variants

RECORD_FORMAT = "resistance-record/1"

# Field names in document order: a missing field is reported in this order.
_RECORD_KEYS = ("format", "id", "players", "spies", "missions", "outcome", "source")
_MISSION_KEYS = ("mission", "team_size", "fails_required", "proposals", "fails")
_PROPOSAL_KEYS = ("leader", "team", "votes")
_OUTCOME_KEYS = ("winner", "reason", "spies")


@dataclass(frozen=True)
class Outcome:
    winner: Side
    reason: EndReason
    spies: tuple[int, ...]


@dataclass(frozen=True)
class GameRecord:
    """A validated record. `missions` reuses the engine's rounds; every proposal has its votes."""

    id: str
    players: int
    spies: int
    missions: tuple[MissionRound, ...]
    outcome: Outcome | None = None
    source: dict[str, Any] | None = None

    @property
    def played_missions(self) -> tuple[MissionRound, ...]:
        return tuple(m for m in self.missions if m.played)

    def without_outcome(self) -> GameRecord:
        return GameRecord(self.id, self.players, self.spies, self.missions, None, self.source)

    def cut_after_mission(self, played_count: int) -> GameRecord:
        """The record as it stood just after its `played_count`-th played mission, outcome removed."""
        kept: list[MissionRound] = []
        seen = 0
        for m in self.missions:
            if seen == played_count:
                break
            kept.append(m)
            seen += m.played
        return GameRecord(self.id, self.players, self.spies, tuple(kept), None, self.source)


# ---------------------------------------------------------------- validation


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _require(condition: bool, field: str, problem: str) -> None:
    if not condition:
        raise RecordError(field, problem)


def _check_keys(obj: Any, allowed: tuple[str, ...], optional: tuple[str, ...], field: str) -> None:
    _require(isinstance(obj, dict), field, "must be an object")
    for key in obj:
        _require(key in allowed, f"{field}.{key}", "unknown field")
    for key in allowed:
        _require(key in obj or key in optional, f"{field}.{key}", "missing")


def parse_record(data: Any) -> GameRecord:
    """Validate plain JSON data as a `resistance-record/1` record; raise `RecordError` if broken."""
    _require(isinstance(data, dict), "record", "must be a JSON object")
    for key in data:
        _require(key in _RECORD_KEYS, key, "unknown field")
    for key in ("format", "id", "players", "spies", "missions"):
        _require(key in data, key, "missing")
    _require(data["format"] == RECORD_FORMAT, "format", f"must be {RECORD_FORMAT!r}")
    _require(isinstance(data["id"], str) and data["id"] != "", "id", "must be a non-empty string")
    players = data["players"]
    _require(
        _is_int(players) and rules.MIN_PLAYERS <= players <= rules.MAX_PLAYERS,
        "players",
        f"must be a whole number from {rules.MIN_PLAYERS} to {rules.MAX_PLAYERS}",
    )
    _require(
        _is_int(data["spies"]) and data["spies"] == rules.spy_count(players),
        "spies",
        f"a game of {players} has {rules.spy_count(players)} spies",
    )
    _require(isinstance(data["missions"], list), "missions", "must be a list")

    missions: list[MissionRound] = []
    expected_leader: int | None = None
    successes = failures = 0
    ended = False
    for i, raw in enumerate(data["missions"]):
        field = f"missions[{i}]"
        _require(not ended, field, "the game was already over")
        mission, expected_leader = _parse_mission(raw, field, players, expected_leader, successes, missions)
        missions.append(mission)
        if mission.played:
            successes += bool(mission.succeeded)
            failures += not mission.succeeded
            ended = successes >= rules.MISSIONS_TO_WIN or failures >= rules.MISSIONS_TO_WIN
        else:
            ended = mission.rejections >= rules.MAX_PROPOSALS_PER_MISSION
            _require(
                ended or i == len(data["missions"]) - 1, f"{field}.fails", "missing on a mission that is not the last"
            )

    outcome = None
    if "outcome" in data:
        outcome = _parse_outcome(data["outcome"], players, data["spies"], missions, successes, failures)
    source = data.get("source")
    _require(source is None or isinstance(source, dict), "source", "must be an object")
    return GameRecord(
        id=data["id"],
        players=players,
        spies=data["spies"],
        missions=tuple(missions),
        outcome=outcome,
        source=source,
    )


def _parse_mission(
    raw: Any,
    field: str,
    players: int,
    expected_leader: int | None,
    successes: int,
    earlier: list[MissionRound],
) -> tuple[MissionRound, int | None]:
    _check_keys(raw, _MISSION_KEYS, ("fails",), field)
    number = raw["mission"]
    _require(_is_int(number) and 1 <= number <= rules.MISSION_COUNT, f"{field}.mission", "must be 1 to 5")
    _require(all(m.mission != number for m in earlier), f"{field}.mission", f"mission {number} was attempted already")
    _require(
        number != rules.MISSION_COUNT or successes >= rules.TARGETING_MISSION_5_SUCCESSES,
        f"{field}.mission",
        "mission 5 may be attempted only after two successful missions",
    )
    size = rules.team_size(players, number)
    _require(raw["team_size"] == size and _is_int(raw["team_size"]), f"{field}.team_size", f"must be {size}")
    # The rule table says 2 for mission 4 at 7+ players, else 1. A record states the
    # threshold its table actually played with, and that is what decides its mission,
    # so any threshold the cards allow is accepted (real games include house rules).
    needed = raw["fails_required"]
    _require(_is_int(needed) and needed in (1, 2) and needed <= size, f"{field}.fails_required", "must be 1 or 2")
    raw_proposals = raw["proposals"]
    _require(
        isinstance(raw_proposals, list) and 1 <= len(raw_proposals) <= rules.MAX_PROPOSALS_PER_MISSION,
        f"{field}.proposals",
        f"must be a list of 1 to {rules.MAX_PROPOSALS_PER_MISSION} proposals",
    )
    proposals: list[Proposal] = []
    for j, raw_proposal in enumerate(raw_proposals):
        pfield = f"{field}.proposals[{j}]"
        proposal = _parse_proposal(raw_proposal, pfield, players, size, expected_leader)
        _require(
            not proposal.approved or j == len(raw_proposals) - 1,
            f"{pfield}.votes",
            "an approved proposal must be the last of its mission",
        )
        proposals.append(proposal)
        expected_leader = (proposal.leader + 1) % players
    fails = raw.get("fails")
    if "fails" in raw:
        _require(proposals[-1].approved, f"{field}.fails", "present, but no proposal was approved")
        _require(_is_int(fails) and 0 <= fails <= size, f"{field}.fails", f"must be a whole number from 0 to {size}")
        _require(fails <= rules.spy_count(players), f"{field}.fails", "more Fail cards than spies")
    mission = MissionRound(
        mission=number, team_size=size, fails_required=needed, proposals=tuple(proposals), fails=fails
    )
    return mission, expected_leader


def _parse_proposal(raw: Any, field: str, players: int, size: int, expected_leader: int | None) -> Proposal:
    _check_keys(raw, _PROPOSAL_KEYS, (), field)
    leader = raw["leader"]
    _require(_is_int(leader) and 0 <= leader < players, f"{field}.leader", f"must be a seat from 0 to {players - 1}")
    _require(
        expected_leader is None or leader == expected_leader,
        f"{field}.leader",
        f"out of turn: seat {expected_leader} leads this proposal",
    )
    team = raw["team"]
    _require(isinstance(team, list), f"{field}.team", "must be a list of seats")
    _require(
        all(_is_int(s) and 0 <= s < players for s in team), f"{field}.team", "holds a seat that is not at the table"
    )
    _require(len(set(team)) == len(team), f"{field}.team", "names a player twice")
    _require(len(team) == size, f"{field}.team", f"must have {size} members")
    votes = raw["votes"]
    _require(
        isinstance(votes, list) and len(votes) == players and all(isinstance(v, bool) for v in votes),
        f"{field}.votes",
        f"must be a list of {players} booleans",
    )
    return Proposal(leader=leader, team=tuple(team), votes=tuple(votes))


def _parse_outcome(
    raw: Any, players: int, spy_count: int, missions: list[MissionRound], successes: int, failures: int
) -> Outcome:
    _check_keys(raw, _OUTCOME_KEYS, (), "outcome")
    try:
        reason = EndReason(raw["reason"])
    except ValueError:
        raise RecordError("outcome.reason", "unknown reason") from None
    try:
        winner = Side(raw["winner"])
    except ValueError:
        raise RecordError("outcome.winner", "must be 'resistance' or 'spies'") from None
    five_rejections = bool(missions) and missions[-1].rejections >= rules.MAX_PROPOSALS_PER_MISSION
    actual = {
        EndReason.THREE_SUCCESSFUL_MISSIONS: successes >= rules.MISSIONS_TO_WIN,
        EndReason.THREE_FAILED_MISSIONS: failures >= rules.MISSIONS_TO_WIN,
        EndReason.FIVE_REJECTIONS: five_rejections,
    }
    _require(actual[reason], "outcome.reason", "does not match the missions")
    expected_winner = Side.RESISTANCE if reason is EndReason.THREE_SUCCESSFUL_MISSIONS else Side.SPIES
    _require(winner is expected_winner, "outcome.winner", f"must be {expected_winner.value!r} for {reason.value}")
    spies = raw["spies"]
    _require(
        isinstance(spies, list)
        and len(spies) == spy_count
        and all(_is_int(s) and 0 <= s < players for s in spies)
        and len(set(spies)) == len(spies),
        "outcome.spies",
        f"must list {spy_count} distinct seats",
    )
    for i, m in enumerate(missions):
        if m.played:
            _require(
                len(set(spies) & set(m.proposals[-1].team)) >= m.fails,
                "outcome.spies",
                f"mission at missions[{i}] had {m.fails} Fail cards but fewer spies on its team",
            )
    return Outcome(winner=winner, reason=reason, spies=tuple(spies))


# ---------------------------------------------------------------- to and from data


def record_to_dict(record: GameRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "id": record.id,
        "players": record.players,
        "spies": record.spies,
        "missions": [_mission_to_dict(m) for m in record.missions],
    }
    if record.outcome is not None:
        data["outcome"] = {
            "winner": record.outcome.winner.value,
            "reason": record.outcome.reason.value,
            "spies": list(record.outcome.spies),
        }
    if record.source is not None:
        data["source"] = record.source
    return data


def _mission_to_dict(m: MissionRound) -> dict[str, Any]:
    data: dict[str, Any] = {
        "mission": m.mission,
        "team_size": m.team_size,
        "fails_required": m.fails_required,
        "proposals": [{"leader": p.leader, "team": list(p.team), "votes": list(p.votes or ())} for p in m.proposals],
    }
    if m.fails is not None:
        data["fails"] = m.fails
    return data


def record_of(state: GameState, game_id: str, source: dict[str, Any] | None = None) -> GameRecord:
    """The public record of a game, finished or not; the outcome once it is over.

    A proposal whose votes are still hidden is not yet part of the public record.
    """
    missions: list[MissionRound] = []
    for r in state.rounds:
        proposals = tuple(p for p in r.proposals if p.votes is not None)
        if proposals:
            missions.append(MissionRound(r.mission, r.team_size, r.fails_required, proposals, r.fails))
    outcome = None
    if state.is_over:
        assert state.winner is not None and state.end_reason is not None
        outcome = Outcome(winner=state.winner, reason=state.end_reason, spies=state.spies)
    return GameRecord(
        id=game_id,
        players=state.players,
        spies=state.spy_count,
        missions=tuple(missions),
        outcome=outcome,
        source=source,
    )


def export_record(state: GameState, game_id: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    return record_to_dict(record_of(state, game_id, source))


def replay(record: GameRecord, spies: tuple[int, ...], variants: Variants | None = None) -> GameState:
    """Play a record's choices through the engine with the given spies.

    Spies on a mission team play the record's Fail cards, the first of them first. Raises
    `IllegalAction` if the record's choices are impossible with these spies.
    """
    if variants is None:
        in_order = all(m.mission == i + 1 for i, m in enumerate(record.missions))
        variants = Variants(targeting=not in_order)
    first_leader = record.missions[0].proposals[0].leader if record.missions else 0
    state = new_game(record.players, variants=variants, spies=spies, first_leader=first_leader)
    for m in record.missions:
        for p in m.proposals:
            chosen = m.mission if variants.targeting else None
            state, _ = apply(state, ProposeTeam(seat=p.leader, team=p.team, mission=chosen))
            for seat, approve in enumerate(p.votes or ()):
                state, _ = apply(state, CastVote(seat=seat, approve=approve))
        if m.fails is not None and state.phase is Phase.MISSION:
            fails_left = m.fails
            for seat in m.proposals[-1].team:
                fail = fails_left > 0 and seat in spies
                fails_left -= fail
                state, _ = apply(state, PlayCard(seat=seat, fail=fail))
    return state
