"""Property tests for play outside the happy path: missed deadlines, Targeting by every leader,
and loading stored states, which are untrusted input."""

from __future__ import annotations

import json
import random

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine import (
    CardsTimedOut,
    CastVote,
    GameState,
    IllegalAction,
    LeaderTimedOut,
    Phase,
    PlayCard,
    ProposeTeam,
    StateFormatError,
    VotesTimedOut,
    apply,
    draw_team,
    export_record,
    new_game,
    parse_record,
    replay,
    rules,
    state_from_dict,
    state_to_dict,
)
from engine.simulate import random_action
from tests.strategies import played, start, tables


def reject_once(state: GameState, rng: random.Random) -> GameState:
    """The leader proposes a random legal team and every seat rejects it."""
    mission = rng.choice(state.open_missions())
    team = tuple(rng.sample(range(state.players), rules.team_size(state.players, mission)))
    state, _ = apply(state, ProposeTeam(state.leader, team, mission if state.variants.targeting else None))
    for seat in range(state.players):
        state, _ = apply(state, CastVote(seat, False))
    return state


# ---------------------------------------------------------------- a missed leader turn


@settings(max_examples=200, deadline=None)
@given(tables, st.integers(0, 4), st.integers(0, 40))
def test_a_missed_leader_deadline_never_ends_the_game(table, rejections_before, random_steps):
    """At any table size, any point of the game and any proposal number, the leader's deadline
    puts a drawn team to the vote; only the table's vote can make it the fifth rejection."""
    state, rng = start(table)
    for _ in range(random_steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, approve_rate=0.8))
    while not state.is_over and state.phase is not Phase.PROPOSING:
        state, _ = apply(state, random_action(state, rng, approve_rate=0.8))
    assume(not state.is_over)
    for _ in range(rejections_before):
        if state.current_round is not None and state.current_round.rejections >= 4:
            break
        state = reject_once(state, rng)
    proposal_number = state.proposal_number
    drawn = draw_team(state, rng)
    after, events = apply(state, drawn)
    assert not after.is_over
    assert after.phase is Phase.VOTING and after.leader == state.leader
    assert after.current_round.proposals[-1].auto_team
    assert after.proposal_number == proposal_number
    assert events[0].drawn and events[0].team == drawn.team


# ---------------------------------------------------------------- Targeting


@settings(max_examples=200, deadline=None)
@given(tables, st.data())
def test_under_targeting_each_leader_chooses_any_open_mission(table, data):
    table = {**table, "targeting": True}
    state, rng = start(table)
    while not state.is_over:
        if state.phase is Phase.PROPOSING:
            open_missions = state.open_missions()
            played = {r.mission for r in state.played_rounds}
            assert set(open_missions) == {m for m in range(1, 6) if m not in played and (m < 5 or state.successes >= 2)}
            mission = data.draw(st.sampled_from(open_missions))
            team = tuple(rng.sample(range(state.players), rules.team_size(state.players, mission)))
            state, events = apply(state, ProposeTeam(state.leader, team, mission))
            assert events[0].mission == mission
            assert (state.current_round.mission, state.current_round.proposals[-1].mission) == (mission, mission)
            continue
        if state.phase is Phase.VOTING:
            seat = next(s for s, v in enumerate(state.pending_votes) if v is None)
            state, events = apply(state, CastVote(seat, data.draw(st.booleans())))
            continue
        round_before = state.current_round
        state, events = apply(state, random_action(state, rng))
        if state.current_round is not round_before and round_before is not None:
            # The mission played is the one the approved proposal named.
            completed = [e for e in events if type(e).__name__ == "MissionCompleted"]
            if completed:
                assert completed[0].mission == round_before.proposals[-1].mission
    record = export_record(state, "g")
    assert all("mission" in p for m in record["missions"] for p in m["proposals"])
    parsed = parse_record(json.loads(json.dumps(record)))
    assert export_record(replay(parsed, state.spies), "g") == record


# ---------------------------------------------------------------- records of automatic turns


@settings(max_examples=100, deadline=None)
@given(tables)
def test_records_with_automatic_turns_validate_and_replay(table):
    state, rng = start(table)
    while not state.is_over:
        state, _ = apply(state, random_action(state, rng, deadline_rate=0.5))
    record = export_record(state, "g")
    proposals = [p for m in record["missions"] for p in m["proposals"]]
    # Every automatic turn is marked as such, never disguised as a choice.
    drawn = sum(p.auto_team for r in state.rounds for p in r.proposals)
    assert sum(p.get("auto_team", False) for p in proposals) == drawn
    assert all(p.get("auto_votes", []) == list(q.auto_votes) for p, q in zip(proposals, _proposals(state), strict=True))
    parsed = parse_record(json.loads(json.dumps(record)))
    assert export_record(replay(parsed, state.spies, state.variants), "g") == record


def _proposals(state: GameState):
    return [p for r in state.rounds for p in r.proposals]


def test_automatic_turns_do_happen_in_those_records():
    """The property above is not vacuous: random deadlines produce every kind of automatic turn."""
    kinds = set()
    for seed in range(30):
        state, rng = start({"players": 7, "targeting": seed % 2 == 0, "blind_spies": False, "seed": seed})
        while not state.is_over:
            state, _ = apply(state, random_action(state, rng, deadline_rate=0.5))
        for m in export_record(state, "g")["missions"]:
            kinds |= {"auto_cards"} & m.keys()
            for p in m["proposals"]:
                kinds |= {"auto_team", "auto_votes"} & p.keys()
    assert kinds == {"auto_team", "auto_votes", "auto_cards"}


# ---------------------------------------------------------------- strict loading


def reached_by_play(state: GameState) -> bool:
    """Whether the engine reaches exactly `state` (but for its version stamp) by playing the
    choices that the state itself records, from a new game with the same roles.

    This is the test's own oracle, built only on `apply`: a loaded state must be one of these.
    """
    first_leader = state.rounds[0].proposals[0].leader if state.rounds else state.leader
    try:
        game = new_game(state.players, variants=state.variants, spies=state.spies, first_leader=first_leader)
        for index, mission_round in enumerate(state.rounds):
            for proposal in mission_round.proposals:
                mission = proposal.mission if state.variants.targeting else None
                if proposal.auto_team:
                    game, _ = apply(game, LeaderTimedOut(proposal.team, mission))
                else:
                    game, _ = apply(game, ProposeTeam(proposal.leader, proposal.team, mission))
                if proposal.votes is None:
                    for seat, vote in enumerate(state.pending_votes):
                        if vote is not None:
                            game, _ = apply(game, CastVote(seat, vote))
                    continue
                for seat, vote in enumerate(proposal.votes):
                    if seat not in proposal.auto_votes:
                        game, _ = apply(game, CastVote(seat, vote))
                if proposal.auto_votes:
                    game, _ = apply(game, VotesTimedOut(proposal.votes[proposal.auto_votes[0]]))
            if mission_round.played:
                fails_left = mission_round.fails
                for seat in mission_round.card_players:
                    fail = fails_left > 0 and seat in state.spies
                    fails_left -= fail
                    game, _ = apply(game, PlayCard(seat, fail))
                if mission_round.auto_cards:
                    game, _ = apply(game, CardsTimedOut())
            elif index == len(state.rounds) - 1 and state.phase is Phase.MISSION:
                for seat, fail in state.pending_cards:
                    game, _ = apply(game, PlayCard(seat, fail))
    except (IllegalAction, ValueError, TypeError, IndexError):
        return False
    return state_to_dict(game) | {"version": 0} == state_to_dict(state) | {"version": 0}


def _leaves(data, path=()):
    """Every place in a stored state that holds a value, a list or an object."""
    yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _leaves(value, (*path, i))


def _get(data, path):
    for step in path:
        data = data[step]
    return data


def one_value_changed(stored: dict, data, replacements) -> tuple[dict, tuple, str]:
    """A copy of a stored state with one value replaced (drawn from `replacements`), dropped or
    duplicated; the change, and where and how it was made. Changes that change nothing are skipped."""
    path = data.draw(st.sampled_from([p for p in _leaves(stored) if p and p != ("schema",)]))
    mutated = json.loads(json.dumps(stored))
    parent = _get(mutated, path[:-1])
    how = data.draw(st.sampled_from(["replace", "drop", "duplicate"]))
    if how == "replace" or not isinstance(parent, list):
        parent[path[-1]] = data.draw(replacements)
    elif how == "drop":
        del parent[path[-1]]
    else:
        parent.insert(path[-1], parent[path[-1]])
    assume(mutated != stored)
    return mutated, path, how


replacements = st.one_of(
    st.integers(-1, 11),
    st.booleans(),
    st.none(),
    st.sampled_from(["over", "voting", "mission", "proposing", "spies", "resistance", "five_rejections"]),
    st.sampled_from(["lead", "deal", "overturn", "spotlight", "watch"]),  # the Plot cards' steps
    st.lists(st.integers(-1, 10), max_size=6),
)


@settings(max_examples=400, deadline=None)
@given(tables, st.integers(0, 120), st.data())
def test_a_stored_state_is_loaded_only_if_play_could_reach_it(table, steps, data):
    """Mutate one value of a real stored state: loading refuses it unless the engine itself
    could have reached the mutated state, and a state it loads plays on from there."""
    state = played(table, steps, deadline_rate=0.2)
    stored = json.loads(json.dumps(state_to_dict(state)))
    assert state_from_dict(stored) == state  # a valid state round-trips
    mutated, path, how = one_value_changed(stored, data, replacements)
    try:
        loaded = state_from_dict(mutated)
    except StateFormatError:
        return
    assert reached_by_play(loaded), f"loaded a state play cannot reach: {path} {how}"
    if not loaded.is_over:
        apply(loaded, random_action(loaded, random.Random(0)))


@settings(max_examples=100, deadline=None)
@given(tables, st.integers(0, 120))
def test_every_state_reached_by_play_loads(table, steps):
    state, rng = start(table)
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, deadline_rate=0.2))
        assert reached_by_play(state)
        assert state_from_dict(json.loads(json.dumps(state_to_dict(state)))) == state
