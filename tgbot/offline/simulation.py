"""Simulated players who play whole games by pressing the buttons the bot actually sent.

Used by `resistance-bot demo` and by the end-to-end tests. A simulated player reads the
stored game to know its own role (as a real player knows it from their role message)
and decides through a `Policy`; every decision becomes a real Telegram update.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from html import unescape

from telegram import Update
from telegram.ext import Application

from agents import act
from engine import PLOT_PHASES, Phase, Variants, waiting_for
from engine import rules as game_rules
from tgbot.offline.fake_telegram import FakeMessage, FakeTelegram
from tgbot.render.common import cut
from tgbot.store import Store
from tgbot.table import Table

NAMES = ("Ann", "Bob", "Cy", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon")
_TAG = re.compile(r"<[^>]+>")


@dataclass
class Policy:
    """How simulated players decide. The defaults play a plausible random game."""

    rng: random.Random = field(default_factory=random.Random)
    approve_rate: float = 0.6
    spy_fail_rate: float = 0.7

    def choose_mission(self, table: Table, seat: int, missions: tuple[int, ...]) -> int:
        return self.rng.choice(missions)

    def choose_team(self, table: Table, seat: int, size: int) -> list[int]:
        others = [s for s in range(len(table.players)) if s != seat]
        return sorted([seat, *self.rng.sample(others, size - 1)])

    def vote(self, table: Table, seat: int) -> bool:
        return self.rng.random() < self.approve_rate

    def fail(self, table: Table, seat: int) -> bool:
        return seat in table.game.spies and self.rng.random() < self.spy_fail_rate

    plot_use_rate: float = 0.7

    def plot_choice(self, table: Table, seat: int, choices: list[str]) -> str:
        """A press on a Plot card keyboard: a use (a card, a target) or, now and then, a pass."""
        uses = [c for c in choices if not c.endswith((":pass", ":db"))]
        passes = [c for c in choices if c.endswith(":pass")]
        if uses and (not passes or self.rng.random() < self.plot_use_rate):
            return self.rng.choice(uses)
        return passes[0]


class ComputerPolicy(Policy):
    """Simulated people who decide as computer players do (`agents`), from their own seat's view."""

    def _action(self, table: Table, seat: int):
        return act(table.game, seat, self.rng)

    def choose_mission(self, table: Table, seat: int, missions: tuple[int, ...]) -> int:
        return self._action(table, seat).mission or missions[0]

    def choose_team(self, table: Table, seat: int, size: int) -> list[int]:
        team = self._action(table, seat).team
        # Under Targeting the mission was picked a press earlier; a team for another one will not do.
        return list(team) if len(team) == size else super().choose_team(table, seat, size)

    def vote(self, table: Table, seat: int) -> bool:
        return self._action(table, seat).approve

    def fail(self, table: Table, seat: int) -> bool:
        return self._action(table, seat).fail


def plain_text(html: str) -> str:
    return unescape(_TAG.sub("", html))


class SimulatedGroup:
    """One group chat with its simulated players, driving a real Application."""

    def __init__(
        self,
        telegram: FakeTelegram,
        application: Application,
        chat_id: int = -100,
        title: str = "Demo group",
        players: int = 7,
        language: str = "en",
        *,
        basic: bool = False,
        forum: bool = False,
    ) -> None:
        """`basic`: a basic group, which can become a supergroup (`upgrade_to_supergroup`). `forum`:
        a group with topics, whose players send their commands in a topic of its own (`topic`)."""
        self.telegram = telegram
        self.application = application
        self.chat_id = chat_id
        self.user_ids = [abs(chat_id) * 100 + i + 1 for i in range(players)]
        telegram.add_group(chat_id, title, admins=[self.user_ids[0]], basic=basic, forum=forum)
        self.topic = telegram.open_topic(chat_id) if forum else None
        for user_id, name in zip(self.user_ids, NAMES, strict=False):
            telegram.add_user(user_id, name, language_code=language)
        self.game_id: str | None = None

    @property
    def store(self) -> Store:
        return self.application.bot_data["store"]

    async def send(self, update: dict) -> None:
        await self.application.process_update(Update.de_json(update, self.application.bot))

    async def table(self) -> Table:
        assert self.game_id is not None
        table = await self.store.load(self.game_id)
        assert table is not None
        return table

    def upgrade_to_supergroup(self, new_chat_id: int) -> tuple[dict, dict]:
        """The group becomes a supergroup with a new id (`FakeTelegram.upgrade_group`), where its
        players go on from now on. Returns the two service messages' updates, not yet delivered."""
        updates = self.telegram.upgrade_group(self.chat_id, new_chat_id)
        self.chat_id = new_chat_id
        return updates

    # ---------------------------------------------------------------- finding buttons

    def latest_with_button(self, chat_id: int, prefix: str) -> FakeMessage:
        for message in reversed(self.telegram.messages(chat_id)):
            if any(b.get("callback_data", "").startswith(prefix) for b in message.buttons()):
                return message
        raise LookupError(f"no message in chat {chat_id} has a {prefix!r} button")

    async def press(self, user_id: int, chat_id: int, prefix: str, ending: str) -> None:
        """Press the newest button of this group's game that starts with `prefix` and ends with `ending`.

        Only buttons whose data names this group's game count (the prefix followed by the game id),
        so a player seated in two groups, or a group with an older game's messages, presses the right one.
        """
        if self.game_id:
            prefix = f"{prefix}{self.game_id}:"
        message = self.latest_with_button(chat_id, prefix)
        data = next(
            b["callback_data"]
            for b in message.buttons()
            if b.get("callback_data", "").startswith(prefix) and b["callback_data"].endswith(ending)
        )
        await self.send(self.telegram.press(user_id, chat_id, message.message_id, data))

    # ---------------------------------------------------------------- a whole game

    def name_of(self, user_id: int) -> str:
        return NAMES[self.user_ids.index(user_id)]

    async def open_lobby_and_join(self, joining: list[int] | None = None, variants: Variants | None = None) -> None:
        variants = variants or Variants()
        host = self.user_ids[0]
        words = [
            word
            for word, chosen in (
                ("targeting", variants.targeting),
                ("blind", variants.blind_spies),
                ("plot", variants.plot_cards),
            )
            if chosen
        ]
        await self.send(self.telegram.command(host, self.chat_id, " ".join(["/newgame", *words]), self.topic))
        self.game_id = await self.store.game_of_chat(self.chat_id)
        lobby = next(m for m in self.telegram.messages(self.chat_id) if any("url" in b for b in m.buttons()))
        link = next(b["url"] for b in lobby.buttons() if "url" in b)
        for user_id in joining if joining is not None else self.user_ids:
            await self.send(self.telegram.open_link(user_id, link))

    async def add_computers(self, count: int) -> None:
        for _ in range(count):
            await self.send(self.telegram.command(self.user_ids[0], self.chat_id, "/addbot", self.topic))

    async def start(self) -> None:
        await self.send(self.telegram.command(self.user_ids[0], self.chat_id, "/startgame", self.topic))

    async def step(self, policy: Policy) -> bool:
        """Make the next move the game waits for; False once it is over."""
        table = await self.table()
        game = table.game
        if game is None or not table.is_active:
            return False
        people = [seat for seat in waiting_for(game) if not table.played_by_computer(seat)]
        if not people:
            # Computer players act on the clock: move it to the time the next one is due.
            if table.computer_at is None:
                raise RuntimeError("the game waits for computer players that have no turn scheduled")
            await self.application.bot_data["service"].fire_due(table.computer_at)
            return True
        if game.phase in PLOT_PHASES:
            # One Plot decision at a time, on the keyboard in that player's private chat.
            seat = people[0]
            user = table.players[seat].user_id
            prefix = f"p:{self.game_id}:"
            message = self.latest_with_button(user, prefix)
            choices = [b["callback_data"] for b in message.buttons() if b.get("callback_data", "").startswith(prefix)]
            data = policy.plot_choice(table, seat, choices)
            await self.send(self.telegram.press(user, user, message.message_id, data))
            return True
        if game.phase is Phase.PROPOSING:
            leader = game.leader
            user = table.players[leader].user_id
            # The leader chooses on the keyboard in their private chat: under Targeting the
            # mission first, as the keyboard asks.
            if game.variants.targeting and table.draft_mission is None:
                mission = policy.choose_mission(table, leader, game.open_missions())
                await self.press(user, user, "m:", f":{mission}")
                return True
            mission = table.draft_mission or game.open_missions()[0]
            wanted = set(policy.choose_team(table, leader, game_rules.team_size(game.players, mission)))
            for seat in sorted(wanted ^ set(table.draft_team)):
                await self.press(user, user, "t:", f":{seat}")
            await self.press(user, user, "t:", ":ok")
        elif game.phase is Phase.VOTING:
            for seat in people:
                choice = "a" if policy.vote(table, seat) else "r"
                await self.press(table.players[seat].user_id, self.chat_id, "v:", f":{choice}")
        else:
            for seat in people:
                user = table.players[seat].user_id
                await self.press(user, user, "c:", ":f" if policy.fail(table, seat) else ":s")
        return True

    async def play(self, policy: Policy, max_steps: int = 500) -> Table:
        for _ in range(max_steps):
            if not await self.step(policy):
                return await self.table()
        raise RuntimeError("the game did not end")

    # ---------------------------------------------------------------- transcripts

    def transcript(self, chat_id: int) -> list[str]:
        """Every message of the chat as it reads now, a player's own messages under their name, in
        the order their texts were last written: the lobby message, edited into the start of the
        game, comes after the joins, and a board after the votes it shows. Pictures (a game's end)
        have no text and are left out."""
        lines = []
        shown = (m for m in self.telegram.messages(chat_id) if m.photo is None)
        for message in sorted(shown, key=lambda m: m.written):
            text = plain_text(message.text or "")
            lines.append(text if message.from_bot else f"{self.name_of(message.sender_id)}: {text}")
        return lines

    def timeline(self, chat_id: int) -> list[str]:
        """The chat as someone watching it saw it, in the order it happened: each message as it was
        posted, and each later edit or deletion where it happened, saying which message it changed
        (by the start of its first line)."""
        lines, first_lines = [], {}
        for chat, message_id, kind, text in self.telegram.history:
            if chat != chat_id:
                continue
            message = self.telegram.message(chat_id, message_id)
            shown = plain_text(text or "")
            if message.photo is not None:
                shown = f"[🖼 {message.photo.filename}]" + (f"\n{shown}" if shown else "")
            if kind == "sent":
                first_lines[message_id] = shown.split("\n", 1)[0]
                lines.append(shown if message.from_bot else f"{self.name_of(message.sender_id)}: {shown}")
                continue
            changed = f"«{cut(first_lines.get(message_id, ''), 40)}»"
            lines.append(f"[✏️ edited {changed}]\n{shown}" if kind == "edited" else f"[🗑 deleted {changed}]")
        return lines
