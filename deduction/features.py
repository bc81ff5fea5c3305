"""The public facts of a record as arrays, shared by fitting and prediction so they cannot drift apart.

Everything here depends on the public record alone (and, for a vote, on the voter's seat).
How a hidden assignment changes a term is left to `deduction.behaviour`, which indexes
these arrays by the assignment's spies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deduction.assignments import all_assignments
from engine import GameRecord

# Spies on a team, as the models see it: 0, 1, or 2 and more.
TEAM_SPY_BUCKETS = 3

VOTE_FEATURES = (
    "bias",
    "on_team",
    "is_leader",
    "team_spies_1",
    "team_spies_2plus",
    "leader_is_spy",
    "on_team_with_spy",
    "proposal_number",
    "fifth_proposal",
    "mission_number",
    "successes",
    "failures",
    "team_suspicion",
    "team_suspicion_on_team",
    "on_team_with_2plus",
    "spy_team_x_failures",
    "spy_team_x_successes",
    "spy_team_x_suspicion",
    "leader_spy_x_on_team",
)


@dataclass(frozen=True)
class RecordArrays:
    """One row per proposal (in the order made) and one column per seat."""

    players: int
    spies: int
    leaders: np.ndarray  # (P,) leader seat
    teams: np.ndarray  # (P, players) bool: on the team
    votes: np.ndarray  # (P, players) bool: approved
    proposal_numbers: np.ndarray  # (P,) 1..5 within its mission
    mission_numbers: np.ndarray  # (P,) 1..5
    successes_before: np.ndarray  # (P,) successful missions before this proposal
    failures_before: np.ndarray  # (P,) failed missions before this proposal
    team_suspicion: np.ndarray  # (P, players) chance the team holds a spy, seen by that seat as Resistance
    played_index: np.ndarray  # (M,) row of the approved proposal of each played mission
    played_missions: np.ndarray  # (M,) mission number
    played_fails: np.ndarray  # (M,) Fail cards shown
    played_fails_required: np.ndarray  # (M,)
    card_players: np.ndarray  # (M, players) bool: played their own card (a deadline played nobody's Fail)
    # What a deadline filled in is nobody's choice, so no habit is read into it:
    team_chosen: np.ndarray  # (P,) False for a team drawn at random for a leader who missed the deadline
    vote_chosen: np.ndarray  # (P, players) False for a vote the deadline filled in

    @property
    def proposal_count(self) -> int:
        return len(self.leaders)


def record_arrays(record: GameRecord) -> RecordArrays:
    players = record.players
    proposals = [(m, number, p) for m in record.missions for number, p in enumerate(m.proposals, 1)]
    played = [m for m in record.missions if m.played]
    count = len(proposals)
    # Row of each played mission's approved proposal, and how many missions were played and
    # failed before each proposal, from the running totals of the missions before it.
    per_mission = np.array([len(m.proposals) for m in record.missions], dtype=np.intp)
    is_played = np.array([m.played for m in record.missions], dtype=bool)
    failed = np.array([m.played and not m.succeeded for m in record.missions], dtype=bool)
    mission_of_row = np.repeat(np.arange(len(record.missions)), per_mission)
    played_before = (np.cumsum(is_played) - is_played)[mission_of_row]
    failures = (np.cumsum(failed) - failed)[mission_of_row]
    team_lengths = [len(p.team) for _, _, p in proposals]
    teams = np.zeros((count, players), dtype=bool)
    teams[np.repeat(np.arange(count), team_lengths), [s for _, _, p in proposals for s in p.team]] = True
    card_players = np.zeros((len(played), players), dtype=bool)
    card_players[
        np.repeat(np.arange(len(played)), [len(m.card_players) for m in played]),
        [s for m in played for s in m.card_players],
    ] = True
    vote_chosen = np.ones((count, players), dtype=bool)
    for row, (_, _, p) in enumerate(proposals):
        if p.auto_votes:
            vote_chosen[row, list(p.auto_votes)] = False
    arrays = RecordArrays(
        players=players,
        spies=record.spies,
        leaders=np.array([p.leader for _, _, p in proposals], dtype=np.intp),
        teams=teams,
        votes=np.array([p.votes for _, _, p in proposals], dtype=bool).reshape(count, players),
        proposal_numbers=np.array([number for _, number, _ in proposals], dtype=np.intp),
        mission_numbers=np.array([m.mission for m, _, _ in proposals], dtype=np.intp),
        successes_before=played_before - failures,
        failures_before=failures,
        team_suspicion=np.zeros((count, players)),
        played_index=(np.cumsum(per_mission) - 1)[is_played],
        played_missions=np.array([m.mission for m in played], dtype=np.intp),
        played_fails=np.array([m.fails for m in played], dtype=np.intp),
        played_fails_required=np.array([m.fails_required for m in played], dtype=np.intp),
        card_players=card_players,
        team_chosen=np.array([not p.auto_team for _, _, p in proposals], dtype=bool),
        vote_chosen=vote_chosen,
    )
    if count:
        arrays.team_suspicion[:] = _team_suspicion(arrays, played_before)
    return arrays


def _marked(rows: int, columns: int, cells: list[tuple[int, int]]) -> np.ndarray:
    """A boolean matrix, True at the (row, column) cells listed."""
    marked = np.zeros((rows, columns), dtype=bool)
    if cells:
        marked[tuple(np.array(cells, dtype=np.intp).T)] = True
    return marked


def _team_suspicion(arrays: RecordArrays, prefix: np.ndarray) -> np.ndarray:
    """For each proposal and seat: the share of assignments, consistent with the missions
    played before it and with that seat in the Resistance, that put a spy on the team."""
    assignments = all_assignments(arrays.players, arrays.spies)
    # Counts as float products: numpy multiplies float matrices with BLAS, integer ones in a slow loop.
    as_float = assignments.astype(float)
    spies_on_teams = as_float @ arrays.teams.T  # (A, P)
    spies_playing = as_float @ arrays.card_players.T  # (A, M)
    # consistent_after[j]: consistent with the first j played missions.
    consistent_after = np.ones((len(arrays.played_index) + 1, len(assignments)), dtype=bool)
    for j, fails in enumerate(arrays.played_fails):
        consistent_after[j + 1] = consistent_after[j] & (spies_playing[:, j] >= fails)
    resistance_seat = (~assignments).astype(float)  # (A, players)
    before = consistent_after[prefix]  # (P, A)
    total = before.astype(float) @ resistance_seat  # (P, players)
    with_spy = (before & (spies_on_teams.T > 0)).astype(float) @ resistance_seat
    return np.divide(with_spy, total, out=np.zeros(total.shape), where=total > 0)


# Every vote feature is a number the voter can see (its multiplier, per vote) times a 0/1
# pattern over the hidden situations (leader a spy, the team's spies bucket): the public
# features are on in every situation, the others only in the situations they describe.
_ANY_SPY_ON_TEAM = np.array([0.0, 1.0, 1.0])  # by team bucket
_SITUATION_PATTERNS = {
    "leader_is_spy": np.array([[0.0] * 3, [1.0] * 3]),
    "team_spies_1": np.array([[0.0, 1.0, 0.0]] * 2),
    "team_spies_2plus": np.array([[0.0, 0.0, 1.0]] * 2),
    "on_team_with_spy": np.array([_ANY_SPY_ON_TEAM] * 2),
    "on_team_with_2plus": np.array([[0.0, 0.0, 1.0]] * 2),
    "leader_spy_x_on_team": np.array([[0.0] * 3, [1.0] * 3]),
    "spy_team_x_failures": np.array([_ANY_SPY_ON_TEAM] * 2),
    "spy_team_x_successes": np.array([_ANY_SPY_ON_TEAM] * 2),
    "spy_team_x_suspicion": np.array([_ANY_SPY_ON_TEAM] * 2),
}
# (2 leader spy, 3 team buckets, F): where each feature is on.
SITUATION_PATTERN = np.stack(
    [_SITUATION_PATTERNS.get(name, np.ones((2, TEAM_SPY_BUCKETS))) for name in VOTE_FEATURES], axis=-1
)
SITUATION_PATTERN.setflags(write=False)


# Each feature's multiplier is one of a few public numbers: 1, a number about the proposal
# (the same for every voter), or a number about the voter on that proposal.
PROPOSAL_SOURCES = ("proposal_number", "fifth_proposal", "mission_number", "successes", "failures")
VOTER_SOURCES = ("on_team", "is_leader", "team_suspicion", "team_suspicion_on_team")
FEATURE_SOURCE = {
    "bias": "one",
    "on_team": "on_team",
    "is_leader": "is_leader",
    "team_spies_1": "one",
    "team_spies_2plus": "one",
    "leader_is_spy": "one",
    "on_team_with_spy": "on_team",
    "proposal_number": "proposal_number",
    "fifth_proposal": "fifth_proposal",
    "mission_number": "mission_number",
    "successes": "successes",
    "failures": "failures",
    "team_suspicion": "team_suspicion",
    "team_suspicion_on_team": "team_suspicion_on_team",
    "on_team_with_2plus": "on_team",
    "spy_team_x_failures": "failures",
    "spy_team_x_successes": "successes",
    "spy_team_x_suspicion": "team_suspicion",
    "leader_spy_x_on_team": "on_team",
}


def vote_sources(arrays: RecordArrays) -> tuple[np.ndarray, np.ndarray]:
    """The public numbers behind every vote feature: per proposal (P, PROPOSAL_SOURCES) and
    per vote (P, players, VOTER_SOURCES)."""
    count, players = arrays.votes.shape
    per_proposal = np.empty((count, len(PROPOSAL_SOURCES)))
    per_proposal[:, 0] = arrays.proposal_numbers / 5.0
    per_proposal[:, 1] = arrays.proposal_numbers == 5
    per_proposal[:, 2] = arrays.mission_numbers / 5.0
    per_proposal[:, 3] = arrays.successes_before
    per_proposal[:, 4] = arrays.failures_before
    per_vote = np.zeros((count, players, len(VOTER_SOURCES)))
    per_vote[:, :, 0] = arrays.teams
    per_vote[np.arange(count), arrays.leaders, 1] = 1.0
    per_vote[:, :, 2] = arrays.team_suspicion
    per_vote[:, :, 3] = arrays.team_suspicion * arrays.teams
    return per_proposal, per_vote


def vote_multipliers(arrays: RecordArrays) -> np.ndarray:
    """Each feature's public number for every vote: shape (P, players, F)."""
    per_proposal, per_vote = vote_sources(arrays)
    count, players = arrays.votes.shape
    sources = {"one": np.ones((count, players))}
    sources.update(
        {name: np.broadcast_to(per_proposal[:, None, k], (count, players)) for k, name in enumerate(PROPOSAL_SOURCES)}
    )
    sources.update({name: per_vote[:, :, k] for k, name in enumerate(VOTER_SOURCES)})
    return np.stack([sources[FEATURE_SOURCE[name]] for name in VOTE_FEATURES], axis=-1)


def vote_feature_tensor(arrays: RecordArrays) -> np.ndarray:
    """Features of every vote under every hidden situation: shape (P, players, 2, 3, F).

    Axis 2 is whether the leader is a spy, axis 3 the team's spies bucket (0, 1, 2+); the
    voter's own role picks the weight vector, not a feature.
    """
    return vote_multipliers(arrays)[:, :, None, None, :] * SITUATION_PATTERN
