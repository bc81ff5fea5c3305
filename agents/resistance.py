"""A Resistance member's choices: the team least likely to hold a spy, votes by the posterior
and the stakes, and always Success."""

from __future__ import annotations

import random

import numpy as np

from agents.beliefs import Belief, team_row, teams_of
from agents.view import AgentView
from engine import CastVote, PlayCard, ProposeTeam, rules
from engine.plot import Card

# How much worse than the best team a Resistance member still approves, by proposal number
# (the fifth proposal is always approved: its rejection ends the game).
VOTE_SLACK = {1: 0.02, 2: 0.06, 3: 0.12, 4: 0.25}
# Ties within this are broken at random.
TIE = 1e-9
# A small preference for being on one's own team, which breaks ties among equally clean teams.
OWN_SEAT_BONUS = 1e-6
# A No Confidence card held by a seat at least this likely a spy is a threat to a fifth proposal.
NO_CONFIDENCE_THREAT = 0.1


def best_teams(
    view: AgentView, belief: Belief, rng: random.Random, score_bonus: np.ndarray | None = None
) -> ProposeTeam:
    """The proposal whose team is most likely to succeed under `belief` (over the open missions
    under Targeting), the proposer's own seat breaking ties, then `rng`."""
    players = view.players
    candidates: list[tuple[float, int, tuple[int, ...]]] = []
    for mission in view.public.open_missions:
        teams, matrix = teams_of(players, rules.team_size(players, mission))
        score = belief.success_chance(matrix, rules.fails_required(players, mission))
        score = score + OWN_SEAT_BONUS * matrix[:, view.seat]
        if score_bonus is not None:
            score = score + matrix @ score_bonus
        top = score.max()
        candidates.extend((float(score[i]), mission, teams[i]) for i in np.flatnonzero(score >= top - TIE))
    top = max(c[0] for c in candidates)
    _, mission, team = rng.choice([c for c in candidates if c[0] >= top - TIE])
    return ProposeTeam(view.seat, team, mission if view.public.variants.targeting else None)


def approves(view: AgentView, belief: Belief) -> bool:
    """Whether a Resistance member with `belief` approves the team on the table."""
    public = view.public
    # Each No Confidence a likely spy holds can overturn one more proposal: the proposals it can
    # turn into the fifth failed one count as that many proposals later.
    proposal = public.proposal_number + overturn_threats(view, belief)
    if proposal >= rules.MAX_PROPOSALS_PER_MISSION:
        return True
    assert public.team is not None and public.current_mission is not None
    players = view.players
    mission = public.current_mission
    needed = rules.fails_required(players, mission)
    _, matrix = teams_of(players, rules.team_size(players, mission))
    best = float(belief.success_chance(matrix, needed).max())
    chance = float(belief.success_chance(team_row(players, public.team), needed)[0])
    slack = VOTE_SLACK[proposal]
    if view.failures == rules.MISSIONS_TO_WIN - 1:
        slack /= 2  # one more failed mission loses the game
    return chance >= best - slack - TIE


def overturn_threats(view: AgentView, belief: Belief) -> int:
    """The No Confidence cards held by other seats at least `NO_CONFIDENCE_THREAT` likely spies:
    on a mission's fifth proposal a spy's one wins the game, so the Resistance must approve a
    team that many proposals earlier."""
    plot = view.public.plot
    if plot is None:
        return 0
    suspicion = belief.spy_probability
    return sum(
        hand.count(Card.NO_CONFIDENCE)
        for seat, hand in enumerate(plot.hands)
        if seat != view.seat and suspicion[seat] >= NO_CONFIDENCE_THREAT
    )


def propose(view: AgentView, belief: Belief, rng: random.Random) -> ProposeTeam:
    return best_teams(view, belief, rng)


def vote(view: AgentView, belief: Belief) -> CastVote:
    return CastVote(view.seat, approves(view, belief))


def play(view: AgentView) -> PlayCard:
    return PlayCard(view.seat, False)
