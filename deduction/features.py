"""The public facts of a record as arrays, shared by fitting and prediction so they cannot drift apart.

Everything here depends on the public record alone (and, for a vote, on the voter's seat and
on whose own votes to leave out: the asker's).
How a hidden assignment changes a term is left to `deduction.behaviour`, which indexes
these arrays by the assignment's spies.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from functools import cache

import numpy as np

from deduction.assignments import assignment_floats
from deduction.missions import mission_facts
from engine import GameRecord

# Spies on a team, as the models see it: 0, 1, or 2 and more.
TEAM_SPY_BUCKETS = 3

# The score before a proposal (missions won, lost) as a state of its own, beside the linear
# successes and failures: a table's mood after an early failure is not a line through the others.
SCORE_STATES = ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (1, 2), (2, 2))

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
    "approval_habit",
    "spy_team_x_approval_habit",
    "others_approving",
    "spy_team_x_others_approving",
    *(f"score_{won}_{lost}" for won, lost in SCORE_STATES),
    *(f"spy_team_x_score_{won}_{lost}" for won, lost in SCORE_STATES),
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
    proposal_context: np.ndarray  # (P,) those four numbers as one (`proposal_context`)
    team_suspicion: np.ndarray  # (P, players) chance the team holds a spy, seen by that seat as Resistance
    played_index: np.ndarray  # (M,) row of the approved proposal of each played mission
    played_missions: np.ndarray  # (M,) mission number
    played_fails: np.ndarray  # (M,) Fail cards shown
    played_fails_required: np.ndarray  # (M,)
    # (M, players) bool: played their own card, shuffled in unseen (a deadline played nobody's Fail,
    # and a spotlighted card was seen: `deduction.missions`)
    card_players: np.ndarray
    hidden_fails: np.ndarray  # (M,) the Fail cards among those
    shown_spies: np.ndarray  # (M, players) bool: played a Fail card everyone saw
    # What a deadline filled in is nobody's choice, so no habit is read into it:
    team_chosen: np.ndarray  # (P,) False for a team drawn at random for a leader who missed the deadline
    vote_chosen: np.ndarray  # (P, players) False for a vote the deadline filled in
    # (A,) for every assignment of `assignments.all_assignments`: the played missions allow it
    consistent: np.ndarray

    @property
    def proposal_count(self) -> int:
        return len(self.leaders)


# The flat integer buffers `record_arrays` reads a record into, so many numbers per row:
PROPOSAL_FIELDS = 7  # leader, number in its round, mission, successes and failures before it, team chosen, context
PLAYED_FIELDS = 5  # the row of its team's proposal, mission, fails, fails required, hidden fails


def record_arrays(record: GameRecord) -> RecordArrays:
    players = record.players
    count = sum(len(m.proposals) for m in record.missions)
    # One pass over the record into flat buffers (bytes for the 0/1 cells, 64-bit integers for the
    # rest) that numpy takes as they are: a hint reads a whole record every time, and numpy turning
    # a few hundred Python objects into an array one by one costs more than the arithmetic after it.
    per_proposal = array("q")  # PROPOSAL_FIELDS per proposal
    per_played = array("q")  # PLAYED_FIELDS per played mission
    votes = bytearray()  # (P, players): 1 for an approval
    teams = bytearray(count * players)  # (P, players): 1 on the team
    filled_votes = bytearray(count * players)  # (P, players): 1 for a vote the deadline filled in
    card_players = bytearray()  # (M, players): 1 for a member whose own card was shuffled in unseen
    shown_spies = bytearray()  # (M, players): 1 for a member whose Fail card everyone saw
    successes = failures = played = 0
    row = 0
    for m in record.missions:
        for number, p in enumerate(m.proposals, 1):
            cells = row * players
            for seat in p.team:
                teams[cells + seat] = 1
            for seat in p.auto_votes:
                filled_votes[cells + seat] = 1
            context = proposal_context(number, m.mission, successes, failures)
            per_proposal.extend((p.leader, number, m.mission, successes, failures, not p.auto_team, context))
            votes.extend(p.votes)
            row += 1
        if m.fails is not None:
            if m.plot:
                facts = mission_facts(m)
                hidden, hidden_fails, shown = facts.hidden_players, facts.hidden_fails, facts.shown_spies
            else:  # the common case: every card but a deadline's was shuffled in unseen
                hidden, hidden_fails, shown = m.card_players, m.fails, ()
            per_played.extend((row - 1, m.mission, m.fails, m.fails_required, hidden_fails))
            mission_cells = bytearray(2 * players)  # its card players, then its shown spies
            for seat in hidden:
                mission_cells[seat] = 1
            for seat in shown:
                mission_cells[players + seat] = 1
            card_players += mission_cells[:players]
            shown_spies += mission_cells[players:]
            played += 1
            if m.fails < m.fails_required:
                successes += 1
            else:
                failures += 1
    proposal_table = np.frombuffer(per_proposal, dtype=np.int64).reshape(count, PROPOSAL_FIELDS)
    played_table = np.frombuffer(per_played, dtype=np.int64).reshape(played, PLAYED_FIELDS)
    teams_cells = _cells(teams, count, players)
    playing = _cells(card_players, played, players)
    shown = _cells(shown_spies, played, players)
    consistent_after = _consistent_after(players, record.spies, playing, played_table[:, 4], shown)
    played_before = proposal_table[:, 3] + proposal_table[:, 4]
    return RecordArrays(
        players=players,
        spies=record.spies,
        leaders=proposal_table[:, 0],
        teams=teams_cells,
        votes=_cells(votes, count, players),
        proposal_numbers=proposal_table[:, 1],
        mission_numbers=proposal_table[:, 2],
        successes_before=proposal_table[:, 3],
        failures_before=proposal_table[:, 4],
        proposal_context=proposal_table[:, 6],
        team_suspicion=_team_suspicion(players, record.spies, teams_cells, consistent_after, played_before),
        played_index=played_table[:, 0],
        played_missions=played_table[:, 1],
        played_fails=played_table[:, 2],
        played_fails_required=played_table[:, 3],
        card_players=playing,
        hidden_fails=played_table[:, 4],
        shown_spies=shown,
        team_chosen=proposal_table[:, 5].astype(bool),
        vote_chosen=~_cells(filled_votes, count, players),
        consistent=consistent_after[-1],
    )


def _cells(buffer: bytearray, rows: int, columns: int) -> np.ndarray:
    """A boolean (rows, columns) matrix over a buffer of 0 and 1 bytes, read-only like the rest."""
    return np.frombuffer(bytes(buffer), dtype=bool).reshape(rows, columns)


def _consistent_after(
    players: int, spies: int, card_players: np.ndarray, fails: np.ndarray, shown_spies: np.ndarray
) -> np.ndarray:
    """(M + 1, A): row j is True for the assignments (`assignments.all_assignments`) the first j
    played missions allow (at least as many spies among the members whose card was hidden as
    hidden Fail cards, and a spy behind every Fail card shown: `deduction.assignments.consistent_mask`)."""
    # Counts as float products: numpy multiplies float matrices with BLAS, integer ones in a slow loop.
    spy_by_seat = assignment_floats(players, spies)[0]
    allowed = np.ones((len(fails) + 1, spy_by_seat.shape[1]), dtype=bool)
    allowed_by = allowed[1:]
    np.greater_equal(card_players @ spy_by_seat, fails[:, None], out=allowed_by)  # (M, A)
    if shown_spies.any():
        allowed_by &= (shown_spies @ spy_by_seat) >= shown_spies.sum(axis=1, keepdims=True)
    np.logical_and.accumulate(allowed_by, axis=0, out=allowed_by)
    return allowed


def _team_suspicion(
    players: int, spies: int, teams: np.ndarray, consistent_after: np.ndarray, prefix: np.ndarray
) -> np.ndarray:
    """For each proposal (`teams`, with `prefix` played missions before it) and seat: the share of
    assignments, consistent with the missions played before it and with that seat in the
    Resistance, that put a spy on the team."""
    spy_by_seat, resistance_seat = assignment_floats(players, spies)
    holds_spy = consistent_after[prefix] & (teams @ spy_by_seat > 0)  # (P, A)
    with_spy = holds_spy.astype(np.float32) @ resistance_seat  # (P, players)
    # How many assignments leave each seat in the Resistance depends only on the missions played before.
    total = (consistent_after.astype(np.float32) @ resistance_seat)[prefix]  # (P, players)
    # None leave a seat known to be a spy in the Resistance, and then none put a spy on the team either: 0.
    return np.divide(with_spy, np.maximum(total, 1.0), dtype=float)


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
    "spy_team_x_approval_habit": np.array([_ANY_SPY_ON_TEAM] * 2),
    "spy_team_x_others_approving": np.array([_ANY_SPY_ON_TEAM] * 2),
    **{f"spy_team_x_score_{won}_{lost}": np.array([_ANY_SPY_ON_TEAM] * 2) for won, lost in SCORE_STATES},
}
# (2 leader spy, 3 team buckets, F): where each feature is on.
SITUATION_PATTERN = np.stack(
    [_SITUATION_PATTERNS.get(name, np.ones((2, TEAM_SPY_BUCKETS))) for name in VOTE_FEATURES], axis=-1
)
SITUATION_PATTERN.setflags(write=False)


# Each feature's multiplier is one of a few public numbers: 1, a number about the proposal
# (the same for every voter), or a number about the voter on that proposal.
PROPOSAL_SOURCES = (
    "proposal_number",
    "fifth_proposal",
    "mission_number",
    "successes",
    "failures",
    *(f"score_{won}_{lost}" for won, lost in SCORE_STATES),
)
VOTER_SOURCES = (
    "on_team",
    "is_leader",
    "team_suspicion",
    "team_suspicion_on_team",
    "approval_habit",
    "others_approving",
)
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
    "approval_habit": "approval_habit",
    "spy_team_x_approval_habit": "approval_habit",
    "others_approving": "others_approving",
    "spy_team_x_others_approving": "others_approving",
    **{f"score_{won}_{lost}": f"score_{won}_{lost}" for won, lost in SCORE_STATES},
    **{f"spy_team_x_score_{won}_{lost}": f"score_{won}_{lost}" for won, lost in SCORE_STATES},
}


def vote_sources(arrays: RecordArrays, tallies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The public numbers behind every vote feature: per proposal (P, PROPOSAL_SOURCES) and
    per vote (VOTER_SOURCES, P, players). `tallies`: the votes that count (`vote_tallies`; the
    asker's own are no evidence to them, so they do not shape how the others' votes are read either)."""
    per_proposal = proposal_sources(
        arrays.proposal_numbers, arrays.mission_numbers, arrays.successes_before, arrays.failures_before
    )
    return per_proposal, voter_sources(arrays, tallies)


def proposal_sources(
    numbers: np.ndarray, missions: np.ndarray, successes: np.ndarray, failures: np.ndarray
) -> np.ndarray:
    """(N, PROPOSAL_SOURCES): the numbers about a proposal its votes are read with, for proposals
    given by their number in the round, their mission and the missions won and lost before them."""
    per_proposal = np.empty((len(numbers), len(PROPOSAL_SOURCES)))
    per_proposal[:, 0] = numbers / 5.0
    per_proposal[:, 1] = numbers == 5
    per_proposal[:, 2] = missions / 5.0
    per_proposal[:, 3] = successes
    per_proposal[:, 4] = failures
    for k, (won, lost) in enumerate(SCORE_STATES):
        per_proposal[:, 5 + k] = (successes == won) & (failures == lost)
    return per_proposal


# A proposal's public context is all that `proposal_sources` reads of it: proposal number 1-5,
# mission 1-5, missions won before it 0-2 and lost 0-2 (a third win or loss ends the game).
# Each context is numbered once, so a model can work out what it makes of each in advance.
PROPOSAL_CONTEXTS = (5, 5, 3, 3)


def proposal_context(number: int, mission: int, successes: int, failures: int) -> int:
    """The context's number: its row in `every_proposal_context`."""
    return ((number - 1) * 5 + mission - 1) * 9 + successes * 3 + failures


@cache
def every_proposal_context() -> np.ndarray:
    """(contexts, PROPOSAL_SOURCES): `proposal_sources` for every proposal context, in their order."""
    number, mission, successes, failures = np.indices(PROPOSAL_CONTEXTS).reshape(4, -1)
    sources = proposal_sources(number + 1, mission + 1, successes, failures)
    sources.setflags(write=False)
    return sources


def voter_sources(arrays: RecordArrays, tallies: np.ndarray) -> np.ndarray:
    """(VOTER_SOURCES, P, players): the numbers about a voter on a proposal its vote is read with."""
    count, players = arrays.votes.shape
    # Source-major, so each source is one contiguous block to write.
    per_vote = np.empty((len(VOTER_SOURCES), count, players))
    on_team, is_leader, suspicion, suspicion_on_team, habit, others = per_vote
    on_team[:] = arrays.teams
    is_leader[:] = 0.0
    is_leader[np.arange(count), arrays.leaders] = 1.0
    suspicion[:] = arrays.team_suspicion
    np.multiply(arrays.team_suspicion, arrays.teams, out=suspicion_on_team)
    approval_habit(tallies, out=habit)
    others_approving(tallies, out=others)
    return per_vote


# An approval habit is shrunk towards about the usual approval rate with this many pseudo-votes.
HABIT_PSEUDO_VOTES = 2.0
USUAL_APPROVAL = 0.6


def vote_tallies(arrays: RecordArrays, own_seat: int | None = None) -> np.ndarray:
    """(2, P, players): 1.0 for each approval, and for each vote cast by choice. A vote the
    deadline filled in is nobody's, and the asker's own are no evidence to them: neither counts."""
    tallies = np.empty((2, *arrays.votes.shape))
    tallies[1] = arrays.vote_chosen
    if own_seat is not None:
        tallies[1, :, own_seat] = 0.0
    np.multiply(tallies[1], arrays.votes, out=tallies[0])
    return tallies


def approval_habit(tallies: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(P, players): how readily each voter approved the earlier proposals of this game, shrunk
    towards the usual rate and centred on it. Some people approve nearly everything; their
    approvals say less about the team. Written into `out` if given."""
    approvals, cast = _before_each(len(tallies[0])) @ tallies  # this game's earlier proposals only
    habit = np.add(approvals, HABIT_PSEUDO_VOTES * USUAL_APPROVAL, out=out)
    habit /= cast + HABIT_PSEUDO_VOTES
    habit -= USUAL_APPROVAL
    return habit


@cache
def _before_each(count: int) -> np.ndarray:
    """(count, count): row i is 1.0 under every earlier proposal; a product with it sums what came before."""
    earlier = np.tri(count, count, -1)
    earlier.setflags(write=False)
    return earlier


def others_approving(tallies: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(P, players): the share of the other voters who approved the same proposal, centred.

    A table talks before it votes, so a vote with the table says less than a vote against it.
    Each vote is read given the others on the same proposal (a pseudo-likelihood: every vote
    conditioned on all the others), so what the table agreed on together is not counted once
    per voter. Written into `out` if given."""
    approvals, cast = _others_tallies(tallies)
    # Half a pseudo-vote each way keeps it defined when no one else chose their vote.
    share = np.add(approvals, 0.5, out=out)
    share /= cast + 1.0
    share -= 0.5
    return share


def others_approving_shifts(tallies: np.ndarray) -> np.ndarray:
    """How `others_approving` moves for each vote when one other voter's approval is taken out of
    the record (axis 0 = 0) or one other voter's rejection (1): (2, P, players). A seat's votes
    are part of how every other vote on the same proposal is read, so taking them out moves those
    readings too. With n other votes counted, a of them approvals, the share (a + 0.5) / (n + 1)
    becomes (a - 0.5) / n or (a + 0.5) / n. Where there is no such vote to take out (nobody else
    voted so, or the vote is the very one taken out) the value is finite and means nothing: the
    caller weighs it nowhere, or takes its change back."""
    approvals, cast = _others_tallies(tallies)
    scale = 1.0 / np.maximum(cast * (cast + 1.0), 1.0)
    # Written into one array in place: building it from a list of two would copy both again.
    shifts = np.empty((2, *approvals.shape))
    after_approval, after_rejection = shifts
    np.subtract(approvals, cast, out=after_approval)
    after_approval -= 0.5
    after_approval *= scale
    np.add(approvals, 0.5, out=after_rejection)
    after_rejection *= scale
    return shifts


def _others_tallies(tallies: np.ndarray) -> np.ndarray:
    """(2, P, players): for each vote, the approvals and the votes cast by everyone else on its proposal."""
    # Each proposal's totals as a product with a column of ones (exact: whole numbers), which numpy
    # hands to BLAS, where a sum along the short last axis steps through the proposals one at a time.
    return (tallies @ ones_vector(tallies.shape[-1]))[..., None] - tallies


@cache
def ones_vector(count: int) -> np.ndarray:
    """A read-only vector of `count` ones, to sum along an axis as a matrix product."""
    ones = np.ones(count)
    ones.setflags(write=False)
    return ones


def vote_multipliers(arrays: RecordArrays) -> np.ndarray:
    """Each feature's public number for every vote: shape (P, players, F)."""
    per_proposal, per_vote = vote_sources(arrays, vote_tallies(arrays))
    count, players = arrays.votes.shape
    sources = {"one": np.ones((count, players))}
    sources.update(
        {name: np.broadcast_to(per_proposal[:, None, k], (count, players)) for k, name in enumerate(PROPOSAL_SOURCES)}
    )
    sources.update(dict(zip(VOTER_SOURCES, per_vote, strict=True)))
    return np.stack([sources[FEATURE_SOURCE[name]] for name in VOTE_FEATURES], axis=-1)


def vote_feature_tensor(arrays: RecordArrays) -> np.ndarray:
    """Features of every vote under every hidden situation: shape (P, players, 2, 3, F).

    Axis 2 is whether the leader is a spy, axis 3 the team's spies bucket (0, 1, 2+); the
    voter's own role picks the weight vector, not a feature.
    """
    return vote_multipliers(arrays)[:, :, None, None, :] * SITUATION_PATTERN
