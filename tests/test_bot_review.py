"""Faults a player can hit with what Telegram lets any client do: long names, forged presses,
commands in the wrong place."""

from __future__ import annotations

import json
import logging
import random
import re
import unicodedata
from dataclasses import replace

import pytest

from engine import Phase, Variants, waiting_for
from tests.bot_helpers import lobby_message, press, propose, team_size
from tgbot.changes import Change
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text

pytestmark = pytest.mark.usefixtures("no_handler_errors")

# Telegram shows at most 200 characters in a press's answer and refuses a longer one outright.
ANSWER_LIMIT = 200
# Ten plausible full names, each short of Telegram's 64 + 64 characters.
FULL_NAMES = (
    "Alexandra Konstantinopolskaya",
    "Bartholomew Featherstonehaugh",
    "Cassiopeia Vanderbilt-Montgomery",
    "Dmitri Aleksandrovich Ivanov",
    "Evangelina Maximiliana Rossi",
    "Friedrich Wilhelm Schwarzenegger",
    "Guinevere Pendragon-Whitmore",
    "Hieronymus Bartholomaeus Bosch",
    "Isadora Esmeralda Castellanos",
    "Jonathan Christopher Abernathy",
)


async def test_waiting_for_ten_long_names_is_still_answered(make_bot, telegram):
    """"⏳ Waiting for…" at the vote of a table of ten: the answer names everyone, cut to fit."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=10)
    for user, name in zip(group.user_ids, FULL_NAMES, strict=True):
        telegram.add_user(user, name, language_code="en")
    await group.open_lobby_and_join()
    await group.start()
    await propose(group, range(team_size(await group.table())))
    board = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    answer = await press(group, group.user_ids[3], board, f"w:{group.game_id}")
    assert answer is not None and answer.startswith("Waiting for: ") and len(answer) <= ANSWER_LIMIT
    # Every player is still named, by the first part of their name at least.
    shown = answer.removeprefix("Waiting for: ").split(", ")
    assert len(shown) == 10
    for name, part in zip(FULL_NAMES, shown, strict=True):
        assert name.startswith(part.removesuffix("…")) and len(part.removesuffix("…")) >= 10


async def test_waiting_for_ten_long_right_to_left_names_names_everyone(make_bot, telegram):
    """The marks that set a right-to-left name apart count in the answer's 200 characters: the
    last name was cut off (its closing mark with it) to fit."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=10)
    for i, user in enumerate(group.user_ids):
        telegram.add_user(user, "אבגדהוזחטיכלמנסעפצקרשת"[i] * 30 + f" {i}", language_code="en")
    await group.open_lobby_and_join()
    await group.start()
    await propose(group, range(team_size(await group.table())))
    board = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    answer = await press(group, group.user_ids[3], board, f"w:{group.game_id}")
    assert answer is not None and len(answer) <= ANSWER_LIMIT
    shown = answer.removeprefix("Waiting for: ").split(", ")
    assert len(shown) == 10
    assert all(part.startswith("\u2068") and part.endswith("…\u2069") and len(part) > 10 for part in shown)


async def test_a_refusal_naming_a_long_named_host_is_still_answered(make_bot, telegram):
    """A host seated with Telegram's longest name (as every name was before names were cut, and a
    lobby stored then still holds): a refusal that names them, in a language whose sentence is long,
    is over Telegram's limit, and the presser was told nothing. It is cut to fit instead."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[1], "Bea", language_code="es")
    await group.open_lobby_and_join()
    longest = "A" * 64 + " " + "B" * 64

    def named_at_length(table):
        host, *rest = table.players
        return Change(replace(table, players=(replace(host, name=longest), *rest)))

    await group.store.update(group.game_id, named_at_length)
    lobby = lobby_message(telegram, group.chat_id)
    seated = len((await group.table()).players)
    answer = await press(group, group.user_ids[1], lobby, f"b:{group.game_id}:a")
    assert answer is not None and answer.startswith("Solo AAAA") and answer.endswith("…")
    assert len(answer) <= ANSWER_LIMIT
    assert len((await group.table()).players) == seated  # refused: no computer player seated


async def test_a_table_of_telegrams_longest_names_sees_every_message(make_bot, telegram, caplog):
    """Ten players with names of 64 + 64 characters (or one who sets such a name to spoil the game)
    made the group's board and the private hints longer than Telegram's 4096 characters: Telegram
    refused them, and the group never saw a vote's buttons or a mission's result. Names are seated
    cut to 40 characters, so every message goes out."""
    caplog.set_level(logging.INFO)
    application = await make_bot(2)
    group = SimulatedGroup(telegram, application, players=10)
    for i, user in enumerate(group.user_ids):
        telegram.add_user(user, chr(ord("A") + i) * 64 + " " + "Ж" * 63 + str(i), language_code="ru")
    await group.open_lobby_and_join(variants=Variants(plot_cards=True, targeting=True))
    await group.start()
    names = [player.name for player in (await group.table()).players]
    assert all(len(name) <= 40 and name.endswith("…") for name in names) and len(set(names)) == 10
    policy, moves = Policy(rng=random.Random(2)), 0
    while await group.step(policy):
        moves += 1
        if moves % 5 == 0:
            for user in group.user_ids[:4]:
                await group.send(telegram.command(user, user, "/hints"))
    assert not (await group.table()).is_active
    lost = [r.getMessage() for r in caplog.records]
    assert [line for line in lost if "refused" in line or "not delivered" in line] == []
    # The group saw the end: its last board names the winners.
    assert any("🏁" in (m.text or "") for m in telegram.messages(group.chat_id))


@pytest.mark.parametrize(
    ("full_name", "username", "shown"),
    [
        ("\u3164", "ghost", "@ghost"),  # a Hangul filler
        ("\u200b\u2800 ", None, "{id}"),  # a zero-width space, a blank Braille pattern
        ("\u3164 Zoe \u200b", None, "Zoe"),  # blanks around a name: trimmed
        ("\u00ad\u2062", "ghost", "@ghost"),  # a soft hyphen and an invisible operator
        ("\u2067\u202e\u2069", None, "{id}"),  # direction marks: set apart, still nothing to see
        ("\u034f\ufe0f\U000e0041", "ghost", "@ghost"),  # a joiner, a variation selector, a tag
        ("\u2066🤖\u2069", "ghost", "@ghost"),  # a robot between marks, the robot taken out
    ],
)
async def test_a_name_that_shows_as_nothing_is_not_seated_blank(make_bot, telegram, full_name, username, shown):
    """Telegram accepts a name made of characters that show as nothing (blanks, format characters,
    marks with nothing to carry them): the group would read blanks where that player is listed
    ("Waiting for: , Bob"). It is seated as the @username, or the user id."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[1], full_name, language_code="en", username=username)
    await group.open_lobby_and_join()
    (_, player) = (await group.table()).players
    assert player.name == shown.format(id=group.user_ids[1])
    assert f"Ann, {shown.format(id=group.user_ids[1])}" in lobby_message(telegram, group.chat_id).text


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Ann", "An\u200bn"),  # a zero-width space inside
        ("Ann", "Ann\u2062"),  # an invisible operator at the end
        ("Ann", "\u00adAnn"),  # a soft hyphen in front
        ("Ann", "A\u200enn"),  # a direction mark
        ("Zoë", "Zoe\u0308"),  # the same letter, decomposed
        ("Ann Lee", "Ann\u00a0Lee"),  # a no-break space
        ("Ann", "\u0410nn"),  # a Cyrillic capital A
        ("Bob", "\u0412\u043eb"),  # Cyrillic capital Ve and small o
        ("Joe", "J\u03bfe"),  # a Greek small omicron
        ("Al", "AI"),  # a capital I for a small L
    ],
)
async def test_a_name_that_reads_as_a_seated_players_name_is_told_apart(make_bot, telegram, first, second):
    """Two Anns are told apart with a number, but a second name that differed from the first only
    by characters that show as nothing, or wrote the same letters another way, was seated as it was:
    the lobby read "Ann, Ann", and so did every vote, team and the leader's keyboard. Anyone could
    pass for a player already seated. It is numbered as a second Ann is."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[0], first, language_code="en")
    telegram.add_user(group.user_ids[1], second, language_code="en")
    await group.open_lobby_and_join()
    (host, player) = (await group.table()).players
    assert host.name == first
    assert player.name == f"{second} (2)"
    assert f"{first}, {second} (2)" in lobby_message(telegram, group.chat_id).text


@pytest.mark.parametrize(("first", "second"), [("Ivan", "\u0418\u0432\u0430\u043d"), ("Ann", "Anna"), ("Bob", "bob")])
async def test_names_that_only_share_letters_are_not_numbered(make_bot, telegram, first, second):
    """Telling look-alike names apart must not number names a reader tells apart anyway: the same
    name in another alphabet («Иван»), a longer name, another case."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[0], first, language_code="en")
    telegram.add_user(group.user_ids[1], second, language_code="en")
    await group.open_lobby_and_join()
    assert [p.name for p in (await group.table()).players] == [first, second]


@pytest.mark.parametrize("line_break", ["\n", "\r", "\u2028", "\u2029", "\x85", "\x0b"])
async def test_a_name_holding_a_line_break_stays_on_its_line(make_bot, telegram, line_break):
    """A name with a line break in it wrote a line of its own into every list naming that player, where
    it could pass for the bot's ("🏁 The Resistance wins"): it is seated with a space instead."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[1], f"Bob{line_break}🏁 The Resistance wins", language_code="en")
    await group.open_lobby_and_join()
    (_, player) = (await group.table()).players
    assert player.name == "Bob 🏁 The Resistance wins"
    lines = plain_text(lobby_message(telegram, group.chat_id).text).splitlines()
    assert any(line.endswith("Ann, Bob 🏁 The Resistance wins") for line in lines)
    assert not any(line.startswith("🏁") for line in lines)


@pytest.mark.parametrize(
    ("full_name", "seated"),
    [("Bob, Cy", "Bob Cy"), ("Bob,👎 Cy", "Bob 👎 Cy"), ("Bob; Cy", "Bob Cy"), ("李，王", "李 王"), (", ,", "@bob")],
)
async def test_a_name_holding_a_list_separator_reads_as_one_player(make_bot, telegram, full_name, seated):
    """Players are listed with commas (teams, votes) and semicolons (Plot cards held): a player named
    "Bob, Cy" read as two players in every list, and one named "Bob, 👎 Cy" wrote a rejection into the
    👍 line of each vote. The separator is seated as a space."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[1], full_name, username="bob", language_code="en")
    await group.open_lobby_and_join()
    (_, player) = (await group.table()).players
    assert player.name == seated
    lines = plain_text(lobby_message(telegram, group.chat_id).text).splitlines()
    assert any(line.endswith(f"Ann, {seated}") for line in lines)


@pytest.mark.parametrize(
    ("full_name", "seated"),
    [
        ("A" * 37 + "🇺🇦🇺🇦", "A" * 37 + "…"),  # not a lone regional indicator (a letter in a box)
        ("B" * 35 + "👨\u200d👩\u200d👧", "B" * 35 + "…"),  # not half a family and a dangling joiner
        ("C" * 38 + "e\u0301x", "C" * 38 + "…"),  # not an e that lost its accent
        ("D" * 31 + " 👍🏽👍🏽👍🏽", "D" * 31 + " 👍🏽…"),  # not a hand without its skin tone
    ],
)
async def test_a_long_name_is_cut_between_the_characters_a_reader_sees(make_bot, telegram, full_name, seated):
    """A name over 40 characters is seated cut; the cut fell inside an emoji, a flag or a letter
    with its accent, and every list of players showed a broken character before the ellipsis."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[1], full_name, language_code="en")
    await group.open_lobby_and_join()
    (_, player) = (await group.table()).players
    assert player.name == seated
    assert f", {seated}" in lobby_message(telegram, group.chat_id).text


RESULT = re.compile(r"you (saw \S.*'s role|watched \S.*'s card):")


def results_told(telegram, user_id: int) -> list[str]:
    """What cards showed a player, as their private chat holds it."""
    return [m.text for m in telegram.messages(user_id) if m.from_bot and RESULT.search(m.text or "")]


async def test_what_a_card_showed_a_player_who_blocked_the_bot_reaches_them_when_they_come_back(make_bot, telegram):
    """A Plot card shows its result to one player in private (Open Up shows a role to whoever the
    holder chooses; Keeping a Close Eye shows a card when the mission is played). If that player had
    blocked the bot then, the result was lost for good: /start did not send it again, and nobody was
    told. Now the group is told (without the result) and /start sends it, once."""
    application = await make_bot(4)
    group = SimulatedGroup(telegram, application, players=9)
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    await group.start()
    policy, missed = Policy(rng=random.Random(4), plot_use_rate=0.9), 0
    for _ in range(2000):
        table = await group.table()
        if not table.is_active:
            break
        # Whoever the game does not wait for has blocked the bot while the others act.
        waited = set(waiting_for(table.game))
        away = [p.user_id for seat, p in enumerate(table.players) if seat not in waited]
        for user in away:
            telegram.block(user)
        seen_before = len(table.game.plot.seen)
        assert await group.step(policy)
        after = await group.table()
        for user in away:
            telegram.unblock(user)
        if not after.is_active:
            break
        new_results = after.game.plot.seen[seen_before:]
        missed += sum(after.players[s.viewer].user_id in away for s in new_results)
        # Back: whoever the game waits for now, and whoever a card just showed something.
        back = {after.players[s].user_id for s in waiting_for(after.game)} | {
            after.players[s.viewer].user_id for s in new_results
        }
        for user in back.intersection(away):
            await group.send(telegram.command(user, user, "/start"))
            await group.send(telegram.command(user, user, "/start"))  # twice: sent once
    table = await group.table()
    assert not table.is_active and missed >= 1
    for seat, player in enumerate(table.players):
        mine = [s for s in table.game.plot.seen if s.viewer == seat]
        assert len(results_told(telegram, player.user_id)) == len(mine)
    # The group heard that someone could not be reached, and never what anyone saw.
    group_texts = [m.text or "" for m in telegram.messages(group.chat_id)]
    assert any("I cannot write to you in private" in text for text in group_texts)
    assert not any(RESULT.search(text) for text in group_texts)


ISOLATE_OPENERS, PDI = "\u2066\u2067\u2068", "\u2069"
RIGHT_TO_LEFT = {"R", "AL", "LRE", "RLE", "LRO", "RLO", "PDF"}


def outside_isolates(text: str) -> tuple[str, bool]:
    """The characters of `text` outside every bidirectional isolate, and whether its isolates pair up."""
    depth, outside = 0, []
    for character in text:
        if character in ISOLATE_OPENERS:
            depth += 1
        elif character == PDI:
            if depth == 0:
                return "".join(outside), False
            depth -= 1
        elif depth == 0:
            outside.append(character)
    return "".join(outside), depth == 0


def everything_sent(telegram) -> list[str]:
    """Every text the bot sent: messages, edits, press answers and button labels."""
    found = []
    for method, params in telegram.calls:
        if method in ("sendMessage", "editMessageText", "answerCallbackQuery") and params.get("text"):
            found.append(str(params["text"]))
        markup = params.get("reply_markup") if method in ("sendMessage", "editMessageText") else None
        if isinstance(markup, str):
            markup = json.loads(markup)
        for row in (markup or {}).get("inline_keyboard", []):
            found.extend(button["text"] for button in row)
    return found


async def test_right_to_left_names_keep_to_themselves_in_every_line(make_bot, telegram):
    """A Hebrew or Arabic name (or title) turned each line it began right to left and moved the
    numbers after it ("עמית: 2 votes…" read "2 :עמית votes…"), and a name holding a right-to-left
    override reversed the rest of every line naming that player. Such names are shown set apart
    (between FSI and PDI, with the override closed), so every line reads left to right around them."""
    application = await make_bot(4)
    names = ("Ann", "עמית כהן", "\u202eevil", "سارة", "\u2069\u2067Dan", "Eve", "Fay")
    group = SimulatedGroup(telegram, application, players=len(names), title="חבורה 7")
    for user, name in zip(group.user_ids, names, strict=True):
        telegram.add_user(user, name, language_code="en")
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    await group.start()
    policy, moves = Policy(rng=random.Random(4)), 0
    while await group.step(policy):
        moves += 1
        if moves % 4 == 0:
            for user in group.user_ids:
                await group.send(telegram.command(user, user, "/hints"))
        if (await group.table()).game.phase is Phase.VOTING:
            board = group.latest_with_button(group.chat_id, f"w:{group.game_id}")
            await press(group, group.user_ids[0], board, f"w:{group.game_id}")
    sent = everything_sent(telegram)
    assert any("Ann" in text for text in sent) and any("עמית כהן" in text for text in sent)
    for text in sent:
        outside, paired = outside_isolates(text)
        assert paired, text
        assert not [c for c in outside if unicodedata.bidirectional(c) in RIGHT_TO_LEFT], text
    # A name written left to right is shown as it is.
    assert any(", Eve, Fay" in text for text in sent)
