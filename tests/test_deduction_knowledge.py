"""The deduction uses only what the asker legitimately knows: the public record and their own role.

Two games that look the same to the asker (the same public record, the same role of the
asker) must get the same answer, whatever the others' hidden roles and whatever the
record's `outcome` says.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from itertools import combinations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deduction import batch
from deduction.analysis import deduce
from deduction.knowledge import Viewer
from deduction.reasons import explain
from engine import (
    EndReason,
    GameRecord,
    Outcome,
    Side,
    Variants,
    apply,
    new_game,
    parse_record,
    record_of,
    record_to_dict,
    replay,
)
from engine.simulate import random_action

MODELS = ("uniform", "behaviour")
SETTINGS = settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Game:
    record: GameRecord
    spies: tuple[int, ...]
    targeting: bool


@st.composite
def games(draw, finished: bool = False) -> Game:
    seed = draw(st.integers(0, 2**32 - 1))
    players = draw(st.integers(5, 10))
    targeting = draw(st.booleans())
    spy_fail_rate = draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0))
    steps = None if finished else draw(st.none() | st.integers(0, 300))
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=targeting))
    done = 0
    while not state.is_over and (steps is None or done < steps):
        state, _ = apply(state, random_action(state, rng, spy_fail_rate=spy_fail_rate))
        done += 1
    return Game(record_of(state, "g"), state.spies, targeting)


def consistent_sets(record: GameRecord) -> list[tuple[int, ...]]:
    played = [m for m in record.missions if m.fails is not None]
    return [
        combo
        for combo in combinations(range(record.players), record.spies)
        if all(len(set(combo) & set(m.proposals[-1].team)) >= m.fails for m in played)
    ]


def answers(record: GameRecord, viewer: Viewer) -> dict[str, tuple]:
    """Everything a hint shows: the numbers and the reasons under them."""
    out = {}
    for model in MODELS:
        result = deduce(record, viewer, model)
        out[model] = (result.spy_probability, result.consistent, result.possible, explain(record, result))
    return out


@SETTINGS
@given(games(), st.data())
def test_the_outcome_changes_nothing(game: Game, data: st.DataObject) -> None:
    record = game.record
    others = [s for s in range(record.players) if s not in game.spies]
    viewer = data.draw(st.sampled_from([Viewer.outsider()] + [Viewer.resistance(s) for s in others]))
    other_spies = data.draw(st.sampled_from(list(combinations(range(record.players), record.spies))))
    truthful = replace(record, outcome=Outcome(Side.SPIES, EndReason.THREE_FAILED_MISSIONS, game.spies))
    lying = replace(record, outcome=Outcome(Side.RESISTANCE, EndReason.THREE_SUCCESSFUL_MISSIONS, other_spies))
    bare = record.without_outcome()
    expected = answers(bare, viewer)
    assert answers(record, viewer) == expected
    assert answers(truthful, viewer) == expected
    assert answers(lying, viewer) == expected


@SETTINGS
@given(games(), st.data())
def test_same_public_record_with_other_hidden_spies_gets_the_same_answer(game: Game, data: st.DataObject) -> None:
    record = game.record
    viewer_seat = data.draw(st.sampled_from([s for s in range(record.players) if s not in game.spies]))
    alternatives = [s for s in consistent_sets(record) if viewer_seat not in s and s != game.spies]
    assume(alternatives)
    spies_b = data.draw(st.sampled_from(alternatives))

    # Replay the same public choices with other spies: the same public record, other hidden roles.
    state_b = replay(record.without_outcome(), spies_b, Variants(targeting=game.targeting))
    record_b = record_of(state_b, "g")
    assert record_b.missions == record.missions
    assert record_b.players == record.players and record_b.spies == record.spies
    assert state_b.spies == spies_b != game.spies
    if record.outcome is not None:
        assert record_b.outcome is not None and set(record_b.outcome.spies) == set(spies_b)

    for viewer in (Viewer.resistance(viewer_seat), Viewer.outsider()):
        assert answers(record, viewer) == answers(record_b, viewer)


@SETTINGS
@given(games(finished=True), st.data())
def test_batch_answer_ignores_the_outcome(game: Game, data: st.DataObject) -> None:
    record = game.record
    assert record.outcome is not None
    seat = data.draw(st.sampled_from([None] + [s for s in range(record.players) if s not in game.spies]))
    with_outcome = record_to_dict(record)
    without = record_to_dict(record.without_outcome())
    assert "outcome" in with_outcome and "outcome" not in without
    # Another valid outcome, naming other spies that the record allows too.
    others = [s for s in consistent_sets(record) if s != game.spies]
    variants = [with_outcome]
    if others:
        other = dict(
            with_outcome, outcome=dict(with_outcome["outcome"], spies=list(data.draw(st.sampled_from(others))))
        )
        parse_record(other)  # still a valid record
        variants.append(other)
    for model in MODELS:
        expected = batch.answer(json.dumps({"record": without, "viewer": seat}), model)
        assert set(expected) == {"spy_probability", "consistent"}
        for variant in variants:
            assert batch.answer(json.dumps({"record": variant, "viewer": seat}), model) == expected


def _with_last_proposal(record, proposal):
    from dataclasses import replace as replaced

    mission = replaced(record.missions[-1], proposals=record.missions[-1].proposals[:-1] + (proposal,))
    return replaced(record, missions=record.missions[:-1] + (mission,))


def _two_proposals_then_a_drawn_team():
    from engine import CastVote, LeaderTimedOut, ProposeTeam, apply, new_game, record_of

    state = new_game(7, spies=(1, 4, 6), first_leader=0)
    state, _ = apply(state, ProposeTeam(0, (0, 2)))
    for seat in range(7):
        state, _ = apply(state, CastVote(seat, seat % 3 == 0))
    state, _ = apply(state, LeaderTimedOut(team=(1, 5)))
    for seat in range(7):
        state, _ = apply(state, CastVote(seat, seat in (0, 1, 2)))
    return record_of(state, "g")


def test_a_drawn_team_tells_nothing_about_its_leader():
    """A team drawn for a leader who missed the deadline is nobody's choice: which team was drawn is no evidence."""
    from dataclasses import replace as replaced

    record = _two_proposals_then_a_drawn_team()
    drawn = record.missions[0].proposals[-1]
    assert drawn.auto_team
    viewer = Viewer.resistance(3)
    # With its votes all filled in by the deadline (no evidence either), only the drawn team differs.
    other_team = replaced(drawn, team=(4, 6))
    as_chosen = replaced(other_team, auto_team=False)
    baseline = deduce(
        _with_last_proposal(record, replaced(drawn, votes=(False,) * 7, auto_votes=tuple(range(7)))), viewer
    )
    drawn_other = deduce(
        _with_last_proposal(record, replaced(other_team, votes=(False,) * 7, auto_votes=tuple(range(7)))), viewer
    )
    assert drawn_other.spy_probability == baseline.spy_probability
    # Read as the leader's own choice, the same team would move the answer.
    chosen_other = deduce(
        _with_last_proposal(record, replaced(as_chosen, votes=(False,) * 7, auto_votes=tuple(range(7)))), viewer
    )
    assert chosen_other.spy_probability != baseline.spy_probability


def test_votes_filled_in_by_the_deadline_tell_nothing():
    from dataclasses import replace as replaced

    record = _two_proposals_then_a_drawn_team()
    drawn = record.missions[0].proposals[-1]
    viewer = Viewer.resistance(3)
    filled = replaced(drawn, auto_votes=(5, 6))
    flipped = replaced(filled, votes=drawn.votes[:5] + (True, True))
    assert deduce(_with_last_proposal(record, flipped), viewer).spy_probability == (
        deduce(_with_last_proposal(record, filled), viewer).spy_probability
    )
    # The same flip, had seats 5 and 6 chosen it, is evidence.
    chosen = replaced(flipped, auto_votes=())
    assert deduce(_with_last_proposal(record, chosen), viewer).spy_probability != (
        deduce(_with_last_proposal(record, replaced(filled, auto_votes=())), viewer).spy_probability
    )


def test_a_card_the_deadline_played_is_no_spy_s_choice():
    """A Fail cannot come from a member whose card the deadline played, and a spy whose card was
    filled in did not choose to let the mission pass."""
    from engine import CardsTimedOut, CastVote, PlayCard, ProposeTeam, apply, new_game, record_of

    state = new_game(5, spies=(1, 4), first_leader=0)
    state, _ = apply(state, ProposeTeam(0, (1, 4)))
    for seat in range(5):
        state, _ = apply(state, CastVote(seat, True))
    state, _ = apply(state, PlayCard(1, True))
    state, _ = apply(state, CardsTimedOut())
    record = record_of(state, "g")
    assert record.missions[0].auto_cards == (4,)
    # Seat 1 played the only Fail: for a viewer at seat 0 it is certainly a spy.
    result = deduce(record, Viewer.resistance(0))
    assert result.spy_probability[1] == 1.0
    assert 1 in result.certain_spies


def _with_own_votes_flipped(record: GameRecord, seat: int, flips: list[bool]) -> GameRecord:
    """The record with `seat`'s votes flipped where `flips` says, wherever that changes no result."""
    missions, k = [], 0
    for mission in record.missions:
        proposals = []
        for proposal in mission.proposals:
            votes = list(proposal.votes)
            flip = flips[k % len(flips)]
            k += 1
            if flip and seat not in proposal.auto_votes:
                votes[seat] = not votes[seat]
                approved_before = sum(proposal.votes) * 2 > len(votes)
                if (sum(votes) * 2 > len(votes)) != approved_before:
                    votes[seat] = not votes[seat]  # it would change the result: leave it
            proposals.append(replace(proposal, votes=tuple(votes)))
        missions.append(replace(mission, proposals=tuple(proposals)))
    return replace(record, missions=tuple(missions))


@SETTINGS
@given(games(), st.data())
def test_the_askers_own_votes_are_no_evidence_to_them(game: Game, data: st.DataObject) -> None:
    """Flipping a Resistance asker's own votes (no result changed) leaves their hints as they were."""
    resistance = [s for s in range(game.record.players) if s not in game.spies]
    seat = data.draw(st.sampled_from(resistance))
    flips = data.draw(st.lists(st.booleans(), min_size=1, max_size=25))
    flipped = _with_own_votes_flipped(game.record, seat, flips)
    viewer = Viewer.resistance(seat)
    before, after = deduce(game.record, viewer), deduce(flipped, viewer)
    assert after.spy_probability == before.spy_probability
    assert explain(flipped, after) == explain(game.record, before)
