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
    leaders, teams, votes, numbers, missions, prefix, succ, fail = [], [], [], [], [], [], [], []
    team_chosen, auto_votes = [], []
    played_index, played_missions, played_fails, played_required, card_players = [], [], [], [], []
    successes = failures = 0
    for m in record.missions:
        for number, p in enumerate(m.proposals, 1):
            row = len(leaders)
            leaders.append(p.leader)
            team_chosen.append(not p.auto_team)
            auto_votes += [(row, seat) for seat in p.auto_votes]
            teams += [(row, seat) for seat in p.team]
            votes.append(p.votes)
            numbers.append(number)
            missions.append(m.mission)
            prefix.append(len(played_index))
            succ.append(successes)
            fail.append(failures)
        if m.played:
            played_index.append(len(leaders) - 1)
            played_missions.append(m.mission)
            played_fails.append(m.fails)
            played_required.append(m.fails_required)
            card_players += [(len(played_index) - 1, seat) for seat in m.card_players]
            successes += bool(m.succeeded)
            failures += not m.succeeded
    count = len(leaders)
    teams_array = _marked(count, players, teams)
    arrays = RecordArrays(
        players=players,
        spies=record.spies,
        leaders=np.array(leaders, dtype=np.intp),
        teams=teams_array,
        votes=np.array(votes, dtype=bool).reshape(count, players),
        proposal_numbers=np.array(numbers, dtype=np.intp),
        mission_numbers=np.array(missions, dtype=np.intp),
        successes_before=np.array(succ, dtype=np.intp),
        failures_before=np.array(fail, dtype=np.intp),
        team_suspicion=np.zeros((count, players)),
        played_index=np.array(played_index, dtype=np.intp),
        played_missions=np.array(played_missions, dtype=np.intp),
        played_fails=np.array(played_fails, dtype=np.intp),
        played_fails_required=np.array(played_required, dtype=np.intp),
        card_players=_marked(len(played_index), players, card_players),
        team_chosen=np.array(team_chosen, dtype=bool),
        vote_chosen=~_marked(count, players, auto_votes),
    )
    if count:
        arrays.team_suspicion[:] = _team_suspicion(arrays, np.array(prefix, dtype=np.intp))
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


def vote_feature_tensor(arrays: RecordArrays) -> np.ndarray:
    """Features of every vote under every hidden situation: shape (P, players, 2, 3, F).

    Axis 2 is whether the leader is a spy, axis 3 the team's spies bucket (0, 1, 2+); the
    voter's own role picks the weight vector, not a feature.
    """
    count, players = arrays.votes.shape
    features = np.zeros((count, players, 2, TEAM_SPY_BUCKETS, len(VOTE_FEATURES)))
    index = {name: i for i, name in enumerate(VOTE_FEATURES)}
    on_team = arrays.teams.astype(float)
    is_leader = np.zeros((count, players))
    is_leader[np.arange(count), arrays.leaders] = 1.0

    def per_proposal(values: np.ndarray) -> np.ndarray:
        return np.broadcast_to(values.astype(float)[:, None], (count, players))

    # What the voter can see, the same under every hidden situation: written once for all six.
    public = {
        "bias": np.ones((count, players)),
        "on_team": on_team,
        "is_leader": is_leader,
        "proposal_number": per_proposal(arrays.proposal_numbers / 5.0),
        "fifth_proposal": per_proposal(arrays.proposal_numbers == 5),
        "mission_number": per_proposal(arrays.mission_numbers / 5.0),
        "successes": per_proposal(arrays.successes_before),
        "failures": per_proposal(arrays.failures_before),
        "team_suspicion": arrays.team_suspicion,
        "team_suspicion_on_team": arrays.team_suspicion * on_team,
    }
    columns = [index[name] for name in public]
    features[..., columns] = np.stack(list(public.values()), axis=-1)[:, :, None, None, :]

    # The hidden situation, alone and with what the voter sees.
    spy_team = np.array([0.0, 1.0, 1.0])  # by team bucket: any spy on the team
    features[:, :, 1, :, index["leader_is_spy"]] = 1.0
    features[:, :, :, 1, index["team_spies_1"]] = 1.0
    features[:, :, :, 2, index["team_spies_2plus"]] = 1.0
    features[:, :, :, 1:, index["on_team_with_spy"]] = on_team[:, :, None, None]
    features[:, :, :, 2, index["on_team_with_2plus"]] = on_team[:, :, None]
    features[:, :, 1, :, index["leader_spy_x_on_team"]] = on_team[:, :, None]
    features[..., index["spy_team_x_failures"]] = spy_team * arrays.failures_before[:, None, None, None]
    features[..., index["spy_team_x_successes"]] = spy_team * arrays.successes_before[:, None, None, None]
    features[..., index["spy_team_x_suspicion"]] = spy_team * arrays.team_suspicion[:, :, None, None]
    return features
