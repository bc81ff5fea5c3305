"""Helpers shared by the end-to-end tests: bots on the fake Bot API, games driven through `SimulatedGroup`,
and what the players were shown."""

from __future__ import annotations

import logging

from redis.asyncio import Redis
from telegram.ext import Application

from engine import Phase
from engine import rules as game_rules
from tgbot import keys
from tgbot.offline.fake_telegram import FakeMessage, FakeTelegram
from tgbot.offline.harness import start_offline_bot
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text
from tgbot.redis_client import connect

# ---------------------------------------------------------------- bots


class Bots:
    """Bots started (each as if a separate worker process) on the fake Bot API, shut down by `close`."""

    def __init__(self, telegram: FakeTelegram) -> None:
        self.telegram = telegram
        self.started: list[tuple[Application, Redis]] = []

    async def start(self, redis_url: str, seed: int = 0, *, rate_limited: bool = False, **options) -> Application:
        """`options`: those of `start_offline_bot` (`local_clock`: a worker whose machine's clock is off)."""
        client = connect(redis_url)
        application = await start_offline_bot(self.telegram, client, seed, rate_limited=rate_limited, **options)
        self.started.append((application, client))
        return application

    async def close(self) -> None:
        for application, client in self.started:
            await application.shutdown()
            await client.aclose()


def errors(caplog) -> list[str]:
    """Every message logged at ERROR or above."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# ---------------------------------------------------------------- policies


class AlwaysApprove(Policy):
    def vote(self, table, seat):
        return True


class NobodyFails(AlwaysApprove):
    """Every team approved and every card a Success."""

    def fail(self, table, seat):
        return False


class CleanTeams(NobodyFails):
    """Leaders pick only Resistance members, so every mission succeeds."""

    def choose_team(self, table, seat, size):
        return sorted(s for s in range(len(table.players)) if s not in table.game.spies)[:size]


class SpiesAlwaysFail(AlwaysApprove):
    """Leaders put a spy on every team; spies fail whenever they can."""

    def choose_team(self, table, seat, size):
        spies = list(table.game.spies)
        others = [s for s in range(len(table.players)) if s not in spies]
        return sorted(spies[: min(len(spies), 2)] + others[: size - min(len(spies), 2)])

    def fail(self, table, seat):
        return seat in table.game.spies


class RejectEverything(Policy):
    def vote(self, table, seat):
        return False


# ---------------------------------------------------------------- games


async def started_on(
    application, telegram, players=5, *, chat_id=-100, title="Demo group", variants=None
) -> SimulatedGroup:
    """A group on `application` whose players all joined a new game, started."""
    group = SimulatedGroup(telegram, application, chat_id=chat_id, title=title, players=players)
    await group.open_lobby_and_join(variants=variants)
    await group.start()
    return group


async def started(make_bot, telegram, players=5, seed=1, chat_id=-100, title="Demo group", variants=None):
    """A started game on a new bot."""
    application = await make_bot(seed)
    return await started_on(application, telegram, players, chat_id=chat_id, title=title, variants=variants)


def current_mission(table) -> int:
    """The mission being proposed (under Targeting: the one the leader picked), voted on or played."""
    game = table.game
    if game.phase is Phase.PROPOSING:
        return table.draft_mission or game.open_missions()[0]
    return game.current_round.mission


def team_size(table) -> int:
    return game_rules.team_size(table.game.players, current_mission(table))


async def propose(group: SimulatedGroup, seats) -> None:
    """The leader ticks exactly `seats` on their private keyboard and proposes them."""
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    for seat in sorted(set(seats) ^ set(table.draft_team)):
        await group.press(leader, leader, "t:", f":{seat}")
    await group.press(leader, leader, "t:", ":ok")
    assert (await group.table()).game.phase is Phase.VOTING


async def vote_all(group: SimulatedGroup, approve: bool) -> None:
    """Every player who has not voted yet votes the same way."""
    table = await group.table()
    for seat, player in enumerate(table.players):
        if table.game.pending_votes[seat] is None:
            await group.press(player.user_id, group.chat_id, "v:", ":a" if approve else ":r")


async def outbox_length(group: SimulatedGroup) -> int:
    return await group.store.redis.llen(keys.outbox(group.game_id))


async def snapshot(group: SimulatedGroup, chats=()) -> tuple:
    """Everything a refused press must leave alone."""
    redis = group.store.redis
    table = await group.store.load(group.game_id)
    seen = []
    for chat in (group.chat_id, *group.user_ids, *chats):
        seen += [(m.chat_id, m.message_id, m.text, m.reply_markup, m.edits) for m in group.telegram.messages(chat)]
    return (
        table.to_json(),
        await redis.lrange(keys.outbox(group.game_id), 0, -1),
        await redis.hgetall(keys.messages(group.game_id)),
        seen,
    )


# ---------------------------------------------------------------- commands and buttons


async def command(group: SimulatedGroup, user_id: int, text: str, chat_id: int | None = None) -> FakeMessage:
    """Send a command (in the group unless `chat_id` says otherwise); return the bot's newest message in that chat."""
    chat = group.chat_id if chat_id is None else chat_id
    await group.send(group.telegram.command(user_id, chat, text))
    message = group.telegram.messages(chat)[-1]
    assert message.from_bot, f"{text!r} got no answer"
    return message


async def next_on_the_clock(group: SimulatedGroup, service, now: list[float] | None = None) -> bool:
    """What the clock does next while nobody plays: its next reminder, computer turn or deadline, fired
    (at `now`, moved to it, or at that moment if there is no `now`). A game the clock paused instead
    (two idle steps in a row) is resumed by its first seated person, as their /resume or any press of
    theirs does (one made in private reaches the bot where the group cannot), and nothing else
    happens. True if it was paused."""
    table = await group.table()
    if table.is_paused:
        person = next(p for p in table.players if not p.computer)
        await service.deliver(await service.resume(table.chat_id, person.user_id, "en"))
        assert not (await group.table()).is_paused
        return True
    if now is None:
        await service.fire_due(table.next_wake)
    else:
        now[0] = table.next_wake
        await service.fire_due()
    return False


async def deadline_played(group: SimulatedGroup, service) -> None:
    """The current step's deadline passes and its rule plays: if it was the second idle one in a row
    and paused the game instead, someone resumes it and the step's new deadline passes too."""
    await service.fire_due((await group.table()).deadline + 1)
    if await next_on_the_clock(group, service):
        await service.fire_due((await group.table()).deadline + 1)


async def command_text(group: SimulatedGroup, user_id: int, text: str, chat_id: int | None = None) -> str:
    """Send a command; return the text of the bot's newest message in that chat."""
    message = await command(group, user_id, text, chat_id)
    return plain_text(message.text or "")


def button_data(message, ending: str) -> str:
    """The data of the message's button that ends with `ending`."""
    return next(b["callback_data"] for b in message.buttons() if b.get("callback_data", "").endswith(ending))


async def press(group: SimulatedGroup, user_id: int, message, data: str) -> str | None:
    """Press the button carrying `data` on `message`; return the callback answer's text."""
    update = group.telegram.press(user_id, message.chat_id, message.message_id, data)
    await group.send(update)
    return group.telegram.callback_answers[update["callback_query"]["id"]]["text"]


def answer_of(telegram, update: dict) -> dict | None:
    return telegram.callback_answers.get(update["callback_query"]["id"])


async def forged(group: SimulatedGroup, user_id: int, chat_id: int, message_id: int, data: str) -> dict:
    """Send callback data no button carries (or a real one) and return the bot's answer to it."""
    update = group.telegram.forged_press(user_id, chat_id, message_id, data)
    await group.send(update)
    answer = answer_of(group.telegram, update)
    assert answer is not None, f"the press {data!r} was not answered"
    return answer


# ---------------------------------------------------------------- what the players see


def lobby_message(telegram, chat_id: int):
    """The bot's lobby message: its first message in the chat with a Join link."""
    return next(m for m in telegram.messages(chat_id) if m.from_bot and any("url" in b for b in m.buttons()))


def start_message(telegram, chat_id: int):
    """The bot's message that started the game: posted below the lobby's, which it closed."""
    return next(
        m for m in telegram.messages(chat_id) if m.from_bot and "the game has started with" in plain_text(m.text or "")
    )


def texts(telegram, chat_id: int) -> list[str]:
    """Every message of the chat, as it reads now (a picture, the end of a game's, has no text)."""
    return [plain_text(m.text or "") for m in text_messages(telegram, chat_id)]


def text_messages(telegram, chat_id: int) -> list[FakeMessage]:
    """The chat's messages but its pictures: a game's end is its result, then the game's picture."""
    return [m for m in telegram.messages(chat_id) if m.photo is None]


def last_message(telegram, chat_id: int) -> FakeMessage:
    """The chat's last message but a picture: a finished game's result, with its Play again button."""
    return text_messages(telegram, chat_id)[-1]


def pictures(telegram, chat_id: int) -> list[FakeMessage]:
    return [m for m in telegram.messages(chat_id) if m.photo is not None]


def last_text(telegram, chat_id: int) -> str:
    return texts(telegram, chat_id)[-1]


def bot_texts(telegram, chat_id: int, start: int = 0) -> list[str]:
    """Every text the bot sent or edited into the chat from its Bot API call number `start` on, edits included."""
    return [
        plain_text(str(params.get("text", "")))
        for method, params in telegram.calls[start:]
        if method in ("sendMessage", "editMessageText") and int(params.get("chat_id", 0)) == chat_id
    ]
