"""The behaviour model's log weights against the model spelled out one vote and one team at a time.

`deduction.behaviour.evidence` computes every assignment's log weight at once, through flat
table indices, regrouped vote weights and products with the assignments. Here the same model
is written the slow, obvious way, with the fit's own vote features (`vote_feature_tensor`,
what `deduction.fit` trains the vote weights on): for one set of spies, each played mission's
Fail cards, each chosen team, each chosen vote. The asker's own votes and teams are no
evidence to them, so for a Resistance asker they are turned into the deadline's (nobody's
choice) before spelling it out: that must weigh the same as the fast path's `own_seat`.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
from hypothesis import given

from deduction.behaviour import MAX_TEAM_SPIES, BehaviourParams, default_params, evidence
from deduction.exact import ImpossibleRecord, exact_facts
from deduction.features import (
    TEAM_SPY_BUCKETS,
    every_proposal_context,
    record_arrays,
    vote_feature_tensor,
    vote_sources,
    vote_tallies,
)
from deduction.knowledge import Viewer
from deduction.missions import mission_facts
from engine import GameRecord
from tests.test_deduction_exact import SETTINGS, Game, games_with_viewer
from tests.test_deduction_reasons import without_votes_of

TOLERANCE = 1e-5  # the vote model's log-sigmoid runs in single precision


def as_nobodys_choice(record: GameRecord, seat: int) -> GameRecord:
    """The record with `seat`'s votes and teams marked as filled in by the deadline."""
    record = without_votes_of(record, seat)

    def unchosen(p):
        return replace(p, auto_team=True) if p.leader == seat else p

    missions = tuple(replace(m, proposals=tuple(map(unchosen, m.proposals))) for m in record.missions)
    return replace(record, missions=missions)


def spelled_out_log_weight(record: GameRecord, spies: frozenset[int], params: BehaviourParams) -> float:
    arrays = record_arrays(record)
    features = vote_feature_tensor(arrays)  # (P, players, leader a spy, team bucket, F)
    total = 0.0
    failed = succeeded = 0
    row = 0
    for mission in record.missions:
        for proposal in mission.proposals:
            team_spies = min(len(spies & set(proposal.team)), MAX_TEAM_SPIES)
            leader_spy = int(proposal.leader in spies)
            if not proposal.auto_team:
                leader_on_team = int(proposal.leader in proposal.team)
                cell = (leader_spy, record.players, len(proposal.team), team_spies, leader_on_team)
                total += params.proposal_exponent * params.proposal_log_prob[cell]
            opening = failed + succeeded == 0
            exponent = params.opening_vote_exponent if opening else params.vote_exponent
            bucket = min(team_spies, TEAM_SPY_BUCKETS - 1)
            for voter, approved in enumerate(proposal.votes):
                if voter in proposal.auto_votes:
                    continue
                logit = features[row, voter, leader_spy, bucket] @ params.vote_weights[int(voter in spies)]
                as_cast = logit if approved else -logit
                total += exponent * -math.log1p(math.exp(-as_cast))
            row += 1
        if mission.fails is not None:
            facts = mission_facts(mission)
            playing = min(len(spies & set(facts.hidden_players)), MAX_TEAM_SPIES)
            cell = (mission.mission, failed, mission.fails_required, playing, facts.hidden_fails)
            total += params.sabotage_score_log_prob[cell]
            if mission.fails < mission.fails_required:
                succeeded += 1
            else:
                failed += 1
    return total


@SETTINGS
@given(games_with_viewer())
def test_log_weights_are_the_model_spelled_out(case: tuple[Game, Viewer]) -> None:
    game, viewer = case
    record = game.record
    try:
        facts = exact_facts(record, viewer)
    except ImpossibleRecord:
        return
    rows = facts.possible_rows
    # A handful of the possible assignments, the true one among them when it is possible.
    rng = random.Random(len(rows))
    chosen = sorted(rng.sample(range(len(rows)), min(4, len(rows))))
    truth = np.isin(np.arange(record.players), game.spies)
    chosen += [i for i in np.flatnonzero((rows == truth).all(axis=1)) if i not in chosen]
    params = default_params()
    asker = viewer.seat if not viewer.is_spy else None
    fast = evidence(record_arrays(record), rows[chosen], params, asker).total()
    plain = record if asker is None else as_nobodys_choice(record, asker)
    for got, i in zip(fast, chosen, strict=True):
        spies = frozenset(int(s) for s in np.flatnonzero(rows[i]))
        expected = spelled_out_log_weight(plain, spies, params)
        assert abs(got - expected) <= TOLERANCE * max(1.0, abs(expected)), (sorted(spies), got, expected)


@SETTINGS
@given(games_with_viewer())
def test_a_proposals_numbered_context_reads_as_its_own_numbers(case: tuple[Game, Viewer]) -> None:
    # The vote model works out each context's part of a vote's log-odds in advance and looks it up
    # by number: the number must stand for the very numbers the record gives the proposal.
    arrays = record_arrays(case[0].record)
    per_proposal, _ = vote_sources(arrays, vote_tallies(arrays))
    assert np.array_equal(every_proposal_context()[arrays.proposal_context], per_proposal)
