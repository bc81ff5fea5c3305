"""The Plot cards card by card, on tables whose deck order is chosen: the deal, every card's
window and effect, what each seat is shown, the refusals, and the record's Plot fields."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    Card,
    CardSeen,
    CastVote,
    ChancePassed,
    ChanceTimedOut,
    ConversationOverheard,
    DealCard,
    DealTimedOut,
    EndReason,
    GameState,
    IllegalAction,
    ImmediateTimedOut,
    OpenUp,
    OpenVotesShown,
    Overhear,
    Pass,
    Phase,
    PlayCard,
    ProposeTeam,
    Reason,
    RecordError,
    RoleSeen,
    Side,
    Spotlight,
    SpotlightCardShown,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    Variants,
    VotesTimedOut,
    Watch,
    apply,
    ballot,
    cards_per_mission,
    deck_counts,
    export_record,
    legal_actions,
    new_game,
    parse_record,
    public_view,
    replay,
    seat_view,
    state_from_dict,
    state_to_dict,
    still_to_act,
    waiting_for,
)
from engine.plot import full_deck
from engine.simulate import random_action

SPIES = (1, 3, 5)  # at the 7-player table, as in the rules' example
PLOT = Variants(plot_cards=True)


def table(first: tuple[Card, ...], players: int = 7, leader: int = 4, spies: tuple[int, ...] = SPIES) -> GameState:
    """A Plot game whose deck starts with `first`, then the rest of the deck."""
    rest = Counter(full_deck(players)) - Counter(first)
    return new_game(players, variants=PLOT, spies=spies, first_leader=leader, deck=first + tuple(rest.elements()))


def act(state: GameState, *actions) -> GameState:
    for action in actions:
        state, _ = apply(state, action)
    return state


def vote_all(state: GameState, approve: bool) -> GameState:
    while state.phase is Phase.VOTING:
        state = act(state, *(CastVote(seat, approve) for seat in waiting_for(state)))
    return state


def assert_refused(state: GameState, action, reason: Reason) -> None:
    before = state_to_dict(state)
    with pytest.raises(IllegalAction) as refusal:
        apply(state, action)
    assert refusal.value.reason is reason
    assert state_to_dict(state) == before


# ---------------------------------------------------------------- the deck


@pytest.mark.parametrize(
    ("players", "size", "per_mission"), [(5, 7, 1), (6, 7, 1), (7, 15, 2), (8, 15, 2), (9, 15, 3), (10, 15, 3)]
)
def test_deck_size_and_cards_per_mission(players, size, per_mission):
    assert sum(deck_counts(players).values()) == size
    assert cards_per_mission(players) == per_mission
    assert 5 * per_mission <= size  # five deals never run the deck out


def test_small_tables_have_no_spotlight_and_no_immediate_card_but_take_responsibility():
    assert deck_counts(5) == {
        Card.STRONG_LEADER: 2,
        Card.NO_CONFIDENCE: 1,
        Card.KEEPING_A_CLOSE_EYE_ON_YOU: 2,
        Card.OPINION_MAKER: 1,
        Card.TAKE_RESPONSIBILITY: 1,
    }


def test_the_deck_is_shuffled_from_the_games_random_source_only():
    import random

    first = new_game(7, random.Random(5), PLOT)
    again = new_game(7, random.Random(5), PLOT)
    assert first == again
    assert sorted(first.plot.deck + first.plot.drawn) == sorted(full_deck(7))
    plain = new_game(7, random.Random(5))
    assert (plain.spies, plain.leader) == (first.spies, first.leader)  # the deck is shuffled after the deal


# ---------------------------------------------------------------- the rules' example (mission 1 here)


def test_the_rules_example_deal_overheard_vote_and_watch():
    state = table((Card.NO_CONFIDENCE, Card.OVERHEARD_CONVERSATION))
    assert state.phase is Phase.DEAL and waiting_for(state) == (4,)
    assert public_view(state).plot.drawn == (Card.NO_CONFIDENCE, Card.OVERHEARD_CONVERSATION)
    state = act(state, DealCard(4, Card.NO_CONFIDENCE, 3))
    state, events = apply(state, DealCard(4, Card.OVERHEARD_CONVERSATION, 0))
    assert waiting_for(state) == (0,)
    assert set(legal_actions(state, 0)) == {Overhear(0, 6), Overhear(0, 1)}
    state, events = apply(state, Overhear(0, 1))
    assert events == (ConversationOverheard(by=0, target=1),)
    assert seat_view(state, 0).seen_roles == (RoleSeen(viewer=0, seat=1, spy=True),)
    assert all(seat_view(state, seat).seen_roles == () for seat in range(1, 7))
    assert state.phase is Phase.PROPOSING and public_view(state).plot.hands[3] == (Card.NO_CONFIDENCE,)
    state = act(state, ProposeTeam(4, (4, 5)))
    state = vote_all(state, True)
    assert state.phase is Phase.OVERTURN and waiting_for(state) == (3,)
    state, events = apply(state, Pass(3))
    assert events[0] == ChancePassed(seat=3) and state.phase is Phase.MISSION
    record = export_record(act(state, PlayCard(4, False), PlayCard(5, True)), "example")
    assert record["missions"][0]["plot"] == [
        {"kind": "deal", "card": "no_confidence", "to": 3, "proposal": 0},
        {"kind": "deal", "card": "overheard_conversation", "to": 0, "proposal": 0},
        {"kind": "overheard", "by": 0, "target": 1, "proposal": 0},
    ]
    assert record["variants"]["plot_cards"] is True


def rules_example_record() -> dict:
    """The record of the rules' example (mission 2 at 7 players), after a first mission that deals the cards."""
    return {
        "format": "resistance-record/1",
        "id": "example",
        "players": 7,
        "spies": 3,
        "variants": {"targeting": False, "blind_spies": False, "plot_cards": True},
        "missions": [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [{"leader": 3, "team": [3, 6], "votes": [True] * 7, "open_votes": [2]}],
                "fails": 0,
                "plot": [
                    {"kind": "deal", "card": "keeping_a_close_eye_on_you", "to": 6, "proposal": 0},
                    {"kind": "deal", "card": "opinion_maker", "to": 2, "proposal": 0},
                ],
            },
            {
                "mission": 2,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [
                    {
                        "leader": 4,
                        "team": [4, 5, 6],
                        "votes": [False, True, False, True, True, True, True],
                        "open_votes": [2],
                    }
                ],
                "fails": 1,
                "plot": [
                    {"kind": "deal", "card": "no_confidence", "to": 3, "proposal": 0},
                    {"kind": "deal", "card": "overheard_conversation", "to": 0, "proposal": 0},
                    {"kind": "overheard", "by": 0, "target": 1, "proposal": 0},
                    {"kind": "watch", "by": 6, "target": 5, "proposal": 0},
                ],
            },
        ],
        "private": {"6": [{"card_of": 5, "mission": 2, "fail": True}]},
    }


def test_the_rules_example_record_parses():
    record = rules_example_record()
    parsed = parse_record(record)
    assert parsed.private == {6: (CardSeen(viewer=6, seat=5, mission=2, fail=True),)}
    assert [use.kind.value for use in parsed.missions[1].plot] == ["deal", "deal", "overheard", "watch"]
    state = replay(parsed, SPIES)
    assert export_record(state, "example")["missions"] == record["missions"]


# ---------------------------------------------------------------- each card


def test_opinion_makers_vote_first_in_the_open():
    state = table((Card.OPINION_MAKER, Card.KEEPING_A_CLOSE_EYE_ON_YOU))
    state = act(state, DealCard(4, Card.OPINION_MAKER, 2), DealCard(4, Card.KEEPING_A_CLOSE_EYE_ON_YOU, 6))
    state = act(state, ProposeTeam(4, (4, 5)))
    assert waiting_for(state) == (2,)
    assert still_to_act(state) == (0, 1, 2, 3, 4, 5, 6)  # the others' votes wait behind the Opinion Maker's
    assert_refused(state, CastVote(0, True), Reason.OPINION_MAKERS_FIRST)
    vote_ballot = ballot(state)
    state, events = apply(state, CastVote(2, False))
    assert OpenVotesShown(votes=((2, False),)) in events
    assert public_view(state).plot.open_votes == ((2, False),)
    assert waiting_for(state) == (0, 1, 3, 4, 5, 6) and ballot(state) == vote_ballot
    state = vote_all(state, True)
    assert state.current_round.proposals[-1].open_votes == (2,)
    assert state.phase is Phase.MISSION
    state = act(state, PlayCard(4, False), PlayCard(5, True))
    assert state.phase is Phase.WATCH and waiting_for(state) == (6,)
    assert_refused(state, Watch(6, (4, 5)), Reason.TOO_MANY_TARGETS)
    assert_refused(state, Watch(6, (6,)), Reason.BAD_TARGET)
    state = act(state, Watch(6, (5,)))
    assert seat_view(state, 6).seen_cards == (CardSeen(viewer=6, seat=5, mission=1, fail=True),)
    assert state.rounds[0].fails == 1 and state.plot.hands[6] == ()


def test_missed_opinion_maker_votes_are_filled_first_with_one_setting():
    state = table((Card.OPINION_MAKER, Card.NO_CONFIDENCE))
    state = act(state, DealCard(4, Card.OPINION_MAKER, 2), DealCard(4, Card.NO_CONFIDENCE, 0), ProposeTeam(4, (4, 5)))
    state = act(state, VotesTimedOut(True))
    assert waiting_for(state) == (0, 1, 3, 4, 5, 6)
    assert_refused(state, VotesTimedOut(False), Reason.SETTING_CHANGED)
    state = act(state, CastVote(0, False), VotesTimedOut(True))
    assert state.rounds[0].proposals[0].auto_votes == (1, 2, 3, 4, 5, 6)


def test_take_responsibility_takes_a_held_card_from_another_player():
    state = table((Card.OPINION_MAKER, Card.TAKE_RESPONSIBILITY))
    state = act(state, DealCard(4, Card.OPINION_MAKER, 2), DealCard(4, Card.TAKE_RESPONSIBILITY, 3))
    assert list(legal_actions(state, 3)) == [TakeCard(3, Card.OPINION_MAKER, 2)]
    assert_refused(state, TakeCard(3, Card.OPINION_MAKER, 1), Reason.BAD_TARGET)
    state = act(state, TakeCard(3, Card.OPINION_MAKER, 2))
    assert state.plot.hands[2] == () and state.plot.hands[3] == (Card.OPINION_MAKER,)


def test_take_responsibility_with_nothing_to_take_is_discarded():
    state = table((Card.TAKE_RESPONSIBILITY, Card.OPINION_MAKER))
    state = act(state, DealCard(4, Card.TAKE_RESPONSIBILITY, 3))
    assert state.plot.receiving is None and waiting_for(state) == (4,)


def test_open_up_and_establish_confidence_show_a_role_to_one_player():
    state = table((Card.OPEN_UP, Card.ESTABLISH_CONFIDENCE))
    state = act(state, DealCard(4, Card.ESTABLISH_CONFIDENCE, 0))
    assert seat_view(state, 0).seen_roles == (RoleSeen(viewer=0, seat=4, spy=False),)
    state = act(state, DealCard(4, Card.OPEN_UP, 1))
    assert_refused(state, Overhear(1, 0), Reason.WRONG_CARD)
    assert_refused(state, OpenUp(2, 6), Reason.NOT_THE_RECEIVER)
    assert_refused(state, OpenUp(1, 1), Reason.BAD_TARGET)
    state = act(state, OpenUp(1, 6))
    assert seat_view(state, 6).seen_roles == (RoleSeen(viewer=6, seat=1, spy=True),)
    assert seat_view(state, 1).seen_roles == ()
    plot = export_record(vote_all(act(state, ProposeTeam(4, (0, 1))), False), "g")["missions"][0]["plot"]
    assert plot[1:] == [
        {"kind": "establish_confidence", "by": 4, "to": 0, "proposal": 0},
        {"kind": "deal", "card": "open_up", "to": 1, "proposal": 0},
        {"kind": "open_up", "by": 1, "to": 6, "proposal": 0},
    ]


def test_strong_leader_takes_the_lead_and_the_lead_goes_on_from_there():
    state = table((Card.STRONG_LEADER, Card.OPINION_MAKER))
    state = act(state, DealCard(4, Card.STRONG_LEADER, 2), DealCard(4, Card.OPINION_MAKER, 6))
    state = vote_all(act(state, ProposeTeam(4, (0, 1))), False)
    assert state.phase is Phase.LEAD and state.leader == 5 and waiting_for(state) == (2,)
    state, events = apply(state, UseStrongLeader(2))
    assert state.leader == 2 and state.phase is Phase.PROPOSING
    state = vote_all(act(state, ProposeTeam(2, (0, 1))), False)
    assert state.rounds[0].proposals[1].strong_leader and state.leader == 3  # Decision D3
    record = export_record(state, "g")
    assert record["missions"][0]["proposals"][1]["strong_leader"] is True
    assert export_record(replay(parse_record(record), SPIES), "g") == record


def test_a_strong_leader_used_by_the_leader_in_turn_is_refused_in_a_record():
    """The card takes the lead from the seat whose turn it is, and that seat is never asked to use
    it (it leads anyway): a record saying the leader in turn used one describes no play of the game,
    though that seat held the card. The validator took it, and replaying it played a different game
    (the card still held, no Strong Leader used)."""
    state = table((Card.STRONG_LEADER, Card.OPINION_MAKER))
    state = act(state, DealCard(4, Card.STRONG_LEADER, 5), DealCard(4, Card.OPINION_MAKER, 6))
    state = vote_all(act(state, ProposeTeam(4, (0, 1))), False)
    assert state.phase is Phase.PROPOSING and state.leader == 5  # seat 5 was not asked: it leads in turn
    assert_refused(state, UseStrongLeader(5), Reason.WRONG_WINDOW)
    state = vote_all(act(state, ProposeTeam(5, (0, 1))), False)
    record = export_record(state, "g")
    parse_record(record)
    record["missions"][0]["proposals"][1]["strong_leader"] = True
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field == "missions[0].proposals[1].strong_leader"
    assert refused.value.problem == "seat 5 leads this proposal in turn: a Strong Leader takes the lead from another"
    # Nor does a seat that holds none take the lead out of turn.
    record["missions"][0]["proposals"][1]["leader"] = 2
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field == "missions[0].proposals[1].strong_leader"
    assert refused.value.problem == "the leader held no Strong Leader"


@settings(max_examples=40, deadline=None)
@given(st.integers(7, 10), st.integers(0, 2**32), st.integers(1, 300))
def test_no_proposal_of_a_played_game_was_led_in_turn_with_a_strong_leader(players, seed, steps):
    """In any record of play, marking a proposal led in turn as a Strong Leader's is refused there."""
    rng = random.Random(seed)
    state = new_game(players, rng, PLOT)
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, plot_use_rate=0.5))
    record = export_record(state, "g")
    parse_record(record)
    led = [(i, j) for i, m in enumerate(record["missions"]) for j, p in enumerate(m["proposals"]) if (i, j) != (0, 0)]
    for i, j in led:
        proposal = record["missions"][i]["proposals"][j]
        if proposal.get("strong_leader"):
            continue
        marked = json.loads(json.dumps(record))
        marked["missions"][i]["proposals"][j]["strong_leader"] = True
        with pytest.raises(RecordError) as refused:
            parse_record(marked)
        assert refused.value.field == f"missions[{i}].proposals[{j}].strong_leader"
        assert refused.value.problem.endswith("in turn: a Strong Leader takes the lead from another")


def test_no_confidence_holders_are_asked_one_by_one_clockwise_from_the_leader():
    state = table((Card.NO_CONFIDENCE, Card.NO_CONFIDENCE))
    state = act(state, DealCard(4, Card.NO_CONFIDENCE, 2), DealCard(4, Card.NO_CONFIDENCE, 1))
    state = vote_all(act(state, ProposeTeam(4, (0, 1))), True)
    assert state.plot.asked == (1, 2)
    assert_refused(state, UseNoConfidence(2), Reason.NOT_ASKED)
    assert_refused(state, UseNoConfidence(0), Reason.NOT_THE_HOLDER)
    state = act(state, ChanceTimedOut())
    assert_refused(state, UseNoConfidence(1), Reason.NOT_ASKED)  # seat 1 had its chance
    state = act(state, UseNoConfidence(2))
    proposal = state.rounds[0].proposals[0]
    assert proposal.no_confidence == 2 and not proposal.approved and state.rounds[0].rejections == 1
    assert state.leader == 5 and state.phase is Phase.PROPOSING


def test_no_confidence_on_the_fifth_proposal_wins_for_the_spies():
    state = table((Card.NO_CONFIDENCE, Card.OPINION_MAKER))
    state = act(state, DealCard(4, Card.NO_CONFIDENCE, 2), DealCard(4, Card.OPINION_MAKER, 6))
    for _ in range(4):
        state = vote_all(act(state, ProposeTeam(state.leader, (0, 1))), False)
    state = vote_all(act(state, ProposeTeam(state.leader, (0, 1))), True)
    state = act(state, UseNoConfidence(2))
    assert (state.winner, state.end_reason) == (Side.SPIES, EndReason.FIVE_REJECTIONS)
    record = export_record(state, "g")
    assert record["missions"][0]["proposals"][4]["no_confidence"] == 2
    assert parse_record(record).outcome.reason is EndReason.FIVE_REJECTIONS


def test_a_spotlighted_fail_is_shown_and_counted():
    state = table((Card.IN_THE_SPOTLIGHT, Card.OPINION_MAKER))
    state = act(state, DealCard(4, Card.IN_THE_SPOTLIGHT, 0), DealCard(4, Card.OPINION_MAKER, 6))
    state = vote_all(act(state, ProposeTeam(4, (1, 3))), True)
    assert state.phase is Phase.SPOTLIGHT and waiting_for(state) == (0,)
    assert_refused(state, Spotlight(0, 0), Reason.BAD_TARGET)
    state = act(state, Spotlight(0, 1))
    state, events = apply(state, PlayCard(1, True))
    assert SpotlightCardShown(seat=1, fail=True) in events
    state = act(state, PlayCard(3, False))
    assert state.rounds[0].fails == 1
    mission = export_record(state, "g")["missions"][0]
    assert mission["fails"] == 1
    assert mission["plot"][-1] == {"kind": "spotlight", "by": 0, "target": 1, "fail": True, "proposal": 0}


# ---------------------------------------------------------------- missed deadlines


def test_a_missed_deal_deals_the_drawn_cards_in_the_order_given():
    state = table((Card.OVERHEARD_CONVERSATION, Card.OPINION_MAKER))
    assert_refused(state, DealTimedOut(((Card.OPINION_MAKER, 2),)), Reason.NOT_DRAWN)
    state = act(state, DealTimedOut(((Card.OVERHEARD_CONVERSATION, 0), (Card.OPINION_MAKER, 2))))
    assert waiting_for(state) == (0,) and state.plot.hands[2] == ()
    state, events = apply(state, ImmediateTimedOut(target=1))
    assert events[0] == ConversationOverheard(by=0, target=1, forced=True)
    assert state.plot.hands[2] == (Card.OPINION_MAKER,) and state.phase is Phase.PROPOSING


# ---------------------------------------------------------------- refusals


def _dealing() -> GameState:
    return table((Card.OVERHEARD_CONVERSATION, Card.OPINION_MAKER))


def _overhearing() -> GameState:
    return act(_dealing(), DealCard(4, Card.OVERHEARD_CONVERSATION, 0))


def _no_confidence_window() -> GameState:
    state = table((Card.NO_CONFIDENCE, Card.NO_CONFIDENCE))
    state = act(state, DealCard(4, Card.NO_CONFIDENCE, 2), DealCard(4, Card.NO_CONFIDENCE, 1))
    return vote_all(act(state, ProposeTeam(4, (0, 1))), True)


def _opinion_vote() -> GameState:
    state = table((Card.OPINION_MAKER, Card.NO_CONFIDENCE))
    state = act(state, DealCard(4, Card.OPINION_MAKER, 2), DealCard(4, Card.NO_CONFIDENCE, 0))
    return act(state, ProposeTeam(4, (4, 5)))


def _watching() -> GameState:
    state = table((Card.KEEPING_A_CLOSE_EYE_ON_YOU, Card.OPINION_MAKER))
    state = act(state, DealCard(4, Card.KEEPING_A_CLOSE_EYE_ON_YOU, 6), DealCard(4, Card.OPINION_MAKER, 2))
    state = vote_all(act(state, ProposeTeam(4, (4, 5))), True)
    return act(state, PlayCard(4, False), PlayCard(5, False))


PLOT_REFUSALS = {
    "plot action in a plain game": (lambda: (new_game(7, first_leader=0), Pass(0)), Reason.PLOT_CARDS_NOT_IN_PLAY),
    "strong leader during the deal": (lambda: (_dealing(), UseStrongLeader(2)), Reason.WRONG_WINDOW),
    "another holder is asked": (lambda: (_no_confidence_window(), UseNoConfidence(2)), Reason.NOT_ASKED),
    "no confidence without the card": (lambda: (_no_confidence_window(), UseNoConfidence(0)), Reason.NOT_THE_HOLDER),
    "deal a card not drawn": (lambda: (_dealing(), DealCard(4, Card.OPEN_UP, 1)), Reason.NOT_DRAWN),
    "answer for another card": (lambda: (_overhearing(), OpenUp(0, 2)), Reason.WRONG_CARD),
    "not the receiver": (lambda: (_overhearing(), Overhear(2, 1)), Reason.NOT_THE_RECEIVER),
    "deal before the card is resolved": (
        lambda: (_overhearing(), DealCard(4, Card.OPINION_MAKER, 1)),
        Reason.CARD_TO_RESOLVE,
    ),
    "overhear a seat that is no neighbour": (lambda: (_overhearing(), Overhear(0, 3)), Reason.BAD_TARGET),
    "deal to oneself": (lambda: (_dealing(), DealCard(4, Card.OPINION_MAKER, 4)), Reason.BAD_TARGET),
    "watch two with one card": (lambda: (_watching(), Watch(6, (4, 5))), Reason.TOO_MANY_TARGETS),
    "vote before the opinion makers": (lambda: (_opinion_vote(), CastVote(0, True)), Reason.OPINION_MAKERS_FIRST),
    "fill missing votes two ways": (
        lambda: (act(_opinion_vote(), VotesTimedOut(True)), VotesTimedOut(False)),
        Reason.SETTING_CHANGED,
    ),
    "deal by another seat": (lambda: (_dealing(), DealCard(3, Card.OPINION_MAKER, 1)), Reason.NOT_THE_LEADER),
}


@pytest.mark.parametrize("situation", list(PLOT_REFUSALS))
def test_a_refused_plot_action_names_its_reason_and_leaves_the_state_alone(situation):
    build, reason = PLOT_REFUSALS[situation]
    state, action = build()
    assert_refused(state, action, reason)


# ---------------------------------------------------------------- stored states and records


def test_a_plot_state_is_stored_as_schema_3_and_read_back():
    state = _watching()
    stored = json.loads(json.dumps(state_to_dict(state)))
    assert stored["schema"] == 3 and stored["variants"]["plot_cards"] is True
    assert state_from_dict(stored) == state
    plain = state_to_dict(new_game(7, first_leader=0))
    assert plain["schema"] == 2 and "plot" not in plain and "plot_cards" not in plain["variants"]


def test_an_export_for_one_seat_keeps_only_its_private_entry():
    state = act(_overhearing(), Overhear(0, 1))
    # What the seat was shown is its own at once, even before the deal enters the public record.
    assert export_record(state, "g", private_for=0)["private"] == {"0": [{"role_of": 1, "spy": True}]}
    state = vote_all(act(state, DealCard(4, Card.OPINION_MAKER, 2), ProposeTeam(4, (0, 1))), False)
    for_zero = export_record(state, "g", private_for=0)
    assert for_zero["private"] == {"0": [{"role_of": 1, "spy": True}]}
    assert export_record(state, "g", private_for=2)["private"] == {"2": []}
    assert "private" not in export_record(state, "g")
    assert parse_record(for_zero).private == {0: (RoleSeen(viewer=0, seat=1, spy=True),)}


def _plot_record() -> dict:
    state = vote_all(
        act(_overhearing(), Overhear(0, 1), DealCard(4, Card.OPINION_MAKER, 2), ProposeTeam(4, (0, 1))), False
    )
    return export_record(state, "g")


BROKEN_PLOT_RECORDS = {
    # The proposal's open_votes come before the mission's plot events.
    "plot fields in a plain record": (
        lambda r: r["variants"].update(plot_cards=False),
        "missions[0].proposals[0].open_votes",
    ),
    "plot events in a plain record": (
        lambda r: (r["variants"].update(plot_cards=False), r["missions"][0]["proposals"][0].pop("open_votes")),
        "missions[0].plot",
    ),
    "watch by nobody": (
        lambda r: r["missions"][0]["plot"].append({"kind": "watch", "by": 3, "target": 0, "proposal": 0}),
        "missions[0].plot[3].kind",
    ),
    "overheard a seat that is no neighbour": (
        lambda r: r["missions"][0]["plot"][1].update(target=3),
        "missions[0].plot[1].target",
    ),
    "deal to the leader": (lambda r: r["missions"][0]["plot"][0].update(to=4), "missions[0].plot[0].to"),
    "open votes of a seat without the card": (
        lambda r: r["missions"][0]["proposals"][0].update(open_votes=[3]),
        "missions[0].proposals[0].open_votes",
    ),
    "no confidence on a rejected team": (
        lambda r: r["missions"][0]["proposals"][0].update(no_confidence=2),
        "missions[0].proposals[0].no_confidence",
    ),
    "unknown card": (lambda r: r["missions"][0]["plot"][0].update(card="joker"), "missions[0].plot[0].card"),
    "a deal missing": (lambda r: r["missions"][0]["plot"].pop(), "missions[0].plot"),
    "two seats in private": (
        lambda r: r.update(private={"0": [], "1": []}),
        "private",
    ),
    "private keyed by a digit that is no seat number": (
        lambda r: r.update(private={"²": []}),
        "private.²",
    ),
    "private role of oneself": (
        lambda r: r.update(private={"0": [{"role_of": 0, "spy": False}]}),
        "private.0[0]",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN_PLOT_RECORDS))
def test_a_broken_plot_record_names_the_first_offending_field(case):
    record = _plot_record()
    parse_record(record)
    breaks, field = BROKEN_PLOT_RECORDS[case]
    breaks(record)
    with pytest.raises(RecordError) as broken:
        parse_record(record)
    assert broken.value.field == field


def small_table_record(players: int, card: Card) -> dict:
    """A Plot record at 5 or 6 players whose first deal gives seat 2 `card`."""
    return {
        "format": "resistance-record/1",
        "id": "small",
        "players": players,
        "spies": 2,
        "variants": {"targeting": False, "blind_spies": False, "plot_cards": True},
        "missions": [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [{"leader": 0, "team": [0, 1], "votes": [True] * players}],
                "fails": 0,
                "plot": [{"kind": "deal", "card": card.value, "to": 2, "proposal": 0}],
            }
        ],
    }


LARGE_TABLE_CARDS = [card for card in Card if card not in deck_counts(5)]


@pytest.mark.parametrize("players", [5, 6])
@pytest.mark.parametrize("card", LARGE_TABLE_CARDS, ids=str)
def test_a_small_table_record_dealing_a_card_of_the_large_deck_is_refused_at_that_card(players, card, tmp_path):
    """In the Spotlight and the three immediate cards that show a role are in the deck at 7 players
    and more only: a 5- or 6-player record dealing one is refused at the card, by the validator,
    `python -m engine validate` and the batch protocol alike (a KeyError ended all three)."""
    from deduction.batch import answer
    from engine.__main__ import main

    assert LARGE_TABLE_CARDS == [
        Card.IN_THE_SPOTLIGHT,
        Card.OVERHEARD_CONVERSATION,
        Card.OPEN_UP,
        Card.ESTABLISH_CONFIDENCE,
    ]
    record = small_table_record(players, card)
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field == "missions[0].plot[0].card"
    assert refused.value.problem == f"the deck of a {players}-player game has no {card.value}"
    assert answer(json.dumps({"record": record, "viewer": 0}), "uniform") == {
        "error": f"record.missions[0].plot[0].card: the deck of a {players}-player game has no {card.value}"
    }
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["validate", str(games)]) == 1
    # A card of the small deck in its place makes the same record valid.
    parse_record(small_table_record(players, Card.NO_CONFIDENCE))


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize("players", range(5, 11))
def test_the_command_line_plays_a_plot_game_whose_record_validates_and_replays(players, capsys, tmp_path):
    from engine.__main__ import main

    assert main(["play", "--players", str(players), "--seed", "11", "--plot", "--record"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert record["variants"]["plot_cards"] is True and "outcome" in record
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["validate", str(games)]) == 0
    parsed = parse_record(record)
    assert export_record(replay(parsed, tuple(record["outcome"]["spies"])), record["id"]) == record


def finished_plot_game(players: int, seed: int, plot_use_rate: float):
    """A Plot game played to its end by random legal actions."""
    rng = random.Random(seed)
    state = new_game(players, rng, PLOT)
    while not state.is_over:
        state, _ = apply(state, random_action(state, rng, plot_use_rate=plot_use_rate))
    return state


def test_open_votes_are_a_set_of_seats_in_any_order():
    """Two Opinion Makers reveal their votes together: the record may list them in any order."""
    for seed in range(200):
        record = export_record(finished_plot_game(10, seed, plot_use_rate=0.2), "g")
        both = [
            (i, j)
            for i, m in enumerate(record["missions"])
            for j, p in enumerate(m["proposals"])
            if len(p.get("open_votes", [])) == 2
        ]
        if both:
            break
    else:
        pytest.fail("no game with two Opinion Makers voting")
    reordered = json.loads(json.dumps(record))
    for i, j in both:
        reordered["missions"][i]["proposals"][j]["open_votes"].reverse()
    assert parse_record(reordered) == parse_record(record)


IMPOSSIBLE_PRIVATE_RESULTS = {
    "no seat's entry": ({}, "private"),
    "a card of a seat not on the team": ({"6": [{"card_of": 3, "mission": 2, "fail": False}]}, "private.6[0]"),
    "a card of a mission not played": ({"6": [{"card_of": 5, "mission": 4, "fail": False}]}, "private.6[0]"),
    "a Fail on a mission without one": ({"6": [{"card_of": 3, "mission": 1, "fail": True}]}, "private.6[0].fail"),
    "a seat seen on both sides": (
        {"6": [{"card_of": 5, "mission": 2, "fail": True}, {"role_of": 5, "spy": False}]},
        "private.6[1]",
    ),
    # Mission 2's Fail card was played by seat 4, 5 or 6.
    "every member of a failed mission seen in the Resistance": (
        {"0": [{"role_of": s, "spy": False} for s in (4, 5, 6)]},
        "private.0[2]",
    ),
    "more spies seen than the game has": (
        {"0": [{"role_of": s, "spy": True} for s in (1, 4, 5, 6)]},
        "private.0[3]",
    ),
}


@pytest.mark.parametrize("case", list(IMPOSSIBLE_PRIVATE_RESULTS))
def test_a_private_result_the_public_record_rules_out_is_refused(case):
    private, field = IMPOSSIBLE_PRIVATE_RESULTS[case]
    record = rules_example_record()
    record["private"] = private
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field == field


def _shown_record() -> dict:
    """7 players; the leader, seat 4, gave seat 0 Establish Confidence (seat 0 saw seat 4's role) and
    seat 1 Open Up, shown to seat 6 (seat 6 saw seat 1's role); mission 1's first team was rejected,
    so the round goes on and no deal is still to come into the record."""
    state = table((Card.ESTABLISH_CONFIDENCE, Card.OPEN_UP))
    state = act(state, DealCard(4, Card.ESTABLISH_CONFIDENCE, 0), DealCard(4, Card.OPEN_UP, 1), OpenUp(1, 6))
    state = vote_all(act(state, ProposeTeam(4, (0, 1))), False)
    assert export_record(state, "g", private_for=0)["private"] == {"0": [{"role_of": 4, "spy": False}]}
    assert export_record(state, "g", private_for=6)["private"] == {"6": [{"role_of": 1, "spy": True}]}
    return export_record(state, "g")


UNSHOWN_RESULTS = {
    "the leader who gave Establish Confidence": {"4": [{"role_of": 0, "spy": False}]},
    "the holder of Open Up, who showed and saw nothing": {"1": [{"role_of": 6, "spy": False}]},
    "a seat no card touched": {"2": [{"role_of": 3, "spy": True}]},
    "a role shown once, seen twice": {"0": [{"role_of": 4, "spy": False}, {"role_of": 4, "spy": False}]},
}


@pytest.mark.parametrize("case", list(UNSHOWN_RESULTS))
def test_a_role_no_card_showed_the_seat_is_refused(case):
    """Establish Confidence shows the receiver the leader's role; Open Up shows the chosen player
    the holder's role; Overheard Conversation shows the holder a neighbour's. A private result no
    public Plot event showed that seat was taken, whatever seat and role it named."""
    record = _shown_record()
    for seen in ({"0": [{"role_of": 4, "spy": False}]}, {"6": [{"role_of": 1, "spy": True}]}):
        parse_record({**record, "private": seen})
    private = UNSHOWN_RESULTS[case]
    ((viewer, entries),) = private.items()
    with pytest.raises(RecordError) as refused:
        parse_record({**record, "private": private})
    assert refused.value.field == f"private.{viewer}[{len(entries) - 1}]"
    seat = entries[-1]["role_of"]
    assert refused.value.problem == f"no Plot card showed seat {viewer} the role of seat {seat}"


def test_a_card_no_watch_showed_the_seat_is_refused():
    """A mission card is seen only through Keeping a Close Eye on You, by the watcher, of the member
    watched, on that mission; each watch shows one card once."""
    record = rules_example_record()  # seat 6 watched seat 5 on mission 2
    for private, field, problem in [
        ({"6": [{"card_of": 4, "mission": 2, "fail": False}]}, "private.6[0]", "of seat 4 on mission 2"),
        ({"6": [{"card_of": 3, "mission": 1, "fail": False}]}, "private.6[0]", "of seat 3 on mission 1"),
        ({"4": [{"card_of": 5, "mission": 2, "fail": True}]}, "private.4[0]", "of seat 5 on mission 2"),
        (
            {"6": [{"card_of": 5, "mission": 2, "fail": True}, {"card_of": 5, "mission": 2, "fail": True}]},
            "private.6[1]",
            "of seat 5 on mission 2",
        ),
    ]:
        viewer = field.split(".")[1].split("[")[0]
        with pytest.raises(RecordError) as refused:
            parse_record({**record, "private": private})
        assert (refused.value.field, refused.value.problem) == (field, f"seat {viewer} watched no card {problem}")


def test_a_role_the_deal_still_to_come_into_the_record_can_show_is_taken():
    """Between the deal of a mission's first proposal and that proposal's vote, a seat's export holds
    what the deal showed it, and the deal is not yet in the record. In the rules' example (7 players,
    two cards a deal, mission 3 to come, led in turn by seat 5; the deck still holds one Overheard
    Conversation, the Open Up and the Establish Confidence), seat 2 may have seen two roles then:
    its neighbour's (Overheard Conversation), the leader's (Establish Confidence), anyone's but the
    leader's (Open Up), but no more than two, nor two that only Open Up shows."""
    record = rules_example_record()
    del record["private"]
    for entries in ([(1, True)], [(5, True)], [(6, False)], [(1, True), (5, True)], [(3, True), (4, False)]):
        parse_record({**record, "private": {"2": [{"role_of": s, "spy": spy} for s, spy in entries]}})
    for entries, problem in [
        ([(1, True), (5, True), (3, True)], "no Plot card showed seat 2 the role of seat 3"),
        ([(4, False), (6, False)], "no Plot card showed seat 2 the role of seat 6"),
        ([(5, True), (5, True)], "no Plot card showed seat 2 the role of seat 5"),  # one Establish Confidence
    ]:
        with pytest.raises(RecordError) as refused:
            parse_record({**record, "private": {"2": [{"role_of": s, "spy": spy} for s, spy in entries]}})
        assert refused.value.field == f"private.2[{len(entries) - 1}]"
        assert refused.value.problem == problem + ", nor can the deal still to come into the record"
    # A Strong Leader's holder may take the lead before that deal and give Establish Confidence: with
    # seat 3 holding one, seat 0 may have seen seat 4's role (Open Up) and seat 3's (its leader's).
    both = {"0": [{"role_of": 4, "spy": False}, {"role_of": 3, "spy": True}]}
    with pytest.raises(RecordError) as refused:
        parse_record({**record, "private": both})
    assert refused.value.field == "private.0[1]"
    record["missions"][1]["plot"][0]["card"] = "strong_leader"  # seat 3's No Confidence was a Strong Leader
    parse_record({**record, "private": both})
    # Once the game is over (here five teams rejected for mission 3) no deal is to come.
    record["missions"].append(
        {
            "mission": 3,
            "team_size": 3,
            "fails_required": 1,
            "proposals": [
                {"leader": seat % 7, "team": [0, 1, 2], "votes": [False] * 7, "open_votes": [2]}
                for seat in range(5, 10)
            ],
            "plot": [
                {"kind": "deal", "card": "no_confidence", "to": 4, "proposal": 0},
                {"kind": "deal", "card": "no_confidence", "to": 6, "proposal": 0},
            ],
        }
    )
    parse_record(record)
    with pytest.raises(RecordError) as refused:
        parse_record({**record, "private": {"2": [{"role_of": 1, "spy": True}]}})
    assert refused.value.problem == "no Plot card showed seat 2 the role of seat 1"


def test_no_role_is_seen_at_a_small_table():
    """At 5 and 6 players no card shows a role."""
    record = small_table_record(5, Card.NO_CONFIDENCE)
    with pytest.raises(RecordError) as refused:
        parse_record({**record, "private": {"1": [{"role_of": 0, "spy": False}]}})
    assert refused.value.field == "private.1[0]"
    assert refused.value.problem.startswith("no Plot card showed seat 1 the role of seat 0")


@settings(max_examples=40, deadline=None)
@given(st.integers(5, 10), st.booleans(), st.integers(0, 2**32), st.integers(1, 400))
def test_what_a_seat_was_shown_is_in_its_export_at_every_step_of_play(players, targeting, seed, steps):
    """Every seat's export parses at every step of any Plot game, in the middle of a deal too: each
    result it holds is one a card showed that seat (in the record, or in the deal still to come)."""
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=targeting, plot_cards=True))
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, plot_use_rate=0.8, deadline_rate=0.1))
        for seat in range(players):
            parse_record(export_record(state, "g", private_for=seat))


def _a_mission_with_a_success_shown() -> tuple[dict, int, dict]:
    """A finished 7-player Plot game's record, and a played mission of it where the spotlight showed a Success."""
    for seed in range(500):
        record = export_record(finished_plot_game(7, seed, plot_use_rate=1.0), "g")
        for i, m in enumerate(record["missions"]):
            shown = [e for e in m["plot"] if e["kind"] == "spotlight" and not e["fail"] and "fails" in m]
            if shown and not m.get("auto_cards"):
                return record, i, shown[0]
    raise AssertionError("no spotlighted Success in 500 games")


def test_a_success_shown_in_the_spotlight_leaves_fewer_members_to_play_the_fails():
    record, i, shown = _a_mission_with_a_success_shown()
    del record["outcome"]
    record["missions"] = record["missions"][: i + 1]
    mission = record["missions"][i]
    mission["fails"] = mission["team_size"] - 1
    parse_record(record)  # as many Fail cards as the other members: possible
    mission["fails"] = mission["team_size"]  # one of them would be the card shown a Success
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field == f"missions[{i}].plot[{mission['plot'].index(shown)}].fail"


def test_the_outcome_spies_play_the_fails_without_the_card_shown_a_success():
    """Spies who could explain a mission's Fail cards only if the member shown a Success had
    played one of them do not fit the record."""
    for seed in range(500):
        record = export_record(finished_plot_game(7, seed, plot_use_rate=1.0), "g")
        shown = [
            (m, e)
            for m in record["missions"]
            for e in m["plot"]
            if e["kind"] == "spotlight" and not e["fail"] and m.get("fails")
        ]
        for m, e in shown:
            played = set(m["proposals"][-1]["team"]) - set(m.get("auto_cards", []))
            for spies in combinations(range(7), 3):
                short = len(set(spies) & (played - {e["target"]})) < m["fails"] <= len(set(spies) & played)
                record["outcome"]["spies"] = list(spies)
                if short and _fits_but_for_the_spotlight(record):
                    with pytest.raises(RecordError) as refused:
                        parse_record(record)
                    assert refused.value.field == "outcome.spies"
                    return
    raise AssertionError("no such game in 500")


def _fits_but_for_the_spotlight(record: dict) -> bool:
    """Whether the outcome's spies explain every mission's Fail cards counting every member who played."""
    spies = set(record["outcome"]["spies"])
    for m in record["missions"]:
        played = set(m["proposals"][-1]["team"]) - set(m.get("auto_cards", []))
        shown_fail = {e["target"] for e in m["plot"] if e["kind"] == "spotlight" and e["fail"]}
        if "fails" in m and (len(spies & played) < m["fails"] or not shown_fail <= spies):
            return False
    return True


MISWRITTEN_PRIVATE_ENTRIES = {
    "a role seen of no seat, an unknown field after it": (
        {"0": [{"role_of": None, "spy": True, "seen_by": 0}]},
        "private.0[0].role_of",
    ),
    "a card of no mission, an unknown field after it": (
        {"6": [{"card_of": 5, "mission": 9, "fail": True, "seen_by": 6}]},
        "private.6[0].mission",
    ),
    "an unknown field before a fault": (
        {"0": [{"seen_by": 0, "role_of": None, "spy": True}]},
        "private.0[0].seen_by",
    ),
    "a role seen without its side": ({"0": [{"role_of": 1}]}, "private.0[0].spy"),
    "both kinds in one entry": ({"0": [{"role_of": 1, "spy": True, "card_of": 1}]}, "private.0[0]"),
}


@pytest.mark.parametrize("case", list(MISWRITTEN_PRIVATE_ENTRIES))
def test_a_private_entry_is_read_field_by_field_in_the_formats_order(case):
    """The first fault in the order the entry is written is the one reported: an unknown field
    written after a broken one does not hide it."""
    private, field = MISWRITTEN_PRIVATE_ENTRIES[case]
    record = rules_example_record()
    record["private"] = private
    with pytest.raises(RecordError) as refused:
        parse_record(record)
    assert refused.value.field == field
