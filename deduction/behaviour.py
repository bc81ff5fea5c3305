"""The behaviour model: how likely people in each role were to act as the record shows.

For one spy assignment the log-likelihood of the record is

    sabotage + proposal_exponent * proposals + vote_exponent * votes

(`opening_vote_exponent` in place of `vote_exponent` for the votes on proposals made before any
mission was played)

- sabotage: P(Fail cards | spies on the team, mission number, missions failed before it, fails
  required), a table;
- proposals: P(this team | the leader's role, spies on the team, leader on the team), a
  table of how often leaders pick such teams, divided by how many such teams there are;
- votes: a logistic regression per voter role over the vote's public context and the
  hidden situation (spies on the team, leader a spy).

The exponents below 1 temper the vote and proposal terms, whose observations are not
independent (a table talks before it votes). Before any mission has been played a table has
nothing to go on but that talk, and its votes say least: they weigh half as much.
Parameters come from `python -m deduction fit`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from deduction.features import (
    FEATURE_SOURCE,
    PROPOSAL_SOURCES,
    SITUATION_PATTERN,
    TEAM_SPY_BUCKETS,
    VOTE_FEATURES,
    VOTER_SOURCES,
    RecordArrays,
    every_proposal_context,
    ones_vector,
    others_approving_shifts,
    vote_tallies,
    voter_sources,
)
from deduction.role_sets import played_with_avalon_roles
from engine import GameRecord

PARAMS_FORMAT = "resistance-behaviour/4"
MAX_TEAM_SPIES = 4  # no team holds more spies than the 4 of a 10-player game
# A proposal's hidden situation for the vote model: leader a spy or not x the team's spies bucket.
SITUATIONS = 2 * TEAM_SPY_BUCKETS
# A vote's log-probability is worked out for either role of its voter and every situation: the
# tables are (ROLES x SITUATIONS, P, players), so that anything known per vote ((P, players): its
# sign, its weight) combines with every role and situation over one contiguous block, and each
# role's table is a (SITUATIONS x P, players) matrix for the sums over assignments to multiply.
ROLES = 2  # 0: the voter in the Resistance, 1: a spy
ROLE_SITUATIONS = ROLES * SITUATIONS
# The vote term is worked out in single precision: numpy runs the exponential and logarithm with
# SIMD there (double precision's one element at a time) and BLAS multiplies single-precision
# matrices twice as fast, and a hint's vote sums are most of its work. Each vote's term is good to
# about 1e-7 of its size, a seat's sum over 25 proposals to about 1e-6, far below the whole points
# a hint shows; the sums are added to the other pieces in double precision.
VOTE_DTYPE = np.float32


@dataclass(frozen=True)
class BehaviourParams:
    vote_weights: np.ndarray  # (2, F): row 0 for a Resistance voter, row 1 for a spy voter
    vote_exponent: float
    opening_vote_exponent: float  # for the votes on proposals made before any mission was played
    proposal_exponent: float
    # log P(fails | mission 1..5, fails required 1..2, spies on team 0..4), axes sized to index directly
    sabotage_log_prob: np.ndarray  # (6, 3, 5, 5)
    # the same by score too: log P(fails | mission, failed missions before it 0..2, fails required, spies on team)
    sabotage_score_log_prob: np.ndarray  # (6, 3, 3, 5, 5)
    # log P(this very team | leader role, players, team size, spies on team, leader on team)
    proposal_log_prob: np.ndarray  # (2, 11, 6, 5, 2)
    # How a table played with Avalon's roles voted (Merlin knew the spies and hinted; the table
    # voted on his hints): its own vote weights and exponents, the same tables. None: read as plain.
    avalon: BehaviourParams | None = None

    def for_record(self, record: GameRecord) -> BehaviourParams:
        """The parameters for the rules the record's players played by."""
        return self.avalon if self.avalon is not None and played_with_avalon_roles(record) else self

    @cached_property
    def flat_tables(self) -> dict[str, tuple[np.ndarray, tuple[int, ...]]]:
        """The sabotage and proposal tables in C order, each with how far one step along each
        axis moves in it, to be read with flat indices."""

        def flat(table: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
            steps = tuple(int(np.prod(table.shape[axis + 1 :])) for axis in range(table.ndim))
            return np.ascontiguousarray(table).ravel(), steps

        return {"sabotage_score": flat(self.sabotage_score_log_prob), "proposal": flat(self.proposal_log_prob)}

    @cached_property
    def source_vote_weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The vote weights regrouped by the public number each feature multiplies
        (`features.FEATURE_SOURCE`), for every voter role x hidden situation (leader spy x team
        bucket) at once, in that order (`ROLE_SITUATIONS`): (12,) for the constant,
        (PROPOSAL_SOURCES, 12) and (VOTER_SOURCES, 12). `features.vote_feature_tensor` times the
        weights, spelled out without building it."""
        by_feature = self.vote_weights[:, None, None, :] * SITUATION_PATTERN  # (2, 2, 3, F)
        by_feature = by_feature.reshape(-1, len(VOTE_FEATURES)).T  # (F, 12)

        def summed(source: str) -> np.ndarray:
            return sum(by_feature[f] for f, name in enumerate(VOTE_FEATURES) if FEATURE_SOURCE[name] == source)

        return (
            summed("one"),
            np.array([summed(source) for source in PROPOSAL_SOURCES]),
            np.array([summed(source) for source in VOTER_SOURCES]),
        )

    @cached_property
    def context_vote_logits(self) -> np.ndarray:
        """(contexts, 12): the part of the vote model's log-odds that depends on nothing but the
        proposal's public context (`features.every_proposal_context`), the constant included."""
        constant, proposal_weights, _ = self.source_vote_weights
        logits = every_proposal_context() @ proposal_weights + constant
        logits.setflags(write=False)
        return logits

    @cached_property
    def others_approving_weights(self) -> np.ndarray:
        """(12, 1, 1): the weight of the share of the others approving, per voter role x hidden
        situation, in the vote term's precision, ready to scale a (P, players) table."""
        weights = self.source_vote_weights[2][VOTER_SOURCES.index("others_approving")]
        return weights.astype(VOTE_DTYPE)[:, None, None]

    def to_json(self) -> dict:
        def table(values: np.ndarray):
            return np.where(np.isfinite(values), np.round(values, 6), -1e9).tolist()

        data = {
            "format": PARAMS_FORMAT,
            "vote_features": list(VOTE_FEATURES),
            **self._voting_json(),
            "sabotage_log_prob": table(self.sabotage_log_prob),
            "sabotage_score_log_prob": table(self.sabotage_score_log_prob),
            "proposal_log_prob": table(self.proposal_log_prob),
        }
        if self.avalon is not None:
            data["avalon"] = self.avalon._voting_json()
        return data

    def _voting_json(self) -> dict:
        return {
            "vote_weights": {
                "resistance": np.round(self.vote_weights[0], 6).tolist(),
                "spy": np.round(self.vote_weights[1], 6).tolist(),
            },
            "vote_exponent": self.vote_exponent,
            "opening_vote_exponent": self.opening_vote_exponent,
            "proposal_exponent": self.proposal_exponent,
        }

    @classmethod
    def from_json(cls, data: dict) -> BehaviourParams:
        if data.get("format") != PARAMS_FORMAT:
            raise ValueError(f"not a {PARAMS_FORMAT} parameter file")
        if tuple(data["vote_features"]) != VOTE_FEATURES:
            raise ValueError("the parameter file was fitted with other vote features; run `python -m deduction fit`")

        def voting(part: dict) -> dict:
            return {
                "vote_weights": np.array([part["vote_weights"]["resistance"], part["vote_weights"]["spy"]]),
                "vote_exponent": float(part["vote_exponent"]),
                "opening_vote_exponent": float(part["opening_vote_exponent"]),
                "proposal_exponent": float(part["proposal_exponent"]),
            }

        tables = {
            "sabotage_log_prob": np.array(data["sabotage_log_prob"], dtype=float),
            "sabotage_score_log_prob": np.array(data["sabotage_score_log_prob"], dtype=float),
            "proposal_log_prob": np.array(data["proposal_log_prob"], dtype=float),
        }
        avalon = cls(**voting(data["avalon"]), **tables) if "avalon" in data else None
        params = cls(**voting(data), **tables, avalon=avalon)
        shapes = {
            "vote_weights": (params.vote_weights, (2, len(VOTE_FEATURES))),
            "avalon vote_weights": ((avalon or params).vote_weights, (2, len(VOTE_FEATURES))),
            "sabotage_log_prob": (params.sabotage_log_prob, (6, 3, MAX_TEAM_SPIES + 1, MAX_TEAM_SPIES + 1)),
            "sabotage_score_log_prob": (
                params.sabotage_score_log_prob,
                (6, 3, 3, MAX_TEAM_SPIES + 1, MAX_TEAM_SPIES + 1),
            ),
            "proposal_log_prob": (params.proposal_log_prob, (2, 11, 6, MAX_TEAM_SPIES + 1, 2)),
        }
        for name, (values, shape) in shapes.items():
            if values.shape != shape:
                raise ValueError(f"{name} has shape {values.shape}, not {shape}")
        return params

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> BehaviourParams:
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def default_params() -> BehaviourParams:
    """The parameters shipped with the package (deduction/params/behaviour.json)."""
    text = resources.files("deduction").joinpath("params/behaviour.json").read_text(encoding="utf-8")
    return BehaviourParams.from_json(json.loads(text))


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    # log(1 / (1 + e^-x)) without overflow for large |x|; np.logaddexp(0, -x) is the same, four times slower.
    tail = np.log(np.exp(-np.abs(x)) + VOTE_DTYPE(1.0))
    return np.minimum(x, VOTE_DTYPE(0.0)) - tail


def _vote_logits(arrays: RecordArrays, params: BehaviourParams, tallies: np.ndarray) -> np.ndarray:
    """The vote model's log-odds of an approval, for every vote in every voter role x situation:
    (ROLE_SITUATIONS, P, players)."""
    count, players = arrays.votes.shape
    per_vote = voter_sources(arrays, tallies)
    voter_weights = params.source_vote_weights[2]
    per_voter = (voter_weights.T @ per_vote.reshape(len(voter_weights), -1)).reshape(-1, count, players)
    per_proposal = params.context_vote_logits.take(arrays.proposal_context, axis=0)  # (P, 12)
    return np.add(per_voter, per_proposal.T[:, :, None], dtype=VOTE_DTYPE)


def _vote_signs(arrays: RecordArrays) -> np.ndarray:
    """(P, players): +1 for an approval, -1 for a rejection."""
    return np.where(arrays.votes, VOTE_DTYPE(1.0), VOTE_DTYPE(-1.0))


@dataclass(frozen=True)
class Evidence:
    """How much each piece of the record weighs for each assignment (rows): log-likelihood terms,
    tempered as the model weighs them. They add up to the assignment's log weight, so taking a
    piece out shows what it did (`deduction.attribution`)."""

    sabotage: np.ndarray  # (A, M): each played mission's Fail cards
    votes: np.ndarray  # (A, players): each seat's votes, all proposals together
    proposals: np.ndarray  # (A, players): the teams each seat chose as leader
    # A seat's votes are also how the others' votes on the same proposals are read
    # (`features.others_approving`), so taking them out of the record changes more than their
    # own column. Worked out only when asked (the reasons need it, a probability does not).
    vote_term_lost: Callable[[], np.ndarray] | None = field(default=None, repr=False, compare=False)
    # The given seats' votes proposal by proposal: (seats, P, A), each seat's summing to its column
    # of `votes`. Worked out only when asked (a reason names the vote that said most).
    vote_terms: Callable[[list[int]], np.ndarray] | None = field(default=None, repr=False, compare=False)
    _total: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Every use of the evidence adds it up; done here, before anyone shares it.
        # Each row's sum as a product with ones, which numpy hands to BLAS: a sum along the short
        # second axis would step through the assignments one at a time.
        total = self.sabotage @ ones_vector(self.sabotage.shape[1]) + (self.votes + self.proposals) @ ones_vector(
            self.votes.shape[1]
        )
        total.setflags(write=False)  # handed out by every call
        object.__setattr__(self, "_total", total)

    def total(self) -> np.ndarray:
        """(A,): each assignment's log weight, every piece added up."""
        return self._total

    def vote_term_lost_without_each_seat(self) -> np.ndarray:
        """(A, players): how much of each assignment's vote term goes when one seat's votes are
        taken out of the record, for every seat (column)."""
        if self.vote_term_lost is None:  # nobody's votes shape another's reading
            return self.votes
        return self.vote_term_lost()


# The situations' numbers (leader a spy x 3 + the team's spies bucket), to compare against.
SITUATION_NUMBERS = np.arange(SITUATIONS, dtype=VOTE_DTYPE)[:, None, None]


@dataclass(frozen=True)
class _Situations:
    """Which hidden situation (leader a spy or not x the team's spies bucket) each proposal is in
    under each assignment, and each seat's role, in the forms the vote sums read. The assignments
    run along the last axis: numpy then works down long contiguous rows, not one assignment at a time."""

    one_hot: np.ndarray  # (SITUATIONS, P, A): 1.0 in the proposal's situation under the assignment
    spies: np.ndarray  # (A, players) bool: the assignments themselves
    spy_by_seat: np.ndarray  # (players, A): the same as 1.0 and 0.0, one seat per row
    number: np.ndarray  # (P, A): the situation's number (whole, in the vote term's precision)

    @classmethod
    def of(
        cls, spies: np.ndarray, spy_by_seat: np.ndarray, leader_spy: np.ndarray, team_spies: np.ndarray
    ) -> _Situations:
        """`spy_by_seat` (players, A), `leader_spy` and `team_spies` (P, A): the assignments and
        their counts as 1.0 and 0.0 and whole numbers, in the vote term's precision."""
        situation = leader_spy * TEAM_SPY_BUCKETS + np.minimum(team_spies, TEAM_SPY_BUCKETS - 1)
        one_hot = np.empty((SITUATIONS, *situation.shape), dtype=VOTE_DTYPE)
        np.equal(situation, SITUATION_NUMBERS, out=one_hot)
        return cls(one_hot, spies, spy_by_seat, situation)


def evidence(
    arrays: RecordArrays, assignments: np.ndarray, params: BehaviourParams, own_seat: int | None = None
) -> Evidence:
    """The record's evidence under each assignment (rows of `assignments`).

    `own_seat`: the asking Resistance player, whose own votes and teams say nothing to them
    about the others (they know why they chose them), so they weigh nothing here."""
    count, players = arrays.proposal_count, arrays.players
    rows = len(assignments)
    if count == 0:
        empty = np.zeros((rows, players))
        return Evidence(np.zeros((rows, 0)), empty, empty.copy())
    # Counts as float products (numpy multiplies float matrices with BLAS, integer ones in a slow
    # loop), exact at these sizes even in single precision, then indices. No team holds more spies
    # than the game has, so every count is a row of the tables (MAX_TEAM_SPIES at most).
    # One seat per row and one assignment per column, as are the counts below: (players, A).
    spy_by_seat = np.ascontiguousarray(assignments.T, dtype=VOTE_DTYPE)
    team_spies = arrays.teams @ spy_by_seat  # (P, A)
    leader_spy = spy_by_seat[arrays.leaders]  # (P, A)
    proposal_index = np.arange(count)

    # Only members who played their own card chose Success or Fail; a deadline's card is nobody's.
    spies_playing = (arrays.card_players @ spy_by_seat).astype(np.intp)  # (M, A)
    missions, required, fails = (arrays.played_missions, arrays.played_fails_required, arrays.hidden_fails)
    failed_before = arrays.failures_before[arrays.played_index]
    # Tables read through flat indices: the public part of each index once per mission or
    # proposal, the hidden part (spies on the team, a spy leader) added per assignment.
    flat, steps = params.flat_tables["sabotage_score"]
    public = missions * steps[0] + failed_before * steps[1] + required * steps[2] + fails * steps[4]
    sabotage = flat.take(public[:, None] + spies_playing * steps[3]).T  # (A, M)

    # A team the deadline drew is nobody's choice; nor is the asker's own.
    chosen = arrays.team_chosen & (arrays.leaders != own_seat)
    team_sizes = arrays.teams.sum(axis=1)
    leader_on_team = arrays.teams[proposal_index, arrays.leaders].astype(np.intp)
    flat, steps = params.flat_tables["proposal"]
    public = arrays.players * steps[1] + team_sizes * steps[2] + leader_on_team * steps[4]
    # The index worked out on the counts as they are (whole numbers, exact in single precision).
    hidden = leader_spy * VOTE_DTYPE(steps[0]) + team_spies * VOTE_DTYPE(steps[3])
    proposal_terms = flat.take(hidden.astype(np.intp) + public[:, None])  # (P, A)
    # Each chosen team goes to its leader's column, weighed; a team nobody chose goes nowhere.
    led = np.zeros((count, players))
    led[proposal_index, arrays.leaders] = params.proposal_exponent * chosen
    proposals = proposal_terms.T @ led  # (A, players)

    # Each vote's log-probability under the assignment's situation (leader a spy, spies on the team)
    # for either role of its voter; a vote the deadline filled in, or the asker's, says nothing.
    tallies = vote_tallies(arrays, own_seat)
    logits = _vote_logits(arrays, params, tallies)
    signs = _vote_signs(arrays)
    signed = logits * signs  # the log-odds of the vote as cast, (ROLE_SITUATIONS, P, players)
    as_cast = _log_sigmoid(signed)
    situations = _Situations.of(assignments, spy_by_seat, leader_spy, team_spies)
    exponents = vote_exponents(arrays, params)  # (P,)
    # (P, players): 0 for a vote that does not count
    weighed = np.multiply(tallies[1], exponents[:, None], dtype=VOTE_DTYPE)
    vote_table = as_cast * weighed  # (ROLE_SITUATIONS, P, players): each vote as it counts
    votes = _summed_per_voter(vote_table, situations)

    def vote_term_lost_without_each_seat() -> np.ndarray:
        # Taking seat s's votes out removes its own column and moves the share of the others
        # approving for every other vote on a proposal s voted on: one way where s approved, the
        # other where it rejected. Only that feature's term changes, by the same amount whichever
        # approving (or rejecting) seat is taken out, so two tables of changes (axis 0: an
        # approval taken out, a rejection taken out) serve every seat. A vote that does not
        # count is not moved, so its change is exactly zero.
        approved, cast = tallies
        # (2P, players): s's own approvals, then rejections
        taken = np.concatenate([approved, cast - approved], dtype=VOTE_DTYPE)
        shifts = np.multiply(others_approving_shifts(tallies), signs * cast, dtype=VOTE_DTYPE)  # (2, P, players)
        # (2, ROLE_SITUATIONS, P, players), weighed as the votes themselves are (a vote that does
        # not count weighs 0, so its change is exactly zero whatever the arithmetic gave)
        change = _log_sigmoid(signed + shifts[:, None] * params.others_approving_weights) - as_cast
        change *= weighed
        # On each proposal s took part in, every vote moves, s's own too: that one is taken back,
        # as s's whole own column already goes.
        every_vote = _summed_pair_per_proposal(change, situations)  # (2P, A)
        own_vote = _summed_per_voter(np.where(arrays.votes, change[0], change[1]), situations)
        return votes + own_vote - every_vote.T @ taken

    def vote_terms(voters: list[int]) -> np.ndarray:
        # Each vote's term read straight out of the (ROLES, SITUATIONS, P, players) table at the
        # voter's role and the proposal's situation under each assignment, laid out (players, P, A):
        # its readers reduce over the assignments.
        table = vote_table.ravel()
        situation = situations.number.astype(np.intp)  # (P, A)
        at_proposal = (situation * count + proposal_index[:, None]) * players  # (P, A)
        seats = np.asarray(voters, dtype=np.intp)
        role = situations.spies.T[seats].astype(np.intp) * (SITUATIONS * count * players)  # (seats, A)
        at_voter = role + seats[:, None]
        return table.take(at_proposal[None, :, :] + at_voter[:, None, :])

    return Evidence(sabotage, votes, proposals, vote_term_lost_without_each_seat, vote_terms)


def vote_exponents(arrays: RecordArrays, params: BehaviourParams) -> np.ndarray:
    """(P,): how much each proposal's votes weigh: less before any mission was played."""
    opening = (arrays.successes_before + arrays.failures_before) == 0
    return np.where(opening, params.opening_vote_exponent, params.vote_exponent)


def _summed_per_voter(table: np.ndarray, situations: _Situations) -> np.ndarray:
    """Each seat's votes summed over the proposals, each in the situation the assignment makes,
    for a table of log-probabilities (ROLE_SITUATIONS, P, players): (A, players).

    One product of matrices per voter role: which situation each proposal is in (one-hot,
    (A, SITUATIONS x P), a transposed view that BLAS reads as it is) times each vote's
    log-probability in each ((SITUATIONS x P, players), the table's own layout); the assignment
    then picks each seat's role."""
    situations_count, count, rows = situations.one_hot.shape
    by_assignment = situations.one_hot.reshape(situations_count * count, rows).T
    summed = np.matmul(by_assignment, table.reshape(ROLES, situations_count * count, -1))  # (2, A, players)
    return np.where(situations.spies, summed[1], summed[0])


def _summed_pair_per_proposal(tables: np.ndarray, situations: _Situations) -> np.ndarray:
    """Each proposal's votes summed over the voters, in the situation the assignment makes of it
    and each voter's role there, for two tables (2, ROLE_SITUATIONS, P, players) at once: (2P, A).

    Every voter counted as Resistance, plus what being a spy changes for the assignment's spies:
    one product with the spies alone (half the size of one with both roles), for every situation
    at once; then each proposal's own situation under the assignment picked by the one-hot (the
    other situations add exact zeros)."""
    situations_count, count, rows = situations.one_hot.shape
    players = tables.shape[-1]
    by_role = tables.reshape(len(tables), ROLES, -1, players)  # (2, ROLES, SITUATIONS x P, players)
    # Summed as a product with ones (BLAS), not along the short last axis one row at a time.
    as_resistance = (by_role[:, 0] @ np.ones(players, dtype=VOTE_DTYPE)).reshape(-1, 1)  # (2 x SITUATIONS x P, 1)
    spy_change = (by_role[:, 1] - by_role[:, 0]).reshape(-1, players)  # (2 x SITUATIONS x P, players)
    every_situation = spy_change @ situations.spy_by_seat  # (2 x SITUATIONS x P, A)
    every_situation += as_resistance
    picked = every_situation.reshape(len(tables), situations_count, -1) * situations.one_hot.reshape(
        situations_count, -1
    )
    return picked.sum(axis=1).reshape(len(tables) * count, rows)


def log_weights(
    arrays: RecordArrays, assignments: np.ndarray, params: BehaviourParams, own_seat: int | None = None
) -> np.ndarray:
    """Log-likelihood of the record under each assignment (rows of `assignments`)."""
    return evidence(arrays, assignments, params, own_seat).total()
