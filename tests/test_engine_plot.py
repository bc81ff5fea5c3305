"""Property tests of the Plot cards over random games at every table size (5..10 players)."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    Card,
    CardsDrawn,
    CastVote,
    ChanceTimedOut,
    DealCard,
    DealTimedOut,
    EndReason,
    GameState,
    IllegalAction,
    ImmediateTimedOut,
    OpenUp,
    Overhear,
    Pass,
    Phase,
    PlayCard,
    ProposeTeam,
    Side,
    Spotlight,
    TakeCard,
    UseKind,
    UseNoConfidence,
    UseStrongLeader,
    Variants,
    Watch,
    apply,
    ballot,
    cards_per_mission,
    check_state,
    export_record,
    legal_actions,
    new_game,
    parse_record,
    public_view,
    replay,
    rules,
    seat_view,
    state_from_dict,
    state_to_dict,
    waiting_for,
)
from engine.plot import full_deck
from engine.serialization import _read as read_unchecked
from engine.simulate import play_to_end, random_action

plot_tables = st.fixed_dictionaries(
    {
        "players": st.integers(5, 10),
        "targeting": st.booleans(),
        "blind_spies": st.booleans(),
        "seed": st.integers(0, 2**32),
        "approve_rate": st.floats(0.0, 1.0),
        "spy_fail_rate": st.floats(0.0, 1.0),
        "deadline_rate": st.sampled_from([0.0, 0.0, 0.1, 0.4]),
        "plot_use_rate": st.sampled_from([0.2, 0.5, 0.9]),
    }
)


def start(table: dict) -> tuple[GameState, random.Random]:
    rng = random.Random(table["seed"])
    variants = Variants(targeting=table["targeting"], blind_spies=table["blind_spies"], plot_cards=True)
    return new_game(table["players"], rng, variants), rng


def play(table: dict):
    state, rng = start(table)
    rates = {k: table[k] for k in ("approve_rate", "spy_fail_rate", "deadline_rate", "plot_use_rate")}
    return state, play_to_end(state, rng, **rates)


# Checking a Plot state plays its whole history again (`engine.history`), so checking every state of a
# game costs the square of the game's length: about 3.5 ms a state, 27 s for every state of 150 games.
# The tests below check every fifth state of each game, from an offset its seed picks, and its last.
CHECK_EVERY = 5


def checked_states(table: dict, steps) -> list[GameState]:
    offset = table["seed"] % CHECK_EVERY
    return [state for _, state, _ in steps[offset::CHECK_EVERY] + steps[-1:]]


@settings(max_examples=150, deadline=None)
@given(plot_tables)
def test_a_plot_game_ends_by_the_rules_and_the_deck_never_runs_out(table):
    first, steps = play(table)
    final = steps[-1][1]
    assert final.is_over and len(final.played_rounds) <= 5
    assert sum(len(r.proposals) for r in final.rounds) <= 25
    if final.end_reason is EndReason.FIVE_REJECTIONS:
        assert final.winner is Side.SPIES and final.rounds[-1].rejections == 5
    else:
        assert final.end_reason is not None
    per_mission = cards_per_mission(table["players"])
    draws = [first.plot.drawn] + [e.cards for _, _, events in steps for e in events if isinstance(e, CardsDrawn)]
    assert all(len(drawn) == per_mission for drawn in draws)
    assert len(draws) == len(final.rounds)  # one deal per round, on its first proposal
    for _, state, _ in steps:
        held = Counter(card for hand in state.plot.hands for card in hand)
        assert held + Counter(state.plot.deck) <= Counter(full_deck(state.players))
    for state in checked_states(table, steps):
        check_state(state)


@settings(max_examples=100, deadline=None)
@given(plot_tables)
def test_a_plot_state_round_trips_through_json(table):
    first, steps = play(table)
    for _, state, _ in [(None, first, ())] + steps:  # every state read back, without the check...
        data = json.loads(json.dumps(state_to_dict(state)))
        assert read_unchecked(data, data["schema"]) == state
    # ...and the states the check plays again, loaded as the store loads them.
    for state in [first, *checked_states(table, steps)]:
        assert state_from_dict(json.loads(json.dumps(state_to_dict(state)))) == state


@settings(max_examples=60, deadline=None)
@given(plot_tables)
def test_private_results_reach_only_their_viewer(table):
    first, steps = play(table)
    before = first
    for _, state, _ in steps:
        new = state.plot.seen[len(before.plot.seen) :]
        if not new:
            before = state
            continue
        for seat in range(state.players):
            old_view, new_view = seat_view(before, seat), seat_view(state, seat)
            shown = [seen for seen in new if seen.viewer == seat]
            assert len(new_view.seen_roles + new_view.seen_cards) == len(
                old_view.seen_roles + old_view.seen_cards
            ) + len(shown)
            assert set(shown) <= set(new_view.seen_roles + new_view.seen_cards)
        # Nothing anyone alone was shown is in the table's view or the group's record.
        hidden = replace(state, plot=replace(state.plot, seen=()))
        assert public_view(hidden) == public_view(state)
        assert export_record(hidden, "g") == export_record(state, "g")
        before = state


@settings(max_examples=80, deadline=None)
@given(plot_tables)
def test_plot_records_export_parse_and_replay_to_themselves(table):
    _, steps = play(table)
    for _, state, _ in steps[table["seed"] % 3 :: 3] + steps[-1:]:
        for private_for in (None, table["seed"] % state.players):
            record = export_record(state, "g", private_for=private_for)
            parsed = parse_record(json.loads(json.dumps(record)))
            assert ("outcome" in record) == state.is_over
            again = export_record(replay(parsed, state.spies, state.variants), "g", private_for=None)
            assert again["missions"] == record["missions"]


@settings(max_examples=60, deadline=None)
@given(plot_tables)
def test_the_game_waits_for_exactly_the_seats_that_may_act(table):
    state, rng = start(table)
    while not state.is_over:
        waiting = waiting_for(state)
        assert waiting and public_view(state).waiting_for == waiting
        if state.phase not in (Phase.VOTING, Phase.MISSION):
            assert len(waiting) == 1
        for seat in range(state.players):
            options = list(legal_actions(state, seat))
            assert bool(options) == (seat in waiting)
            for action in rng.sample(options, min(3, len(options))):
                apply(state, action)  # accepted
            if seat not in waiting:
                for probe in (CastVote(seat, True), PlayCard(seat, False), Pass(seat), UseNoConfidence(seat)):
                    with pytest.raises(IllegalAction):
                        apply(state, probe)
        state, _ = apply(state, random_action(state, rng, deadline_rate=table["deadline_rate"]))
    assert waiting_for(state) == ()


@settings(max_examples=60, deadline=None)
@given(plot_tables)
def test_the_ballot_moves_on_with_each_decision_and_never_within_a_vote_or_mission(table):
    state, rng = start(table)
    seen = {ballot(state)}
    while not state.is_over:
        before = state
        state, _ = apply(state, random_action(state, rng, deadline_rate=table["deadline_rate"]))
        same_decision = before.phase is state.phase and state.phase in (Phase.VOTING, Phase.MISSION)
        if same_decision:
            assert ballot(state) == ballot(before)
        else:
            assert ballot(state) == ballot(before) + 1 and ballot(state) not in seen
        seen.add(ballot(state))


def _arbitrary_plot_action(players: int):
    # Seats and cards as the engine expects them, and look-alikes it must not take for them.
    seat = st.one_of(st.integers(-1, players), st.integers(-1, players), st.booleans(), st.just("1"))
    card = st.one_of(st.sampled_from(list(Card)), st.sampled_from([card.value for card in Card]), st.none())
    return st.one_of(
        st.builds(Pass, seat),
        st.builds(UseStrongLeader, seat),
        st.builds(UseNoConfidence, seat),
        st.builds(DealCard, seat, card, seat),
        st.builds(TakeCard, seat, card, seat),
        st.builds(Overhear, seat, seat),
        st.builds(OpenUp, seat, seat),
        st.builds(Spotlight, seat, seat),
        st.builds(Watch, seat, st.lists(seat, max_size=3).map(tuple)),
        st.builds(ImmediateTimedOut, seat, card),
        st.builds(DealTimedOut, st.lists(st.tuples(card, seat), max_size=3).map(tuple)),
        st.builds(ChanceTimedOut),
        st.builds(CastVote, seat, st.booleans()),
        st.builds(ProposeTeam, seat, st.lists(st.integers(-1, players), max_size=6).map(tuple), st.none()),
    )


@settings(max_examples=40, deadline=None)
@given(plot_tables, st.data())
def test_an_illegal_plot_action_changes_nothing(table, data):
    state, rng = start(table)
    while not state.is_over:
        attempt = data.draw(_arbitrary_plot_action(state.players))
        stored = state_to_dict(state)
        try:
            after, _ = apply(state, attempt)
        except IllegalAction:
            assert state_to_dict(state) == stored
        else:
            assert after.version == state.version + 1
            assert state_from_dict(json.loads(json.dumps(state_to_dict(after)))) == after
        state, _ = apply(state, random_action(state, rng))


# ---------------------------------------------------------------- built situations at every table size


seats_and_seed = st.fixed_dictionaries({"players": st.integers(5, 10), "seed": st.integers(0, 2**32)})


def _stacked(players: int, rng: random.Random, first: tuple[Card, ...]) -> GameState:
    rest = list((Counter(full_deck(players)) - Counter(first)).elements())
    rng.shuffle(rest)
    return new_game(players, rng, Variants(plot_cards=True), deck=first + tuple(rest))


def _deal_all(state: GameState, rng: random.Random) -> GameState:
    """The leader gives the first drawn card to a random player, then the rest; immediate cards are resolved."""
    while state.phase is Phase.DEAL:
        state, _ = apply(state, rng.choice(list(legal_actions(state, waiting_for(state)[0]))))
    return state


def _pass_window(state: GameState) -> GameState:
    while state.phase in (Phase.LEAD, Phase.OVERTURN, Phase.SPOTLIGHT, Phase.WATCH):
        state, _ = apply(state, Pass(waiting_for(state)[0]))
    return state


def _vote(state: GameState, approve: bool) -> GameState:
    while state.phase is Phase.VOTING:
        state, _ = apply(state, CastVote(waiting_for(state)[0], approve))
    return state


@settings(max_examples=60, deadline=None)
@given(seats_and_seed)
def test_no_confidence_on_the_fifth_proposal_ends_the_game_for_the_spies(case):
    players, rng = case["players"], random.Random(case["seed"])
    state = _deal_all(_stacked(players, rng, (Card.NO_CONFIDENCE,)), rng)
    holder = state.plot.holders(Card.NO_CONFIDENCE)[0]
    for number in range(1, 6):
        state = _pass_window(state)
        team = tuple(range(rules.team_size(players, 1)))
        state, _ = apply(state, ProposeTeam(state.leader, team))
        state = _vote(state, approve=number == 5)
    while state.phase is Phase.OVERTURN and waiting_for(state) != (holder,):
        state, _ = apply(state, Pass(waiting_for(state)[0]))
    state, _ = apply(state, UseNoConfidence(holder))
    assert (state.winner, state.end_reason) == (Side.SPIES, EndReason.FIVE_REJECTIONS)
    record = export_record(state, "g")
    parsed = parse_record(record)
    assert parsed.missions[0].rejections == 5 and parsed.outcome.reason is EndReason.FIVE_REJECTIONS
    assert export_record(replay(parsed, state.spies), "g") == record


@settings(max_examples=60, deadline=None)
@given(seats_and_seed.filter(lambda case: case["players"] >= 7))
def test_a_spotlighted_fail_is_public_and_counted(case):
    """In the Spotlight is in the deck at 7-10 players only."""
    players, rng = case["players"], random.Random(case["seed"])
    state = _deal_all(_stacked(players, rng, (Card.IN_THE_SPOTLIGHT,)), rng)
    user = state.plot.holders(Card.IN_THE_SPOTLIGHT)[0]
    spy = next(seat for seat in state.spies if seat != user)
    state = _pass_window(state)
    others = [seat for seat in range(players) if seat not in (spy, user)]
    team = tuple(sorted([spy, *others[: rules.team_size(players, 1) - 1]]))
    state, _ = apply(state, ProposeTeam(state.leader, team))
    state = _vote(state, True)
    while state.phase is Phase.OVERTURN:
        state, _ = apply(state, Pass(waiting_for(state)[0]))
    assert waiting_for(state) == (user,)
    state, _ = apply(state, Spotlight(user, spy))
    for seat in team:
        state, _ = apply(state, PlayCard(seat, seat == spy))
    state = _pass_window(state)
    assert state.rounds[0].fails == 1 and not state.rounds[0].succeeded
    record = export_record(state, "g")
    spotlight = [e for e in record["missions"][0]["plot"] if e["kind"] == "spotlight"]
    assert spotlight == [{"kind": "spotlight", "by": user, "target": spy, "fail": True, "proposal": 0}]
    assert record["missions"][0]["fails"] == 1
    assert export_record(replay(parse_record(record), state.spies), "g") == record


# How a record shows each card used: its event, or the proposal field it sets.
_USED_AS = {
    UseKind.TAKE: Card.TAKE_RESPONSIBILITY,
    UseKind.WATCH: Card.KEEPING_A_CLOSE_EYE_ON_YOU,
    UseKind.SPOTLIGHT: Card.IN_THE_SPOTLIGHT,
    UseKind.OVERHEARD: Card.OVERHEARD_CONVERSATION,
    UseKind.OPEN_UP: Card.OPEN_UP,
    UseKind.ESTABLISH_CONFIDENCE: Card.ESTABLISH_CONFIDENCE,
}


@pytest.mark.parametrize("players", range(5, 11))
def test_every_card_gets_used_across_random_games(players):
    used: set[Card] = set()
    habits = {"approve_rate": 0.7, "spy_fail_rate": 0.5, "deadline_rate": 0.05, "plot_use_rate": 0.6}
    for seed in range(60):
        _, steps = play({"players": players, "targeting": False, "blind_spies": False, "seed": seed, **habits})
        final = steps[-1][1]
        used |= {_USED_AS[use.kind] for uses in final.plot.uses for use in uses if use.kind in _USED_AS}
        for p in (p for r in final.rounds for p in r.proposals):
            used |= {Card.STRONG_LEADER} if p.strong_leader else set()
            used |= {Card.OPINION_MAKER} if p.open_votes else set()
            used |= {Card.NO_CONFIDENCE} if p.no_confidence is not None else set()
    assert used == set(full_deck(players))


# ---------------------------------------------------------------- plain games stay as they were


def _plain_games_digest() -> str:
    """Every state, ballot and final record of 240 random plain and Targeting/Blind Spies games."""
    digest = hashlib.sha256()
    for seed in range(40):
        for players in range(5, 11):
            variants = Variants(targeting=seed % 2 == 1, blind_spies=seed % 3 == 0)
            rng = random.Random(seed * 100 + players)
            steps = play_to_end(new_game(players, rng, variants), rng, deadline_rate=(0.0, 0.1, 0.3)[seed % 3])
            for _, state, _ in steps:
                digest.update(json.dumps([state_to_dict(state), ballot(state)], sort_keys=True).encode())
            digest.update(json.dumps(export_record(steps[-1][1], "g"), sort_keys=True).encode())
    return digest.hexdigest()


def test_plain_games_are_played_stored_and_recorded_exactly_as_before_plot_cards():
    # Computed with the engine before Plot cards existed (commit 944d391).
    assert _plain_games_digest() == "37c284885532d01454f6dccc57b58ebbf3ede11ba9e5ac375c63ca9bd78e254b"
