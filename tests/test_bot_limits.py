"""Every message, edit, button and press answer the bot sends fits Telegram's limits, in every
language, at the worst a real group can reach: ten players whose names are as long as a seat
allows (40 UTF-16 code units) and wide (emoji, CJK, letters outside the basic plane, right to
left), a group title of Telegram's 128 characters, every variant on, deadlines filling votes,
cards and Plot card chances, long missions, /hints late in the game for every player, /status,
/settings, /help and /rules.

The fake Telegram refuses what Telegram refuses; this test measures what was sent as well, so a
message that grows towards a limit is seen here before it overflows."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from deduction.reasons import Reason
from engine import PLOT_PHASES, Phase, Variants, public_view
from engine.game import apply, new_game
from engine.simulate import random_action
from tgbot.i18n import LANGUAGES
from tgbot.offline.fake_telegram import (
    MAX_ANSWER_TEXT,
    MAX_CALLBACK_DATA,
    MAX_TEXT,
    _html_fault,
    _utf16_len,
    _visible_length,
)
from tgbot.offline.simulation import Policy, SimulatedGroup
from tgbot.render import board as board_render
from tgbot.render import hints as hints_render
from tgbot.render.common import MESSAGE_LIMIT, GroupScene, cut, shown_length
from tgbot.table import Player

pytestmark = pytest.mark.usefixtures("no_handler_errors")

SEED = 4096
T0 = 1_000_000.0
LATE = 10 * 24 * 3600  # far past any deadline
# Telegram's longest first names (64 characters), each wide in its own way; seated, each is cut to
# 40 UTF-16 code units.
WIDE_NAMES = (
    "🕵️‍♀️🕵🏿‍♂️👨‍👩‍👧‍👦🏳️‍🌈" * 4,
    "𝔄𝔫𝔫𝔞 𝔎𝔬𝔫𝔰𝔱𝔞𝔫𝔱𝔦𝔫𝔬𝔭𝔬𝔩𝔰𝔨𝔞𝔶𝔞 𝔙𝔞𝔫𝔡𝔢𝔯𝔟𝔦𝔩𝔱-𝔐𝔬𝔫𝔱𝔤𝔬𝔪𝔢𝔯𝔶 𝔍𝔯",
    "王小明王小明王小明王小明王小明王小明王小明王小明王小明王小明王小明王小明王小明王小明王小明",
    "עמית כהן עמית כהן עמית כהן עמית כהן עמית כהן עמית כהן עמית כהן",
    "Ж&lt;<b>Жжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжжж",
    "🇧🇬🇷🇺🇪🇸🇺🇦🇬🇧🇺🇸🇫🇷🇩🇪🇮🇹🇯🇵🇰🇷🇨🇳🇧🇷🇲🇽🇦🇷🇨🇦",
    "سارة سارة سارة سارة سارة سارة سارة سارة سارة سارة سارة سارة سارة",
    "𝓔𝓼𝓹𝓮𝓻𝓪𝓷𝓽𝓸 𝓚𝓸𝓷𝓼𝓽𝓪𝓷𝓽𝓲𝓷𝓸𝓹𝓸𝓵𝓼𝓴𝓪𝓳𝓪 𝓥𝓪𝓷𝓭𝓮𝓻𝓫𝓲𝓵𝓽 𝓜𝓸𝓷𝓽𝓰𝓸𝓶𝓮𝓻𝔂𝔂𝔂",
    "😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩😘😗😚😙🥲😋😛😜🤪😝🤑🤗🤭🤫🤔🤐",
    "Бартоломей Фезерстонхоу Александрович Константинопольский Ивано",
)
TITLE = ("🏰 " + "𝕽𝖊𝖘𝖎𝖘𝖙𝖆𝖓𝖈𝖊 " * 12)[:128]
SENT = ("sendMessage", "editMessageText")


class Suspicious(Policy):
    """Rejects most teams (long missions, five proposals), fails when a spy, and uses every Plot card."""

    def vote(self, table, seat):
        return self.rng.random() < 0.35


def check(telegram, start: int) -> dict[str, int]:
    """Asserts that every call from `start` on fits Telegram's limits; the longest of each kind."""
    longest = {"text": 0, "answer": 0, "button": 0, "data": 0}
    for method, params in telegram.calls[start:]:
        if method in SENT and params.get("text"):
            text = str(params["text"])
            assert _html_fault(text) is None, text
            length = _visible_length(text, params.get("parse_mode"))
            assert length <= MAX_TEXT, (length, text)
            longest["text"] = max(longest["text"], length)
        if method == "answerCallbackQuery" and params.get("text"):
            length = _utf16_len(str(params["text"]))
            assert length <= MAX_ANSWER_TEXT, (length, params["text"])
            longest["answer"] = max(longest["answer"], length)
        markup = params.get("reply_markup") if method in (*SENT, "editMessageReplyMarkup") else None
        if isinstance(markup, str):
            markup = json.loads(markup)
        for row in (markup or {}).get("inline_keyboard", []):
            for button in row:
                assert button.get("text"), button
                longest["button"] = max(longest["button"], _utf16_len(button["text"]))
                if "callback_data" in button:
                    size = len(button["callback_data"].encode())
                    assert 1 <= size <= MAX_CALLBACK_DATA, button
                    longest["data"] = max(longest["data"], size)
    return longest


async def ask_everything(group: SimulatedGroup, telegram) -> None:
    """/hints from every player in private, /status in the group, and "⏳ Waiting for…" pressed."""
    for user in group.user_ids:
        await group.send(telegram.command(user, user, "/hints"))
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/status"))
    table = await group.table()
    if table.is_active and table.game.phase is Phase.VOTING:
        board = group.latest_with_button(group.chat_id, f"w:{group.game_id}")
        await group.send(telegram.press(group.user_ids[1], group.chat_id, board.message_id, f"w:{group.game_id}"))


async def late_clock(group: SimulatedGroup, service, now: list[float], rng: random.Random, share: float = 0.4) -> None:
    """A few of those the game waits for act, and the clock fills in the rest."""
    table = await group.table()
    if table.game.phase is Phase.VOTING:
        for seat in range(len(table.players)):
            if rng.random() < share and table.game.current_round.proposals[-1].votes is None:
                choice = "a" if rng.random() < 0.5 else "r"
                try:
                    await group.press(table.players[seat].user_id, group.chat_id, "v:", f":{choice}")
                except StopIteration:
                    break
    now[0] += LATE
    await service.fire_due(now[0])
    await service.fire_due(now[0])


async def play_worst(
    make_bot, telegram, lang: str, seed: int, chat_id: int, late: float = 0.25, lazy: bool = False
) -> dict[str, int]:
    application = await make_bot(seed)
    now = [T0]
    service = application.bot_data["service"]
    service.clock = lambda: now[0]
    group = SimulatedGroup(telegram, application, chat_id=chat_id, title=TITLE, players=10, language=lang)
    for user, name in zip(group.user_ids, WIDE_NAMES, strict=True):
        telegram.add_user(user, name, language_code=lang)
    await group.store.update_settings(
        group.chat_id,
        lambda current: replace(current, language=lang, missing_vote_approves=seed % 2 == 0, hints=True),
    )
    start = len(telegram.calls)
    for command in ("/help", "/rules", "/settings", "/language"):
        await group.send(telegram.command(group.user_ids[0], group.chat_id, command))
        await group.send(telegram.command(group.user_ids[0], group.user_ids[0], command))
    await group.open_lobby_and_join(variants=Variants(targeting=True, blind_spies=True, plot_cards=True))
    await group.start()
    rng = random.Random(seed)
    policy = Suspicious(rng=rng, plot_use_rate=1.0)
    for moves in range(400):
        table = await group.table()
        if not table.is_active:
            break
        if moves % 7 == 3:
            await ask_everything(group, telegram)
        phase = table.game.phase
        plot = phase in PLOT_PHASES and (not lazy or rng.random() < 0.3)
        if rng.random() < late and (phase in (Phase.VOTING, Phase.MISSION, Phase.PROPOSING) or plot):
            await late_clock(group, service, now, rng, 0.0 if lazy else 0.4)
        else:
            await group.step(policy)
    assert not (await group.table()).is_active
    await ask_everything(group, telegram)
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/settings"))
    return check(telegram, start)


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_the_longest_game_fits_telegrams_limits(make_bot, telegram, lang):
    longest = {}
    # A game played by its players, and one where the clock fills nearly every vote, card and team.
    for n, (late, lazy) in enumerate(((0.25, False), (0.95, True))):
        found = await play_worst(make_bot, telegram, lang, SEED + n, chat_id=-(500 + n), late=late, lazy=lazy)
        longest = {k: max(v, longest.get(k, 0)) for k, v in found.items()}
    assert longest["text"] > 2500  # the games did reach long messages


# Ten right-to-left names of 40 UTF-16 code units each (set apart, they take 42).
FAR_NAMES = tuple(cut("ע" + "🕵🏿" * 20 + str(i), 40) for i in range(10))
# A random game (engine.simulate, its seed 597) whose 21st move ends mission 2 and deals mission 3's
# Plot cards: the proposal's message tells the deal, a drawn team, the votes the clock filled, the
# mission and the next deal, each card with its effect and whose time ran out.
LONG_GAME, LONG_MOVES = 597, 21


def long_proposal_view():
    rng = random.Random(LONG_GAME)
    state = new_game(10, rng, Variants(targeting=rng.random() < 0.5, blind_spies=True, plot_cards=True))
    deadlines = rng.choice([0.3, 0.6, 0.9])
    for _ in range(LONG_MOVES):
        approve = rng.choice([0.3, 0.6, 0.9])
        action = random_action(
            state, rng, approve_rate=approve, spy_fail_rate=0.9, deadline_rate=deadlines, plot_use_rate=1.0
        )
        state, _ = apply(state, action)
    return public_view(state)


@pytest.mark.parametrize("lang", ["ru", "eo"])
def test_a_long_proposal_with_every_plot_line_fits_one_message(lang):
    """The group's message of one proposal tells its whole story, and with Plot cards, deadlines and
    ten long names it ran past Telegram's 4096 characters (4112 in Russian, 4195 in Esperanto):
    Telegram refused the edit, and the group never saw the votes, the mission's result or who leads
    next. The long names are cut shorter instead, and every line is still there."""
    players = tuple(Player(user_id=i + 1, name=name) for i, name in enumerate(FAR_NAMES))
    scene = GroupScene("abcdef0123", "Group", players, lang, long_proposal_view(), True)
    whole, _ = board_render._board(scene)
    assert shown_length(whole) > MESSAGE_LIMIT
    text, buttons = board_render.board(scene)
    assert shown_length(text) <= MESSAGE_LIMIT
    assert text.count("\n") == whole.count("\n") and buttons == board_render._board(scene)[1]
    # Every player is still named, by the first part of their name.
    assert all(name[:8] in text for name in FAR_NAMES)
    cancelled = board_render.cancelled(scene)
    assert shown_length(cancelled) <= MESSAGE_LIMIT and cancelled.startswith(text.split("\n")[0])


def longest_reasons(players, seat: int, lang: str, count: int) -> list:
    """The `count` reasons about `seat` whose wording is longest, each naming the longest name it can."""
    reasons = [
        Reason(
            "mission_result",
            {"seat": seat, "mission": 5, "on_team": on, "succeeded": won, "fails": fails, "points": points},
        )
        for on in (True, False)
        for won in (True, False)
        for fails in ((0,) if won else (1, 2))
        for points in (-100, 100)
    ]
    for other in (s for s in range(len(players)) if s != seat):
        reasons += [
            Reason("votes", {"seat": seat, "voter": other, "fact": fact, "count": 12, "points": -100})
            for fact in ("approved_failed", "rejected_succeeded", "rejected_failed", "approved_succeeded", "cast")
        ]
        reasons += [
            Reason(
                "votes",
                {
                    "seat": seat,
                    "voter": voter,
                    "fact": "vote_on",
                    "count": 1,
                    "mission": 5,
                    "proposal": 5,
                    "approved": approved,
                    "points": -100,
                },
            )
            for voter in (seat, other)
            for approved in (True, False)
        ]
        reasons += [
            Reason("proposals", {"seat": seat, "leader": other, "fact": fact, "count": 12, "points": -100})
            for fact in ("led_failed", "led_succeeded", "proposed")
        ]

    def length(reason) -> int:
        return shown_length(hints_render.seat_reason_text(players, reason, lang))

    return sorted(reasons, key=length, reverse=True)[:count]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("spy_view", [False, True])
def test_the_longest_hints_fit_one_message(lang, spy_view):
    """/hints late in a game of ten long names in a group of Telegram's longest title: every seat
    with its reasons at their longest, the count of seatings and both missions with Fail cards a
    running game can have. It fits Telegram's message, with the reasons per seat the bot shows (a
    third one per seat would not: 4634 in Spanish)."""
    players = tuple(Player(user_id=i + 1, name=name) for i, name in enumerate(FAR_NAMES))
    per_seat = hints_render.REASONS_PER_SEAT
    explanation = SimpleNamespace(
        seats={seat: longest_reasons(players, seat, lang, per_seat) for seat in range(10)},
        table=[
            Reason("mission_fails", {"mission": 4, "seats": [0, 1, 2, 3, 4], "at_least": 2}),
            Reason("mission_fails", {"mission": 3, "seats": [5, 6, 7, 8], "at_least": 1}),
        ],
    )
    scene = SimpleNamespace(
        lang=lang, seat=SimpleNamespace(seat=0), group=SimpleNamespace(players=players, chat_title=TITLE)
    )
    text = hints_render.hints(scene, [0.5] * 10, 210, explanation, spy_view)
    assert text.count("↳") >= 10 * per_seat - (0 if spy_view else per_seat)
    assert shown_length(text) <= MESSAGE_LIMIT
