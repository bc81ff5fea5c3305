"""A spy's choices: teams with a spy on them that look clean to the table, votes that keep the
spy's own suspicion low, and Fail cards as often as people play them, coordinated with the
other spies on the team when the spies know each other."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np

from agents import resistance
from agents.beliefs import Belief, Deductions, team_row, teams_of
from agents.difficulty import Difficulty
from agents.sabotage import SabotageRates
from agents.view import AgentView
from deduction.knowledge import Viewer
from engine import CastVote, GameRecord, PlayCard, ProposeTeam, rules

# How strongly a spy leader prefers being on its own team, in chance-of-looking-clean points.
OWN_SEAT_PREFERENCE = 0.03
# How much more suspicious to the table (its chance of being a spy, from the public record) a
# spy lets itself look for a vote against its cover: to approve a team that can fail its
# mission, and to reject a clean team a Resistance member in its seat would approve.
SUSPICION_BUDGET_FOR_A_FAILABLE_TEAM = 0.02
SUSPICION_BUDGET_FOR_A_REJECTION = 0.02
# Chance of rejecting a clean team whose success would win the game for the Resistance.
REJECT_CLEAN_WHEN_DECISIVE = 0.9


def spies_wanted(view: AgentView, mission: int) -> int:
    """How many spies a spy leader puts on a team: enough to fail it, as far as it knows them."""
    return min(rules.fails_required(view.players, mission), len(view.own.known_spies))


def propose(view: AgentView, belief: Belief, table: Belief, rng: random.Random) -> ProposeTeam:
    """The team that looks cleanest to the table among those holding exactly as many known spies
    as the mission needs (the leader preferably one of them)."""
    players = view.players
    known = np.zeros(players, dtype=bool)
    known[list(view.own.known_spies)] = True
    candidates: list[tuple[float, int, tuple[int, ...]]] = []
    for mission in view.public.open_missions:
        teams, matrix = teams_of(players, rules.team_size(players, mission))
        looks = table.success_chance(matrix, rules.fails_required(players, mission))
        fitting = (matrix @ known) == spies_wanted(view, mission)
        score = looks + OWN_SEAT_PREFERENCE * matrix[:, view.seat]
        score = np.where(fitting, score, -1.0)
        top = score.max()
        candidates.extend((float(score[i]), mission, teams[i]) for i in np.flatnonzero(score >= top - resistance.TIE))
    top = max(c[0] for c in candidates)
    _, mission, team = rng.choice([c for c in candidates if c[0] >= top - resistance.TIE])
    return ProposeTeam(view.seat, team, mission if view.public.variants.targeting else None)


def vote(view: AgentView, belief: Belief, cover: Belief, deductions: Deductions, rng: random.Random) -> CastVote:
    """Approve a team that can fail its mission, reject one that cannot, unless that vote differs
    from what a Resistance member in this seat would vote (its cover) and would make the spy look
    more suspicious to the table than the vote is worth."""
    public = view.public
    assert public.team is not None and public.current_mission is not None
    needed = rules.fails_required(view.players, public.current_mission)
    can_fail = float(belief.reaching(team_row(view.players, public.team), needed)[0]) >= 0.5
    if public.proposal_number >= rules.MAX_PROPOSALS_PER_MISSION:
        return CastVote(view.seat, can_fail)  # a rejection now wins the game
    covered = resistance.approves(view, cover)
    if covered == can_fail:
        return CastVote(view.seat, can_fail)
    if not can_fail and view.successes == rules.MISSIONS_TO_WIN - 1:
        return CastVote(view.seat, rng.random() >= REJECT_CLEAN_WHEN_DECISIVE)
    cost = suspicion_after(view, can_fail, covered, deductions) - suspicion_after(view, covered, covered, deductions)
    budget = SUSPICION_BUDGET_FOR_A_FAILABLE_TEAM if can_fail else SUSPICION_BUDGET_FOR_A_REJECTION
    return CastVote(view.seat, can_fail if cost <= budget else covered)


def suspicion_after(view: AgentView, own: bool, others: bool, deductions: Deductions) -> float:
    """The table's chance that this seat is a spy once the votes on the team are revealed, if it
    votes `own` and everyone else votes `others`."""
    votes = tuple(own if seat == view.seat else others for seat in range(view.players))
    return float(deductions.belief(record_with_votes(view, votes), Viewer.outsider()).spy_probability[view.seat])


def record_with_votes(view: AgentView, votes: tuple[bool, ...]) -> GameRecord:
    """The public record as it would read once the team on the table got `votes`."""
    current = view.public.rounds[-1]
    proposal = replace(current.proposals[-1], votes=votes)
    mission = replace(
        current,
        mission=proposal.mission,
        team_size=len(proposal.team),
        fails_required=rules.fails_required(view.players, proposal.mission),
        proposals=(*current.proposals[:-1], proposal),
    )
    earlier = view.record.missions[: len(view.public.rounds) - 1]
    return replace(view.record, missions=(*earlier, mission))


def decisive(view: AgentView) -> bool:
    """Whether this mission decides the game: its failure wins it for the spies or its success
    wins it for the Resistance."""
    return rules.MISSIONS_TO_WIN - 1 in (view.failures, view.successes)


def failers(view: AgentView) -> tuple[int, ...]:
    """The known spies on the team who play Fail if the team sabotages: as many as the mission
    needs, taken in turn from a rotation every spy who knows the others can work out alike (the
    member In the Spotlight last, whose card everyone sees)."""
    assert view.public.team is not None and view.public.current_mission is not None
    on_team = [s for s in view.public.team if s in view.own.known_spies and view.follows_rotation(s)]
    needed = rules.fails_required(view.players, view.public.current_mission)
    if len(on_team) < needed:
        return ()
    start = (view.public.current_mission + view.public.ballot) % len(on_team)
    turn = [on_team[(start + i) % len(on_team)] for i in range(len(on_team))]
    # A member In the Spotlight plays face up: a Fail there shows the whole table a spy, so
    # another spy on the team fails instead when there is one.
    plot = view.public.plot
    spotlighted = plot.spotlight[1] if plot is not None and plot.spotlight is not None else None
    turn.sort(key=lambda seat: seat == spotlighted)
    return tuple(turn[:needed])


def people_spies_on_team(view: AgentView) -> list[int]:
    """The fellow spies on the team who do not share this spy's rotation: people, whose cards it
    cannot count on or foresee."""
    assert view.public.team is not None
    return [s for s in view.public.team if s in view.own.known_spies and not view.follows_rotation(s)]


def _beside_people(view: AgentView, rates: SabotageRates, rng: random.Random) -> PlayCard:
    """A spy's card on a team with a fellow spy who is a person. The computer spies on it share the
    rotation among themselves; each person decides alone, as a Blind Spy's partner would. Where the
    computers alone can supply the Fail cards needed they do, as without the person (whose Fail
    only adds one); else the rotation's failer (one Fail needed) plays so that one Fail between it and
    the person is as likely as a team's sabotage, and with two needed every computer spy fails at
    the team rate, the person's card being the other."""
    public = view.public
    assert public.team is not None and public.current_mission is not None
    mission = public.current_mission
    needed = rules.fails_required(view.players, mission)
    computers = [s for s in public.team if s in view.own.known_spies and view.follows_rotation(s)]
    chance = 1.0 if decisive(view) else rates.team(mission)
    if len(computers) >= needed and needed == 2:
        chosen = failers(view)
        return PlayCard(view.seat, view.seat in chosen and shared_draw(view) < chance)
    if needed == 1:
        if view.seat not in failers(view):
            return PlayCard(view.seat, False)
        return PlayCard(view.seat, rng.random() < (chance if chance == 1.0 else 1 - math.sqrt(1 - chance)))
    return PlayCard(view.seat, rng.random() < chance)


def shared_draw(view: AgentView) -> float:
    """A number in [0, 1) that every spy on the team who knows the others draws alike: their
    agreed coin for a decision they must take together."""
    key = f"{sorted(view.own.known_spies)}:{view.public.ballot}:{view.public.team}"
    return random.Random(key).random()


def sabotage_chance(view: AgentView, rates: SabotageRates, spies_on_team: int) -> float:
    mission = view.public.current_mission
    assert mission is not None
    if spies_on_team >= 2:
        return rates.team(mission)
    return rates.lone(mission, view.successes, view.failures)


def play(view: AgentView, belief: Belief, rates: SabotageRates, difficulty: Difficulty, rng: random.Random) -> PlayCard:
    public = view.public
    assert public.team is not None and public.current_mission is not None
    needed = rules.fails_required(view.players, public.current_mission)
    if not difficulty.coordinate:
        # Every spy for itself, as a lone spy would.
        return PlayCard(view.seat, rng.random() < rates.lone(public.current_mission, view.successes, view.failures))
    if view.failures == rules.MISSIONS_TO_WIN - 1:
        # A Fail now wins the game, and what it shows of the spies no longer matters: every spy on the
        # team plays it, rather than trusting a partner (a person, another program) to follow the rotation.
        return PlayCard(view.seat, True)
    if view.knows_all_spies and people_spies_on_team(view):
        return _beside_people(view, rates, rng)
    if view.knows_all_spies:
        chosen = failers(view)
        if view.seat not in chosen:
            return PlayCard(view.seat, False)
        if decisive(view):
            return PlayCard(view.seat, True)
        on_team = sum(1 for s in public.team if s in view.own.known_spies)
        chance = sabotage_chance(view, rates, on_team)
        # Two failers must agree; a single one decides alone.
        draw = shared_draw(view) if len(chosen) > 1 else rng.random()
        return PlayCard(view.seat, draw < chance)
    # Blind Spies: the other spies on the team, if any, are unknown; each decides alone.
    others = float(belief.reaching(team_row(view.players, public.team), 2)[0])  # this spy and one more
    lone = 1.0 if decisive(view) else rates.lone(public.current_mission, view.successes, view.failures)
    together = 1.0 if decisive(view) else rates.team(public.current_mission)
    if needed == 1:
        # Alone, fail at the lone rate; with another spy, each at the rate that makes one Fail
        # between the two as likely as a team's sabotage (and two Fails unlikely).
        chance = (1 - others) * lone + others * (1 - math.sqrt(1 - together))
    else:
        chance = others * together
    return PlayCard(view.seat, rng.random() < chance)
