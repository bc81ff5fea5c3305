"""Typed errors of the engine: every refusal carries a machine-readable reason."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why an action was refused. The value is stable and safe to show or translate."""

    GAME_OVER = "game_over"
    WRONG_PHASE = "wrong_phase"
    NOT_A_PLAYER = "not_a_player"
    NOT_THE_LEADER = "not_the_leader"
    WRONG_TEAM_SIZE = "wrong_team_size"
    DUPLICATE_TEAM_MEMBER = "duplicate_team_member"
    UNKNOWN_TEAM_MEMBER = "unknown_team_member"
    MISSION_REQUIRED = "mission_required"
    MISSION_NOT_ALLOWED = "mission_not_allowed"
    MISSION_ALREADY_ATTEMPTED = "mission_already_attempted"
    MISSION_5_LOCKED = "mission_5_locked"
    UNKNOWN_MISSION = "unknown_mission"
    ALREADY_VOTED = "already_voted"
    NOT_ON_TEAM = "not_on_team"
    ALREADY_PLAYED = "already_played"
    RESISTANCE_CANNOT_FAIL = "resistance_cannot_fail"
    NOT_A_CHOICE = "not_a_choice"  # a vote or card that is not exactly true or false
    UNKNOWN_ACTION = "unknown_action"
    # The Plot Thickens
    PLOT_CARDS_NOT_IN_PLAY = "plot_cards_not_in_play"  # a Plot action in a game without Plot cards
    WRONG_WINDOW = "wrong_window"  # the card cannot be used at this step of the proposal
    NOT_ASKED = "not_asked"  # another holder is asked now, or this seat has had its chance
    NOT_THE_HOLDER = "not_the_holder"  # the seat does not hold the card it uses
    NOT_DRAWN = "not_drawn"  # the leader deals a card that is not among the drawn ones
    WRONG_CARD = "wrong_card"  # the receiver answers for another immediate card than the one received
    NOT_THE_RECEIVER = "not_the_receiver"  # someone else must resolve the immediate card now
    CARD_TO_RESOLVE = "card_to_resolve"  # an immediate card must be resolved before the next is dealt
    BAD_TARGET = "bad_target"  # the card does not allow this seat (or card) as its target
    TOO_MANY_TARGETS = "too_many_targets"  # more watched members than watch cards held
    OPINION_MAKERS_FIRST = "opinion_makers_first"  # the Opinion Makers vote before anyone else
    SETTING_CHANGED = "setting_changed"  # missing votes of one vote are filled with one setting


class IllegalAction(Exception):
    """An action the rules do not allow now. The game state is unchanged."""

    def __init__(self, reason: Reason, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)


class StateFormatError(ValueError):
    """Serialized game state that this version of the engine does not understand."""


class RecordError(ValueError):
    """A game record that breaks the resistance-record/1 format.

    `field` names the first offending field as a path, e.g. ``missions[1].proposals[0].votes``.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")
