"""Computer players: a seat's view of a game in, that seat's action out. No Telegram, no Redis."""

from agents.beliefs import Deductions
from agents.difficulty import DIFFICULTIES, EASY, NORMAL, Difficulty, difficulty_named
from agents.policy import act, decide
from agents.view import AgentView, view_of

__all__ = [
    "DIFFICULTIES",
    "EASY",
    "NORMAL",
    "AgentView",
    "Deductions",
    "Difficulty",
    "act",
    "decide",
    "difficulty_named",
    "view_of",
]
