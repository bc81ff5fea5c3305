"""The `resistance-record/1` format (shared/spec/game-record.md): validator, round trip and export."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    CastVote,
    GameState,
    Phase,
    PlayCard,
    ProposeTeam,
    RecordError,
    Variants,
    apply,
    export_record,
    new_game,
    parse_record,
    record_to_dict,
    rules,
)
from engine.simulate import random_action
from tests.records import first_mission, record_dict

TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "human-games" / "train.jsonl"

T, F = True, False


def spec_example() -> dict:
    """The spec's example record, completed so that its outcome follows from its missions.

    Seven players, spies in seats 1, 4 and 6. Mission 1 is the spec's own (after one rejected team),
    missions 2 and 3 fail too, so the spies win with three failed missions.
    """
    return {
        "format": "resistance-record/1",
        "id": "3bda0ae2065e",
        "players": 7,
        "spies": 3,
        "missions": [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [
                    {"leader": 1, "team": [1, 3], "votes": [F, T, F, T, F, F, F]},
                    {"leader": 2, "team": [2, 4], "votes": [T, T, T, F, T, T, T]},
                ],
                "fails": 1,
            },
            {
                "mission": 2,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [
                    {"leader": 3, "team": [0, 3, 5], "votes": [T, F, F, T, F, T, F]},
                    {"leader": 4, "team": [1, 4, 5], "votes": [F, T, F, F, T, T, T]},
                ],
                "fails": 2,
            },
            {
                "mission": 3,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [
                    {"leader": 5, "team": [0, 5, 6], "votes": [T, T, F, F, T, T, T]},
                ],
                "fails": 1,
            },
        ],
        "outcome": {"winner": "spies", "reason": "three_failed_missions", "spies": [1, 4, 6]},
        "source": {"site": "avalon", "roles": "resistance"},
    }


def five_rejections() -> dict:
    """Five players; the table rejects five teams for mission 1 and the spies win."""
    no = [F, F, F, F, F]
    return record_dict(
        "five-noes",
        5,
        2,
        [first_mission([{"leader": seat, "team": [seat, (seat + 1) % 5], "votes": no} for seat in range(5)])],
        outcome={"winner": "spies", "reason": "five_rejections", "spies": [0, 3]},
    )


def without(data: dict, *keys: str) -> dict:
    data = copy.deepcopy(data)
    for key in keys:
        del data[key]
    return data


# ----------------------------------------------------------------------------- valid records


def test_spec_example_completed_parses_and_round_trips():
    data = spec_example()
    record = parse_record(data)
    assert record.players == 7
    assert record.spies == 3
    assert [m.mission for m in record.missions] == [1, 2, 3]
    assert [m.fails for m in record.missions] == [1, 2, 1]
    assert [m.succeeded for m in record.missions] == [False, False, False]
    assert record.outcome.spies == (1, 4, 6)
    assert record.outcome.winner.value == "spies"
    assert record_to_dict(record) == data
    assert data == spec_example()  # parsing does not touch its input


def test_record_without_outcome_or_source_parses():
    data = without(spec_example(), "outcome", "source")
    record = parse_record(data)
    assert record.outcome is None
    assert record.source is None
    assert record_to_dict(record) == data


def test_five_rejections_record_parses_and_round_trips():
    data = five_rejections()
    assert record_to_dict(parse_record(data)) == data


@pytest.mark.parametrize(
    "cut",
    [
        "no missions yet",
        "a rejected team, the next one not yet voted",
        "an approved team on its mission",
    ],
)
def test_unfinished_record_parses(cut):
    data = without(spec_example(), "outcome")
    if cut == "no missions yet":
        data["missions"] = []
    elif cut == "a rejected team, the next one not yet voted":
        data["missions"] = data["missions"][:1]
        data["missions"][0]["proposals"] = data["missions"][0]["proposals"][:1]
        del data["missions"][0]["fails"]
    else:
        del data["missions"][2]["fails"]
    assert record_to_dict(parse_record(data)) == data


def test_resistance_win_with_targeting_order_parses():
    yes = [T] * 5
    data = {
        "format": "resistance-record/1",
        "id": "targeted",
        "players": 5,
        "spies": 2,
        "missions": [
            {
                "mission": 3,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [{"leader": 0, "team": [0, 1], "votes": yes}],
                "fails": 0,
            },
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [{"leader": 1, "team": [1, 3], "votes": yes}],
                "fails": 1,
            },
            {
                "mission": 2,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [{"leader": 2, "team": [0, 1, 2], "votes": yes}],
                "fails": 0,
            },
            {
                "mission": 5,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [{"leader": 3, "team": [0, 1, 2], "votes": yes}],
                "fails": 0,
            },
        ],
        "outcome": {"winner": "resistance", "reason": "three_successful_missions", "spies": [3, 4]},
    }
    assert record_to_dict(parse_record(data)) == data


def targeting_record() -> dict:
    """Five players under Targeting: the first leader proposes mission 3, is rejected, and the
    next leader proposes (and plays) mission 1 with a team drawn for them at the deadline."""
    return {
        "format": "resistance-record/1",
        "id": "targeting-per-proposal",
        "players": 5,
        "spies": 2,
        "variants": {"targeting": True, "blind_spies": False, "plot_cards": False},
        "missions": [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [
                    {"leader": 0, "mission": 3, "team": [0, 1], "votes": [F] * 5},
                    {
                        "leader": 1,
                        "mission": 1,
                        "team": [2, 3],
                        "votes": [T, T, T, F, F],
                        "auto_team": True,
                        "auto_votes": [3, 4],
                    },
                ],
                "fails": 0,
                "auto_cards": [3],
            }
        ],
        "seat_players": ["p1", "p2", "p3", "p4", "p5"],
        "played_at": "2026-11-30T14:00:00+00:00",
    }


def test_targeting_record_with_automatic_turns_parses_and_round_trips():
    data = targeting_record()
    record = parse_record(data)
    first, drawn = record.missions[0].proposals
    assert (first.mission, drawn.mission, record.missions[0].mission) == (3, 1, 1)
    assert (drawn.auto_team, drawn.auto_votes, record.missions[0].auto_cards) == (True, (3, 4), (3,))
    assert record.variants == Variants(targeting=True)
    assert record_to_dict(record) == data


def test_a_seven_player_mission_4_needing_one_fail_is_refused():
    """The printed table decides how many Fails sink a mission; a record cannot say otherwise."""
    data = record_dict(
        "house-rule",
        7,
        3,
        [
            {
                "mission": 4,
                "team_size": 4,
                "fails_required": 1,
                "proposals": [{"leader": 0, "mission": 4, "team": [0, 1, 2, 3], "votes": [T] * 7}],
                "fails": 1,
            }
        ],
    )
    data["variants"] = {"targeting": True}
    with pytest.raises(RecordError) as error:
        parse_record(data)
    assert (error.value.field, error.value.problem) == ("missions[0].fails_required", "must be 2")
    data["missions"][0]["fails_required"] = 2
    assert parse_record(data).missions[0].succeeded


# ----------------------------------------------------------------------------- broken records


def broken(change: Callable[[dict], None], base: Callable[[], dict] = spec_example) -> Callable[[], dict]:
    def build() -> dict:
        data = base()
        change(data)
        return data

    return build


def set_in(path: list, value) -> Callable[[dict], None]:
    """Set data[path[0]][path[1]]... = value."""

    def change(data: dict) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def delete(path: list) -> Callable[[dict], None]:
    def change(data: dict) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _append_mission_after_the_end(data: dict) -> None:
    data["missions"].append(
        {
            "mission": 4,
            "team_size": 4,
            "fails_required": 2,
            "proposals": [{"leader": 6, "team": [0, 1, 2, 3], "votes": [T] * 7}],
            "fails": 0,
        }
    )


def _six_proposals(data: dict) -> None:
    data["missions"][0]["proposals"].append({"leader": 0, "team": [0, 1], "votes": [T] * 5})


def _fails_beyond_the_spies(data: dict) -> None:
    # Five players have two spies; mission 2 takes three players, so three fails fit the team, not the spies.
    data["players"], data["spies"] = 5, 2
    data["missions"] = [
        {
            "mission": 1,
            "team_size": 2,
            "fails_required": 1,
            "proposals": [{"leader": 0, "team": [0, 1], "votes": [T] * 5}],
            "fails": 0,
        },
        {
            "mission": 2,
            "team_size": 3,
            "fails_required": 1,
            "proposals": [{"leader": 1, "team": [0, 1, 2], "votes": [T] * 5}],
            "fails": 3,
        },
    ]
    del data["outcome"]


FIRST_PROPOSAL = ["missions", 0, "proposals", 0]

BROKEN_RECORDS: dict[str, tuple[Callable[[], dict], str]] = {
    # the record itself
    "not an object": (lambda: ["resistance-record/1"], "record"),
    "unknown field": (broken(set_in(["winner"], "spies")), "winner"),
    "missing id": (broken(delete(["id"])), "id"),
    "missing missions": (broken(delete(["missions"])), "missions"),
    "missing format": (broken(delete(["format"])), "format"),
    "wrong format string": (broken(set_in(["format"], "resistance-record/2")), "format"),
    "empty id": (broken(set_in(["id"], "")), "id"),
    "too few players": (broken(set_in(["players"], 4)), "players"),
    "players as text": (broken(set_in(["players"], "7")), "players"),
    "players as bool": (broken(set_in(["players"], True)), "players"),
    "wrong spies count": (broken(set_in(["spies"], 2)), "spies"),
    "spies as bool": (broken(set_in(["spies"], True)), "spies"),
    "missions not a list": (broken(set_in(["missions"], {"1": {}})), "missions"),
    "source not an object": (broken(set_in(["source"], "avalon")), "source"),
    # a mission
    "mission not an object": (broken(set_in(["missions", 0], [1, 2])), "missions[0]"),
    "unknown mission field": (broken(set_in(["missions", 0, "leader"], 2)), "missions[0].leader"),
    "missing fails_required": (broken(delete(["missions", 1, "fails_required"])), "missions[1].fails_required"),
    "missing proposals": (broken(delete(["missions", 0, "proposals"])), "missions[0].proposals"),
    "mission 0": (broken(set_in(["missions", 0, "mission"], 0)), "missions[0].mission"),
    "mission as bool": (broken(set_in(["missions", 0, "mission"], True)), "missions[0].mission"),
    "mission attempted twice": (broken(set_in(["missions", 1, "mission"], 1)), "missions[1].mission"),
    "mission 5 before two successes": (broken(set_in(["missions", 1, "mission"], 5)), "missions[1].mission"),
    "wrong team size": (broken(set_in(["missions", 0, "team_size"], 3)), "missions[0].team_size"),
    "team size as text": (broken(set_in(["missions", 0, "team_size"], "2")), "missions[0].team_size"),
    "fails_required 3": (broken(set_in(["missions", 0, "fails_required"], 3)), "missions[0].fails_required"),
    "fails_required as bool": (
        broken(set_in(["missions", 0, "fails_required"], True)),
        "missions[0].fails_required",
    ),
    "no proposals": (broken(set_in(["missions", 0, "proposals"], [])), "missions[0].proposals"),
    "six proposals": (broken(_six_proposals, five_rejections), "missions[0].proposals"),
    "more fails than team members": (broken(set_in(["missions", 0, "fails"], 3)), "missions[0].fails"),
    "more fails than spies": (broken(_fails_beyond_the_spies), "missions[1].fails"),
    "negative fails": (broken(set_in(["missions", 0, "fails"], -1)), "missions[0].fails"),
    "fails as bool": (broken(set_in(["missions", 0, "fails"], True)), "missions[0].fails"),
    "fails without an approved team": (
        broken(set_in(["missions", 0, "proposals", 1, "votes"], [F] * 7)),
        "missions[0].fails",
    ),
    "non-last mission without fails": (broken(delete(["missions", 0, "fails"])), "missions[0].fails"),
    "mission after three failures": (broken(_append_mission_after_the_end), "missions[3]"),
    # a proposal
    "unknown proposal field": (
        broken(set_in(["missions", 0, "proposals", 1, "approved"], True)),
        "missions[0].proposals[1].approved",
    ),
    "missing team": (broken(delete([*FIRST_PROPOSAL, "team"])), "missions[0].proposals[0].team"),
    "missing votes": (broken(delete(["missions", 2, "proposals", 0, "votes"])), "missions[2].proposals[0].votes"),
    "leader out of turn": (
        broken(set_in(["missions", 0, "proposals", 1, "leader"], 3)),
        "missions[0].proposals[1].leader",
    ),
    "leader out of turn after a mission": (
        broken(set_in(["missions", 1, "proposals", 0, "leader"], 2)),
        "missions[1].proposals[0].leader",
    ),
    "leader not seated": (broken(set_in([*FIRST_PROPOSAL, "leader"], 7)), "missions[0].proposals[0].leader"),
    "leader as bool": (broken(set_in([*FIRST_PROPOSAL, "leader"], True)), "missions[0].proposals[0].leader"),
    "team too big": (broken(set_in([*FIRST_PROPOSAL, "team"], [1, 3, 5])), "missions[0].proposals[0].team"),
    "team member twice": (broken(set_in([*FIRST_PROPOSAL, "team"], [1, 1])), "missions[0].proposals[0].team"),
    "team member not seated": (
        broken(set_in([*FIRST_PROPOSAL, "team"], [1, 7])),
        "missions[0].proposals[0].team",
    ),
    "team member as bool": (
        broken(set_in([*FIRST_PROPOSAL, "team"], [True, 3])),
        "missions[0].proposals[0].team",
    ),
    "votes wrong length": (
        broken(set_in([*FIRST_PROPOSAL, "votes"], [F, T, F, T, F, F])),
        "missions[0].proposals[0].votes",
    ),
    "votes as numbers": (
        broken(set_in([*FIRST_PROPOSAL, "votes"], [0, 1, 0, 1, 0, 0, 0])),
        "missions[0].proposals[0].votes",
    ),
    "approved team that is not the last": (
        broken(set_in([*FIRST_PROPOSAL, "votes"], [T] * 7)),
        "missions[0].proposals[0].votes",
    ),
    # the outcome
    "unknown outcome field": (broken(set_in(["outcome", "merlin"], 0)), "outcome.merlin"),
    "outcome missing spies": (broken(delete(["outcome", "spies"])), "outcome.spies"),
    "unknown reason": (broken(set_in(["outcome", "reason"], "assassination")), "outcome.reason"),
    "winner and reason contradict the missions: the winner comes first": (
        broken(lambda d: d["outcome"].update(winner="resistance", reason="three_successful_missions")),
        "outcome.winner",
    ),
    "reason contradicts the missions": (
        broken(lambda d: d["outcome"].update(reason="three_successful_missions")),
        "outcome.reason",
    ),
    "five rejections that did not happen": (broken(set_in(["outcome", "reason"], "five_rejections")), "outcome.reason"),
    "outcome of an unfinished game": (broken(lambda d: d["missions"].pop()), "outcome.reason"),
    "winner contradicts the reason": (broken(set_in(["outcome", "winner"], "resistance")), "outcome.winner"),
    "unknown winner": (broken(set_in(["outcome", "winner"], "merlin")), "outcome.winner"),
    "too few spies revealed": (broken(set_in(["outcome", "spies"], [1, 4])), "outcome.spies"),
    "spy revealed twice": (broken(set_in(["outcome", "spies"], [1, 4, 4])), "outcome.spies"),
    "spies cannot explain a Fail card": (broken(set_in(["outcome", "spies"], [0, 1, 6])), "outcome.spies"),
    "spies cannot explain two Fail cards": (broken(set_in(["outcome", "spies"], [1, 2, 6])), "outcome.spies"),
    # optional fields
    "variants not an object": (broken(set_in(["variants"], True)), "variants"),
    "unknown variant": (broken(set_in(["variants", "merlin"], True), targeting_record), "variants.merlin"),
    "variant as a number": (broken(set_in(["variants", "targeting"], 1), targeting_record), "variants.targeting"),
    "mission missing under Targeting": (
        broken(delete(["missions", 0, "proposals", 0, "mission"]), targeting_record),
        "missions[0].proposals[0].mission",
    ),
    "proposal for mission 5 before two successes": (
        broken(
            lambda d: d["missions"][0]["proposals"][0].update(mission=5, team=[0, 1, 2]),
            targeting_record,
        ),
        "missions[0].proposals[0].mission",
    ),
    "team sized for another mission": (
        broken(set_in(["missions", 0, "proposals", 0, "team"], [0, 1, 2]), targeting_record),
        "missions[0].proposals[0].team",
    ),
    "round mission not its last proposal's": (
        broken(lambda d: d["missions"][0]["proposals"][1].update(mission=3), targeting_record),
        "missions[0].mission",
    ),
    "proposal mission out of order without Targeting": (
        broken(
            lambda d: (d.update(variants={"targeting": False}), d["missions"][0]["proposals"][0].update(mission=2)),
            targeting_record,
        ),
        "missions[0].proposals[0].mission",
    ),
    "auto_team not a bool": (
        broken(set_in(["missions", 0, "proposals", 1, "auto_team"], "yes"), targeting_record),
        "missions[0].proposals[1].auto_team",
    ),
    "auto_votes seat off the table": (
        broken(set_in(["missions", 0, "proposals", 1, "auto_votes"], [5]), targeting_record),
        "missions[0].proposals[1].auto_votes",
    ),
    "auto_votes seat twice": (
        broken(set_in(["missions", 0, "proposals", 1, "auto_votes"], [3, 3]), targeting_record),
        "missions[0].proposals[1].auto_votes",
    ),
    "auto_cards for a seat off the team": (
        broken(set_in(["missions", 0, "auto_cards"], [0]), targeting_record),
        "missions[0].auto_cards",
    ),
    "auto_cards on a mission not played": (
        broken(delete(["missions", 0, "fails"]), targeting_record),
        "missions[0].auto_cards",
    ),
    "a Fail from a card the deadline played": (
        broken(lambda d: d["missions"][0].update(fails=2), targeting_record),
        "missions[0].fails",
    ),
    "seat_players of the wrong length": (
        broken(set_in(["seat_players"], ["p1"]), targeting_record),
        "seat_players",
    ),
    "played_at not a time": (broken(set_in(["played_at"], "yesterday"), targeting_record), "played_at"),
    "missed votes filled in with two settings": (
        broken(set_in(["missions", 0, "proposals", 1, "votes", 3], T), targeting_record),
        "missions[0].proposals[1].auto_votes",
    ),
    # an optional field is left out, not given as null
    "source null": (broken(set_in(["source"], None)), "source"),
    "seat_players null": (broken(set_in(["seat_players"], None), targeting_record), "seat_players"),
    "played_at null": (broken(set_in(["played_at"], None), targeting_record), "played_at"),
    "variants null": (broken(set_in(["variants"], None), targeting_record), "variants"),
    "outcome null": (broken(set_in(["outcome"], None)), "outcome"),
}


@pytest.mark.parametrize("case", list(BROKEN_RECORDS))
def test_broken_record_names_the_first_offending_field(case):
    build, field = BROKEN_RECORDS[case]
    with pytest.raises(RecordError) as error:
        parse_record(build())
    assert error.value.field == field
    assert str(error.value).startswith(f"{field}: ")


def test_broken_record_cases_start_from_a_valid_record():
    parse_record(spec_example())
    parse_record(five_rejections())
    parse_record(targeting_record())


def test_first_fault_in_document_order_is_named():
    data = spec_example()
    data["missions"][2]["proposals"][0]["votes"] = [T]  # later fault
    data["missions"][1]["team_size"] = 9  # earlier fault
    data["outcome"]["winner"] = "resistance"  # later still
    with pytest.raises(RecordError) as error:
        parse_record(data)
    assert error.value.field == "missions[1].team_size"


# ----------------------------------------------------------------------------- the human games data set


def test_every_human_game_parses_and_round_trips():
    if not TRAIN.exists():
        pytest.skip(f"human games data set not found at {TRAIN}")
    count = 0
    problems = []
    with TRAIN.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            count += 1
            data = json.loads(line)
            try:
                if record_to_dict(parse_record(data)) != data:
                    problems.append(f"line {number}: does not round-trip")
            except RecordError as error:
                problems.append(f"line {number}: {error}")
    assert count > 0
    assert problems == []


# ----------------------------------------------------------------------------- export from the engine


def start(players: int = 7, leader: int = 2, targeting: bool = False) -> GameState:
    count = rules.spy_count(players)
    spies = tuple(range(players - count, players))
    return new_game(players, random.Random(0), Variants(targeting=targeting), spies=spies, first_leader=leader)


def propose(state: GameState, team, mission: int | None = None) -> GameState:
    return apply(state, ProposeTeam(seat=state.leader, team=tuple(team), mission=mission))[0]


def vote(state: GameState, approve: bool) -> GameState:
    for seat in range(state.players):
        state = apply(state, CastVote(seat=seat, approve=approve))[0]
    return state


def play(state: GameState, fails: int) -> GameState:
    for seat in state.current_round.team:
        fail = fails > 0 and seat in state.spies
        fails -= fail
        state = apply(state, PlayCard(seat=seat, fail=fail))[0]
    return state


def run_mission(state: GameState, fails: int) -> GameState:
    """Team of the spies needed for `fails` plus loyal seats; everyone approves; the spies on it fail."""
    size = rules.team_size(state.players, state.open_missions()[0])
    loyal = [s for s in range(state.players) if s not in state.spies]
    team = list(state.spies[:fails]) + loyal[: size - fails]
    return play(vote(propose(state, team), True), fails)


def exported(state: GameState, game_id: str = "engine-game") -> dict:
    data = export_record(state, game_id)
    record = parse_record(data)
    assert record_to_dict(record) == data
    return data


def test_export_before_any_vote_has_no_missions():
    data = exported(start())
    assert data["missions"] == []
    assert "outcome" not in data
    assert data["players"] == 7 and data["spies"] == 3


def test_export_during_a_vote_leaves_the_hidden_proposal_out():
    state = propose(start(), (0, 1))
    state = apply(state, CastVote(seat=0, approve=True))[0]
    assert state.phase is Phase.VOTING
    assert exported(state)["missions"] == []


def test_export_during_a_later_vote_keeps_the_revealed_proposals_only():
    state = vote(propose(start(), (0, 1)), False)
    state = propose(state, (1, 2))
    state = apply(state, CastVote(seat=4, approve=True))[0]
    data = exported(state)
    assert "outcome" not in data
    assert data["missions"] == [
        {
            "mission": 1,
            "team_size": 2,
            "fails_required": 1,
            "proposals": [{"leader": 2, "team": [0, 1], "votes": [F] * 7}],
        }
    ]


def test_export_during_a_mission_has_the_approved_proposal_without_fails():
    state = vote(propose(start(), (0, 4)), True)
    state = apply(state, PlayCard(seat=4, fail=True))[0]
    assert state.phase is Phase.MISSION
    data = exported(state)
    assert "outcome" not in data
    assert data["missions"] == [
        {
            "mission": 1,
            "team_size": 2,
            "fails_required": 1,
            "proposals": [{"leader": 2, "team": [0, 4], "votes": [T] * 7}],
        }
    ]


def test_export_between_missions():
    state = run_mission(run_mission(start(), 0), 1)
    data = exported(state)
    assert "outcome" not in data
    assert [m["fails"] for m in data["missions"]] == [0, 1]
    assert [m["proposals"][0]["leader"] for m in data["missions"]] == [2, 3]


@pytest.mark.parametrize(
    ("results", "winner", "reason"),
    [
        ([0, 0, 0], "resistance", "three_successful_missions"),
        ([1, 0, 1, 2], "spies", "three_failed_missions"),
        ([0, 1, 0, 2, 0], "resistance", "three_successful_missions"),
    ],
)
def test_export_of_a_finished_game_has_the_outcome(results, winner, reason):
    state = start()
    for fails in results:
        state = run_mission(state, fails)
    assert state.is_over
    data = exported(state, "finished")
    assert data["id"] == "finished"
    assert data["outcome"] == {"winner": winner, "reason": reason, "spies": [4, 5, 6]}
    assert [m["fails"] for m in data["missions"]] == results
    assert [m["fails_required"] for m in data["missions"]] == [1, 1, 1, 2, 1][: len(results)]


def test_export_after_five_rejections_has_the_outcome():
    state = start(5, leader=3)
    for _ in range(5):
        state = vote(propose(state, (0, 1)), False)
    data = exported(state)
    assert data["outcome"] == {"winner": "spies", "reason": "five_rejections", "spies": [3, 4]}
    assert [p["leader"] for p in data["missions"][0]["proposals"]] == [3, 4, 0, 1, 2]


def test_export_carries_the_source():
    data = export_record(start(), "with-source", {"site": "telegram"})
    assert parse_record(data).source == {"site": "telegram"}


def test_mission_after_five_rejections_is_blamed_on_that_mission():
    data = five_rejections()
    del data["outcome"]
    data["missions"].append(
        {
            "mission": 2,
            "team_size": 3,
            "fails_required": 1,
            "proposals": [{"leader": 0, "team": [0, 1, 2], "votes": [True] * 5}],
            "fails": 0,
        }
    )
    with pytest.raises(RecordError) as refusal:
        parse_record(data)
    assert refusal.value.field == "missions[1]"


@pytest.mark.parametrize("hash_seed", ["0", "1", "2", "3", "4", "5"])
def test_missing_fields_are_named_in_document_order_whatever_the_hash_seed(hash_seed):
    import subprocess
    import sys

    program = (
        "import json, sys; from engine import parse_record, RecordError\n"
        "d = json.loads(sys.argv[1])\n"
        "try: parse_record(d)\n"
        "except RecordError as e: print(e.field)"
    )
    data = spec_example()
    del data["missions"][0]["team_size"], data["missions"][0]["fails_required"]
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", program, json.dumps(data)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={"PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)},
    )
    assert out.stdout.strip() == "missions[0].team_size"


# ----------------------------------------------------------------------------- document order


def _proposal_of(data: dict, mission: int = 0, proposal: int = 0) -> dict:
    return data["missions"][mission]["proposals"][proposal]


ORDERED_FAULTS: dict[str, tuple[Callable[[dict], object], str]] = {
    # A field the format does not have, written after a broken one, is not the first fault.
    "a newer format with a field of its own": (
        lambda d: d.update(format="resistance-record/2", rounds_revealed=True),
        "format",
    ),
    "an unknown field written after a broken one in a proposal": (
        lambda d: _proposal_of(d).update(leader=99, comment="late"),
        "missions[0].proposals[0].leader",
    ),
    "an unknown field written before a broken one": (
        lambda d: d["missions"].__setitem__(0, {"comment": "early", **d["missions"][0], "team_size": 9}),
        "missions[0].comment",
    ),
    # A field left out is missing at its own place, not before the faults of the fields ahead of it.
    "missions left out, format broken": (lambda d: d.update(format="x") or d.pop("missions"), "format"),
    "votes left out, leader broken": (
        lambda d: _proposal_of(d).update(leader=-1) or _proposal_of(d).pop("votes"),
        "missions[0].proposals[0].leader",
    ),
    "fails_required left out, mission broken": (
        lambda d: d["missions"][0].update(mission=0) or d["missions"][0].pop("fails_required"),
        "missions[0].mission",
    ),
    "spies of the outcome left out, winner broken": (
        lambda d: d["outcome"].update(winner="nobody") or d["outcome"].pop("spies"),
        "outcome.winner",
    ),
    # Within the outcome, the winner comes before the reason.
    "winner and reason both unknown": (
        lambda d: d["outcome"].update(winner="nobody", reason="boredom"),
        "outcome.winner",
    ),
    # A Plot field in a plain record is out of place where it is written, after the leader.
    "a leader out of turn who says he used a Strong Leader in a plain record": (
        lambda d: _proposal_of(d, 0, 1).update(leader=0, strong_leader=True),
        "missions[0].proposals[1].leader",
    ),
}


@pytest.mark.parametrize("case", list(ORDERED_FAULTS))
def test_the_first_fault_in_document_order_is_named(case):
    breaks, field = ORDERED_FAULTS[case]
    data = spec_example()
    breaks(data)
    with pytest.raises(RecordError) as error:
        parse_record(data)
    assert error.value.field == field


def test_a_plot_event_is_checked_in_the_order_it_is_written():
    """kind, the kind's own fields, then proposal: as the format and the export write them."""
    from engine.plot_record import parse_events

    event = {"kind": "deal", "card": "joker", "to": 3, "proposal": "first"}
    with pytest.raises(RecordError) as error:
        parse_events([event], "missions[0].plot", 7)
    assert error.value.field == "missions[0].plot[0].card"
    with pytest.raises(RecordError) as error:
        parse_events([{"knd": "deal", "card": "open_up", "to": 3, "proposal": 0}], "missions[0].plot", 7)
    assert error.value.field == "missions[0].plot[0].knd"
    with pytest.raises(RecordError) as error:
        parse_events([{"card": "open_up", "to": 3, "proposal": 0}], "missions[0].plot", 7)
    assert error.value.field == "missions[0].plot[0].kind"


def _paths(value, path=()):
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _paths(inner, (*path, key))


def _at(data, path):
    for key in path:
        data = data[key]
    return data


@settings(max_examples=150, deadline=None)
@given(
    st.integers(5, 10),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0.0, 0.2]),
    st.integers(0, 2**32),
    st.data(),
)
def test_a_field_not_in_the_format_written_last_never_hides_an_earlier_fault(
    players, targeting, blind_spies, plot_cards, deadline_rate, seed, data
):
    """Any record of any game, with one field broken: an unknown field written after it, in the same
    object or at the end of the record, leaves the error as it was."""
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=targeting, blind_spies=blind_spies, plot_cards=plot_cards))
    for _ in range(data.draw(st.integers(1, 400))):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, deadline_rate=deadline_rate))
    private_for = data.draw(st.sampled_from([None, 0])) if plot_cards else None
    record = json.loads(json.dumps(export_record(state, "g", private_for=private_for)))
    path = data.draw(st.sampled_from(list(_paths(record))[1:]))
    _at(record, path[:-1])[path[-1]] = None
    try:
        parse_record(record)
    except RecordError as error:
        fault = error.field
    else:
        return  # null is a fine value there (inside `source`)
    holder = max((path[:n] for n in range(len(path)) if isinstance(_at(record, path[:n]), dict)), key=len)
    # `private` is keyed by seats, not fields: a name added there is a second entry, a fault of its own.
    for where in {holder, ()} - {("private",)}:
        written_last = copy.deepcopy(record)
        _at(written_last, where)["zz_not_in_the_format"] = 1
        with pytest.raises(RecordError) as error:
            parse_record(written_last)
        assert error.value.field == fault


def test_a_record_no_seating_of_the_spies_explains_is_refused_at_the_mission_that_rules_the_last_one_out():
    """5 players, 2 spies: mission 1's two Fail cards make seats 0 and 1 the spies; mission 2's Fail
    card, played by seats 2, 3 and 4, then has nobody left to play it."""
    missions = [
        first_mission([{"leader": 0, "team": [0, 1], "votes": [T, T, T, F, F]}], fails=2),
        {
            "mission": 2,
            "team_size": 3,
            "fails_required": 1,
            "proposals": [{"leader": 1, "team": [2, 3, 4], "votes": [T, T, T, F, F]}],
            "fails": 1,
        },
    ]
    data = record_dict("no-seating", 5, 2, missions)
    with pytest.raises(RecordError) as refused:
        parse_record(data)
    assert refused.value.field == "missions[1].fails"
    # The batch protocol names it in the request, as it names any other broken field.
    from deduction.batch import answer

    assert answer(json.dumps({"record": data, "viewer": None}), "behaviour") == {
        "error": "record.missions[1].fails: no way to seat 2 spies explains the Fail cards of this mission "
        "and those before it"
    }
    missions[1]["fails"] = 0
    parse_record(data)


def test_validate_reads_records_as_strictly_as_the_batch_protocol(tmp_path, capsys):
    """A name given twice (which value counts?) or NaN is no record, whichever program reads it."""
    from engine.__main__ import main

    good = json.dumps(spec_example())
    twice = good[:-1] + ', "id": "other"}'
    nan = good.replace('"fails": 1', '"fails": NaN', 1)
    assert nan != good
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join([good, twice, nan]) + "\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f'{path}:2: not readable: "id" given twice in one object',
        f"{path}:3: not JSON: NaN is not a JSON number",
        "1 of 3 records valid",
    ]


def test_validate_goes_on_past_a_file_or_line_it_cannot_read(tmp_path, capsys):
    """A missing file is said on the standard error and the other files are still checked; a line
    that is not UTF-8, or nested deeper than the parser goes, is a broken record of its own and the
    lines after it are still read. Any of them makes the exit code 1."""
    from engine.__main__ import main

    good = json.dumps(spec_example()).encode()
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"\n".join([good, b'{"id": "\xc3("}', b"[" * 50_000 + b"]" * 50_000, good]) + b"\n")
    missing = tmp_path / "missing.jsonl"
    assert main(["validate", str(missing), str(path)]) == 1
    printed = capsys.readouterr()
    assert printed.err == f"python -m engine validate: {missing}: No such file or directory\n"
    assert printed.out.splitlines() == [
        f"{path}:2: not UTF-8: byte 9 of the line",
        f"{path}:3: not readable: nested too deeply",
        "2 of 4 records valid; 1 file not read",
    ]
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(good + b"\r\n")  # a line may end with a carriage return, JSON whitespace
    assert main(["validate", str(clean)]) == 0
    assert capsys.readouterr().out == "1 of 1 records valid\n"


@settings(max_examples=100, deadline=None)
@given(
    st.integers(5, 10),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**32),
    st.integers(1, 400),
    st.data(),
)
def test_a_number_written_as_a_boolean_or_a_float_is_refused_wherever_it_stands(
    players, targeting, plot_cards, seed, steps, data
):
    """`true` equals 1 in Python, and 1.0 equals 1 too: none of them is a seat, a mission, a count or a
    proposal's index in a record, wherever the number stands (the outcome's spies, a Plot event's
    seats, a private entry's seat included)."""
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=targeting, plot_cards=plot_cards))
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, deadline_rate=0.1))
    record = json.loads(json.dumps(export_record(state, "g", private_for=0 if plot_cards else None)))
    numbers = [
        path
        for path in _paths(record)
        if isinstance(_at(record, path), int) and not isinstance(_at(record, path), bool)
    ]
    path = data.draw(st.sampled_from(numbers))
    number = _at(record, path)
    alike = data.draw(st.sampled_from([float(number), *([bool(number)] if number in (0, 1) else [])]))
    _at(record, path[:-1])[path[-1]] = alike
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field.startswith(_field_name(path[:2])), (refused.value.field, path)


def _field_name(path) -> str:
    name = ""
    for key in path:
        name += f"[{key}]" if isinstance(key, int) else (f".{key}" if name else key)
    return name
