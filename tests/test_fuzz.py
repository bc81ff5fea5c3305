"""Ten thousand random and malformed updates against running games: nothing may escape, leak or
corrupt a stored game, and the games can be played to their end afterwards.

The updates are built as plain dicts, as Telegram would post them, from a seeded generator, and
fed to two workers (two Applications on one Redis) fifty at a time. Callback queries are routed
to real bot messages (Telegram routes nothing else) or come without a message (inline messages);
their data is anything a modified client can send. One update in ten is a move a player may
really make, so the games go on (and end, and start again) while they are fuzzed. The stream of
updates is fixed by the seed; which of them are refused can vary with how the fifty updates of a
batch interleave.

"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import string
import traceback
from collections.abc import Callable

import pytest
from telegram import Update

from engine import Phase, Variants, export_record, parse_record, public_view, replay, waiting_for
from engine import rules as game_rules
from tests.servers import own_redis_url
from tgbot import keys
from tgbot.buttons import SETTING_CODES
from tgbot.i18n import LANGUAGES
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text
from tgbot.render.common import join_link
from tgbot.table import Stage, Table

SEED = 20240611
UPDATES = 10_000
CHUNK = 50
BOT = "resistance_test_bot"
ANONYMOUS_ADMIN = 1087968824  # Telegram's GroupAnonymousBot: the sender of an anonymous admin's messages
CHANNEL = {"id": -1009000000001, "type": "channel", "title": "News"}
PRIVATE_PHRASES = ("you are a spy", "you are in the resistance", "played ❌ fail", "played ✅ success")
COMMANDS = (
    "start",
    "newgame",
    "join",
    "leave",
    "startgame",
    "status",
    "cancel",
    "record",
    "hints",
    "settings",
    "language",
    "rules",
    "help",
)
UNKNOWN_COMMANDS = ("foo", "kick", "admin", "start_game", "join_", "x" * 32, "Status", "NEWGAME", "s", "_")
# Text that stresses parsers and HTML: markup, entities, emoji, right-to-left, zero-width, control chars.
ALPHABET = string.ascii_letters + string.digits + " :/@_-<>&\"'\n\t" + "ёжЖ中文🙂🕵️‍♀️\u200b\u202e\x00\x7f٣"


# ---------------------------------------------------------------- a redis-server of our own


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """Overrides conftest's: this module's own server, so no other test run can flush it under us."""
    yield from own_redis_url(tmp_path_factory.mktemp("redis"))


# ---------------------------------------------------------------- the tables being fuzzed


class Plausible(Policy):
    def vote(self, table, seat):
        return self.rng.random() < 0.8


async def until(group: SimulatedGroup, policy: Policy, done: Callable[[Table], bool]) -> None:
    for _ in range(200):
        if done(await group.table()):
            return
        assert await group.step(policy)
    raise AssertionError("the game never got there")


async def tables(telegram: FakeTelegram, application) -> list[SimulatedGroup]:
    """Five groups: an open lobby, and games proposing, voting (Targeting), in a mission (Blind Spies), over."""
    policy = Plausible(rng=random.Random(SEED))
    lobby = SimulatedGroup(telegram, application, chat_id=-101, title="Lobby", players=6)
    await lobby.open_lobby_and_join(joining=lobby.user_ids[:4])

    proposing = SimulatedGroup(telegram, application, chat_id=-102, title="Proposing", players=6)
    await proposing.open_lobby_and_join()
    await proposing.start()
    table = await proposing.table()
    leader = table.players[table.game.leader].user_id
    await proposing.press(leader, leader, "t:", ":0")  # on the leader's keyboard, in private

    voting = SimulatedGroup(telegram, application, chat_id=-103, title="Voting <b>&amp;</b>", players=7)
    shared = proposing.user_ids[1]  # sits at two tables
    await voting.open_lobby_and_join(joining=[*voting.user_ids[:6], shared], variants=Variants(targeting=True))
    await voting.start()
    await until(voting, policy, lambda t: len(t.game.rounds) >= 2 and t.game.phase is Phase.VOTING)
    table = await voting.table()
    for seat in range(3):
        await voting.press(table.players[seat].user_id, voting.chat_id, "v:", ":a")

    mission = SimulatedGroup(telegram, application, chat_id=-104, title="Mission", players=5)
    await mission.open_lobby_and_join(variants=Variants(blind_spies=True))
    await mission.start()
    await until(mission, policy, lambda t: t.game.phase is Phase.MISSION)
    table = await mission.table()
    player = table.players[table.game.current_round.team[0]].user_id
    await mission.press(player, player, "c:", ":s")

    over = SimulatedGroup(telegram, application, chat_id=-105, title="Over", players=5)
    await over.open_lobby_and_join()
    await over.start()
    await over.play(policy)
    await over.send(telegram.command(over.user_ids[1], over.chat_id, "/record"))
    return [lobby, proposing, voting, mission, over]


# ---------------------------------------------------------------- random updates


class Fuzzer:
    def __init__(
        self, rng: random.Random, telegram: FakeTelegram, groups: list[SimulatedGroup], game_ids: list[str]
    ) -> None:
        self.rng = rng
        self.telegram = telegram
        self.groups = groups
        self.game_ids = game_ids
        self.ballots: dict[str, int] = {}
        self.tables: dict[str, Table] = {}
        self.update_id = 10_000_000
        self.message_id = 5_000_000
        self.empty_group = {"id": -106, "type": "supergroup", "title": "Quiet"}
        self.strangers = [900_001, 900_002, 900_003, 900_004, 900_005]
        self.open_strangers = self.strangers[:3]
        self.players = sorted({user for group in groups for user in group.user_ids})
        self.open_users = set(self.players) | set(self.open_strangers)

    # --- pieces

    def text(self, length: int) -> str:
        return "".join(self.rng.choice(ALPHABET) for _ in range(length))

    def user(self, user_id: int) -> dict:
        if user_id == ANONYMOUS_ADMIN:
            return {"id": user_id, "is_bot": True, "first_name": "Group", "username": "GroupAnonymousBot"}
        user = {"id": user_id, "is_bot": False, "first_name": f"P{user_id}"}
        language = self.rng.choice(["en", "en", "en", "ru", "es", "pt-br", "", None])
        if language is not None:
            user["language_code"] = language
        return user

    def group_chat(self) -> dict:
        if self.rng.random() < 0.1:
            return dict(self.empty_group)
        group = self.rng.choice(self.groups)
        return {"id": group.chat_id, "type": self.rng.choice(["supergroup", "supergroup", "group"]), "title": "x"}

    def anyone_in(self, chat_id: int, anonymous: bool = True) -> int:
        """A member of the group, a player of another group, a stranger, or an anonymous admin."""
        roll = self.rng.random() * (1 if anonymous else 0.95)
        own = next((g.user_ids for g in self.groups if g.chat_id == chat_id), self.strangers)
        if roll < 0.55:
            return self.rng.choice(own)
        if roll < 0.75:
            return self.rng.choice(self.players)
        if roll < 0.95:
            return self.rng.choice(self.strangers)
        return ANONYMOUS_ADMIN

    def private_user(self) -> int:
        """Someone who can write to the bot in private: their private chat is open."""
        return self.rng.choice(self.players + self.open_strangers)

    def game_id(self) -> str:
        roll = self.rng.random()
        if roll < 0.8:
            return self.rng.choice(self.game_ids)
        if roll < 0.9:
            return "".join(self.rng.choice("0123456789abcdef") for _ in range(10))
        return self.rng.choice(["", "0" * 9, "f" * 11, "ABCDEF0123", "../../etc", self.text(10)])

    def number(self) -> str:
        return str(self.rng.choice([0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 99, 999_999, 1_000_000, self.rng.randint(0, 40)]))

    def ballot(self, game_id: str) -> str:
        """Mostly the game's open decision or one near it (stale, or not open yet)."""
        current = self.ballots.get(game_id)
        if current is None or self.rng.random() < 0.2:
            return self.number()
        return str(max(0, current + self.rng.choice([-3, -1, 0, 0, 0, 1, 2])))

    def spoiled(self, data: str) -> str:
        """Button data with something after it: a newline, a space, another field."""
        return data + self.rng.choice(["\n", "\r\n", " ", ":", ":0", ":a", ":ok", "\x00"])

    # --- callback data

    def callback_data(self, presser: int, chat_id: int | None, message, live: bool = False) -> str | None:
        if live and self.rng.random() < 0.5:
            # A button of the decision open now, pressed by whoever picked it: the checks of who
            # may press it and where are reached, not only those of its form.
            data = self.rng.choice([b["callback_data"] for b in message.buttons() if "callback_data" in b])
            if data.startswith("x:") and data.endswith(":y") and self.may_cancel(presser, chat_id):
                data = data[:-1] + "n"  # as below: no game is ended on purpose
            return self.spoiled(data) if self.rng.random() < 0.1 else data
        roll = self.rng.random()
        if roll < 0.03:
            return None
        if roll < 0.15:
            return self.text(self.rng.randint(0, 80))
        if roll < 0.3:
            tail = "".join(self.rng.choice(string.ascii_lowercase + string.digits + ":-") for _ in range(30))
            return f"{self.rng.choice('vctmwxhrslVq')}:{tail[: self.rng.randint(0, 30)]}"
        if roll < 0.45 and message is not None and message.buttons():
            data = self.rng.choice(message.buttons()).get("callback_data")  # a real button (None for a link)
            return self.spoiled(data) if data is not None and self.rng.random() < 0.15 else data
        data = self.made_up(presser, chat_id)
        return self.spoiled(data) if self.rng.random() < 0.1 else data

    def may_cancel(self, presser: int, chat_id: int | None) -> bool:
        owner = next((g for g in self.groups if g.chat_id == chat_id), None)
        return owner is not None and presser == owner.user_ids[0]

    def made_up(self, presser: int, chat_id: int | None) -> str:
        """Data of one of the bot's kinds of button, for any game, decision or chat."""
        kind = self.rng.choice("vctmwxhrslb")
        game_id = self.game_id()
        chat = chat_id if chat_id is not None and self.rng.random() < 0.7 else self.group_chat()["id"]
        if kind == "v":
            return f"v:{game_id}:{self.ballot(game_id)}:{self.rng.choice('ar')}"
        if kind == "c":
            return f"c:{game_id}:{self.ballot(game_id)}:{self.rng.choice('sf')}"
        if kind == "t":
            return f"t:{game_id}:{self.ballot(game_id)}:{self.rng.choice([self.number(), 'ok'])}"
        if kind == "m":
            return f"m:{game_id}:{self.ballot(game_id)}:{self.rng.randint(0, 6)}"
        if kind == "x":
            # Confirming a cancel is left out when the presser may cancel: a game ended on purpose
            # is no fuzz finding, and it would end the fuzzing of that game early.
            confirm = self.rng.choice("yn")
            if confirm == "y" and self.may_cancel(presser, chat_id):
                confirm = "n"
            return f"x:{game_id}:{confirm}"
        if kind in "whr":
            return f"{kind}:{game_id}"
        if kind == "b":
            return f"b:{game_id}:{self.rng.choice('ar')}"
        if kind == "s":
            return f"s:{chat}:{self.rng.choice([*SETTING_CODES.values(), 'zz'])}:{self.rng.choice([0, 1, 2, 9])}"
        return f"l:{chat}:{self.rng.choice([*LANGUAGES, 'de'])}"

    def callback_query(self) -> dict:
        roll = self.rng.random()
        message = None
        if roll < 0.6:
            chat_id = self.rng.choice(self.groups).chat_id
            presser = self.anyone_in(chat_id, anonymous=False)  # a press always names the real user
        elif roll < 0.9:
            presser = chat_id = self.private_user()
        else:
            chat_id, presser = None, self.rng.choice(self.players + self.strangers)
        live = False
        if chat_id is not None:
            mine = [m for m in self.telegram.messages(chat_id) if m.from_bot]
            keyboards = [m for m in mine if any("callback_data" in b for b in m.buttons())]
            if keyboards and self.rng.random() < 0.3:
                # The chat's newest keyboard: mostly a live board, card prompt or leader's keyboard.
                message, live = keyboards[-1], True
            else:
                message = self.rng.choice(mine) if mine else None
        data = self.callback_data(presser, chat_id if message else None, message, live)
        if message is not None:
            update = self.telegram.forged_press(presser, chat_id, message.message_id, data or "-")
            query = update["callback_query"]
            query["from"] = self.user(presser)
            if data is None:
                del query["data"]
            return update
        # A button on an inline message: no message, no chat, and a query Telegram no longer knows.
        query = {
            "id": str(self.rng.getrandbits(48)),
            "from": self.user(presser),
            "chat_instance": str(self.rng.getrandbits(32)),
            "inline_message_id": self.text(8),
        }
        if data is not None:
            query["data"] = data
        return {"update_id": self.next_update_id(), "callback_query": query}

    # --- messages

    def command_text(self) -> str:
        name = self.rng.choice(COMMANDS) if self.rng.random() < 0.8 else self.rng.choice(UNKNOWN_COMMANDS)
        suffix = self.rng.choice(["", "", "", f"@{BOT}", "@other_bot", "@"])
        roll = self.rng.random()
        if roll < 0.3:
            arguments = ""
        elif roll < 0.5:
            arguments = self.rng.choice(["targeting", "blind", "Targeting BLIND_SPIES", "blind blind", "-1", "0"])
        elif roll < 0.7:
            arguments = self.rng.choice(["join_", "join_" + self.game_id(), "join_" + self.text(20), "hello"])
        elif roll < 0.85:
            arguments = self.text(self.rng.randint(4000, 4090 - len(name) - len(suffix)))
        else:
            arguments = self.text(self.rng.randint(1, 60))
        return f"/{name}{suffix}" + (" " + arguments if arguments else "")

    def entities(self, text: str) -> list[dict] | None:
        if not text.startswith("/"):
            return None
        word = text.split(maxsplit=1)[0] if text.split() else text
        length = len(word.encode("utf-16-le")) // 2
        roll = self.rng.random()
        if roll < 0.8:
            return [{"type": "bot_command", "offset": 0, "length": length}]
        if roll < 0.85:
            return None  # a command Telegram did not mark as one
        return [{"type": "bot_command", "offset": self.rng.choice([0, 1]), "length": self.rng.choice([0, 1, 9999])}]

    def message(self) -> dict:
        roll = self.rng.random()
        if roll < 0.55:
            chat = self.group_chat()
            sender = self.anyone_in(chat["id"])
        elif roll < 0.9:
            sender = self.private_user()
            chat = {"id": sender, "type": "private", "first_name": f"P{sender}"}
        else:
            chat, sender = dict(CHANNEL), None
        self.message_id += 1
        text = self.command_text() if self.rng.random() < 0.75 else self.text(self.rng.choice([0, 1, 50, 4096]))
        message = {"message_id": self.message_id, "date": 1_700_000_000, "chat": chat}
        if sender is not None:
            message["from"] = self.user(sender)
        if sender == ANONYMOUS_ADMIN:
            message["sender_chat"] = chat
        shape = self.rng.random()
        if shape < 0.9:
            message["text"] = text
            entities = self.entities(text)
            if entities is not None:
                message["entities"] = entities
        elif shape < 0.95 and sender is not None and chat["id"] < 0:
            message["new_chat_members"] = [self.user(self.rng.choice(self.strangers))]
        if chat["type"] == "channel":
            message["sender_chat"] = chat
            kind = self.rng.choice(["channel_post", "edited_channel_post"])
        else:
            kind = "message" if self.rng.random() < 0.8 else "edited_message"
        if kind.startswith("edited"):
            message["edit_date"] = 1_700_000_100
        return {"update_id": self.next_update_id(), kind: message}

    def next_update_id(self) -> int:
        self.update_id += 1
        return self.update_id

    def move(self) -> dict | None:
        """A press a player of a running game may really make now: games move on while being fuzzed."""
        group = self.rng.choice(self.groups)
        table = next((t for t in self.tables.values() if t.chat_id == group.chat_id and t.is_active), None)
        if table is None or table.game is None:
            return None
        game = table.game
        # Computer players act on the clock, not through Telegram.
        people = [s for s, p in enumerate(table.players) if not p.computer]
        waiting = [s for s in waiting_for(game) if s in people]
        if not waiting:
            return None
        if game.phase is Phase.MISSION:
            seat = self.rng.choice(waiting)
            chat = user = table.players[seat].user_id
            prefix = f"c:{table.id}:"
        elif game.phase is Phase.VOTING:
            seat = self.rng.choice(waiting)
            prefix = f"v:{table.id}:"
            chat, user = table.chat_id, table.players[seat].user_id
        else:
            # The leader chooses on the keyboard in their private chat.
            choosing = game.variants.targeting and table.draft_mission is None
            prefix = f"{'m' if choosing else 't'}:{table.id}:"
            chat = user = table.players[game.leader].user_id
        message = next(
            (
                m
                for m in reversed(self.telegram.messages(chat))
                if any(b.get("callback_data", "").startswith(prefix) for b in m.buttons())
            ),
            None,
        )
        if message is None:
            return None
        buttons = [b["callback_data"] for b in message.buttons() if b.get("callback_data", "").startswith(prefix)]
        if prefix.startswith("t"):
            size = game_rules.team_size(game.players, table.draft_mission or game.open_missions()[0])
            ready = len(table.draft_team) == size and self.rng.random() < 0.8
            if ready:
                data = next(b for b in buttons if b.endswith(":ok"))
            else:
                data = self.rng.choice([b for b in buttons if not b.endswith(":ok")])
        elif prefix.startswith(("v", "c")) and self.rng.random() < 0.7:
            data = buttons[0]  # Approve, or Success
        else:
            data = self.rng.choice(buttons)
        return self.telegram.press(user, chat, message.message_id, data)

    def update(self) -> dict:
        roll = self.rng.random()
        if roll < 0.1:
            return self.move() or self.callback_query()
        if roll < 0.5:
            return self.callback_query()
        if roll < 0.98:
            return self.message()
        return {"update_id": self.next_update_id()}  # nothing in it at all


async def stored_tables(redis) -> dict[str, Table]:
    """Every game document in Redis, by game id (outboxes and message maps left aside)."""
    tables = {}
    async for key in redis.scan_iter(match=keys.game("*")):
        table = Table.from_json(await redis.get(key))
        tables[table.id] = table
    return tables


def assert_legal(table: Table) -> None:
    game = table.game
    if game is None:
        assert table.stage in (Stage.LOBBY, Stage.CANCELLED), table.stage
        assert len(table.players) <= 10
        return
    assert table.stage is not Stage.LOBBY
    assert (table.stage is Stage.OVER) == game.is_over or table.stage is Stage.CANCELLED
    assert len(table.players) == game.players
    assert all(0 <= seat < game.players for seat in table.draft_team)
    record = export_record(game, table.id)
    replayed = replay(parse_record(json.loads(json.dumps(record))), game.spies, game.variants)
    assert export_record(replayed, table.id) == record


async def assert_indexes(redis, tables: dict[str, Table]) -> None:
    """The group -> game and user -> games lookups agree with the stored tables."""
    for game_id, table in tables.items():
        current = await redis.get(keys.chat_game(table.chat_id))
        if table.is_active:
            assert current == game_id, (table.chat_id, current, game_id)
            for player in table.people:
                assert await redis.sismember(keys.user_games(player.user_id), game_id)
        else:
            assert current != game_id


def group_texts(telegram: FakeTelegram, since: int) -> list[str]:
    texts = []
    for method, params in telegram.calls[since:]:
        if method in ("sendMessage", "editMessageText", "sendDocument") and int(params.get("chat_id", 0)) < 0:
            texts.append(plain_text(str(params.get("text") or params.get("caption") or "")).lower())
    return texts


def failures_in(caplog) -> dict[str, int]:
    """Records at ERROR, by message kind and the bot's frame that raised: a short, readable summary."""
    found: dict[str, int] = {}
    for record in caplog.records:
        if record.levelno < logging.ERROR:
            continue
        where = ""
        if record.exc_info:
            frames = traceback.extract_tb(record.exc_info[2])
            ours = [f for f in frames if "/tgbot/" in f.filename]
            where = f" {record.exc_info[0].__name__}: {record.exc_info[1]} at " + " > ".join(
                f"{f.name}:{f.lineno}" for f in ours
            )
        key = record.getMessage().split(":")[0].split(" ")[0] + where
        found[key] = found.get(key, 0) + 1
    return found


async def finish(group: SimulatedGroup, telegram: FakeTelegram, policy: Policy) -> Table:
    """Play the group's game to its end; open one first if the group has none."""
    store = group.store
    game_id = await store.game_of_chat(group.chat_id)
    if game_id is None:
        await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
        game_id = await store.game_of_chat(group.chat_id)
    table = await store.load(game_id)
    if table.stage is Stage.LOBBY:
        for user in group.user_ids:
            if len(table.players) < 10 and table.seat_of(user) is None:
                await group.send(telegram.open_link(user, join_link(BOT, game_id)))
                table = await store.load(game_id)
        await group.send(telegram.command(group.user_ids[0], group.chat_id, "/startgame"))
    group.game_id = game_id
    return await group.play(policy)


# ---------------------------------------------------------------- the fuzz


async def test_random_and_malformed_updates_break_nothing(make_bot, telegram, redis, caplog):
    caplog.set_level(logging.INFO)
    workers = [await make_bot(1), await make_bot(2)]
    groups = await tables(telegram, workers[0])
    telegram.add_group(-106, "Quiet", admins=[900_001])
    telegram.add_user(ANONYMOUS_ADMIN, "Group", username="GroupAnonymousBot")
    rng = random.Random(SEED)
    fuzzer = Fuzzer(rng, telegram, groups, [g.game_id for g in groups])
    for user in fuzzer.strangers:
        telegram.add_user(user, f"P{user}")
    for user in fuzzer.open_strangers:
        await groups[0].send(telegram.command(user, user, "/help"))  # opens their private chat
    for user in fuzzer.players:
        telegram.text(user, user, "hi")  # whoever writes to the bot in private has opened that chat

    before = await stored_tables(redis)
    assert {t.stage for t in before.values()} == {Stage.LOBBY, Stage.PLAYING, Stage.OVER}
    for table in before.values():
        assert_legal(table)
    versions = {game_id: t.game.version for game_id, t in before.items() if t.game is not None}
    fuzzer.ballots = {game_id: public_view(t.game).ballot for game_id, t in before.items() if t.game is not None}
    fuzzer.tables = before
    calls = len(telegram.calls)
    caplog.clear()

    sent = 0
    while sent < UPDATES:
        batch = [(fuzzer.update(), rng.choice(workers)) for _ in range(CHUNK)]
        results = await asyncio.gather(
            *(worker.process_update(Update.de_json(update, worker.bot)) for update, worker in batch),
            return_exceptions=True,
        )
        escaped = [result for result in results if result is not None]
        assert not escaped, escaped[0]
        sent += len(batch)
        fuzzer.tables = await stored_tables(redis)
        for game_id, table in fuzzer.tables.items():
            if table.game is not None:
                assert table.game.version >= versions.get(game_id, 0), game_id
                ballot = public_view(table.game).ballot
                assert ballot >= fuzzer.ballots.get(game_id, 0), game_id
                versions[game_id], fuzzer.ballots[game_id] = table.game.version, ballot
            if game_id not in fuzzer.game_ids:
                fuzzer.game_ids.append(game_id)  # a lobby opened by the fuzz is fuzzed too

    assert not failures_in(caplog), failures_in(caplog)

    after = await stored_tables(redis)
    assert set(before) <= set(after)
    for table in after.values():
        assert_legal(table)
    await assert_indexes(redis, after)
    for game_id in after:
        assert await redis.llen(keys.outbox(game_id)) == 0, game_id
    for text in group_texts(telegram, calls):
        assert not any(phrase in text for phrase in PRIVATE_PHRASES), text

    # The fuzz did reach the games: presses were refused for many reasons, and games moved on and ended.
    answers = {a["text"] for a in telegram.callback_answers.values() if a["text"]}
    assert {
        "This button is not valid.",
        "This button is not valid here.",
        "You are not playing in this game.",
        "This vote is closed.",
        "This choice is closed.",
    } <= answers, answers
    assert any(answer.startswith("Waiting for: ") for answer in answers)
    assert any(after[g].game.version > t.game.version for g, t in before.items() if t.game is not None)
    assert any(t.stage is Stage.OVER for g, t in after.items() if g not in before or before[g].stage is not Stage.OVER)

    # Every group's game can still be played to its end (a group whose game ended gets a new one).
    policy = Plausible(rng=random.Random(SEED + 1))
    for group in groups:
        group.application = workers[1]
        table = await finish(group, telegram, policy)
        assert table.game.is_over and table.stage is Stage.OVER
        assert await redis.llen(keys.outbox(group.game_id)) == 0
    for table in (await stored_tables(redis)).values():
        assert_legal(table)
    assert not failures_in(caplog), failures_in(caplog)
