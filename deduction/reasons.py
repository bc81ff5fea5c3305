"""Short, true statements that explain a deduction, as data (a code and its arguments).

Exact facts come first. The behavioural reasons for a seat are the evidence groups that moved
its probability most, as the model itself measures them (`deduction.attribution`): each
names the group, a true fact about it, and `points`, the signed change in percentage points
that removing that evidence would undo (+ raised the seat's spy chance). The bot words each
code in the player's language; `deduction.__main__` words them in English.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import add, sub
from typing import NamedTuple

import numpy as np

from deduction.analysis import Deduction
from deduction.attribution import MISSION_RESULT, PROPOSALS, VOTES, Attribution, attribute, spies_and_ones
from deduction.behaviour import VOTE_DTYPE
from deduction.features import RecordArrays
from engine import GameRecord

MAX_REASONS_PER_SEAT = 3
MIN_POINTS = 3  # a smaller effect is noise to a player reading a phone
# A seat the evidence moved this far in all, by effects each under MIN_POINTS, is told so: its number
# would otherwise stand without a word of why.
MIN_SMALL_EFFECTS_POINTS = 10
# The kinds of vote on a team sent on a mission that read as a spy's to a person: for a team that
# failed, against one that succeeded.
SUSPICIOUS_VOTES = frozenset({"approved_failed", "rejected_succeeded"})
FEW_ASSIGNMENTS = 12  # below this, the count itself is worth saying
EXACT_SEAT_CODES = frozenset({"certain_spy", "certain_resistance"})
EXACT_TABLE_CODES = frozenset({"assignments_remaining", "mission_fails"})


class Reason(NamedTuple):
    # A named tuple, not a dataclass: a hint builds a score of these, and a tuple is made in half the time.
    code: str
    args: dict


@dataclass(frozen=True)
class Explanation:
    table: tuple[Reason, ...]  # exact facts about the whole table (assignments left, missions with Fail cards)
    seats: tuple[tuple[Reason, ...], ...]  # per seat: its exact fact, then its largest effects (none for the asker)

    def all(self) -> tuple[Reason, ...]:
        """Every reason: the table's, then each seat's."""
        return self.table + tuple(reason for seat in self.seats for reason in seat)


def explain(
    record: GameRecord, deduction: Deduction, per_seat: int = MAX_REASONS_PER_SEAT, min_points: int = MIN_POINTS
) -> Explanation:
    rows = deduction.facts.possible_rows
    attribution = attribute(rows, deduction.evidence)
    points = np.rint(attribution.effects * 100).astype(int).tolist()  # (groups, players)
    # Per seat, the groups by the size of their effect on it, largest first; no more than can be shown.
    # Rounded first so that effects equal but for floating-point noise (two voters who voted alike)
    # keep the groups' own order, whichever way the arithmetic went.
    larger_first = np.rint(np.abs(attribution.effects) * -1e6)  # millionths, negated
    order = larger_first.argsort(axis=0, kind="stable")[:per_seat].T.tolist()
    certain_spies, certain_resistance = set(deduction.certain_spies), set(deduction.certain_resistance)
    certain = certain_spies | certain_resistance
    # The groups each seat's reasons tell: the largest effects, as many as there is room for beside
    # an exact fact, none under `min_points` (in this order, the ones after a small one are no larger).
    shown = [
        []
        if seat == deduction.viewer.seat
        else [g for g in order[seat][: per_seat - (seat in certain)] if abs(points[g][seat]) >= min_points]
        for seat in range(record.players)
    ]
    kinds = attribution.groups
    voters = sorted({kinds[g].index for groups in shown for g in groups if kinds[g].kind == VOTES})
    facts = _Facts(record, deduction, attribution, voters)
    seats = []
    for seat in range(record.players):
        if seat == deduction.viewer.seat:
            seats.append(())
            continue
        reasons = []
        if seat in certain_spies:
            reasons.append(Reason("certain_spy", {"seat": seat}))
        elif seat in certain_resistance:
            reasons.append(Reason("certain_resistance", {"seat": seat}))
        reasons.extend(facts.reason(g, seat, points[g][seat]) for g in shown[seat])
        if not reasons:
            reasons.extend(_without_a_reason(deduction, attribution, points, seat))
        seats.append(tuple(reasons))
    return Explanation(table=tuple(_table_reasons(deduction)), seats=tuple(seats))


def _prior(d: Deduction) -> float | None:
    """Each other seat's chance of being a spy before any evidence, as the viewer sees the table; None
    for a spy who knows the spies (every number is exact)."""
    players, spies = len(d.spy_probability), round(sum(d.spy_probability))
    if d.viewer.seat is None:
        return spies / players
    if d.viewer.is_spy:
        return None
    return spies / (players - 1)


def _without_a_reason(d: Deduction, attribution: Attribution, points: list[list[int]], seat: int) -> list[Reason]:
    """What moved a seat 10 points or more that no single reason names: missions with Fail cards it
    was not on (their Fail cards, said under the list, point at the others: the seat loses that share),
    or many votes and teams each under `MIN_POINTS`."""
    prior = _prior(d)
    if prior is None or seat in {s for group in d.spy_groups for s in group.seats}:
        return []
    behaviour = float(attribution.effects[:, seat].sum())
    exact = round((d.spy_probability[seat] - prior - behaviour) * 100)
    missions = sorted({group.mission for group in d.spy_groups})
    if missions and exact <= -MIN_SMALL_EFFECTS_POINTS:  # (a rise off those teams comes from elsewhere)
        return [Reason("off_failed_teams", {"seat": seat, "missions": missions, "points": int(exact)})]
    total = round(behaviour * 100)
    if abs(total) >= MIN_SMALL_EFFECTS_POINTS:
        count = sum(1 for g in range(len(points)) if points[g][seat] != 0)
        return [Reason("small_effects", {"seat": seat, "points": int(total), "count": count})]
    return []


def _table_reasons(d: Deduction) -> list[Reason]:
    reasons = []
    if d.possible <= FEW_ASSIGNMENTS and not d.viewer.is_spy:
        reasons.append(Reason("assignments_remaining", {"count": d.possible}))
    certain = set(d.certain_spies) | set(d.certain_resistance)
    for group in reversed(d.spy_groups):
        if set(group.seats) <= certain:
            continue  # said seat by seat
        reasons.append(
            Reason("mission_fails", {"mission": group.mission, "seats": list(group.seats), "at_least": group.at_least})
        )
    return reasons


class _Facts:
    """True facts about the record's evidence groups, counted once per explanation."""

    def __init__(self, record: GameRecord, deduction: Deduction, attribution: Attribution, voters: list[int]) -> None:
        self.record, self.arrays, self.deduction = record, deduction.arrays, deduction
        self.played = record.played_missions
        self.groups = attribution.groups
        self.effects = attribution.effects
        self._facts: dict[int, tuple[str, int]] = {}  # per vote or proposal group: the fact cited
        self._counts: dict[str, list[int]] | None = None
        # Every proposal in the order the vote model numbers them, with the round it was made in.
        self._proposals = [
            (m, proposal, number, m.played and number == len(m.proposals))  # the last: the team sent, if played
            for m in record.missions
            for number, proposal in enumerate(m.proposals, start=1)
        ]
        self._strongest: tuple[tuple[list, list], tuple[list, list]] | None = None
        self._voters = voters  # the voters whose votes a reason tells: the only ones weighed vote by vote
        self._voter_row = {voter: row for row, voter in enumerate(voters)}

    def reason(self, g: int, seat: int, points: int) -> Reason:
        group = self.groups[g]
        if group.kind == MISSION_RESULT:
            mission = self.played[group.index]
            return Reason(
                "mission_result",
                {
                    "seat": seat,
                    "mission": mission.mission,
                    "succeeded": bool(mission.succeeded),
                    "fails": mission.fails,
                    "on_team": seat in mission.proposals[-1].team,
                    "points": points,
                },
            )
        if group.kind == VOTES:
            fact = self._strongest_vote_fact(group.index, seat, points)
            if fact is None:
                found, count = self._group_fact(g)
                fact = {"fact": found, "count": count}
            return Reason("votes", {"seat": seat, "voter": group.index, **fact, "points": points})
        if group.kind == PROPOSALS:
            fact, count = self._group_fact(g)
            return Reason(
                "proposals", {"seat": seat, "leader": group.index, "fact": fact, "count": count, "points": points}
            )
        raise ValueError(f"unknown evidence group {group.kind!r}")

    def _strongest_vote_fact(self, voter: int, seat: int, points: int) -> dict | None:
        """The fact about the one vote of `voter` whose own term, taken out, moves `seat` back the
        most the way the votes moved it: a vote on a team that went on a mission is told with its
        count of such votes ("2 votes for teams that failed"), any other vote (or one whose kind
        reads the other way for the voter itself) as that very vote ("above all against proposal 2,
        mission 3"). None where no model weighs votes one by one or
        no single vote moves the seat that way."""
        strongest = self._strongest_votes()
        if strongest is None or points == 0:
            return None
        index, moved = strongest[points > 0]
        row = self._voter_row[voter]
        if moved[row][seat] <= 1e-6:  # nothing a single-precision sum can tell from zero
            return None
        mission, proposal, number, sent = self._proposals[index[row][seat]]
        approved = bool(proposal.votes[voter])
        if sent:
            fact = f"{'approved' if approved else 'rejected'}_{'succeeded' if mission.succeeded else 'failed'}"
            # Told by its kind unless that reads the wrong way round for the voter itself ("−3 · a
            # vote against a team that succeeded"): then as that very vote, which says no direction.
            if seat != voter or (points > 0) == (fact in SUSPICIOUS_VOTES):
                if self._counts is None:
                    self._counts = choice_counts(self.record, self.arrays)
                return {"fact": fact, "count": self._counts[fact][voter]}
        return {
            "fact": "vote_on",
            "count": 1,
            "mission": proposal.mission,
            "proposal": number,  # numbered as the board numbers them
            "approved": approved,
        }

    def _strongest_votes(self) -> tuple[tuple[list, list], tuple[list, list]] | None:
        """Per voter told of (`self._voters`, in that order) and seat, the proposal whose vote alone
        moved the seat most towards the Resistance and how far (index 0), and most towards the spies
        (index 1): how far the seat's spy probability moves back when that vote's own term is taken
        out of the evidence. Worked out for all of them at once, as lists (the first vote reason pays
        for all; each then looks up)."""
        if self._strongest is None:
            vote_terms = self.deduction.evidence.vote_terms
            if vote_terms is None:
                return None
            # In the vote term's single precision: the choice of a vote needs no more, and numpy's
            # exponential runs with SIMD there.
            with_ones = spies_and_ones(self.deduction.facts.possible_rows, VOTE_DTYPE)
            log_w = self.deduction.log_weights
            # A vote's term is a tempered log-probability (a few units at most): taking one out of
            # weights scaled to the largest cannot overflow.
            without = (log_w - log_w.max()).astype(VOTE_DTYPE) - vote_terms(self._voters)  # (voters, P, A)
            summed = np.exp(without) @ with_ones  # (voters, P, seats + 1)
            probability = np.array(self.deduction.spy_probability, dtype=VOTE_DTYPE)
            moved_back = probability - summed[:, :, :-1] / summed[:, :, -1:]
            # (voters, seats) each: which vote, and how far it moved the seat that way
            self._strongest = (
                (moved_back.argmin(axis=1).tolist(), (-moved_back.min(axis=1)).tolist()),
                (moved_back.argmax(axis=1).tolist(), moved_back.max(axis=1).tolist()),
            )
        return self._strongest

    def _group_fact(self, g: int) -> tuple[str, int]:
        if g in self._facts:
            return self._facts[g]
        group = self.groups[g]
        # Which fact to cite about a seat's votes or teams follows what they said about that seat
        # itself: through it they may move the seat asked about the other way.
        looked_like_a_spy = bool(self.effects[g, group.index] > 0)
        if self._counts is None:
            self._counts = choice_counts(self.record, self.arrays)
        if group.kind == VOTES:
            found = _vote_fact(self._counts, group.index, looked_like_a_spy)
        else:
            found = _proposal_fact(self._counts, group.index, looked_like_a_spy)
        self._facts[g] = found
        return found


def choice_counts(record: GameRecord, arrays: RecordArrays) -> dict[str, list[int]]:
    """Per fact, per seat: how the seat's own votes (not the deadline's) went, on every proposal
    ("cast") and on the teams that went on a mission, by vote and result ("approved_failed", ...);
    and the teams it chose as leader (not the deadline's): all of them ("proposed"), and those
    that went on a mission that failed or succeeded ("led_failed", "led_succeeded").

    The missions' votes are added up a mission at a time in plain Python, which costs less than
    setting numpy up for a few dozen small numbers."""
    players = record.players
    nobody = [0] * players
    every_seat = [1] * players
    approved = {"failed": nobody, "succeeded": nobody}
    chose = {"failed": nobody, "succeeded": nobody}  # votes cast by choice on the teams sent
    led = {"failed": [0] * players, "succeeded": [0] * players}
    for m in record.missions:
        if m.fails is None:
            continue
        sent = m.proposals[-1]  # the team that went on the mission
        result = "succeeded" if m.fails < m.fails_required else "failed"
        own, votes = every_seat, sent.votes
        if sent.auto_votes:  # the deadline's votes are nobody's
            own = [int(seat not in sent.auto_votes) for seat in range(players)]
            votes = [vote and chosen for vote, chosen in zip(votes, own, strict=True)]
        approved[result] = list(map(add, approved[result], votes))
        chose[result] = list(map(add, chose[result], own))
        if not sent.auto_team:
            led[result][sent.leader] += 1
    return {
        "cast": arrays.vote_chosen.sum(axis=0).tolist(),
        "approved_failed": approved["failed"],
        "rejected_succeeded": list(map(sub, chose["succeeded"], approved["succeeded"])),
        "rejected_failed": list(map(sub, chose["failed"], approved["failed"])),
        "approved_succeeded": approved["succeeded"],
        "proposed": np.bincount(arrays.leaders[arrays.team_chosen], minlength=players).tolist(),
        "led_failed": led["failed"],
        "led_succeeded": led["succeeded"],
    }


def _vote_fact(counts: dict[str, list[int]], seat: int, looked_like_a_spy: bool) -> tuple[str, int]:
    preferred = (
        ("approved_failed", "rejected_succeeded") if looked_like_a_spy else ("rejected_failed", "approved_succeeded")
    )
    for fact in preferred:
        if counts[fact][seat]:
            return fact, counts[fact][seat]
    return "cast", counts["cast"][seat]


def _proposal_fact(counts: dict[str, list[int]], seat: int, looked_like_a_spy: bool) -> tuple[str, int]:
    fact = "led_failed" if looked_like_a_spy else "led_succeeded"
    return (fact, counts[fact][seat]) if counts[fact][seat] else ("proposed", counts["proposed"][seat])
