"""A game whose stored document is damaged: its group is told once and the game ends; no other game notices.

Each test runs two groups on one bot, North and South, and damages North's stored document in
Redis the way a bad write, a bug or a hand edit could: a state the rules could not reach
(`engine.StateFormatError`), or a document the table cannot be read from (`TableFormatError`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import pytest
from telegram import Update

from engine import Phase
from tests.bot_helpers import button_data, forged, propose, started_on, team_size, texts, vote_all
from tgbot import keys
from tgbot.offline.fake_telegram import FakeMessage
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.settings import GroupSettings
from tgbot.table import Stage

# A clean database for every test; not `no_handler_errors`: a damaged game is logged at ERROR, as checked here.
pytestmark = pytest.mark.usefixtures("redis")

T0 = 1_000_000.0
PROPOSAL = GroupSettings().proposal_seconds
NOTICE = {
    "en": "⚠️ This game's saved state is damaged, so the game was ended. Start a new one with /newgame.",
    "es": "⚠️ El estado guardado de esta partida está dañado, así que la partida se ha terminado. "
    "Empieza una nueva con /newgame.",
}


# ---------------------------------------------------------------- ways to damage a stored game


def two_spies_on_one_seat(doc: dict) -> None:
    spies = doc["game"]["spies"]
    doc["game"]["spies"] = [spies[0]] * len(spies)


def over_without_a_winner(doc: dict) -> None:
    doc["game"]["phase"] = "over"


def resistance_fail_waiting(doc: dict) -> None:
    """A Resistance member's Fail card waiting to be revealed (the game is playing a mission)."""
    game = doc["game"]
    honest = next(s for s in game["rounds"][-1]["proposals"][-1]["team"] if s not in game["spies"])
    game["pending_cards"] = [[honest, True]]


def playing_without_a_game(doc: dict) -> None:
    doc["game"] = None


def players_missing(doc: dict) -> None:
    del doc["players"]


CORRUPTIONS: dict[str, tuple[Callable[[dict], None], str]] = {
    "two spies on one seat": (two_spies_on_one_seat, "StateFormatError"),
    "over without a winner": (over_without_a_winner, "StateFormatError"),
    "a Resistance Fail waiting": (resistance_fail_waiting, "StateFormatError"),
    "playing without a game": (playing_without_a_game, "TableFormatError"),
    "players missing": (players_missing, "TableFormatError"),
}


async def damage(group: SimulatedGroup, corrupt: Callable[[dict], None] | None) -> str:
    """Damage the group's stored document in place (None: make it unreadable JSON); returns the text stored."""
    redis = group.store.redis
    if corrupt is None:
        raw = "{" + (await redis.get(keys.game(group.game_id)))[:40]
    else:
        doc = json.loads(await redis.get(keys.game(group.game_id)))
        corrupt(doc)
        raw = json.dumps(doc)
    await redis.set(keys.game(group.game_id), raw)
    return raw


async def two_groups(make_bot, telegram, language: str = "en"):
    """North (-100, to be damaged) and South (-200) each start a game at T0 on one bot reading the test's clock."""
    application = await make_bot(3)
    now = [T0]
    service = application.bot_data["service"]
    service.clock = lambda: now[0]
    north = SimulatedGroup(telegram, application, chat_id=-100, title="North", players=5, language=language)
    await north.open_lobby_and_join()
    await north.start()
    south = await started_on(application, telegram, 5, chat_id=-200, title="South")
    return application, service, now, north, south


async def open_private_button(group: SimulatedGroup) -> tuple[int, FakeMessage, str]:
    """A button of the decision open now that sits in a player's private chat: the leader's
    "Propose" while a team is chosen, a team member's card while a mission is played."""
    table = await group.table()
    game = table.game
    if game.phase is Phase.PROPOSING:
        user, prefix, ending = table.players[game.leader].user_id, "t:", ":ok"
    else:
        user, prefix, ending = table.players[game.current_round.team[0]].user_id, "c:", ":s"
    message = group.latest_with_button(user, f"{prefix}{group.game_id}:")
    return user, message, button_data(message, ending)


async def to_mission(group: SimulatedGroup) -> None:
    """A team with a Resistance member is approved: the game waits for its cards."""
    table = await group.table()
    honest = next(s for s in range(5) if s not in table.game.spies)
    size = team_size(table)
    await propose(group, sorted({honest, *[s for s in range(5) if s != honest][: size - 1]}))
    await vote_all(group, True)
    assert (await group.table()).game.phase is Phase.MISSION


def errors_logged(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


async def assert_ended(group: SimulatedGroup, raw: str, old_id: str) -> None:
    """The damaged game is out of play everywhere, its document set aside as it was."""
    redis = group.store.redis
    assert await redis.get(keys.game(old_id)) is None
    assert await redis.get(keys.damaged(old_id)) == raw
    assert await redis.zscore(keys.deadlines_of(old_id), old_id) is None
    assert await group.store.game_of_chat(group.chat_id) != old_id
    for user in group.user_ids:
        assert old_id not in await group.store.games_of_user(user)


# ---------------------------------------------------------------- the clock finds it


@pytest.mark.parametrize("corruption", [*CORRUPTIONS, "not JSON"])
async def test_the_clock_ends_a_damaged_game_and_the_other_game_goes_on(make_bot, telegram, caplog, corruption):
    caplog.set_level(logging.INFO)
    corrupt, kind = CORRUPTIONS.get(corruption, (None, "TableFormatError"))
    _, service, now, north, south = await two_groups(make_bot, telegram)
    if corrupt is resistance_fail_waiting:
        await to_mission(north)
    spy_names = [(await north.table()).name(s) for s in (await north.table()).game.spies]
    old_id = north.game_id
    presser, old_message, old_data = await open_private_button(north)
    raw = await damage(north, corrupt)
    before_north = len(texts(telegram, north.chat_id))
    before_south = len(texts(telegram, south.chat_id))
    south_leader = (await south.table()).players[(await south.table()).game.leader].user_id
    south_keyboard = south.latest_with_button(south_leader, f"t:{south.game_id}:")

    # Both games' deadlines come due together: South's leader gets a drawn team, North is ended.
    now[0] = T0 + PROPOSAL + 1
    assert await service.fire_due() == 2
    south_table = await south.table()
    assert south_table.game.phase is Phase.VOTING and south_table.game.rounds[0].proposals[0].auto_team
    # South: one new group message, the drawn team's proposal with its vote buttons; the leader's
    # keyboard says what happened.
    [proposal] = texts(telegram, south.chat_id)[before_south:]
    assert "did not propose in time: this team was drawn at random." in proposal
    assert south.latest_with_button(south.chat_id, f"v:{south.game_id}:") is telegram.messages(south.chat_id)[-1]
    assert "time ran out, so a team was drawn at random" in plain_text(
        telegram.message(south_leader, south_keyboard.message_id).text
    )
    # Told once, even when the document is too broken to name its group (the group is looked up).
    assert texts(telegram, north.chat_id)[before_north:] == [NOTICE["en"]]
    await assert_ended(north, raw, old_id)

    # Told once: later ticks, presses on the old board and /status add nothing more. (In South
    # someone votes: a vote deadline nobody acted in, the second in a row, would pause the game.)
    await south.press(south.user_ids[0], south.chat_id, "v:", ":a")
    now[0] += 10 * PROPOSAL
    assert await service.fire_due() == 1  # only South's vote deadline
    # The old game's buttons in private (the leader's keyboard, or a card prompt) are over too.
    answer = await forged(north, presser, presser, old_message.message_id, old_data)
    assert answer["text"] == "This button belongs to a game that is over."
    assert await north_status(north) == ["No game is running here. Start one with /newgame."]
    assert sum(text == NOTICE["en"] for text in texts(telegram, north.chat_id)) == 1

    # Logged once at ERROR with the game id and the kind of damage, and nothing of the game's contents.
    [logged] = errors_logged(caplog)
    message = logged.getMessage()
    assert old_id in message and kind in message
    assert logged.exc_info is None
    for secret in (*spy_names, "spies", raw[:30], "Resistance"):
        assert secret not in message
    assert not any(old_id in r.getMessage() and "spies" in r.getMessage() for r in caplog.records)

    # South plays on; North can open a new game at once.
    table = await south.table()
    assert table.stage is Stage.PLAYING and table.game.phase is Phase.MISSION  # the vote deadline approved
    await north.send(telegram.command(north.user_ids[1], north.chat_id, "/newgame"))
    new_id = await north.store.game_of_chat(north.chat_id)
    assert new_id is not None and new_id != old_id
    assert "a new game is open" in texts(telegram, north.chat_id)[-1]


async def north_status(north: SimulatedGroup) -> list[str]:
    """/status in North; what the bot said in return."""
    before = len(texts(north.telegram, north.chat_id))
    await north.send(north.telegram.command(north.user_ids[2], north.chat_id, "/status"))
    return [t for t in texts(north.telegram, north.chat_id)[before:] if t != "/status"]


# ---------------------------------------------------------------- a player finds it


async def test_a_press_on_a_damaged_game_tells_its_group_once_in_its_language(make_bot, telegram, caplog):
    caplog.set_level(logging.INFO)
    application, service, now, north, south = await two_groups(make_bot, telegram, language="es")
    second = await make_bot(4)  # another worker on the same Redis
    second.bot_data["service"].clock = lambda: now[0]
    old_id = north.game_id
    await propose(north, [0, 1])
    ballot = north.latest_with_button(north.chat_id, "v:")
    approve = next(b["callback_data"] for b in ballot.buttons() if b["callback_data"].endswith(":a"))
    raw = await damage(north, two_spies_on_one_seat)
    before = len(texts(telegram, north.chat_id))

    # Two players press at the same moment, each on a different worker.
    presses = [telegram.forged_press(north.user_ids[i], north.chat_id, ballot.message_id, approve) for i in (1, 2)]
    await asyncio.gather(
        north.send(presses[0]),
        second.process_update(Update.de_json(presses[1], second.bot)),
    )
    for update in presses:
        assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == (
            "Este botón es de una partida que ya terminó."
        )
    assert texts(telegram, north.chat_id)[before:] == [NOTICE["es"]]
    await assert_ended(north, raw, old_id)
    [logged] = errors_logged(caplog)
    assert old_id in logged.getMessage()

    # South never noticed: its game goes on through both workers.
    await propose(south, [0, 1])
    await vote_all(south, True)
    assert (await south.table()).game.phase is Phase.MISSION
    assert not any(NOTICE["en"] in text or NOTICE["es"] in text for text in texts(telegram, south.chat_id))
    assert plain_text(texts(telegram, south.chat_id)[-1])
