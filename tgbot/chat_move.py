"""A group upgraded to a supergroup: what was kept under its old chat id follows it to the new one.

Telegram gives the supergroup a new chat id and refuses every later call naming the old one. It
says so in three ways, in any order: a service message in each chat (`migrate_to_chat_id` in the
old, `migrate_from_chat_id` in the new), and a `ChatMigrated` error to whoever calls the old id (the
outbox, which may meet it before any worker has seen either message). Each of the three moves
everything, so whichever comes first does it and the others, like any update delivered twice or
any worker doing the same at once, change nothing.

What moves: first, the old chat's id is made to lead to the new one (a command sent there just
before the upgrade may reach the bot after the move: it is taken as sent in the new chat); then the
group's settings (its language with them), the pointer to its last record, and its open lobby or
running game: the group's pointer to it and the chat its table names. A game is moved by the same
compare-and-set as any change to it. The group's keys live in other slots than the game's, so the
move is a few steps, in the order `tgbot.indexes` keeps for every lookup: the new chat is claimed
for the game before the game is written, the old chat let go after. A worker that dies in between
leaves what the next reader repairs (`Store.game_of_chat`: a new chat claimed ahead of its game
moves the game; an old chat's pointer left behind is let go) or the next move finishes.

Messages are not rewritten: those already queued for the old chat go to the new one when the outbox
meets `ChatMigrated`, and an edit of a message posted in the old chat, whose message ids do not
carry over, posts the message anew in the new chat (`tgbot.outbox`); so does a keyboard left in the
old chat that edits itself when pressed, such as /settings (`tgbot.handlers.edit_query_message`).
"""

from __future__ import annotations

import contextlib
import logging

from tgbot.store import DamagedGame, Store

log = logging.getLogger(__name__)

# How long the old chat's id is known to lead to the new one: updates sent there just before the upgrade
# may reach the bot after the move (Telegram delivers an update again for a while if it is not answered).
MOVED_TO_SECONDS = 7 * 24 * 3600


async def move_chat(store: Store, old_chat_id: int, new_chat_id: int, game_id: str | None = None) -> None:
    """Move what the group keeps under `old_chat_id` to `new_chat_id`. `game_id`: a game whose messages
    Telegram refused for the old chat, which follows too even when it is not the group's open or
    running game (a finished game's last board, its record, its Play again)."""
    if old_chat_id == new_chat_id:
        return
    await store.indexes.mark_moved(old_chat_id, new_chat_id, MOVED_TO_SECONDS)
    await store.move_settings(old_chat_id, new_chat_id)
    await store.indexes.move_last_record(old_chat_id, new_chat_id)
    await store.memory.move(old_chat_id, new_chat_id)
    current = await store.indexes.game_of(old_chat_id)
    if current is not None:
        await _move_current_game(store, current, old_chat_id, new_chat_id)
    if game_id is not None and game_id != current:
        with contextlib.suppress(DamagedGame):  # whoever reads it next ends it
            await store.move_game(game_id, old_chat_id, new_chat_id)
    log.info("group %s became the supergroup %s; its settings, games and memory follow", old_chat_id, new_chat_id)


async def _move_current_game(store: Store, game_id: str, old_chat_id: int, new_chat_id: int) -> None:
    """The group's open lobby or running game moves with its pointer: the new chat claimed, the table
    moved, the old chat let go."""
    try:
        table = await store.load(game_id)
    except DamagedGame:
        return  # left where it is: whoever reads the old chat's pointer ends it
    if table is None:
        # A game on its way (its creator claimed the chat and has not written it yet): its first
        # message meets ChatMigrated and moves it.
        return
    if table.chat_id == old_chat_id:
        # A supergroup that has a game of its own already (opened there before the move reached this
        # worker) keeps it as the group's: this one still moves, and goes on by its buttons and its clock.
        # (A game that is over, whose pointer its last write left behind, moves too: whoever reads the
        # new chat's pointer then lets it go as for any finished game, its record kept for the new chat.)
        held = await store.indexes.claim_chat(new_chat_id, game_id)
        if held is not None and held != game_id:
            log.info("game %s: the supergroup %s has game %s already", game_id, new_chat_id, held)
        await store.move_game(game_id, old_chat_id, new_chat_id)
    await store.indexes.release_chat(old_chat_id, game_id)
