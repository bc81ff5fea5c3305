"""The public record of a game in the `resistance-record/1` format: model, validator, export, replay.

The format is a contract with other programs (see docs/architecture.md). The validator
reads plain JSON data, checks every rule of the format in document order and names the
first offending field; nothing is guessed or repaired.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from itertools import combinations
from typing import Any

from engine import plot_record, rules
from engine.actions import (
    Action,
    CardsTimedOut,
    CastVote,
    DealCard,
    LeaderTimedOut,
    OpenUp,
    Overhear,
    Pass,
    PlayCard,
    ProposeTeam,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    VotesTimedOut,
    Watch,
)
from engine.errors import RecordError
from engine.game import apply, new_game
from engine.plot import Card, CardSeen, PlotUse, RoleSeen, Seen, UseKind, clockwise_from, full_deck
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
    "private",
)
_MISSION_KEYS = ("mission", "team_size", "fails_required", "proposals", "fails", "auto_cards", "plot")
_PROPOSAL_KEYS = (
    "leader",
    "mission",
    "team",
    "votes",
    "auto_team",
    "auto_votes",
    "strong_leader",
    "open_votes",
    "no_confidence",
)
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
    private: dict[int, tuple[Seen, ...]] | None = None  # Plot cards: what one seat alone was shown

    @property
    def played_missions(self) -> tuple[MissionRound, ...]:
        return tuple(m for m in self.missions if m.played)

    def without_outcome(self) -> GameRecord:
        return self if self.outcome is None else replace(self, outcome=None)

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


class NotJSON(ValueError):
    """Text that is not JSON as the format means it (`read_json`)."""


def read_json(text: str | bytes, what: str = "line") -> Any:
    """A record's (or a request's) JSON as the format means it: UTF-8 (bytes are decoded as that,
    `what` naming them in the error), every name of an object given once (which of two values
    counts is not guessed), no NaN or Infinity, and nested no deeper than the parser goes.
    `NotJSON` otherwise, or json.JSONDecodeError (a ValueError too) for text that is no JSON at all."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotJSON(f"not UTF-8: byte {exc.start + 1} of the {what}") from None
    try:
        return json.loads(text, object_pairs_hook=_object_once, parse_constant=_no_constant)
    except RecursionError:
        raise NotJSON("not readable: nested too deeply") from None


def _object_once(pairs: list[tuple[str, Any]]) -> dict:
    names = set()
    for name, _ in pairs:
        if name in names:
            raise NotJSON(f'not readable: "{name}" given twice in one object')
        names.add(name)
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise NotJSON(f"not JSON: {name} is not a JSON number")


def parse_record(data: Any) -> GameRecord:
    """Validate plain JSON data as a `resistance-record/1` record; raise `RecordError` if broken.

    Fields are checked in document order (the order the format lists them and `record_to_dict`
    writes them), each with everything inside it before the next, so that the error names the
    first offending field."""
    _require(isinstance(data, dict), "record", "must be a JSON object")
    fields = plot_record.Fields(data, _RECORD_KEYS, "")
    fields.at("format")
    _require(data["format"] == RECORD_FORMAT, "format", f"must be {RECORD_FORMAT!r}")
    fields.at("id")
    _require(isinstance(data["id"], str) and data["id"] != "", "id", "must be a non-empty string")
    fields.at("players")
    players = data["players"]
    _require(
        _is_int(players) and rules.MIN_PLAYERS <= players <= rules.MAX_PLAYERS,
        "players",
        f"must be a whole number from {rules.MIN_PLAYERS} to {rules.MAX_PLAYERS}",
    )
    fields.at("spies")
    _require(
        _is_int(data["spies"]) and data["spies"] == rules.spy_count(players),
        "spies",
        f"a game of {players} has {rules.spy_count(players)} spies",
    )
    variants = _parse_variants(data["variants"]) if fields.at("variants", required=False) else None
    fields.at("missions")
    _require(isinstance(data["missions"], list), "missions", "must be a list")

    missions: list[MissionRound] = []
    expected_leader: int | None = None
    successes = failures = 0
    ended = False
    table = plot_record.PlotTable.start(players)
    seatings = _spy_seatings(players, data["spies"])
    for i, raw in enumerate(data["missions"]):
        field = f"missions[{i}]"
        _require(not ended, field, "the game was already over")
        last = i == len(data["missions"]) - 1
        mission, expected_leader, table = _parse_mission(
            raw, field, players, variants, expected_leader, successes, missions, table, last
        )
        missions.append(mission)
        if mission.played:
            seatings = _explained(seatings, mission)
            _require(
                bool(seatings),
                f"{field}.fails",
                f"no way to seat {data['spies']} spies explains the Fail cards of this mission and those before it",
            )
            successes += bool(mission.succeeded)
            failures += not mission.succeeded
            ended = successes >= rules.MISSIONS_TO_WIN or failures >= rules.MISSIONS_TO_WIN
        else:
            ended = mission.rejections >= rules.MAX_PROPOSALS_PER_MISSION

    outcome = None
    if fields.at("outcome", required=False):
        outcome = _parse_outcome(data["outcome"], players, data["spies"], missions, successes, failures)
    # An optional field is either left out or of its kind: null is neither.
    source = data.get("source")
    if fields.at("source", required=False):
        _require(isinstance(source, dict), "source", "must be an object")
    seat_players = data.get("seat_players")
    if fields.at("seat_players", required=False):
        _require(
            isinstance(seat_players, list)
            and len(seat_players) == players
            and all(isinstance(p, str) and p for p in seat_players),
            "seat_players",
            f"must be a list of {players} non-empty strings",
        )
    played_at = data.get("played_at")
    if fields.at("played_at", required=False):
        _require(_is_iso_time(played_at), "played_at", "must be an ISO 8601 time")
    private = None
    if fields.at("private", required=False):
        _require(variants is not None and variants.plot_cards, "private", "only a game with Plot cards has one")
        private = plot_record.parse_private(data["private"], players)
        # The deal of the next mission's first proposal is public only once that proposal's vote is.
        pending = not ended and (not missions or missions[-1].played)
        if missions:
            in_turn = (missions[-1].proposals[-1].leader + 1) % players
            leaders = (in_turn, *(s for s in table.held.holders(Card.STRONG_LEADER) if s != in_turn))
        else:
            leaders = tuple(range(players))  # who leads first, the record does not say
        shown = {
            viewer: plot_record.ShownTo(
                viewer, [(m.mission, m.plot) for m in missions], table, players, pending, leaders
            )
            for viewer in private
        }
        _check_private_against_missions(private, missions, data["spies"], seatings, shown)
        if outcome is not None:
            _check_private_against_outcome(private, outcome)
    fields.done()
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
        private=private,
    )


@cache
def _spy_seatings(players: int, spies: int) -> tuple[int, ...]:
    """Every way to seat the spies, each a bit mask of their seats."""
    return tuple(sum(1 << seat for seat in seats) for seats in combinations(range(players), spies))


def _explained(seatings: tuple[int, ...], m: MissionRound) -> tuple[int, ...]:
    """The seatings of the spies that explain a played mission's Fail cards: enough spies among the
    members whose card was shuffled in (a card the deadline played was a Success), and a spy in a
    spotlighted member whose card was shown a Fail."""
    assert m.fails is not None
    spotlight = next((use for use in m.plot if use.kind is UseKind.SPOTLIGHT), None)
    shown = set() if spotlight is None else {spotlight.target}
    hidden = sum(1 << seat for seat in set(m.proposals[-1].team) - set(m.auto_cards) - shown)
    shown_fail = 0 if spotlight is None or not spotlight.fail else 1 << spotlight.target
    hidden_fails = m.fails - bool(shown_fail)
    return tuple(s for s in seatings if (s & hidden).bit_count() >= hidden_fails and s & shown_fail == shown_fail)


def _check_private_against_missions(
    private: dict[int, tuple[Seen, ...]],
    missions: list[MissionRound],
    spy_count: int,
    seatings: tuple[int, ...],
    shown: dict[int, plot_record.ShownTo],
) -> None:
    """What one seat was shown must be possible in the public record: a card watched was played
    on that mission by a member of its team (a missed card counts as Success, and a mission
    without a Fail card shows none), no seat is seen on both sides or more seats as spies
    than the game has (a Fail card, seen or played in the spotlight, shows a spy), and a Plot
    card showed the seat each result (`plot_record.ShownTo`)."""
    rounds = {m.mission: m for m in missions if m.proposals[-1].approved}
    public_spies = {use.target for m in missions for use in m.plot if use.kind is UseKind.SPOTLIGHT and use.fail}
    for viewer, entries in private.items():
        sides = dict.fromkeys(public_spies, True)
        for i, seen in enumerate(entries):
            field = f"private.{viewer}[{i}]"
            if isinstance(seen, CardSeen):
                m = rounds.get(seen.mission)
                _require(
                    m is not None and seen.seat in m.proposals[-1].team,
                    field,
                    f"seat {seen.seat} played no card on mission {seen.mission}",
                )
                assert m is not None
                _require(
                    not seen.fail or (seen.seat not in m.auto_cards and m.fails != 0),
                    f"{field}.fail",
                    "no Fail card was played there",
                )
            spy = seen.spy if isinstance(seen, RoleSeen) else True if seen.fail else None
            if spy is not None:
                _require(sides.get(seen.seat, spy) == spy, field, f"seat {seen.seat} is seen on both sides")
                sides[seen.seat] = spy
                _require(sum(sides.values()) <= spy_count, field, f"more than {spy_count} spies seen")
                bit = 1 << seen.seat
                seatings = tuple(s for s in seatings if bool(s & bit) == spy)
                _require(bool(seatings), field, "no way to seat the spies explains it with the missions' Fail cards")
            shown[viewer].check(seen, field)


def _check_private_against_outcome(private: dict[int, tuple[Seen, ...]], outcome: Outcome) -> None:
    for viewer, entries in private.items():
        for i, seen in enumerate(entries):
            spy = seen.seat in outcome.spies
            # A role seen is the seat's side; a Fail seen proves a spy, a Success proves nothing.
            agrees = seen.spy == spy if isinstance(seen, RoleSeen) else spy or not seen.fail
            _require(agrees, f"private.{viewer}[{i}]", "does not match the spies of the outcome")


def _is_iso_time(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _parse_variants(raw: Any) -> Variants:
    fields = plot_record.Fields(raw, _VARIANT_KEYS, "variants")
    for key in _VARIANT_KEYS:
        if fields.at(key, required=False):
            _require(isinstance(raw[key], bool), f"variants.{key}", "must be true or false")
    fields.done()
    return Variants(
        targeting=raw.get("targeting", False),
        blind_spies=raw.get("blind_spies", False),
        plot_cards=raw.get("plot_cards", False),
    )


def _parse_mission(
    raw: Any,
    field: str,
    players: int,
    variants: Variants | None,
    expected_leader: int | None,
    successes: int,
    earlier: list[MissionRound],
    table: plot_record.PlotTable,
    last: bool,
) -> tuple[MissionRound, int | None, plot_record.PlotTable]:
    fields = plot_record.Fields(raw, _MISSION_KEYS, field)
    plot_cards = variants is not None and variants.plot_cards
    fields.at("mission")
    number = raw["mission"]
    _require(_is_int(number) and 1 <= number <= rules.MISSION_COUNT, f"{field}.mission", "must be 1 to 5")
    opened = _mission_opener(field, players, variants, successes, earlier)
    opened(number, f"{field}.mission")
    fields.at("team_size")
    size = rules.team_size(players, number)
    _require(raw["team_size"] == size and _is_int(raw["team_size"]), f"{field}.team_size", f"must be {size}")
    fields.at("fails_required")
    needed = rules.fails_required(players, number)
    _require(
        _is_int(raw["fails_required"]) and raw["fails_required"] == needed,
        f"{field}.fails_required",
        f"must be {needed}",
    )
    fields.at("proposals")
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
        proposal = _parse_proposal(
            raw_proposal, pfield, players, number, targeting, opened, expected_leader, plot_cards
        )
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
    if fields.at("fails", required=False):
        _require(proposals[-1].approved, f"{field}.fails", "present, but no proposal was approved")
        _require(_is_int(fails) and 0 <= fails <= size, f"{field}.fails", f"must be a whole number from 0 to {size}")
        _require(fails <= rules.spy_count(players), f"{field}.fails", "more Fail cards than spies")
    else:
        rejected = sum(not p.approved for p in proposals) >= rules.MAX_PROPOSALS_PER_MISSION
        _require(rejected or last, f"{field}.fails", "missing on a mission that is not the last")
    if fields.at("auto_cards", required=False):
        _require(fails is not None, f"{field}.auto_cards", "present, but the mission was not played")
        auto_cards = _parse_seats(raw["auto_cards"], f"{field}.auto_cards", players)
        _require(set(auto_cards) <= set(proposals[-1].team), f"{field}.auto_cards", "names a seat not on the team")
        _require(fails <= size - len(auto_cards), f"{field}.fails", "more Fail cards than members who played")
    mission = MissionRound(
        mission=number,
        team_size=size,
        fails_required=needed,
        proposals=tuple(proposals),
        fails=fails,
        auto_cards=auto_cards,
    )
    if fields.at("plot", required=False):
        _require(plot_cards, f"{field}.plot", "only a game with Plot cards has one")
    if plot_cards:
        events = plot_record.parse_events(raw.get("plot", []), f"{field}.plot", players)
        uses, table = plot_record.check_mission(events, field, proposals, fails, auto_cards, table, players)
        mission = replace(mission, plot=uses)
    fields.done()
    return mission, expected_leader, table


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
    plot_cards: bool = False,
) -> Proposal:
    fields = plot_record.Fields(raw, _PROPOSAL_KEYS, field)
    fields.at("leader")
    leader = raw["leader"]
    _require(_is_int(leader) and 0 <= leader < players, f"{field}.leader", f"must be a seat from 0 to {players - 1}")
    # Only a Strong Leader (a Plot card, used as `strong_leader: true`) leads out of turn.
    took_lead = plot_cards and raw.get("strong_leader") is True
    _require(
        expected_leader is None or leader == expected_leader or took_lead,
        f"{field}.leader",
        f"out of turn: seat {expected_leader} leads this proposal",
    )
    mission = raw.get("mission", round_mission)
    if fields.at("mission", required=targeting):
        _require(_is_int(mission) and 1 <= mission <= rules.MISSION_COUNT, f"{field}.mission", "must be 1 to 5")
        opened(mission, f"{field}.mission")
    size = rules.team_size(players, mission)
    fields.at("team")
    team = raw["team"]
    _require(isinstance(team, list), f"{field}.team", "must be a list of seats")
    _require(
        all(_is_int(s) and 0 <= s < players for s in team), f"{field}.team", "holds a seat that is not at the table"
    )
    _require(len(set(team)) == len(team), f"{field}.team", "names a player twice")
    _require(len(team) == size, f"{field}.team", f"must have {size} members")
    fields.at("votes")
    votes = raw["votes"]
    _require(
        isinstance(votes, list) and len(votes) == players and all(isinstance(v, bool) for v in votes),
        f"{field}.votes",
        f"must be a list of {players} booleans",
    )
    auto_team = raw.get("auto_team", False)
    if fields.at("auto_team", required=False):
        _require(isinstance(auto_team, bool), f"{field}.auto_team", "must be true or false")
    auto_votes: tuple[int, ...] = ()
    if fields.at("auto_votes", required=False):
        auto_votes = _parse_seats(raw["auto_votes"], f"{field}.auto_votes", players)
        _require(
            len({votes[seat] for seat in auto_votes}) <= 1,
            f"{field}.auto_votes",
            "the votes missed on one proposal are all filled in with the group's one setting",
        )
    strong_leader = raw.get("strong_leader", False)
    if fields.at("strong_leader", required=False):
        _require(plot_cards, f"{field}.strong_leader", "only a game with Plot cards has one")
        _require(isinstance(strong_leader, bool), f"{field}.strong_leader", "must be true or false")
        # The card takes the lead from the seat whose turn it is: that seat is never asked to use it.
        _require(
            not strong_leader or expected_leader is None or leader != expected_leader,
            f"{field}.strong_leader",
            f"seat {leader} leads this proposal in turn: a Strong Leader takes the lead from another",
        )
    open_votes: tuple[int, ...] = ()
    if fields.at("open_votes", required=False):
        _require(plot_cards, f"{field}.open_votes", "only a game with Plot cards has one")
        # The Opinion Makers reveal their votes together: the list is a set of seats, in any order.
        open_votes = tuple(sorted(_parse_seats(raw["open_votes"], f"{field}.open_votes", players)))
    no_confidence = raw.get("no_confidence")
    if fields.at("no_confidence", required=False):
        _require(plot_cards, f"{field}.no_confidence", "only a game with Plot cards has one")
        _require(_is_int(no_confidence) and 0 <= no_confidence < players, f"{field}.no_confidence", "must be a seat")
        _require(rules.is_approved(votes), f"{field}.no_confidence", "only an approved team can be overturned")
    fields.done()
    return Proposal(
        leader=leader,
        team=tuple(team),
        mission=mission,
        votes=tuple(votes),
        auto_team=auto_team,
        auto_votes=auto_votes,
        strong_leader=strong_leader,
        open_votes=open_votes,
        no_confidence=no_confidence,
    )


def _parse_outcome(
    raw: Any, players: int, spy_count: int, missions: list[MissionRound], successes: int, failures: int
) -> Outcome:
    fields = plot_record.Fields(raw, _OUTCOME_KEYS, "outcome")
    five_rejections = bool(missions) and missions[-1].rejections >= rules.MAX_PROPOSALS_PER_MISSION
    actual = {
        EndReason.THREE_SUCCESSFUL_MISSIONS: successes >= rules.MISSIONS_TO_WIN,
        EndReason.THREE_FAILED_MISSIONS: failures >= rules.MISSIONS_TO_WIN,
        EndReason.FIVE_REJECTIONS: five_rejections,
    }
    fields.at("winner")
    try:
        winner = Side(raw["winner"])
    except (ValueError, TypeError):
        raise RecordError("outcome.winner", "must be 'resistance' or 'spies'") from None
    if any(actual.values()):  # the missions say who won
        expected_winner = Side.RESISTANCE if actual[EndReason.THREE_SUCCESSFUL_MISSIONS] else Side.SPIES
        _require(winner is expected_winner, "outcome.winner", f"must be {expected_winner.value!r}: see the missions")
    fields.at("reason")
    try:
        reason = EndReason(raw["reason"])
    except (ValueError, TypeError):
        raise RecordError("outcome.reason", "unknown reason") from None
    _require(actual[reason], "outcome.reason", "does not match the missions")
    fields.at("spies")
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
            # Who could have played the Fail cards: not a member whose card the deadline played,
            # nor one whose card was shown a Success in the spotlight.
            shown_success = {use.target for use in m.plot if use.kind is UseKind.SPOTLIGHT and not use.fail}
            played_by = set(m.proposals[-1].team) - set(m.auto_cards) - shown_success
            _require(
                len(set(spies) & played_by) >= m.fails,
                "outcome.spies",
                f"mission at missions[{i}] had {m.fails} Fail cards but fewer spies who played",
            )
        for use in m.plot:
            _require(
                use.kind is not UseKind.SPOTLIGHT or not use.fail or use.target in spies,
                "outcome.spies",
                f"seat {use.target} played a Fail in the spotlight at missions[{i}]",
            )
    fields.done()
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
            "plot_cards": record.variants.plot_cards,
        }
    targeting = record.variants is not None and record.variants.targeting
    plot_cards = record.variants is not None and record.variants.plot_cards
    data["missions"] = [_mission_to_dict(m, targeting, plot_cards) for m in record.missions]
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
    if record.private is not None:
        data["private"] = plot_record.private_to_dict(record.private)
    return data


def _mission_to_dict(m: MissionRound, targeting: bool, plot_cards: bool = False) -> dict[str, Any]:
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
    if plot_cards:
        data["plot"] = [plot_record.event_to_dict(use) for use in m.plot]
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
    if p.strong_leader:
        data["strong_leader"] = True
    if p.open_votes:
        data["open_votes"] = list(p.open_votes)
    if p.no_confidence is not None:
        data["no_confidence"] = p.no_confidence
    return data


def record_of(
    state: GameState, game_id: str, source: dict[str, Any] | None = None, private_for: int | None = None
) -> GameRecord:
    """The public record of a game, finished or not; the outcome once it is over.

    A proposal whose votes are still hidden is not yet part of the public record, nor are
    the Plot events that came before it. A game played with a variant says so; a plain
    game's record is plain. `private_for` adds what that seat alone was shown with Plot cards.
    """
    missions: list[MissionRound] = []
    uses = state.plot.uses if state.plot is not None else ()
    for index, r in enumerate(state.rounds):
        proposals = tuple(p for p in r.proposals if p.votes is not None)
        if proposals:
            if index < len(uses):
                r = replace(r, plot=tuple(use for use in uses[index] if use.proposal < len(proposals)))
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
    private = None
    if state.plot is not None and private_for is not None:
        private = {private_for: tuple(seen for seen in state.plot.seen if seen.viewer == private_for)}
    return GameRecord(
        id=game_id,
        players=state.players,
        spies=state.spy_count,
        missions=tuple(missions),
        outcome=outcome,
        source=source,
        variants=None if state.variants == Variants() else state.variants,
        private=private,
    )


def export_record(
    state: GameState, game_id: str, source: dict[str, Any] | None = None, private_for: int | None = None
) -> dict[str, Any]:
    return record_to_dict(record_of(state, game_id, source, private_for))


def replay(record: GameRecord, spies: tuple[int, ...], variants: Variants | None = None) -> GameState:
    """Play a record's choices through the engine with the given spies.

    Spies on a mission team play the record's Fail cards, the first of them first (a
    spotlighted member plays the card the table saw); what the record marks automatic is
    replayed as the deadline that caused it. With Plot cards the deck is stacked so that
    each deal draws the cards the record deals, and every holder the record does not show
    using a card passes. Raises `IllegalAction` if the record's choices are impossible with
    these spies.
    """
    if variants is None:
        variants = record.variants
    if variants is None:
        in_order = all(m.mission == i + 1 for i, m in enumerate(record.missions))
        variants = Variants(targeting=not in_order)
    first_leader = record.missions[0].proposals[0].leader if record.missions else 0
    deck = _stacked_deck(record) if variants.plot_cards else None
    state = new_game(record.players, variants=variants, spies=spies, first_leader=first_leader, deck=deck)
    for m in record.missions:
        for j, p in enumerate(m.proposals):
            if variants.plot_cards:
                state = _through_window(state, Phase.LEAD, lambda seat, p=p: _strong_leader(p, seat))
                state = _replay_deal(state, [use for use in m.plot if use.proposal == j and use.kind in _DEAL_KINDS])
            chosen = p.mission if variants.targeting else None
            if p.auto_team:
                state, _ = apply(state, LeaderTimedOut(team=p.team, mission=chosen))
            else:
                state, _ = apply(state, ProposeTeam(seat=p.leader, team=p.team, mission=chosen))
            state = _replay_votes(state, p, p.open_votes)
            state = _replay_votes(state, p, tuple(seat for seat in range(record.players) if seat not in p.open_votes))
            state = _through_window(state, Phase.OVERTURN, lambda seat, p=p: _no_confidence(p, seat))
            state = _through_window(state, Phase.SPOTLIGHT, lambda seat, m=m: _spotlight(m, seat))
        if state.phase is Phase.MISSION:
            state = _replay_cards(state, m, spies)
            # A mission still being played stops at its last watch: the reveal has not come yet.
            order = clockwise_from(state.leader, state.players)
            watchers = sorted({use.by for use in m.plot if use.kind is UseKind.WATCH}, key=order.index)
            last = None if m.fails is not None or not watchers else lambda seat, w=watchers[-1]: seat == w
            state = _through_window(state, Phase.WATCH, lambda seat, m=m: _watch(m, seat), last)
    return state


# The events of a deal: the cards given and the immediate cards resolved.
_DEAL_KINDS = (UseKind.DEAL, UseKind.TAKE, UseKind.OVERHEARD, UseKind.OPEN_UP, UseKind.ESTABLISH_CONFIDENCE)


def _stacked_deck(record: GameRecord) -> tuple[Card, ...]:
    """A deck whose draws are the cards the record deals, mission by mission; the cards
    nobody saw drawn follow in any order."""
    dealt = [use.card for m in record.missions for use in m.plot if use.kind is UseKind.DEAL and use.card is not None]
    rest = Counter(full_deck(record.players)) - Counter(dealt)
    return tuple(dealt) + tuple(rest.elements())


def _through_window(
    state: GameState,
    phase: Phase,
    choose: Callable[[int], Action | None],
    last: Callable[[int], bool] | None = None,
) -> GameState:
    """Ask each holder of an open window in turn: `choose(seat)` is the card they used, or
    None for a pass; after the seat for which `last` is true the window stays open."""
    while state.phase is phase:
        assert state.plot is not None
        seat = state.plot.asked[0]
        state, _ = apply(state, choose(seat) or Pass(seat))
        if last is not None and last(seat):
            break
    return state


def _strong_leader(p: Proposal, seat: int) -> Action | None:
    return UseStrongLeader(seat) if p.strong_leader and seat == p.leader else None


def _no_confidence(p: Proposal, seat: int) -> Action | None:
    return UseNoConfidence(seat) if seat == p.no_confidence else None


def _spotlight(m: MissionRound, seat: int) -> Action | None:
    used = [use for use in m.plot if use.kind is UseKind.SPOTLIGHT and use.by == seat]
    return Spotlight(seat, used[0].target) if used else None


def _watch(m: MissionRound, seat: int) -> Action | None:
    targets = tuple(use.target for use in m.plot if use.kind is UseKind.WATCH and use.by == seat)
    return Watch(seat, targets) if targets else None


def _replay_deal(state: GameState, uses: list[PlotUse]) -> GameState:
    for use in uses:
        action: Action | None = None
        if use.kind is UseKind.DEAL:
            assert use.card is not None
            action = DealCard(seat=state.leader, card=use.card, to=use.target)
        elif use.kind is UseKind.TAKE:
            assert use.card is not None
            action = TakeCard(seat=use.by, card=use.card, holder=use.target)
        elif use.kind is UseKind.OVERHEARD:
            action = Overhear(seat=use.by, target=use.target)
        elif use.kind is UseKind.OPEN_UP:
            action = OpenUp(seat=use.by, to=use.target)
        if action is not None:  # Establish Confidence resolves as it is dealt
            state, _ = apply(state, action)
    return state


def _replay_votes(state: GameState, p: Proposal, seats: tuple[int, ...]) -> GameState:
    """The votes of `seats` (the Opinion Makers, then the others), then their missed deadline."""
    assert p.votes is not None
    for seat in seats:
        if seat not in p.auto_votes:
            state, _ = apply(state, CastVote(seat=seat, approve=p.votes[seat]))
    if any(seat in p.auto_votes for seat in seats):
        state, _ = apply(state, VotesTimedOut(approve=bool(p.votes[p.auto_votes[0]])))
    return state


def _replay_cards(state: GameState, m: MissionRound, spies: tuple[int, ...]) -> GameState:
    """The mission's cards. A mission still being played shows only what the table saw: the
    spotlighted card, and once someone watched, that every card was played (which ones
    the record does not say, so they are played as Success)."""
    spotlight = next((use for use in m.plot if use.kind is UseKind.SPOTLIGHT), None)
    shown = {spotlight.target: bool(spotlight.fail)} if spotlight is not None else {}
    fails_left = m.fails - sum(shown.values()) if m.fails is not None else 0
    team = m.proposals[-1].team
    all_played = m.fails is not None or any(use.kind is UseKind.WATCH for use in m.plot)
    for seat in sorted(team, key=lambda seat: seat not in shown):
        if seat in m.auto_cards or not (all_played or seat in shown):
            continue
        fail = shown.get(seat, fails_left > 0 and seat in spies)
        fails_left -= fail and seat not in shown
        state, _ = apply(state, PlayCard(seat=seat, fail=fail))
    if m.auto_cards:
        state, _ = apply(state, CardsTimedOut())
    return state
