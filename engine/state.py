"""The immutable game state. Nothing here changes a state; `engine.game.apply` makes new ones."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engine import rules
from engine.plot import PlotState, PlotUse


class Phase(StrEnum):
    PROPOSING = "proposing"  # the leader chooses a team
    VOTING = "voting"  # every player votes on the proposed team
    MISSION = "mission"  # the team plays its mission cards
    OVER = "over"
    # The Plot Thickens: the windows of a proposal in which a Plot card may be used.
    LEAD = "lead"  # W1: Strong Leader holders are asked, one by one
    DEAL = "deal"  # W2: the leader gives the drawn cards; receivers resolve immediate ones
    OVERTURN = "overturn"  # W5: after an approval, No Confidence holders are asked
    SPOTLIGHT = "spotlight"  # W6: In the Spotlight holders are asked
    WATCH = "watch"  # W8: every card is played; Keeping a Close Eye on You holders are asked


# The steps that exist only with Plot cards: someone is asked about a Plot card.
PLOT_PHASES = frozenset({Phase.LEAD, Phase.DEAL, Phase.OVERTURN, Phase.SPOTLIGHT, Phase.WATCH})


class Role(StrEnum):
    RESISTANCE = "resistance"
    SPY = "spy"


class Side(StrEnum):
    RESISTANCE = "resistance"
    SPIES = "spies"


class EndReason(StrEnum):
    THREE_SUCCESSFUL_MISSIONS = "three_successful_missions"
    THREE_FAILED_MISSIONS = "three_failed_missions"
    FIVE_REJECTIONS = "five_rejections"


@dataclass(frozen=True)
class Variants:
    """Optional rules chosen when the game is set up."""

    targeting: bool = False  # the leader also chooses which open mission the team attempts
    blind_spies: bool = False  # spies are not told who the other spies are
    plot_cards: bool = False  # The Plot Thickens: Plot cards are dealt each mission


@dataclass(frozen=True)
class Proposal:
    leader: int
    team: tuple[int, ...]
    mission: int  # the mission this team was put forward for
    votes: tuple[bool, ...] | None = None  # None until every vote is in and revealed
    auto_team: bool = False  # the leader missed the deadline and the team was drawn at random
    auto_votes: tuple[int, ...] = ()  # seats that did not vote in time; their vote is the group's setting
    strong_leader: bool = False  # the leader took the lead with Strong Leader
    open_votes: tuple[int, ...] = ()  # Opinion Makers: they voted first, in the open
    no_confidence: int | None = None  # who overturned the approved team with No Confidence

    @property
    def majority(self) -> bool:
        """The table's vote approved the team (No Confidence may still overturn it)."""
        return self.votes is not None and rules.is_approved(self.votes)

    @property
    def approved(self) -> bool:
        return self.majority and self.no_confidence is None


@dataclass(frozen=True)
class MissionRound:
    """The proposals until one is approved (or the fifth is rejected) and, once played, its Fail cards.

    `mission`, `team_size` and `fails_required` are those of the latest proposal: under
    Targeting each leader of the round may propose a different mission.
    """

    mission: int
    team_size: int
    fails_required: int
    proposals: tuple[Proposal, ...] = ()
    fails: int | None = None  # None until the mission has been played
    auto_cards: tuple[int, ...] = ()  # team members who did not play in time; their card counted as Success
    # In a record: the public Plot events of this mission (a game state keeps them in `GameState.plot`).
    plot: tuple[PlotUse, ...] = ()

    @property
    def played(self) -> bool:
        return self.fails is not None

    @property
    def succeeded(self) -> bool | None:
        return None if self.fails is None else self.fails < self.fails_required

    @property
    def rejections(self) -> int:
        return sum(1 for p in self.proposals if p.votes is not None and not p.approved)

    @property
    def team(self) -> tuple[int, ...] | None:
        """The team of the latest proposal, if any."""
        return self.proposals[-1].team if self.proposals else None

    @property
    def card_players(self) -> tuple[int, ...]:
        """Team members who played their own card: the Fail cards can only be theirs."""
        team = self.team or ()
        if not self.auto_cards:  # nearly always: the whole team (hints read this for every mission)
            return team
        return tuple(seat for seat in team if seat not in self.auto_cards)


@dataclass(frozen=True)
class GameState:
    players: int
    spies: tuple[int, ...]  # sorted seat numbers; secret
    variants: Variants
    leader: int  # the seat holding the leader card now
    phase: Phase
    rounds: tuple[MissionRound, ...] = ()  # every mission attempted or being attempted, in order
    pending_votes: tuple[bool | None, ...] = ()  # during voting: one entry per seat; secret
    pending_cards: tuple[tuple[int, bool], ...] = ()  # during a mission: (seat, is_fail); secret
    winner: Side | None = None
    end_reason: EndReason | None = None
    version: int = 0
    plot: PlotState | None = None  # the Plot cards, in a game of The Plot Thickens

    # --- derived facts, all public unless named otherwise ---

    @property
    def spy_count(self) -> int:
        return len(self.spies)

    def role_of(self, seat: int) -> Role:
        return Role.SPY if seat in self.spies else Role.RESISTANCE

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def played_rounds(self) -> tuple[MissionRound, ...]:
        return tuple(r for r in self.rounds if r.played)

    @property
    def successes(self) -> int:
        return sum(1 for r in self.played_rounds if r.succeeded)

    @property
    def failures(self) -> int:
        return sum(1 for r in self.played_rounds if not r.succeeded)

    @property
    def current_round(self) -> MissionRound | None:
        """The round being worked on: proposed for, voted on or played; None between rounds."""
        if self.rounds and not self.rounds[-1].played and not self.is_over:
            return self.rounds[-1]
        return None

    @property
    def attempted_missions(self) -> frozenset[int]:
        return frozenset(r.mission for r in self.rounds if r.played)

    def mission_track(self) -> tuple[bool | None, ...]:
        """Result of missions 1..5 on the board: True success, False failure, None not played."""
        results: list[bool | None] = [None] * rules.MISSION_COUNT
        for r in self.played_rounds:
            results[r.mission - 1] = r.succeeded
        return tuple(results)

    def open_missions(self) -> tuple[int, ...]:
        """Missions a proposal may name now: the next one in order, or under Targeting any
        mission not yet played (the fifth only after two successes)."""
        if self.is_over:
            return ()
        if not self.variants.targeting:
            return (len(self.played_rounds) + 1,)
        attempted = self.attempted_missions
        return tuple(
            m
            for m in range(1, rules.MISSION_COUNT + 1)
            if m not in attempted
            and (m != rules.MISSION_COUNT or self.successes >= rules.TARGETING_MISSION_5_SUCCESSES)
        )

    @property
    def proposal_number(self) -> int:
        """1-based number of the proposal being made or voted on in the current round."""
        current = self.current_round
        if current is None:
            return 1
        if self.phase in (Phase.PROPOSING, Phase.LEAD, Phase.DEAL):
            return len(current.proposals) + 1
        return len(current.proposals)

    @property
    def voted_seats(self) -> tuple[int, ...]:
        return tuple(seat for seat, vote in enumerate(self.pending_votes) if vote is not None)

    @property
    def played_seats(self) -> tuple[int, ...]:
        return tuple(sorted(seat for seat, _ in self.pending_cards))

    def next_seat(self, seat: int) -> int:
        return (seat + 1) % self.players
