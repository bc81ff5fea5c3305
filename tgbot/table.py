"""A table in a group: who sits at it, and the engine game once it has started.

This is the document stored in Redis for each game. It holds no Telegram objects, only
ids and names, and knows nothing of how it is shown.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from engine import GameState, StateFormatError, Variants, state_from_dict, state_to_dict
from engine import rules as game_rules
from engine.plot import Card
from tgbot.i18n import DEFAULT_LANGUAGE, supported
from tgbot.settings import GroupSettings

DOCUMENT_SCHEMA = 1
LEFT_KEPT = 256  # people who left, remembered per table (`Table.left`)
MIN_PEOPLE = 2  # computer players fill seats, but a game of one person against them is not a group's game


class TableFormatError(ValueError):
    """A stored table document that cannot be read back as a table the bot could have written.

    Its message names what is wrong, never the document's contents (which hold the roles).
    """


class Stage(StrEnum):
    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Player:
    user_id: int  # a computer player's is negative: no Telegram user has it, and nothing is sent to it
    name: str
    language: str | None = None
    computer: bool = False


@dataclass(frozen=True)
class Table:
    id: str
    chat_id: int
    chat_title: str
    creator_id: int
    players: tuple[Player, ...] = ()  # join order in the lobby; seat order once the game starts
    stage: Stage = Stage.LOBBY
    settings: GroupSettings = field(default_factory=GroupSettings)
    game: GameState | None = None
    draft_team: tuple[int, ...] = ()  # seats the leader has ticked but not yet proposed
    draft_mission: int | None = None  # under Targeting: the mission the leader has picked
    draft_card: str | None = None  # with Plot cards: the drawn card the leader is about to give
    deadline: float | None = None  # when the current step times out (seconds since the epoch, by Redis's clock)
    reminder_at: float | None = None  # when to remind the group, once per step; None once reminded
    step: str = ""  # names the step the deadline belongs to
    # When the next computer-played seat the game waits for acts (None: the game waits for none).
    computer_at: float | None = None
    # Seats of people whose turns a computer player takes (the group lets it take over a seat
    # whose player missed two deadlines in a row), and each seat's deadlines missed in a row.
    autopilot: tuple[int, ...] = ()
    missed: tuple[int, ...] = ()
    # With Plot cards: seats of holders who let their last chance to use a card lapse unanswered, asked
    # more briefly at their next chances until they answer one themselves (`moves.absence.hurried`).
    hurried: tuple[int, ...] = ()
    # Webhook mode: the ids of the last updates that changed this table, so that an update processed
    # again (its worker died before it could say it was done) is not applied twice (tgbot.once).
    applied_updates: tuple[int, ...] = ()
    # How many times the table was stored changed: writes about the table made outside its own
    # keys (its deadline in the clock's index) carry it, so a late one never undoes a newer one.
    revision: int = 0
    # The group's chat id before Telegram upgraded it to a supergroup under `chat_id` (None if it
    # never moved): buttons on the messages posted there still carry it.
    moved_from: int | None = None
    # A lobby Play again opened, its players seated by whoever pressed it: the others did not choose
    # to play again, so when its time runs out it closes instead of starting a game by itself.
    rematch: bool = False
    # The variants named with /newgame (or kept by Play again): on top of the group's settings, which an
    # open lobby follows, so that a change in /settings does not drop them.
    named_variants: Variants = field(default_factory=Variants)
    # The forum topic of the group the game was opened in (None: the group has none, or it was opened
    # in General): the game's messages to the group go there.
    topic: int | None = None
    # People who left the lobby (or the group) and are not seated: their lists of games still name this
    # one (a late write must never take off one who joined again), so they are let go with the players
    # once it ends (`Store.update`). At most `LEFT_KEPT`, the latest.
    left: tuple[int, ...] = ()
    # A random id of the write that stored this document: a compare-and-set that Redis ran, whose
    # answer the connection lost and that the client ran again, recognises its own document by it,
    # where two workers' identical moves would otherwise write identical documents (`Store.update`).
    write_id: str = ""
    # Pace (`tgbot.moves.pace`): a game stopped because nobody played (no deadline runs while it is),
    # the steps in a row whose deadline passed with no person acting, whether a person acted in this
    # step, the seats that extended a step (one entry per /extend), the step last extended, and the
    # seats reminded in this step (their reminders are taken back when it ends).
    paused: bool = False
    idle_deadlines: int = 0
    person_acted: bool = False
    extensions: tuple[int, ...] = ()
    extended_step: str = ""
    reminded: tuple[int, ...] = ()

    @property
    def variants(self) -> Variants:
        return self.settings.variants

    @property
    def language(self) -> str:
        return self.settings.language or DEFAULT_LANGUAGE

    @property
    def next_wake(self) -> float | None:
        """When the clock next has something to do for this table."""
        times = [t for t in (self.reminder_at, self.deadline, self.computer_at) if t is not None]
        return min(times) if times and self.is_active else None

    @staticmethod
    def new_id() -> str:
        return secrets.token_hex(5)

    @property
    def is_paused(self) -> bool:
        """A running game stopped because nobody played (`tgbot.moves.pace`)."""
        return self.paused and self.stage is Stage.PLAYING

    @property
    def is_active(self) -> bool:
        return self.stage in (Stage.LOBBY, Stage.PLAYING)

    @property
    def people(self) -> tuple[Player, ...]:
        return tuple(p for p in self.players if not p.computer)

    def played_by_computer(self, seat: int) -> bool:
        """A computer player's seat, or a person's whose turns a computer player takes now."""
        return self.players[seat].computer or seat in self.autopilot

    def in_group(self, chat_id: int | None) -> bool:
        """Whether a chat is the game's group: by its id now, or by the one it had before it became
        a supergroup (its old messages stay, and their buttons can be pressed)."""
        return chat_id is not None and chat_id in (self.chat_id, self.moved_from)

    def moved_to(self, old_chat_id: int, new_chat_id: int) -> Table:
        """The table once its group `old_chat_id` became the supergroup `new_chat_id`; unchanged if
        it is not in that group (it moved already)."""
        if self.chat_id != old_chat_id:
            return self
        return replace(self, chat_id=new_chat_id, moved_from=old_chat_id)

    def seat_of(self, user_id: int) -> int | None:
        return next((seat for seat, p in enumerate(self.players) if p.user_id == user_id), None)

    def name(self, seat: int) -> str:
        return self.players[seat].name

    def speaking(self, user_id: int, language: str) -> Table:
        """The table with the seated `user_id` told what comes next in `language`, the one they act
        in now (a player who switches Telegram to another language mid-game would otherwise get
        their prompts in the old one and the answers to their presses in the new)."""
        seat = self.seat_of(user_id)
        if seat is None or (supported(self.players[seat].language) or self.language) == language:
            return self
        players = list(self.players)
        players[seat] = replace(players[seat], language=language)
        return replace(self, players=tuple(players))

    def with_game(self, game: GameState, **changes: Any) -> Table:
        return replace(self, game=game, **changes)

    # --- stored form ---

    def to_json(self) -> str:
        return json.dumps(
            {
                "schema": DOCUMENT_SCHEMA,
                "id": self.id,
                "chat_id": self.chat_id,
                "chat_title": self.chat_title,
                "creator_id": self.creator_id,
                "players": [[p.user_id, p.name, p.language, p.computer] for p in self.players],
                "stage": self.stage.value,
                "settings": json.loads(self.settings.to_json()),
                "game": None if self.game is None else state_to_dict(self.game),
                "draft_team": list(self.draft_team),
                "draft_mission": self.draft_mission,
                "draft_card": self.draft_card,
                "deadline": self.deadline,
                "reminder_at": self.reminder_at,
                "step": self.step,
                "computer_at": self.computer_at,
                "autopilot": list(self.autopilot),
                "missed": list(self.missed),
                "hurried": list(self.hurried),
                "applied_updates": list(self.applied_updates),
                "revision": self.revision,
                "moved_from": self.moved_from,
                "rematch": self.rematch,
                "named_variants": [
                    self.named_variants.targeting,
                    self.named_variants.blind_spies,
                    self.named_variants.plot_cards,
                ],
                "topic": self.topic,
                "write_id": self.write_id,
                "left": list(self.left),
                "paused": self.paused,
                "idle_deadlines": self.idle_deadlines,
                "person_acted": self.person_acted,
                "extensions": list(self.extensions),
                "extended_step": self.extended_step,
                "reminded": list(self.reminded),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Table:
        """The stored table, or `TableFormatError` / `engine.StateFormatError` (both `ValueError`s)
        when the document is damaged: no play may go on from a table the bot could not have written."""
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("schema") != DOCUMENT_SCHEMA:
                raise TableFormatError("not a table document of a schema this version reads")
            table = cls(
                id=data["id"],
                chat_id=data["chat_id"],
                chat_title=data["chat_title"],
                creator_id=data["creator_id"],
                players=tuple(_player(entry) for entry in data["players"]),
                stage=Stage(data["stage"]),
                settings=GroupSettings.from_json(json.dumps(data["settings"])),
                game=None if data["game"] is None else state_from_dict(data["game"]),
                draft_team=tuple(data["draft_team"]),
                draft_mission=data["draft_mission"],
                draft_card=data.get("draft_card"),
                deadline=data["deadline"],
                reminder_at=data["reminder_at"],
                step=data["step"],
                computer_at=data.get("computer_at"),
                autopilot=tuple(data.get("autopilot", ())),
                missed=tuple(data.get("missed", ())),
                hurried=tuple(data.get("hurried", ())),
                applied_updates=tuple(data.get("applied_updates", ())),
                revision=data.get("revision", 0),
                moved_from=data.get("moved_from"),
                rematch=data.get("rematch", False),
                named_variants=_variants(data.get("named_variants", [False, False, False])),
                topic=data.get("topic"),
                write_id=data.get("write_id", ""),
                left=tuple(data.get("left", ())),
                paused=data.get("paused", False),
                idle_deadlines=data.get("idle_deadlines", 0),
                person_acted=data.get("person_acted", False),
                extensions=tuple(data.get("extensions", ())),
                extended_step=data.get("extended_step", ""),
                reminded=tuple(data.get("reminded", ())),
            )
        except (StateFormatError, TableFormatError):
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # The type only: a message of these may quote the document.
            raise TableFormatError(f"malformed table document ({type(exc).__name__})") from None
        table._check()
        return table

    def _check(self) -> None:
        """Refuse what the bot never writes: a table whose parts disagree."""

        def require(condition: bool, problem: str) -> None:
            if not condition:
                raise TableFormatError(problem)

        require(isinstance(self.id, str) and bool(self.id), "id: not a game id")
        require(_is_int(self.chat_id) and _is_int(self.creator_id), "chat_id, creator_id: not ids")
        require(isinstance(self.chat_title, str) and isinstance(self.step, str), "chat_title, step: not text")
        require(self.topic is None or (_is_int(self.topic) and self.topic > 0), "topic: not a topic's id")
        require(len(self.players) <= game_rules.MAX_PLAYERS, "players: more than a table seats")
        require(
            all(_is_int(p.user_id) and isinstance(p.name, str) for p in self.players)
            and len({p.user_id for p in self.players}) == len(self.players),
            "players: each seat is one user, once",
        )
        require(
            all(p.computer is (p.user_id < 0) for p in self.players), "players: computer players, and only they, < 0"
        )
        require(
            all(_is_int(s) and 0 <= s < len(self.players) for s in self.autopilot)
            and len(set(self.autopilot)) == len(self.autopilot),
            "autopilot: seats at the table, once each",
        )
        require(all(_is_int(m) and m >= 0 for m in self.missed), "missed: counts")
        require(
            all(_is_int(s) and 0 <= s < len(self.players) for s in self.hurried)
            and len(set(self.hurried)) == len(self.hurried),
            "hurried: seats at the table, once each",
        )
        require(all(_is_int(u) for u in self.applied_updates), "applied_updates: not update ids")
        require(all(_is_int(u) and u > 0 for u in self.left), "left: not user ids")
        require(_is_int(self.revision) and self.revision >= 0, "revision: not a count")
        require(isinstance(self.write_id, str), "write_id: not text")
        require(isinstance(self.rematch, bool), "rematch: not true or false")
        require(
            isinstance(self.paused, bool) and isinstance(self.person_acted, bool),
            "paused, person_acted: not true or false",
        )
        require(_is_int(self.idle_deadlines) and self.idle_deadlines >= 0, "idle_deadlines: not a count")
        require(isinstance(self.extended_step, str), "extended_step: not text")
        for name, seats in (("extensions", self.extensions), ("reminded", self.reminded)):
            require(all(_is_int(s) and 0 <= s < len(self.players) for s in seats), f"{name}: seats at the table")
        require(len(set(self.reminded)) == len(self.reminded), "reminded: each seat once")
        require(
            self.moved_from is None or (_is_int(self.moved_from) and self.moved_from != self.chat_id),
            "moved_from: not another chat's id",
        )
        for when in (self.deadline, self.reminder_at, self.computer_at):
            require(when is None or (isinstance(when, int | float) and not isinstance(when, bool)), "deadline: a time")
        game = self.game
        if self.stage is Stage.LOBBY:
            require(game is None, "stage: a lobby has no game yet")
        elif self.stage in (Stage.PLAYING, Stage.OVER):
            require(game is not None and game.players == len(self.players), "game: one seat per player")
            require(game.is_over == (self.stage is Stage.OVER), "stage: disagrees with the game")
        seats = len(self.players)
        require(
            all(_is_int(s) and 0 <= s < seats for s in self.draft_team)
            and len(set(self.draft_team)) == len(self.draft_team),
            "draft_team: seats at the table, once each",
        )
        require(
            self.draft_mission is None
            or (_is_int(self.draft_mission) and 1 <= self.draft_mission <= game_rules.MISSION_COUNT),
            "draft_mission: not a mission",
        )
        require(self.draft_card is None or self.draft_card in _CARD_NAMES, "draft_card: not a Plot card")


_CARD_NAMES = frozenset(card.value for card in Card)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _variants(entry: list) -> Variants:
    """Stored variants: [targeting, blind_spies, plot_cards], each true or false."""
    if not isinstance(entry, list) or len(entry) != 3 or not all(isinstance(v, bool) for v in entry):
        raise TableFormatError("named_variants: not the variants the bot writes")
    return Variants(*entry)


def _player(entry: list) -> Player:
    """A stored seat: [user_id, name, language] (older documents) or [..., computer]."""
    user_id, name, language, *rest = entry
    computer = rest[0] if rest else False
    if not isinstance(computer, bool) or len(rest) > 1:
        raise TableFormatError("players: not a seat the bot writes")
    return Player(user_id, name, language, computer)


@dataclass(frozen=True)
class Salvaged:
    """What can still be read from a damaged document: enough to tell its group, never its roles."""

    chat_id: int | None
    language: str | None
    user_ids: tuple[int, ...]


def salvage(text: str | bytes) -> Salvaged:
    """Read what may be read of a damaged document, leaving out whatever is not as the bot writes it."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Salvaged(None, None, ())
    chat_id = data.get("chat_id")
    settings = data.get("settings")
    language = settings.get("language") if isinstance(settings, dict) else None
    players = data.get("players")
    user_ids = (
        tuple(p[0] for p in players if isinstance(p, list) and p and _is_int(p[0])) if isinstance(players, list) else ()
    )
    left = data.get("left")
    if isinstance(left, list):
        user_ids += tuple(u for u in left if _is_int(u) and u > 0 and u not in user_ids)
    return Salvaged(
        chat_id=chat_id if _is_int(chat_id) else None,
        language=supported(language) if isinstance(language, str) else None,
        user_ids=user_ids,
    )
