"""Behavioural reasons say what the model itself measured, and cite true facts.

For every reason that cites an evidence group (a mission's result, a seat's votes, a leader's
teams), the group is taken out of the evidence here, independently of `deduction.attribution`
(a seat's votes out of the record itself), and the seat's probability recomputed: it must
move back by the stated points (within rounding) in the stated direction. The cited fact is
recounted from the record. And the reasons shown are the largest effects on that seat, none
of at least 3 points left out.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from deduction.analysis import Deduction, deduce
from deduction.attribution import attribute
from deduction.behaviour import Evidence
from deduction.exact import ImpossibleRecord
from deduction.knowledge import Viewer
from deduction.reasons import MAX_REASONS_PER_SEAT, MIN_POINTS, SUSPICIOUS_VOTES, explain
from engine import GameRecord, parse_record
from tests.test_deduction_exact import SETTINGS, Game, games_with_viewer

GAMES = Path(__file__).resolve().parents[2] / "shared" / "data" / "human-games" / "train.jsonl"
ROUNDING = 0.5 + 1e-6  # points are whole percentage points


def probability_without(record: GameRecord, d: Deduction, kind: str, index: int) -> np.ndarray:
    """Each seat's spy probability with one group taken out of the evidence: a seat's votes out of
    the record itself (as if the deadline had cast them, which makes them nobody's choice), since
    they are also how the others' votes are read; a mission's result or a leader's teams as their
    column of the log weight."""
    if kind == "votes":
        return np.array(deduce(without_votes_of(record, index), d.viewer).spy_probability)
    pieces = {"mission_result": "sabotage", "proposals": "proposals"}
    columns = getattr(d.evidence, pieces[kind]).copy()
    columns[:, index] = 0.0
    evidence: Evidence = replace(d.evidence, **{pieces[kind]: columns})
    log_w = evidence.total()
    weights = np.exp(log_w - log_w.max())
    rows = d.facts.possible_rows
    return (weights @ rows) / weights.sum()


def without_votes_of(record: GameRecord, voter: int) -> GameRecord:
    def marked(p):
        return replace(p, auto_votes=tuple(sorted({*p.auto_votes, voter})))

    missions = tuple(replace(m, proposals=tuple(map(marked, m.proposals))) for m in record.missions)
    return replace(record, missions=missions)


def every_group(record: GameRecord, d: Deduction) -> list[tuple[str, int]]:
    return (
        [("mission_result", m) for m in range(d.evidence.sabotage.shape[1])]
        + [("votes", s) for s in range(record.players)]
        + [("proposals", s) for s in range(record.players)]
    )


def cited_group(record: GameRecord, reason) -> tuple[str, int]:
    a = reason.args
    if reason.code == "mission_result":
        played = [m.mission for m in record.played_missions]
        return "mission_result", played.index(a["mission"])
    return reason.code, a["voter"] if reason.code == "votes" else a["leader"]


def vote_facts(record: GameRecord, voter: int) -> dict[str, int]:
    counts = {"cast": 0, "approved_failed": 0, "rejected_succeeded": 0, "rejected_failed": 0, "approved_succeeded": 0}
    for mission in record.missions:
        for proposal in mission.proposals:
            if voter in proposal.auto_votes:
                continue
            counts["cast"] += 1
            if mission.played and proposal is mission.proposals[-1]:
                approved, succeeded = proposal.votes[voter], mission.fails < mission.fails_required
                key = f"{'approved' if approved else 'rejected'}_{'succeeded' if succeeded else 'failed'}"
                counts[key] += 1
    return counts


def proposal_facts(record: GameRecord, leader: int) -> dict[str, int]:
    counts = {"proposed": 0, "led_failed": 0, "led_succeeded": 0}
    for mission in record.missions:
        for proposal in mission.proposals:
            if proposal.leader != leader or proposal.auto_team:
                continue
            counts["proposed"] += 1
            if mission.played and proposal is mission.proposals[-1]:
                succeeded = mission.fails < mission.fails_required
                counts["led_succeeded" if succeeded else "led_failed"] += 1
    return counts


def check_fact(record: GameRecord, reason) -> None:
    a = reason.args
    if reason.code == "mission_result":
        mission = next(m for m in record.played_missions if m.mission == a["mission"])
        assert a["succeeded"] == (mission.fails < mission.fails_required)
        assert a["fails"] == mission.fails
        assert a["on_team"] == (a["seat"] in mission.proposals[-1].team)
    elif reason.code == "votes" and a["fact"] == "vote_on":
        # A vote the voter chose, as the reason tells it: on a team that never went on a mission, or
        # (told this way where its kind would read the wrong way round) the voter's own on one that went.
        voter = a["voter"]
        assert any(
            number == a["proposal"]
            and proposal.mission == a["mission"]
            and proposal.votes[voter] == a["approved"]
            and voter not in proposal.auto_votes
            and (voter == a["seat"] or not (mission.played and proposal is mission.proposals[-1]))
            for mission in record.missions
            for number, proposal in enumerate(mission.proposals, start=1)
        ), a
    elif reason.code == "votes":
        counts = vote_facts(record, a["voter"])
        assert a["count"] == counts[a["fact"]] and (a["count"] > 0 or a["fact"] == "cast"), (a, counts)
        if a["voter"] == a["seat"] and a["fact"] != "cast":
            # A seat's own votes never read the wrong way round: votes for failed teams raise it.
            assert (a["points"] > 0) == (a["fact"] in SUSPICIOUS_VOTES), a
    elif reason.code == "proposals":
        counts = proposal_facts(record, a["leader"])
        assert a["count"] == counts[a["fact"]] and (a["count"] > 0 or a["fact"] == "proposed"), (a, counts)
    else:
        raise AssertionError(f"unknown behavioural reason {reason.code}")


def check_reasons(record: GameRecord, viewer: Viewer) -> int:
    """Checks every behavioural reason of this deduction; returns how many there were."""
    try:
        d = deduce(record, viewer)
    except ImpossibleRecord:
        return 0
    explanation = explain(record, d)
    p_all = np.array(d.spy_probability)
    effects = {group: p_all - probability_without(record, d, *group) for group in every_group(record, d)}
    checked = 0
    for seat, reasons in enumerate(explanation.seats):
        behavioural = [r for r in reasons if r.code in ("mission_result", "votes", "proposals")]
        cited = []
        for reason in behavioural:
            group = cited_group(record, reason)
            cited.append(group)
            measured = 100 * effects[group][seat]
            points = reason.args["points"]
            assert abs(measured - points) <= ROUNDING, (reason, measured)
            assert np.sign(measured) == np.sign(points) and abs(points) >= MIN_POINTS, (reason, measured)
            check_fact(record, reason)
            checked += 1
        # The largest effects are the ones shown, and none of at least MIN_POINTS is left out
        # when there was room for it.
        left_out = [abs(100 * e[seat]) for g, e in effects.items() if g not in cited]
        if behavioural and left_out:
            assert max(left_out) <= min(abs(r.args["points"]) for r in behavioural) + ROUNDING
        if len(reasons) < MAX_REASONS_PER_SEAT and seat != viewer.seat and left_out:
            assert max(left_out) < MIN_POINTS + ROUNDING
    return checked


@SETTINGS
@given(games_with_viewer())
def test_removing_the_cited_evidence_moves_the_seat_by_the_stated_points(case: tuple[Game, Viewer]) -> None:
    game, viewer = case
    check_reasons(game.record, viewer)


@SETTINGS
@given(games_with_viewer())
def test_a_certain_seat_is_moved_by_nothing(case: tuple[Game, Viewer]) -> None:
    # Exactly nothing, not a softmax's rounding noise: the sign of a seat's effect on itself picks
    # the fact its own votes or teams cite.
    game, viewer = case
    try:
        d = deduce(game.record, viewer)
    except ImpossibleRecord:
        return
    rows = d.facts.possible_rows
    certain = [seat for seat in range(game.record.players) if rows[:, seat].all() or not rows[:, seat].any()]
    assert (attribute(rows, d.evidence).effects[:, certain] == 0.0).all()


def test_reasons_on_real_games_measure_what_they_say() -> None:
    if not GAMES.exists():
        pytest.skip(f"{GAMES} not found: the real records are not on this machine")
    lines = [line for line in GAMES.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(7)
    checked = 0
    for line in rng.sample(lines, 150):
        record = parse_record(json.loads(line))
        spies = set(record.outcome.spies) if record.outcome else set()
        played = len(record.played_missions)
        cut = record.cut_after_mission(rng.randint(0, played)) if played else record.without_outcome()
        seat = rng.choice([s for s in range(record.players) if s not in spies])
        checked += check_reasons(cut, Viewer.resistance(seat))
        checked += check_reasons(cut, Viewer.outsider())
    assert checked > 100  # real games do give behavioural reasons


@SETTINGS
@given(games_with_viewer())
def test_a_seats_votes_one_by_one_add_up_to_its_vote_term(case: tuple[Game, Viewer]) -> None:
    game, viewer = case
    try:
        d = deduce(game.record, viewer)
    except ImpossibleRecord:
        return
    if d.evidence.vote_terms is None:  # no proposal yet: no vote to weigh
        assert d.arrays.proposal_count == 0
        return
    every_seat = list(range(game.record.players))
    terms = d.evidence.vote_terms(every_seat)
    assert terms.shape == (game.record.players, d.arrays.proposal_count, d.possible)
    for voter in every_seat:
        assert np.allclose(terms[voter].sum(axis=0), d.evidence.votes[:, voter], atol=1e-4)
    # Asked for some seats, in any order, it gives theirs.
    assert np.array_equal(d.evidence.vote_terms(every_seat[::-2]), terms[every_seat[::-2]])


@SETTINGS
@given(games_with_viewer())
def test_a_votes_reason_names_the_kind_of_vote_that_moved_the_seat_most(case: tuple[Game, Viewer]) -> None:
    """Of all a voter's votes, the one whose own term taken out moves the seat back most the way the
    reason's points go is the one the reason tells: that very vote, or its kind with its count where
    the kind does not read the wrong way round for the voter itself."""
    game, viewer = case
    try:
        d = deduce(game.record, viewer)
    except ImpossibleRecord:
        return
    proposals = [(m, proposal) for m in game.record.missions for proposal in m.proposals]
    rows = d.facts.possible_rows
    for seat, reasons in enumerate(explain(game.record, d).seats):
        for reason in (r for r in reasons if r.code == "votes"):
            a = reason.args
            moved = []
            for p, (mission, proposal) in enumerate(proposals):
                without = d.log_weights - d.evidence.vote_terms([a["voter"]])[0, p]
                weights = np.exp(without - without.max())
                back = d.spy_probability[seat] - weights @ rows[:, seat] / weights.sum()
                moved.append((back * np.sign(a["points"]), mission, proposal))
            best = max(item[0] for item in moved)
            if best <= 1e-5:
                continue  # no one vote moved it that way: the count of the voter's votes is told
            # The votes that moved it most, within what single precision tells apart (two alike
            # votes on one team proposed twice move it alike).
            told = set()
            for effect, mission, proposal in moved:
                if effect < best - 1e-4:
                    continue
                approved = proposal.votes[a["voter"]]
                number = mission.proposals.index(proposal) + 1
                told.add(("vote_on", approved, number, proposal.mission))
                if mission.played and proposal is mission.proposals[-1]:
                    kind = f"{'approved' if approved else 'rejected'}_{'succeeded' if mission.succeeded else 'failed'}"
                    if seat != a["voter"] or (a["points"] > 0) == (kind in SUSPICIOUS_VOTES):
                        told.discard(("vote_on", approved, number, proposal.mission))
                        told.add((kind,))
            cited = (a["fact"],) if a["fact"] != "vote_on" else ("vote_on", a["approved"], a["proposal"], a["mission"])
            assert cited in told, (a, told)
