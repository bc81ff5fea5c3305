"""The rules of The Resistance as pure functions over immutable state. No I/O.

Start with `new_game`, then feed actions to `apply`, which returns the next state and
what happened. `public_view` and `seat_view` are the only ways secrets leave.
"""

from engine.actions import Action, CardsTimedOut, CastVote, LeaderTimedOut, PlayCard, ProposeTeam, VotesTimedOut
from engine.deadlines import draw_team
from engine.errors import IllegalAction, Reason, RecordError, StateFormatError
from engine.events import (
    CardPlayed,
    CardsFilled,
    Event,
    GameOver,
    LeaderChanged,
    MissionCompleted,
    TeamProposed,
    VoteCast,
    VotesFilled,
    VotesRevealed,
)
from engine.game import apply, new_game
from engine.invariants import check_state
from engine.record import (
    RECORD_FORMAT,
    GameRecord,
    Outcome,
    export_record,
    parse_record,
    record_of,
    record_to_dict,
    replay,
)
from engine.serialization import SCHEMA_VERSION, state_from_dict, state_to_dict
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Role, Side, Variants
from engine.turns import ballot, legal_actions, waiting_for
from engine.views import PublicView, SeatView, public_view, seat_view

__all__ = [
    "Action",
    "CardsTimedOut",
    "LeaderTimedOut",
    "VotesTimedOut",
    "CardsFilled",
    "VotesFilled",
    "CastVote",
    "PlayCard",
    "ProposeTeam",
    "IllegalAction",
    "Reason",
    "RecordError",
    "StateFormatError",
    "CardPlayed",
    "Event",
    "GameOver",
    "LeaderChanged",
    "MissionCompleted",
    "TeamProposed",
    "VoteCast",
    "VotesRevealed",
    "apply",
    "new_game",
    "draw_team",
    "ballot",
    "legal_actions",
    "waiting_for",
    "check_state",
    "RECORD_FORMAT",
    "GameRecord",
    "Outcome",
    "export_record",
    "parse_record",
    "record_of",
    "record_to_dict",
    "replay",
    "SCHEMA_VERSION",
    "state_from_dict",
    "state_to_dict",
    "EndReason",
    "GameState",
    "MissionRound",
    "Phase",
    "Proposal",
    "Role",
    "Side",
    "Variants",
    "PublicView",
    "SeatView",
    "public_view",
    "seat_view",
]
