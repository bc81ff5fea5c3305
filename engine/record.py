"""The public record of a game in the `resistance-record/1` format: model, validator, export, replay.

The format is a contract with other programs (see docs/architecture.md). The validator
reads plain JSON data, checks every rule of the format in document order and names the
first offending field; nothing is guessed or repaired.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from engine import rules
from engine.actions import CardsTimedOut, CastVote, LeaderTimedOut, PlayCard, ProposeTeam, VotesTimedOut
from engine.errors import RecordError
from engine.game import apply, new_game
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Side, Variants

RECORD_FORMAT = "resistance-record/1"

# Field names in document order: a missing field is reported in this order.
_RECORD_KEYS = (
    "format",
    "id",
    "players",
    "spies",
    "variants",
    "missions",
    "outcome",
    "source",
    "seat_players",
    "played_at",
)
_MISSION_KEYS = ("mission", "team_size", "fails_required", "proposals", "fails", "auto_cards")
_MISSION_OPTIONAL = ("fails", "auto_cards")
_PROPOSAL_KEYS = ("leader", "mission", "team", "votes", "auto_team", "auto_votes")
_PROPOSAL_OPTIONAL = ("mission", "auto_team", "auto_votes")
_VARIANT_KEYS = ("targeting", "blind_spies", "plot_cards")
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
    variants: Variants | None = None  # None: the record does not say (old records)
    seat_players: tuple[str, ...] | None = None  # a stable pseudonymous id per seat
    played_at: str | None = None  # ISO 8601 start time

    @property
    def played_missions(self) -> tuple[MissionRound, ...]:
        return tuple(m for m in self.missions if m.played)

    def without_outcome(self) -> GameRecord:
        return replace(self, outcome=None)

    def cut_after_mission(self, played_count: int) -> GameRecord:
        """The record as it stood just after its `played_count`-th played mission, outcome removed."""
        kept: list[MissionRound] = []
        seen = 0
        for m in self.missions:
            if seen == played_count:
                break
            kept.append(m)
            seen += m.played
        return replace(self, missions=tuple(kept), outcome=None)


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
    variants = _parse_variants(data["variants"]) if "variants" in data else None
    _require(isinstance(data["missions"], list), "missions", "must be a list")

    missions: list[MissionRound] = []
    expected_leader: int | None = None
    successes = failures = 0
    ended = False
    for i, raw in enumerate(data["missions"]):
        field = f"missions[{i}]"
        _require(not ended, field, "the game was already over")
        mission, expected_leader = _parse_mission(raw, field, players, variants, expected_leader, successes, missions)
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
    seat_players = data.get("seat_players")
    _require(
        seat_players is None
        or (
            isinstance(seat_players, list)
            and len(seat_players) == players
            and all(isinstance(p, str) and p for p in seat_players)
        ),
        "seat_players",
        f"must be a list of {players} non-empty strings",
    )
    played_at = data.get("played_at")
    _require(played_at is None or _is_iso_time(played_at), "played_at", "must be an ISO 8601 time")
    return GameRecord(
        id=data["id"],
        players=players,
        spies=data["spies"],
        missions=tuple(missions),
        outcome=outcome,
        source=source,
        variants=variants,
        seat_players=None if seat_players is None else tuple(seat_players),
        played_at=played_at,
    )


def _is_iso_time(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _parse_variants(raw: Any) -> Variants:
    _check_keys(raw, _VARIANT_KEYS, _VARIANT_KEYS, "variants")
    for key, value in raw.items():
        _require(isinstance(value, bool), f"variants.{key}", "must be true or false")
    # The Plot Thickens adds fields of its own that this version does not read yet.
    _require(not raw.get("plot_cards", False), "variants.plot_cards", "Plot cards are not supported by this reader")
    return Variants(targeting=raw.get("targeting", False), blind_spies=raw.get("blind_spies", False))


def _parse_mission(
    raw: Any,
    field: str,
    players: int,
    variants: Variants | None,
    expected_leader: int | None,
    successes: int,
    earlier: list[MissionRound],
) -> tuple[MissionRound, int | None]:
    _check_keys(raw, _MISSION_KEYS, _MISSION_OPTIONAL, field)
    number = raw["mission"]
    _require(_is_int(number) and 1 <= number <= rules.MISSION_COUNT, f"{field}.mission", "must be 1 to 5")
    opened = _mission_opener(field, players, variants, successes, earlier)
    opened(number, f"{field}.mission")
    size = rules.team_size(players, number)
    _require(raw["team_size"] == size and _is_int(raw["team_size"]), f"{field}.team_size", f"must be {size}")
    needed = rules.fails_required(players, number)
    _require(
        _is_int(raw["fails_required"]) and raw["fails_required"] == needed,
        f"{field}.fails_required",
        f"must be {needed}",
    )
    raw_proposals = raw["proposals"]
    _require(
        isinstance(raw_proposals, list) and 1 <= len(raw_proposals) <= rules.MAX_PROPOSALS_PER_MISSION,
        f"{field}.proposals",
        f"must be a list of 1 to {rules.MAX_PROPOSALS_PER_MISSION} proposals",
    )
    targeting = variants is not None and variants.targeting
    proposals: list[Proposal] = []
    for j, raw_proposal in enumerate(raw_proposals):
        pfield = f"{field}.proposals[{j}]"
        proposal = _parse_proposal(raw_proposal, pfield, players, number, targeting, opened, expected_leader)
        _require(
            not proposal.approved or j == len(raw_proposals) - 1,
            f"{pfield}.votes",
            "an approved proposal must be the last of its mission",
        )
        proposals.append(proposal)
        expected_leader = (proposal.leader + 1) % players
    _require(
        proposals[-1].mission == number,
        f"{field}.mission",
        f"must be the mission of its last proposal ({proposals[-1].mission})",
    )
    fails = raw.get("fails")
    auto_cards: tuple[int, ...] = ()
    if "fails" in raw:
        _require(proposals[-1].approved, f"{field}.fails", "present, but no proposal was approved")
        _require(_is_int(fails) and 0 <= fails <= size, f"{field}.fails", f"must be a whole number from 0 to {size}")
        _require(fails <= rules.spy_count(players), f"{field}.fails", "more Fail cards than spies")
        if "auto_cards" in raw:
            auto_cards = _parse_seats(raw["auto_cards"], f"{field}.auto_cards", players)
            _require(set(auto_cards) <= set(proposals[-1].team), f"{field}.auto_cards", "names a seat not on the team")
            _require(fails <= size - len(auto_cards), f"{field}.fails", "more Fail cards than members who played")
    else:
        _require("auto_cards" not in raw, f"{field}.auto_cards", "present, but the mission was not played")
    mission = MissionRound(
        mission=number,
        team_size=size,
        fails_required=needed,
        proposals=tuple(proposals),
        fails=fails,
        auto_cards=auto_cards,
    )
    return mission, expected_leader


def _mission_opener(field: str, players: int, variants: Variants | None, successes: int, earlier: list[MissionRound]):
    """A check that a mission could be proposed at this point of the game."""
    attempted = {m.mission for m in earlier}

    def check(number: int, where: str) -> None:
        if variants is not None and not variants.targeting:
            _require(number == len(earlier) + 1, where, f"must be {len(earlier) + 1}: missions go in order")
            return
        # Targeting, or an old record that does not say: any mission not yet attempted.
        _require(number not in attempted, where, f"mission {number} was attempted already")
        _require(
            number != rules.MISSION_COUNT or successes >= rules.TARGETING_MISSION_5_SUCCESSES,
            where,
            "mission 5 may be attempted only after two successful missions",
        )

    return check


def _parse_seats(raw: Any, field: str, players: int) -> tuple[int, ...]:
    _require(
        isinstance(raw, list) and all(_is_int(s) and 0 <= s < players for s in raw) and len(set(raw)) == len(raw),
        field,
        "must be a list of distinct seats at the table",
    )
    return tuple(raw)


def _parse_proposal(
    raw: Any,
    field: str,
    players: int,
    round_mission: int,
    targeting: bool,
    opened,
    expected_leader: int | None,
) -> Proposal:
    _check_keys(raw, _PROPOSAL_KEYS, tuple(k for k in _PROPOSAL_OPTIONAL if not (targeting and k == "mission")), field)
    leader = raw["leader"]
    _require(_is_int(leader) and 0 <= leader < players, f"{field}.leader", f"must be a seat from 0 to {players - 1}")
    _require(
        expected_leader is None or leader == expected_leader,
        f"{field}.leader",
        f"out of turn: seat {expected_leader} leads this proposal",
    )
    mission = raw.get("mission", round_mission)
    if "mission" in raw:
        _require(_is_int(mission) and 1 <= mission <= rules.MISSION_COUNT, f"{field}.mission", "must be 1 to 5")
        opened(mission, f"{field}.mission")
    size = rules.team_size(players, mission)
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
    auto_team = raw.get("auto_team", False)
    _require(isinstance(auto_team, bool), f"{field}.auto_team", "must be true or false")
    auto_votes = _parse_seats(raw["auto_votes"], f"{field}.auto_votes", players) if "auto_votes" in raw else ()
    return Proposal(
        leader=leader, team=tuple(team), mission=mission, votes=tuple(votes), auto_team=auto_team, auto_votes=auto_votes
    )


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
            played_by = set(m.proposals[-1].team) - set(m.auto_cards)
            _require(
                len(set(spies) & played_by) >= m.fails,
                "outcome.spies",
                f"mission at missions[{i}] had {m.fails} Fail cards but fewer spies who played",
            )
    return Outcome(winner=winner, reason=reason, spies=tuple(spies))


# ---------------------------------------------------------------- to and from data


def record_to_dict(record: GameRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "id": record.id,
        "players": record.players,
        "spies": record.spies,
    }
    if record.variants is not None:
        data["variants"] = {
            "targeting": record.variants.targeting,
            "blind_spies": record.variants.blind_spies,
            "plot_cards": False,
        }
    targeting = record.variants is not None and record.variants.targeting
    data["missions"] = [_mission_to_dict(m, targeting) for m in record.missions]
    if record.outcome is not None:
        data["outcome"] = {
            "winner": record.outcome.winner.value,
            "reason": record.outcome.reason.value,
            "spies": list(record.outcome.spies),
        }
    if record.source is not None:
        data["source"] = record.source
    if record.seat_players is not None:
        data["seat_players"] = list(record.seat_players)
    if record.played_at is not None:
        data["played_at"] = record.played_at
    return data


def _mission_to_dict(m: MissionRound, targeting: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "mission": m.mission,
        "team_size": m.team_size,
        "fails_required": m.fails_required,
        "proposals": [_proposal_to_dict(p, targeting) for p in m.proposals],
    }
    if m.fails is not None:
        data["fails"] = m.fails
        if m.auto_cards:
            data["auto_cards"] = list(m.auto_cards)
    return data


def _proposal_to_dict(p: Proposal, targeting: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"leader": p.leader}
    if targeting:
        data["mission"] = p.mission
    data["team"] = list(p.team)
    data["votes"] = list(p.votes or ())
    if p.auto_team:
        data["auto_team"] = True
    if p.auto_votes:
        data["auto_votes"] = list(p.auto_votes)
    return data


def record_of(state: GameState, game_id: str, source: dict[str, Any] | None = None) -> GameRecord:
    """The public record of a game, finished or not; the outcome once it is over.

    A proposal whose votes are still hidden is not yet part of the public record. A game
    played with a variant says so; a plain game's record is plain.
    """
    missions: list[MissionRound] = []
    for r in state.rounds:
        proposals = tuple(p for p in r.proposals if p.votes is not None)
        if proposals:
            latest = proposals[-1]
            # Until its team is voted on, a later proposal's mission is not yet the round's.
            missions.append(
                replace(
                    r,
                    mission=latest.mission,
                    team_size=len(latest.team),
                    fails_required=rules.fails_required(state.players, latest.mission),
                    proposals=proposals,
                )
            )
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
        variants=None if state.variants == Variants() else state.variants,
    )


def export_record(state: GameState, game_id: str, source: dict[str, Any] | None = None) -> dict[str, Any]:
    return record_to_dict(record_of(state, game_id, source))


def replay(record: GameRecord, spies: tuple[int, ...], variants: Variants | None = None) -> GameState:
    """Play a record's choices through the engine with the given spies.

    Spies on a mission team play the record's Fail cards, the first of them first; what the
    record marks automatic is replayed as the deadline that caused it. Raises
    `IllegalAction` if the record's choices are impossible with these spies.
    """
    if variants is None:
        variants = record.variants
    if variants is None:
        in_order = all(m.mission == i + 1 for i, m in enumerate(record.missions))
        variants = Variants(targeting=not in_order)
    first_leader = record.missions[0].proposals[0].leader if record.missions else 0
    state = new_game(record.players, variants=variants, spies=spies, first_leader=first_leader)
    for m in record.missions:
        for p in m.proposals:
            chosen = p.mission if variants.targeting else None
            if p.auto_team:
                state, _ = apply(state, LeaderTimedOut(team=p.team, mission=chosen))
            else:
                state, _ = apply(state, ProposeTeam(seat=p.leader, team=p.team, mission=chosen))
            for seat, approve in enumerate(p.votes or ()):
                if seat not in p.auto_votes:
                    state, _ = apply(state, CastVote(seat=seat, approve=approve))
            if p.auto_votes:
                state, _ = apply(state, VotesTimedOut(approve=bool(p.votes[p.auto_votes[0]])))
        if m.fails is not None and state.phase is Phase.MISSION:
            fails_left = m.fails
            for seat in m.proposals[-1].team:
                if seat in m.auto_cards:
                    continue
                fail = fails_left > 0 and seat in spies
                fails_left -= fail
                state, _ = apply(state, PlayCard(seat=seat, fail=fail))
            if m.auto_cards:
                state, _ = apply(state, CardsTimedOut())
    return state
