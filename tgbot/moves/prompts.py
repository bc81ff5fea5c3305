"""The private keyboards of the decisions the game waits for a seat to make now."""

from __future__ import annotations

from engine import Phase, public_view
from tgbot.moves import announcements, plot_announcements
from tgbot.outgoing import Send
from tgbot.table import Table


def decision_prompts(table: Table, seat: int, bot_username: str) -> list[Send]:
    """The leader's keyboard if it is their turn to propose, their card prompt if a card is due,
    the keyboard of a Plot decision they owe."""
    game = table.game
    if game is None:
        return []
    prompts = []
    if game.phase is Phase.MISSION and seat in public_view(game).waiting_for:
        prompts.append(announcements.card_prompt(table, seat, bot_username))
    if game.phase is Phase.PROPOSING and seat == game.leader:
        prompts.append(announcements.leader_prompt(table, bot_username))
    plot_prompt = plot_announcements.prompt_for(table, seat, bot_username)
    if plot_prompt is not None:
        prompts.append(plot_prompt)
    return prompts
