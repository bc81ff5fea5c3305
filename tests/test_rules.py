"""The rules of The Resistance, one test per rule, written from the rulebook (shared/rules/rules-en.txt).

Seats are numbered 0..players-1 in clockwise table order. Unless a test says otherwise the spies
sit in the last seats (e.g. seats 3 and 4 at a table of five) and seat 0 holds the Leader card.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from itertools import pairwise

import pytest

from engine import (
    CardPlayed,
    CardsFilled,
    CardsTimedOut,
    CastVote,
    EndReason,
    GameOver,
    GameState,
    IllegalAction,
    LeaderChanged,
    LeaderTimedOut,
    MissionCompleted,
    Phase,
    PlayCard,
    ProposeTeam,
    Reason,
    Role,
    Side,
    StateFormatError,
    TeamProposed,
    Variants,
    VoteCast,
    VotesFilled,
    VotesRevealed,
    VotesTimedOut,
    apply,
    draw_team,
    new_game,
    public_view,
    rules,
    seat_view,
    state_from_dict,
    state_to_dict,
)
from engine.simulate import random_action
from tests.test_engine_plot_rules import PLOT_REFUSALS

SPIES_BY_PLAYERS = {5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}

# Rulebook chart: team size of missions 1..5 by player count.
TEAM_SIZE_CHART = {
    5: (2, 3, 2, 3, 3),
    6: (2, 3, 4, 3, 4),
    7: (2, 3, 3, 4, 4),
    8: (3, 4, 4, 5, 5),
    9: (3, 4, 4, 5, 5),
    10: (3, 4, 4, 5, 5),
}
TEAM_SIZE_CELLS = [
    (players, mission, size)
    for players, sizes in TEAM_SIZE_CHART.items()
    for mission, size in enumerate(sizes, start=1)
]


# ----------------------------------------------------------------------------- helpers


def new_table(
    players: int = 5,
    *,
    spies: tuple[int, ...] | None = None,
    leader: int = 0,
    targeting: bool = False,
    blind_spies: bool = False,
) -> GameState:
    """A game with known roles: by default the spies sit in the last seats and seat 0 leads."""
    if spies is None:
        count = SPIES_BY_PLAYERS[players]
        spies = tuple(range(players - count, players))
    return new_game(
        players,
        random.Random(0),
        Variants(targeting=targeting, blind_spies=blind_spies),
        spies=spies,
        first_leader=leader,
    )


def act(state: GameState, action) -> tuple[GameState, tuple]:
    """Apply an action the rules must accept; every accepted action moves the version by exactly one."""
    new_state, events = apply(state, action)
    assert new_state.version == state.version + 1
    return new_state, events


def propose(state: GameState, team, mission: int | None = None) -> tuple[GameState, tuple]:
    """The current leader proposes `team` (for `mission`, under Targeting)."""
    return act(state, ProposeTeam(seat=state.leader, team=tuple(team), mission=mission))


def vote(state: GameState, approvers) -> tuple[GameState, list]:
    """Every seat votes in seat order; the seats in `approvers` approve, the rest reject."""
    events: list = []
    for seat in range(state.players):
        state, new_events = act(state, CastVote(seat=seat, approve=seat in approvers))
        events.extend(new_events)
    return state, events


def everyone(state: GameState) -> set[int]:
    return set(range(state.players))


def play_cards(state: GameState, fails: int = 0) -> tuple[GameState, list]:
    """The team plays its mission cards: the first `fails` spies on it play Fail, all others Success."""
    events: list = []
    fails_left = fails
    for seat in state.current_round.team:
        fail = fails_left > 0 and seat in state.spies
        fails_left -= fail
        state, new_events = act(state, PlayCard(seat=seat, fail=fail))
        events.extend(new_events)
    assert fails_left == 0, "not enough spies on the team to play that many Fail cards"
    return state, events


def team_with_spies(state: GameState, size: int, spies_on_team: int) -> tuple[int, ...]:
    """A team of `size` with exactly `spies_on_team` spies on it."""
    spies = list(state.spies)[:spies_on_team]
    loyal = [seat for seat in range(state.players) if seat not in state.spies]
    team = tuple(spies + loyal[: size - len(spies)])
    assert len(team) == size
    return team


def run_mission(state: GameState, fails: int = 0, mission: int | None = None) -> tuple[GameState, list]:
    """One whole round: the leader proposes a team holding `fails` spies, all approve, the spies play Fail."""
    number = mission if mission is not None else state.open_missions()[0]
    team = team_with_spies(state, rules.team_size(state.players, number), fails)
    state, proposed = propose(state, team, mission)
    state, voted = vote(state, everyone(state))
    state, played = play_cards(state, fails)
    return state, [*proposed, *voted, *played]


def play_results(state: GameState, results: str, missions: list[int] | None = None) -> tuple[GameState, list]:
    """Play missions with the given results, "S" success and "F" failure (with just enough Fail cards).

    `missions` names the mission of each round under Targeting; by default they go in order.
    """
    events: list = []
    for i, result in enumerate(results):
        mission = missions[i] if missions else None
        number = mission if mission is not None else state.open_missions()[0]
        fails = rules.fails_required(state.players, number) if result == "F" else 0
        state, new_events = run_mission(state, fails, mission)
        events.extend(new_events)
    return state, events


def reject(state: GameState, team=None, mission: int | None = None) -> tuple[GameState, list]:
    """The leader proposes a team and the table rejects it unanimously."""
    if team is None:
        number = mission if mission is not None else state.open_missions()[0]
        team = tuple(range(rules.team_size(state.players, number)))
    state, proposed = propose(state, team, mission)
    state, voted = vote(state, set())
    return state, [*proposed, *voted]


def of_type(events, kind) -> list:
    return [e for e in events if isinstance(e, kind)]


def assert_refused(state: GameState, action, reason: Reason) -> None:
    """The action is refused for `reason`, and the state passed in is left exactly as it was."""
    before = state_to_dict(state)
    version = state.version
    with pytest.raises(IllegalAction) as refusal:
        apply(state, action)
    assert refusal.value.reason is reason
    assert state_to_dict(state) == before
    assert state.version == version


def play_randomly(state: GameState, rng: random.Random):
    """Yield (state before, action, state after, events) until the game is over."""
    while not state.is_over:
        action = random_action(state, rng)
        after, events = apply(state, action)
        yield state, action, after, events
        state = after


# ----------------------------------------------------------------------------- setup: the two charts


@pytest.mark.parametrize(("players", "spies"), list(SPIES_BY_PLAYERS.items()))
def test_spy_chart_in_rules(players, spies):
    assert rules.spy_count(players) == spies


@pytest.mark.parametrize(("players", "spies"), list(SPIES_BY_PLAYERS.items()))
def test_spy_chart_in_a_dealt_game(players, spies):
    for seed in range(5):
        state = new_game(players, random.Random(seed))
        assert len(state.spies) == spies
        assert len(set(state.spies)) == spies
        assert all(0 <= seat < players for seat in state.spies)
        assert public_view(state).spy_count == spies
        roles = [seat_view(state, seat).role for seat in range(players)]
        assert roles.count(Role.SPY) == spies
        assert roles.count(Role.RESISTANCE) == players - spies


@pytest.mark.parametrize("players", [3, 4, 11])
def test_only_five_to_ten_players_can_play(players):
    with pytest.raises(ValueError):
        rules.spy_count(players)
    with pytest.raises(ValueError):
        new_game(players, random.Random(0))


@pytest.mark.parametrize(("players", "mission", "size"), TEAM_SIZE_CELLS)
def test_team_size_chart_in_rules(players, mission, size):
    assert rules.team_size(players, mission) == size


def test_six_players_take_teams_of_2_3_4_3_4():
    assert [rules.team_size(6, mission) for mission in range(1, 6)] == [2, 3, 4, 3, 4]


@pytest.mark.parametrize(("players", "mission", "size"), TEAM_SIZE_CELLS)
def test_team_size_chart_in_a_game(players, mission, size):
    # Reach the mission without ending the game: success, failure, success, failure.
    state, _ = play_results(new_table(players), "SFSF"[: mission - 1])
    assert state.open_missions() == (mission,)
    everybody = list(range(players))
    for wrong in (size - 1, size + 1):
        assert_refused(state, ProposeTeam(seat=state.leader, team=tuple(everybody[:wrong])), Reason.WRONG_TEAM_SIZE)
    state, events = propose(state, everybody[:size])
    assert state.phase is Phase.VOTING
    assert events == (TeamProposed(mission=mission, proposal_number=1, leader=state.leader, team=tuple(range(size))),)
    assert public_view(state).team == tuple(range(size))


@pytest.mark.parametrize("players", range(5, 11))
@pytest.mark.parametrize("mission", range(1, 6))
def test_fails_needed_to_sink_a_mission_in_rules(players, mission):
    expected = 2 if mission == 4 and players >= 7 else 1
    assert rules.fails_required(players, mission) == expected


# ----------------------------------------------------------------------------- setup: random leader and roles


def test_same_seed_deals_the_same_game():
    for players in range(5, 11):
        assert new_game(players, random.Random(2024)) == new_game(players, random.Random(2024))


def test_setup_draws_only_from_the_injected_random():
    random.seed(1)
    first = new_game(7, random.Random(99))
    random.seed(2)
    second = new_game(7, random.Random(99))
    assert first == second

    rng = random.Random(99)
    new_game(7, rng)
    assert rng.getstate() != random.Random(99).getstate()


def test_different_seeds_give_various_first_leaders_and_spies():
    games = [new_game(7, random.Random(seed)) for seed in range(60)]
    assert {game.leader for game in games} == set(range(7))
    assert len({game.spies for game in games}) > 10


def test_given_spies_and_first_leader_override_the_deal():
    state = new_game(7, random.Random(5), spies=(6, 1, 3), first_leader=4)
    assert state.spies == (1, 3, 6)
    assert state.leader == 4
    assert state.phase is Phase.PROPOSING
    assert state.version == 0


@pytest.mark.parametrize(
    "setup",
    [{"spies": (0, 1, 2)}, {"spies": (0, 0)}, {"spies": (0, 5)}, {"first_leader": 5}, {"first_leader": -1}],
)
def test_impossible_setup_is_refused(setup):
    with pytest.raises(ValueError):
        new_game(5, random.Random(0), **setup)


# ----------------------------------------------------------------------------- the Leader card


def test_leader_passes_clockwise_after_a_rejected_proposal():
    state = new_table(5, leader=2)
    state, events = reject(state)
    assert state.leader == 3
    assert events[-1] == LeaderChanged(leader=3)
    assert state.phase is Phase.PROPOSING


def test_leader_keeps_the_card_during_an_approved_mission_and_passes_it_after():
    state = new_table(5, leader=2)
    state, _ = propose(state, (0, 1))
    state, events = vote(state, everyone(state))
    assert state.phase is Phase.MISSION
    assert state.leader == 2
    assert not of_type(events, LeaderChanged)
    state, events = play_cards(state)
    assert state.leader == 3
    assert events[-1] == LeaderChanged(leader=3)
    assert state.phase is Phase.PROPOSING


def test_leader_passes_from_the_last_seat_to_seat_0():
    state = new_table(5, leader=4)
    state, _ = reject(state)
    assert state.leader == 0


def test_every_proposal_of_a_game_is_led_by_the_next_seat_clockwise():
    for seed in range(30):
        rng = random.Random(seed)
        players = rng.randint(5, 10)
        start = new_game(players, rng, Variants(targeting=seed % 2 == 0))
        leaders = [
            before.leader for before, action, _, _ in play_randomly(start, rng) if isinstance(action, ProposeTeam)
        ]
        assert leaders[0] == start.leader
        assert all(after == (before + 1) % players for before, after in pairwise(leaders))


# ----------------------------------------------------------------------------- team building


def test_only_the_leader_proposes():
    state = new_table(5, leader=1)
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1)), Reason.NOT_THE_LEADER)
    state, events = act(state, ProposeTeam(seat=1, team=(0, 2)))
    assert events[0].leader == 1


def test_leader_may_put_themself_on_the_team():
    state = new_table(5, leader=3)
    state, events = propose(state, (3, 0))
    assert set(events[0].team) == {0, 3}
    assert set(public_view(state).team) == {0, 3}


@pytest.mark.parametrize("team", [(1, 1), (4, 4)])
def test_a_player_holds_only_one_team_card(team):
    assert_refused(new_table(5), ProposeTeam(seat=0, team=team), Reason.DUPLICATE_TEAM_MEMBER)


@pytest.mark.parametrize("team", [(0, 5), (-1, 2), (0, 99)])
def test_team_members_must_be_seated_players(team):
    assert_refused(new_table(5), ProposeTeam(seat=0, team=team), Reason.UNKNOWN_TEAM_MEMBER)


# ----------------------------------------------------------------------------- the team vote


def test_votes_stay_hidden_until_the_last_vote_arrives():
    state, _ = propose(new_table(5), (0, 1))
    ballots = {0: True, 1: False, 2: True, 3: False}
    for seat, approve in ballots.items():
        state, events = act(state, CastVote(seat=seat, approve=approve))
        assert events == (VoteCast(seat=seat),)

    view = public_view(state)
    assert view.phase is Phase.VOTING
    assert view.voted_seats == (0, 1, 2, 3)
    assert view.rounds[-1].proposals[-1].votes is None
    # The public view has no field that could carry a ballot, and a VoteCast event only names the seat.
    assert "votes" not in {f.name for f in dataclasses.fields(view)}
    assert [f.name for f in dataclasses.fields(VoteCast)] == ["seat"]
    # A seat knows its own vote and nobody else's.
    assert seat_view(state, 1).own_vote is False
    assert seat_view(state, 2).own_vote is True
    assert seat_view(state, 4).own_vote is None

    state, events = act(state, CastVote(seat=4, approve=True))
    revealed = of_type(events, VotesRevealed)
    assert revealed == [
        VotesRevealed(mission=1, proposal_number=1, votes=(True, False, True, False, True), approved=True, rejections=0)
    ]
    assert public_view(state).rounds[-1].proposals[-1].votes == (True, False, True, False, True)


def test_everyone_including_the_leader_votes_once():
    state, _ = propose(new_table(5), (0, 1))
    state, _ = act(state, CastVote(seat=0, approve=True))
    assert_refused(state, CastVote(seat=0, approve=False), Reason.ALREADY_VOTED)


@pytest.mark.parametrize(
    ("players", "approvals", "approved"),
    [
        (5, 3, True),
        (5, 2, False),
        (5, 5, True),
        (5, 0, False),
        (6, 4, True),
        (6, 3, False),  # a tie rejects
        (7, 4, True),
        (7, 3, False),
        (8, 5, True),
        (8, 4, False),  # a tie rejects
        (9, 5, True),
        (9, 4, False),
        (10, 6, True),
        (10, 5, False),  # a tie rejects
    ],
)
def test_strict_majority_approves_and_a_tie_rejects(players, approvals, approved):
    ballots = [True] * approvals + [False] * (players - approvals)
    assert rules.is_approved(ballots) is approved

    state, _ = propose(new_table(players), range(rules.team_size(players, 1)))
    state, events = vote(state, set(range(approvals)))
    assert of_type(events, VotesRevealed)[0].approved is approved
    assert state.phase is (Phase.MISSION if approved else Phase.PROPOSING)


def test_four_rejections_on_a_mission_do_not_end_the_game():
    state = new_table(5)
    for _ in range(4):
        state, _ = reject(state)
    assert not state.is_over
    assert state.phase is Phase.PROPOSING
    view = public_view(state)
    assert view.rejections == 4
    assert view.proposal_number == 5
    assert state.leader == 4

    # The fifth team may still be approved and go on the mission.
    state, _ = propose(state, (0, 1))
    state, _ = vote(state, everyone(state))
    assert state.phase is Phase.MISSION


def test_fifth_rejected_team_on_one_mission_wins_for_the_spies():
    state = new_table(5)
    for _ in range(4):
        state, _ = reject(state)
    state, events = reject(state)
    assert state.is_over
    assert state.winner is Side.SPIES
    assert state.end_reason is EndReason.FIVE_REJECTIONS
    assert of_type(events, VotesRevealed)[0].rejections == 5
    assert events[-1] == GameOver(winner=Side.SPIES, reason=EndReason.FIVE_REJECTIONS, spies=(3, 4))
    assert not of_type(events, LeaderChanged)
    assert_refused(state, ProposeTeam(seat=state.leader, team=(0, 1)), Reason.GAME_OVER)


def test_rejections_count_per_mission_not_across_missions():
    state = new_table(5)
    for _ in range(4):
        state, _ = reject(state)
    state, _ = run_mission(state)
    for _ in range(4):
        state, _ = reject(state)
    assert not state.is_over
    assert public_view(state).rejections == 4


# ----------------------------------------------------------------------------- the mission


def test_resistance_member_cannot_play_fail():
    state, _ = propose(new_table(5), (0, 3))
    state, _ = vote(state, everyone(state))
    assert_refused(state, PlayCard(seat=0, fail=True), Reason.RESISTANCE_CANNOT_FAIL)
    state, events = act(state, PlayCard(seat=0, fail=False))
    assert events == (CardPlayed(seat=0),)


def test_spy_may_play_success_or_fail():
    state, _ = propose(new_table(5), (0, 3))
    on_mission, _ = vote(state, everyone(state))
    succeeded, _ = play_cards(on_mission, fails=0)
    failed, _ = play_cards(on_mission, fails=1)
    assert succeeded.mission_track()[0] is True
    assert failed.mission_track()[0] is False


def test_only_team_members_play_and_only_once():
    state, _ = propose(new_table(5), (0, 3))
    state, _ = vote(state, everyone(state))
    assert_refused(state, PlayCard(seat=1, fail=False), Reason.NOT_ON_TEAM)
    state, _ = act(state, PlayCard(seat=3, fail=True))
    assert_refused(state, PlayCard(seat=3, fail=False), Reason.ALREADY_PLAYED)


def test_mission_result_reveals_only_how_many_fails():
    # Seats 2, 3 and 4 are spies; two of them are on the team and exactly one plays Fail.
    state = new_table(7, spies=(2, 3, 4))
    state, _ = propose(state, (2, 3))
    state, _ = vote(state, everyone(state))
    outcomes = []
    for failing_spy in (2, 3):
        after = state
        events: list = []
        for seat in (2, 3):
            after, new_events = act(after, PlayCard(seat=seat, fail=seat == failing_spy))
            events.extend(new_events)
        outcomes.append((events, public_view(after)))

    (events_a, view_a), (events_b, view_b) = outcomes
    assert events_a == events_b  # who played the Fail cannot be told apart
    assert view_a == view_b
    assert of_type(events_a, MissionCompleted) == [
        MissionCompleted(mission=1, team=(2, 3), fails=1, fails_required=1, succeeded=False)
    ]
    assert [f.name for f in dataclasses.fields(CardPlayed)] == ["seat"]


def test_cards_stay_hidden_until_the_team_has_played():
    state, _ = propose(new_table(5), (0, 3))
    state, _ = vote(state, everyone(state))
    state, events = act(state, PlayCard(seat=3, fail=True))
    assert events == (CardPlayed(seat=3),)
    view = public_view(state)
    assert view.played_seats == (3,)
    assert view.mission_track[0] is None
    assert view.rounds[-1].fails is None
    assert seat_view(state, 3).own_card_is_fail is True
    assert seat_view(state, 0).own_card_is_fail is None


def test_one_fail_card_sinks_an_ordinary_mission():
    state, events = run_mission(new_table(5), fails=1)
    assert of_type(events, MissionCompleted)[0].succeeded is False
    assert state.mission_track() == (False, None, None, None, None)


@pytest.mark.parametrize(
    ("players", "fails", "succeeded"),
    [
        (5, 0, True),
        (5, 1, False),
        (5, 2, False),
        (6, 0, True),
        (6, 1, False),
        (6, 2, False),
        (7, 0, True),
        (7, 1, True),
        (7, 2, False),
        (8, 0, True),
        (8, 1, True),
        (8, 2, False),
        (9, 0, True),
        (9, 1, True),
        (9, 2, False),
        (10, 0, True),
        (10, 1, True),
        (10, 2, False),
    ],
)
def test_fourth_mission_needs_two_fails_with_seven_or_more_players(players, fails, succeeded):
    state, _ = play_results(new_table(players), "SFF")  # one success, two failures: the game goes on either way
    assert state.open_missions() == (4,)
    state, events = run_mission(state, fails=fails)
    completed = of_type(events, MissionCompleted)[0]
    assert completed.mission == 4
    assert completed.fails == fails
    assert completed.fails_required == (2 if players >= 7 else 1)
    assert completed.succeeded is succeeded
    assert state.mission_track()[3] is succeeded


@pytest.mark.parametrize("results", ["SSS", "SFSS", "FSFSS", "FFSSS"])
def test_three_successes_win_for_the_resistance_at_once(results):
    state, events = play_results(new_table(5), results)
    assert state.is_over
    assert state.winner is Side.RESISTANCE
    assert state.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert events[-1] == GameOver(winner=Side.RESISTANCE, reason=EndReason.THREE_SUCCESSFUL_MISSIONS, spies=(3, 4))
    assert isinstance(events[-2], MissionCompleted)  # nothing happens after the third success
    assert public_view(state).revealed_spies == (3, 4)
    assert len(state.played_rounds) == len(results)


@pytest.mark.parametrize("results", ["FFF", "FSFF", "SFSFF", "SSFFF"])
def test_three_failures_win_for_the_spies_at_once(results):
    state, events = play_results(new_table(5), results)
    assert state.is_over
    assert state.winner is Side.SPIES
    assert state.end_reason is EndReason.THREE_FAILED_MISSIONS
    assert events[-1] == GameOver(winner=Side.SPIES, reason=EndReason.THREE_FAILED_MISSIONS, spies=(3, 4))
    assert isinstance(events[-2], MissionCompleted)


def test_two_successes_and_two_failures_do_not_end_the_game():
    state, _ = play_results(new_table(5), "SFSF")
    assert not state.is_over
    assert state.open_missions() == (5,)
    assert public_view(state).revealed_spies is None


@pytest.mark.parametrize("results", ["SSS", "FFF"])
def test_no_action_is_accepted_after_the_game_ends(results):
    state, _ = play_results(new_table(5), results)
    for action in (
        ProposeTeam(seat=state.leader, team=(0, 1)),
        ProposeTeam(seat=state.leader, team=(0, 1, 2)),
        CastVote(seat=0, approve=True),
        PlayCard(seat=0, fail=False),
    ):
        assert_refused(state, action, Reason.GAME_OVER)


# ----------------------------------------------------------------------------- what each seat knows


@pytest.mark.parametrize("players", range(5, 11))
def test_spies_know_each_other(players):
    state = new_table(players)
    for seat in range(players):
        view = seat_view(state, seat)
        if seat in state.spies:
            assert view.role is Role.SPY
            assert view.known_spies == state.spies
        else:
            assert view.role is Role.RESISTANCE
            assert view.known_spies == ()


@pytest.mark.parametrize("players", range(5, 11))
def test_blind_spies_know_only_themselves(players):
    state = new_table(players, blind_spies=True)
    for seat in range(players):
        view = seat_view(state, seat)
        if seat in state.spies:
            assert view.role is Role.SPY
            assert view.known_spies == (seat,)
        else:
            assert view.role is Role.RESISTANCE
            assert view.known_spies == ()


def test_public_view_keeps_the_spies_secret_until_the_end():
    state = new_table(5)
    assert public_view(state).revealed_spies is None
    assert "spies" not in {f.name for f in dataclasses.fields(public_view(state))}


def test_seat_view_of_a_missing_seat_is_refused():
    with pytest.raises(ValueError):
        seat_view(new_table(5), 5)


# ----------------------------------------------------------------------------- missions in order (core rules)


def test_without_targeting_missions_go_in_order():
    state = new_table(5)
    assert state.open_missions() == (1,)
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1), mission=2), Reason.MISSION_NOT_ALLOWED)
    _, events = propose(state, (0, 1), mission=1)
    assert events[0].mission == 1
    state, _ = run_mission(state)
    assert state.open_missions() == (2,)
    state, _ = run_mission(state, fails=1)
    assert state.open_missions() == (3,)


# ----------------------------------------------------------------------------- Targeting variant


def test_targeting_leader_must_name_the_mission():
    state = new_table(5, targeting=True)
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1)), Reason.MISSION_REQUIRED)


@pytest.mark.parametrize("mission", [1, 2, 3, 4])
def test_targeting_leader_may_start_with_any_of_missions_1_to_4(mission):
    state = new_table(6, targeting=True)
    size = rules.team_size(6, mission)
    state, events = propose(state, range(size), mission=mission)
    assert events[0].mission == mission
    assert state.current_round.mission == mission
    assert state.current_round.team_size == size


def test_targeting_team_size_follows_the_chosen_mission():
    state = new_table(6, targeting=True)
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1), mission=3), Reason.WRONG_TEAM_SIZE)
    state, _ = propose(state, (0, 1, 2, 3), mission=3)
    assert state.phase is Phase.VOTING


@pytest.mark.parametrize("mission", [0, 6, -1])
def test_targeting_unknown_mission(mission):
    state = new_table(5, targeting=True)
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1), mission=mission), Reason.UNKNOWN_MISSION)


def test_targeting_mission_5_is_locked_until_two_successes():
    state = new_table(5, targeting=True)
    assert 5 not in state.open_missions()
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1, 2), mission=5), Reason.MISSION_5_LOCKED)

    state, _ = play_results(state, "S", missions=[2])
    assert_refused(state, ProposeTeam(seat=state.leader, team=(0, 1, 2), mission=5), Reason.MISSION_5_LOCKED)

    state, _ = play_results(state, "F", missions=[1])
    assert_refused(state, ProposeTeam(seat=state.leader, team=(0, 1, 2), mission=5), Reason.MISSION_5_LOCKED)

    state, _ = play_results(state, "S", missions=[4])
    assert 5 in state.open_missions()
    state, events = propose(state, (0, 1, 2), mission=5)
    assert events[0].mission == 5


def test_targeting_two_failures_do_not_open_mission_5():
    state, _ = play_results(new_table(5, targeting=True), "FF", missions=[1, 2])
    assert state.open_missions() == (3, 4)
    assert_refused(state, ProposeTeam(seat=state.leader, team=(0, 1, 2), mission=5), Reason.MISSION_5_LOCKED)


@pytest.mark.parametrize("result", ["S", "F"])
def test_targeting_each_mission_is_attempted_once_whatever_its_result(result):
    state, _ = play_results(new_table(5, targeting=True), result, missions=[3])
    assert 3 not in state.open_missions()
    assert_refused(state, ProposeTeam(seat=state.leader, team=(0, 1), mission=3), Reason.MISSION_ALREADY_ATTEMPTED)


def test_targeting_every_leader_chooses_the_mission_after_a_rejection():
    state = new_table(5, targeting=True)
    state, _ = reject(state, (0, 1), mission=3)
    # The rejected mission stays open, and so does every other mission not yet played.
    assert state.open_missions() == (1, 2, 3, 4)
    state, events = propose(state, (0, 1, 2), mission=2)
    assert events[0] == TeamProposed(mission=2, proposal_number=2, leader=1, team=(0, 1, 2))
    assert (state.rounds[-1].mission, state.rounds[-1].team_size) == (2, 3)
    assert [p.mission for p in state.rounds[-1].proposals] == [3, 2]
    state, _ = vote(state, set())
    # The next leader must name a mission too: nothing is carried over from the round.
    assert_refused(state, ProposeTeam(seat=state.leader, team=(2, 3)), Reason.MISSION_REQUIRED)
    state, _ = propose(state, (2, 3), mission=1)
    state, _ = vote(state, everyone(state))
    state, events = play_cards(state)
    completed = of_type(events, MissionCompleted)[0]
    assert (completed.mission, completed.team) == (1, (2, 3))
    assert state.mission_track() == (True, None, None, None, None)


def test_targeting_a_round_takes_the_two_fail_rule_of_its_latest_proposal():
    state = new_table(7, targeting=True)
    state, _ = reject(state, (0, 1, 2), mission=3)
    state, _ = propose(state, (0, 1, 2, 3), mission=4)
    assert (state.rounds[-1].mission, state.rounds[-1].fails_required) == (4, 2)


def test_targeting_missions_can_be_played_out_of_order():
    state, _ = play_results(new_table(5, targeting=True), "SFS", missions=[4, 1, 3])
    assert state.mission_track() == (False, None, True, True, None)
    assert state.is_over is False
    assert state.open_missions() == (2, 5)
    state, _ = play_results(state, "S", missions=[5])
    assert state.winner is Side.RESISTANCE


# ----------------------------------------------------------------------------- every refusal


class Shout:
    """Not an action of the game, though it names a seat."""

    def __init__(self, seat: int) -> None:
        self.seat = seat


def _game_over():
    state, _ = play_results(new_table(5), "SSS")
    return state, ProposeTeam(seat=state.leader, team=(0, 1))


def _voting():
    state, _ = propose(new_table(5), (0, 1))
    return state


def _on_mission():
    return vote(_voting(), {0, 1, 2})[0]


def _targeting_after_mission_2():
    state, _ = play_results(new_table(5, targeting=True), "F", missions=[2])
    assert state.leader == 1
    return state


def _targeting_round_3():
    return reject(new_table(5, targeting=True), (0, 1), mission=3)[0]


REFUSALS: dict[str, tuple[Callable[[], tuple[GameState, object]], Reason]] = {
    "game over": (_game_over, Reason.GAME_OVER),
    "vote while proposing": (lambda: (new_table(5), CastVote(seat=1, approve=True)), Reason.WRONG_PHASE),
    "play while proposing": (lambda: (new_table(5), PlayCard(seat=0, fail=False)), Reason.WRONG_PHASE),
    "propose while voting": (lambda: (_voting(), ProposeTeam(seat=0, team=(0, 2))), Reason.WRONG_PHASE),
    "play while voting": (lambda: (_voting(), PlayCard(seat=0, fail=False)), Reason.WRONG_PHASE),
    "vote on a mission": (lambda: (_on_mission(), CastVote(seat=2, approve=True)), Reason.WRONG_PHASE),
    "propose on a mission": (lambda: (_on_mission(), ProposeTeam(seat=0, team=(0, 2))), Reason.WRONG_PHASE),
    "seat -1 proposes": (lambda: (new_table(5), ProposeTeam(seat=-1, team=(0, 1))), Reason.NOT_A_PLAYER),
    "seat 5 votes": (lambda: (_voting(), CastVote(seat=5, approve=True)), Reason.NOT_A_PLAYER),
    "seat 7 plays": (lambda: (_on_mission(), PlayCard(seat=7, fail=False)), Reason.NOT_A_PLAYER),
    "not the leader": (lambda: (new_table(5), ProposeTeam(seat=1, team=(0, 1))), Reason.NOT_THE_LEADER),
    "team too small": (lambda: (new_table(5), ProposeTeam(seat=0, team=(0,))), Reason.WRONG_TEAM_SIZE),
    "team too big": (lambda: (new_table(5), ProposeTeam(seat=0, team=(0, 1, 2))), Reason.WRONG_TEAM_SIZE),
    "duplicate member": (lambda: (new_table(5), ProposeTeam(seat=0, team=(2, 2))), Reason.DUPLICATE_TEAM_MEMBER),
    "unknown member": (lambda: (new_table(5), ProposeTeam(seat=0, team=(0, 5))), Reason.UNKNOWN_TEAM_MEMBER),
    "mission required": (
        lambda: (new_table(5, targeting=True), ProposeTeam(seat=0, team=(0, 1))),
        Reason.MISSION_REQUIRED,
    ),
    "mission out of order": (
        lambda: (new_table(5), ProposeTeam(seat=0, team=(0, 1), mission=3)),
        Reason.MISSION_NOT_ALLOWED,
    ),
    "mission required mid-round": (
        lambda: (_targeting_round_3(), ProposeTeam(seat=1, team=(0, 1, 2))),
        Reason.MISSION_REQUIRED,
    ),
    "mission attempted": (
        lambda: (_targeting_after_mission_2(), ProposeTeam(seat=1, team=(0, 1, 2), mission=2)),
        Reason.MISSION_ALREADY_ATTEMPTED,
    ),
    "mission 5 locked": (
        lambda: (new_table(5, targeting=True), ProposeTeam(seat=0, team=(0, 1, 2), mission=5)),
        Reason.MISSION_5_LOCKED,
    ),
    "unknown mission": (
        lambda: (new_table(5, targeting=True), ProposeTeam(seat=0, team=(0, 1), mission=6)),
        Reason.UNKNOWN_MISSION,
    ),
    "mission true for mission 1": (
        lambda: (new_table(5), ProposeTeam(seat=0, team=(0, 1), mission=True)),
        Reason.UNKNOWN_MISSION,
    ),
    "already voted": (
        lambda: (act(_voting(), CastVote(seat=3, approve=False))[0], CastVote(seat=3, approve=True)),
        Reason.ALREADY_VOTED,
    ),
    "not on team": (lambda: (_on_mission(), PlayCard(seat=2, fail=False)), Reason.NOT_ON_TEAM),
    "already played": (
        lambda: (act(_on_mission(), PlayCard(seat=1, fail=False))[0], PlayCard(seat=1, fail=False)),
        Reason.ALREADY_PLAYED,
    ),
    "resistance fails": (lambda: (_on_mission(), PlayCard(seat=0, fail=True)), Reason.RESISTANCE_CANNOT_FAIL),
    "vote 'no'": (lambda: (_voting(), CastVote(seat=1, approve="no")), Reason.NOT_A_CHOICE),
    "vote 1": (lambda: (_voting(), CastVote(seat=1, approve=1)), Reason.NOT_A_CHOICE),
    "card 'false'": (lambda: (_on_mission(), PlayCard(seat=1, fail="false")), Reason.NOT_A_CHOICE),
    "card None": (lambda: (_on_mission(), PlayCard(seat=1, fail=None)), Reason.NOT_A_CHOICE),
    "filled votes 'yes'": (lambda: (_voting(), VotesTimedOut(approve="yes")), Reason.NOT_A_CHOICE),
    "drawn team too big": (lambda: (new_table(5), LeaderTimedOut(team=(0, 1, 2))), Reason.WRONG_TEAM_SIZE),
    "drawn for a played mission": (
        lambda: (_targeting_after_mission_2(), LeaderTimedOut(team=(0, 1, 2), mission=2)),
        Reason.MISSION_ALREADY_ATTEMPTED,
    ),
    "unknown action": (lambda: (new_table(5), Shout(seat=0)), Reason.UNKNOWN_ACTION),
}


@pytest.mark.parametrize("situation", list(REFUSALS))
def test_refused_action_names_its_reason_and_leaves_the_state_alone(situation):
    build, reason = REFUSALS[situation]
    state, action = build()
    assert_refused(state, action, reason)


def test_every_reason_has_a_refusal_test():
    # The Plot cards' refusals are tested beside the cards, in tests/test_engine_plot_rules.py.
    assert {reason for _, reason in (REFUSALS | PLOT_REFUSALS).values()} == set(Reason)


def test_illegal_action_carries_a_readable_message():
    with pytest.raises(IllegalAction, match="not_the_leader"):
        apply(new_table(5), ProposeTeam(seat=1, team=(0, 1)))


def test_every_accepted_action_moves_the_version_by_one():
    for seed in range(20):
        rng = random.Random(seed)
        start = new_game(rng.randint(5, 10), rng, Variants(targeting=seed % 3 == 0, blind_spies=seed % 2 == 0))
        steps = list(play_randomly(start, rng))
        for before, _, after, _ in steps:
            assert after.version == before.version + 1
        assert steps[-1][2].version == len(steps)
        assert public_view(steps[-1][2]).version == len(steps)


def test_apply_does_not_change_the_state_it_is_given():
    state = new_table(5)
    before = state_to_dict(state)
    after, _ = apply(state, ProposeTeam(seat=0, team=(0, 1)))
    assert state_to_dict(state) == before
    assert state.phase is Phase.PROPOSING
    assert after.phase is Phase.VOTING


def test_random_games_end_by_the_rules():
    for seed in range(40):
        rng = random.Random(seed)
        start = new_game(rng.randint(5, 10), rng, Variants(targeting=seed % 2 == 1))
        final = list(play_randomly(start, rng))[-1][2]
        track = final.mission_track()
        if final.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS:
            assert (final.winner, track.count(True)) == (Side.RESISTANCE, 3)
        elif final.end_reason is EndReason.THREE_FAILED_MISSIONS:
            assert (final.winner, track.count(False)) == (Side.SPIES, 3)
        else:
            assert final.end_reason is EndReason.FIVE_REJECTIONS
            assert final.winner is Side.SPIES
            assert final.rounds[-1].rejections == 5
        assert track.count(True) <= 3 and track.count(False) <= 3


# ----------------------------------------------------------------------------- saving and loading a game


def _states_worth_saving() -> dict[str, GameState]:
    start = new_table(7, leader=3, targeting=True, blind_spies=True)
    voting, _ = propose(start, (0, 1, 2), mission=2)
    half_voted, _ = act(voting, CastVote(seat=4, approve=False))
    on_mission, _ = vote(voting, {0, 1, 2, 3})
    half_played, _ = act(on_mission, PlayCard(seat=0, fail=False))
    over, _ = play_results(new_table(5), "SFFF")
    rejected_out = new_table(6)
    for _ in range(5):
        rejected_out, _ = reject(rejected_out)
    return {
        "start": start,
        "voting": half_voted,
        "on mission": half_played,
        "after a mission": play_cards(on_mission)[0],
        "over": over,
        "five rejections": rejected_out,
    }


@pytest.mark.parametrize("moment", ["start", "voting", "on mission", "after a mission", "over", "five rejections"])
def test_state_round_trips_through_json(moment):
    state = _states_worth_saving()[moment]
    data = json.loads(json.dumps(state_to_dict(state)))
    assert data["schema"] == 2
    loaded = state_from_dict(data)
    assert loaded == state
    assert state_to_dict(loaded) == state_to_dict(state)


def test_loaded_game_plays_on_like_the_original():
    state, _ = propose(new_table(5), (0, 3))
    loaded = state_from_dict(json.loads(json.dumps(state_to_dict(state))))
    original_after, original_events = vote(state, {0, 1, 2})
    loaded_after, loaded_events = vote(loaded, {0, 1, 2})
    assert loaded_after == original_after
    assert loaded_events == original_events


@pytest.mark.parametrize("schema", [0, 3, "1", None])
def test_unknown_schema_version_is_refused_with_a_clear_message(schema):
    data = state_to_dict(new_table(5))
    data["schema"] = schema
    with pytest.raises(StateFormatError, match=r"schema") as refusal:
        state_from_dict(data)
    assert repr(schema) in str(refusal.value)


def test_missing_schema_version_is_refused():
    data = state_to_dict(new_table(5))
    del data["schema"]
    with pytest.raises(StateFormatError, match=r"schema"):
        state_from_dict(data)


def _broken(change: Callable[[dict], None]) -> dict:
    data = state_to_dict(propose(new_table(5), (0, 1))[0])
    change(data)
    return data


MALFORMED_STATES = {
    "not an object": lambda: [1, 2, 3],
    "a string": lambda: "game",
    "missing players": lambda: _broken(lambda d: d.pop("players")),
    "missing rounds": lambda: _broken(lambda d: d.pop("rounds")),
    "players not a number": lambda: _broken(lambda d: d.update(players="seven")),
    "unknown phase": lambda: _broken(lambda d: d.update(phase="dancing")),
    "spies not a list": lambda: _broken(lambda d: d.update(spies=None)),
    "variants not an object": lambda: _broken(lambda d: d.update(variants=[True, False])),
    "proposal without team": lambda: _broken(lambda d: d["rounds"][0]["proposals"][0].pop("team")),
    "round not an object": lambda: _broken(lambda d: d.update(rounds=[7])),
    "pending card not a pair": lambda: _broken(lambda d: d.update(pending_cards=[[1]])),
    "unknown winner": lambda: _broken(lambda d: d.update(winner="nobody")),
    "unknown end reason": lambda: _broken(lambda d: d.update(end_reason="boredom")),
    "schema given as true": lambda: _broken(lambda d: d.update(schema=True)),
    "too few players": lambda: _broken(lambda d: d.update(players=3)),
    "players as a string of digits": lambda: _broken(lambda d: d.update(players="7")),
    "fractional version": lambda: _broken(lambda d: d.update(version=1.5)),
    "votes of the wrong length": lambda: _broken(lambda d: d.update(pending_votes=[None, None])),
    "leader off the table": lambda: _broken(lambda d: d.update(leader=12)),
}

# States of the right shape that break a rule of the game: loading refuses each of them.
# Each starts from a real state of the named moment and changes one thing.


def _moment(name: str) -> dict:
    return state_to_dict(_states_worth_saving()[name])


def _changed(name: str, change: Callable[[dict], None]) -> Callable[[], dict]:
    def build() -> dict:
        data = _moment(name)
        change(data)
        return data

    return build


def _seven_players_two_fails_on_mission_1(d: dict) -> None:
    d["rounds"][0]["fails_required"] = 2


def _three_failures_and_play_goes_on(d: dict) -> None:
    d.update(
        phase="proposing", winner=None, end_reason=None, leader=(d["rounds"][-1]["proposals"][-1]["leader"] + 1) % 5
    )


def _resistance_fail_waiting(d: dict) -> None:
    d["pending_cards"] = [[0, True]]  # seat 0 is in the Resistance


RULE_BREAKING_STATES = {
    "duplicate spy seats": _changed("start", lambda d: d.update(spies=[5, 5, 6])),
    "spies out of order": _changed("start", lambda d: d.update(spies=[6, 5, 4])),
    "over without a winner": _changed("start", lambda d: d.update(phase="over")),
    "winner while playing": _changed("start", lambda d: d.update(winner="spies", end_reason="five_rejections")),
    "7 players, mission 1 needs 2 Fails": _changed("on mission", _seven_players_two_fails_on_mission_1),
    "three failed missions, play goes on": _changed("over", _three_failures_and_play_goes_on),
    "pending Fail from a Resistance seat": _changed("on mission", _resistance_fail_waiting),
    "more Fails than spies on the team": _changed("after a mission", lambda d: d["rounds"][0].update(fails=2)),
    "team of the wrong size": _changed("voting", lambda d: d["rounds"][0]["proposals"][0].update(team=[0, 1])),
    "leader out of turn": _changed("five rejections", lambda d: d["rounds"][0]["proposals"][2].update(leader=0)),
    "five rejections, play goes on": _changed(
        "five rejections", lambda d: d.update(phase="proposing", winner=None, end_reason=None)
    ),
    "approved proposal not the last": _changed(
        "five rejections", lambda d: d["rounds"][0]["proposals"][1].update(votes=[True] * 6)
    ),
    "wrong winner": _changed("over", lambda d: d.update(winner="resistance")),
    "votes pending outside voting": _changed("start", lambda d: d.update(pending_votes=[None] * 7)),
    "cards from a seat off the team": _changed("on mission", lambda d: d.update(pending_cards=[[6, False]])),
    "mission 5 before two successes (Targeting)": _changed(
        "voting", lambda d: d["rounds"][0]["proposals"][0].update(mission=5, team=[0, 1, 2, 3])
    ),
    "round mission not its proposal's": _changed("voting", lambda d: d["rounds"][0].update(mission=3)),
    "missing card filled for a seat off the team": _changed(
        "after a mission", lambda d: d["rounds"][0].update(auto_cards=[6])
    ),
    "leader card not passed on": _changed("after a mission", lambda d: d.update(leader=3)),
}


@pytest.mark.parametrize("case", list(RULE_BREAKING_STATES))
def test_a_state_that_breaks_a_rule_is_refused_with_a_clear_message(case):
    with pytest.raises(StateFormatError) as refusal:
        state_from_dict(RULE_BREAKING_STATES[case]())
    assert str(refusal.value)


def test_a_schema_1_state_is_read_with_a_missed_turn_as_a_drawn_team():
    """Games saved before this version go on: a missed turn becomes a drawn team whose votes were filled in."""
    data = {
        "schema": 1,
        "version": 2,
        "players": 5,
        "spies": [3, 4],
        "variants": {"targeting": False, "blind_spies": False},
        "leader": 1,
        "phase": "voting",
        "rounds": [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [
                    {"leader": 0, "team": [0, 1], "votes": [False] * 5, "timed_out": True},
                    {"leader": 1, "team": [1, 2], "votes": None, "timed_out": False},
                ],
                "fails": None,
            }
        ],
        "pending_votes": [None] * 5,
        "pending_cards": [],
        "winner": None,
        "end_reason": None,
    }
    state = state_from_dict(data)
    missed, open_proposal = state.rounds[0].proposals
    assert (missed.mission, missed.auto_team, missed.auto_votes) == (1, True, (0, 1, 2, 3, 4))
    assert (open_proposal.mission, open_proposal.auto_team, open_proposal.auto_votes) == (1, False, ())
    assert state_from_dict(state_to_dict(state)) == state


@pytest.mark.parametrize("case", list(MALFORMED_STATES))
def test_malformed_state_is_refused(case):
    with pytest.raises(StateFormatError):
        state_from_dict(MALFORMED_STATES[case]())


@pytest.mark.parametrize("not_an_action", [object(), "propose", None, 3])
def test_something_that_is_not_an_action_is_refused(not_an_action):
    state = new_table(7)
    assert_refused(state, not_an_action, Reason.UNKNOWN_ACTION)


@pytest.mark.parametrize("seat", ["1", 1.0, True, None])
def test_a_seat_that_is_not_a_seat_number_is_refused(seat):
    state = new_table(7)
    assert_refused(state, ProposeTeam(seat, (0, 1)), Reason.NOT_A_PLAYER)


@pytest.mark.parametrize("member", ["1", 1.0, True, None])
def test_a_team_member_that_is_not_a_seat_number_is_refused(member):
    state = new_table(7)
    assert_refused(state, ProposeTeam(0, (0, member)), Reason.UNKNOWN_TEAM_MEMBER)
    assert_refused(state, LeaderTimedOut((0, member)), Reason.UNKNOWN_TEAM_MEMBER)


@pytest.mark.parametrize("targeting", [False, True])
@pytest.mark.parametrize("mission", [True, False, 1.0, "1", [1]])
def test_a_mission_that_is_not_a_mission_number_is_refused(mission, targeting):
    """Mission 1 is named 1: true and 1.0 equal 1 in Python, and a table without Targeting took
    them for the mission it plays next."""
    state = new_table(5, targeting=targeting)
    assert_refused(state, ProposeTeam(seat=0, team=(0, 1), mission=mission), Reason.UNKNOWN_MISSION)
    assert_refused(state, LeaderTimedOut(team=(0, 1), mission=mission), Reason.UNKNOWN_MISSION)
    state, _ = apply(state, ProposeTeam(seat=0, team=(0, 1), mission=1))
    assert state.current_round.mission == 1


# ----------------------------------------------------------------------------- deadlines


def test_a_leader_who_lets_the_time_run_out_gets_a_drawn_team_that_the_table_votes_on():
    state = new_table(5, leader=3)
    state, events = act(state, LeaderTimedOut(team=(1, 3)))
    assert events == (TeamProposed(mission=1, proposal_number=1, leader=3, team=(1, 3), drawn=True),)
    assert state.phase is Phase.VOTING and state.leader == 3
    drawn = state.rounds[-1].proposals[-1]
    assert (drawn.leader, drawn.team, drawn.votes, drawn.auto_team) == (3, (1, 3), None, True)
    # The table's vote decides, as for any team: here it is approved and the mission is played.
    state, _ = vote(state, everyone(state))
    assert state.phase is Phase.MISSION and state.rounds[-1].rejections == 0


def test_a_missed_fifth_turn_does_not_end_the_game():
    """A spy leader cannot win by letting the time run out after four rejections."""
    state = new_table(5, leader=3)
    for _ in range(4):
        state, _ = reject(state)
    state, _ = act(state, draw_team(state, random.Random(1)))
    assert not state.is_over and state.phase is Phase.VOTING
    state, _ = vote(state, everyone(state))
    assert state.phase is Phase.MISSION


def test_a_drawn_team_that_is_rejected_counts_like_any_rejected_team():
    state = new_table(5)
    for _ in range(4):
        state, _ = reject(state)
    state, _ = act(state, draw_team(state, random.Random(2)))
    state, events = vote(state, set())
    assert state.is_over and state.end_reason is EndReason.FIVE_REJECTIONS
    assert of_type(events, GameOver)


@pytest.mark.parametrize("seed", range(20))
def test_the_drawn_team_is_a_legal_team_for_an_open_mission(seed):
    rng = random.Random(seed)
    players = rng.randint(5, 10)
    state, _ = play_results(new_table(players, targeting=True), "SF", missions=[2, 4])
    action = draw_team(state, rng)
    assert action.mission in state.open_missions()
    assert len(action.team) == rules.team_size(players, action.mission) == len(set(action.team))
    # The leader's own pick of mission is kept when it is open.
    assert draw_team(state, rng, preferred_mission=3).mission == 3
    assert draw_team(state, rng, preferred_mission=2).mission in state.open_missions()


def test_there_is_nothing_to_draw_outside_a_leaders_turn():
    state, _ = propose(new_table(5), (0, 1))
    with pytest.raises(ValueError):
        draw_team(state, random.Random(0))


@pytest.mark.parametrize("approve", [True, False])
def test_missing_votes_are_filled_in_at_the_deadline(approve):
    state = new_table(5)
    state, _ = propose(state, (0, 1))
    state, _ = act(state, CastVote(seat=0, approve=not approve))
    state, events = act(state, VotesTimedOut(approve=approve))
    assert events[0] == VotesFilled(seats=(1, 2, 3, 4), approve=approve)
    revealed = of_type(events, VotesRevealed)[0]
    assert revealed.votes == (not approve,) + (approve,) * 4
    assert revealed.approved is approve
    # The record says whose votes the deadline filled in.
    assert state.rounds[-1].proposals[-1].auto_votes == (1, 2, 3, 4)


def test_cards_missing_at_the_deadline_count_as_success():
    state = new_table(5, spies=(3, 4))
    state, _ = propose(state, (0, 3))
    state, _ = vote(state, everyone(state))
    state, _ = act(state, PlayCard(seat=3, fail=True))
    state, events = act(state, CardsTimedOut())
    assert events[0] == CardsFilled(seats=(0,))
    completed = of_type(events, MissionCompleted)[0]
    assert (completed.fails, completed.succeeded) == (1, False)
    assert (state.rounds[-1].auto_cards, state.rounds[-1].card_players) == ((0,), (3,))


@pytest.mark.parametrize(
    ("phase_setup", "deadline"),
    [
        ("proposing", VotesTimedOut(approve=True)),
        ("proposing", CardsTimedOut()),
        ("voting", LeaderTimedOut(team=(0, 1))),
        ("voting", CardsTimedOut()),
        ("mission", LeaderTimedOut(team=(0, 1))),
        ("mission", VotesTimedOut(approve=False)),
    ],
)
def test_a_deadline_of_another_phase_is_refused(phase_setup, deadline):
    state = new_table(5)
    if phase_setup in ("voting", "mission"):
        state, _ = propose(state, (0, 1))
    if phase_setup == "mission":
        state, _ = vote(state, everyone(state))
    assert_refused(state, deadline, Reason.WRONG_PHASE)
