"""Forged, stale and misplaced button presses, and secrets that must never reach the group or the logs.

Any Telegram client can send any callback data for any message it can see, so every press
is checked against the stored game: its data must be one of the bot's button kinds, name
this game's decision open now (its ballot), and be pressed where that button lives (votes
and "⏳ Waiting for…" on the game's group, cards and the leader's keyboard in the presser's
own private chat). A refused press must leave the stored table, the outbox, the remembered
message ids and every message players see exactly as they were.
"""

from __future__ import annotations

import logging
import random
import re

import pytest

from engine import Phase, Side, Variants, public_view
from tests.bot_helpers import (
    CleanTeams,
    answer_of,
    bot_texts,
    button_data,
    forged,
    propose,
    snapshot,
    started,
    team_size,
    vote_all,
)
from tgbot.__main__ import configure_logging
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text

pytestmark = pytest.mark.usefixtures("no_handler_errors")

OUTSIDER = 999
NOT_VALID = {"text": "This button is not valid.", "show_alert": False}
NOT_HERE = "This button is not valid here."


def ballot_of(table) -> int:
    return public_view(table.game).ballot


def leader_of(table) -> int:
    """The user id of the player whose turn it is to lead."""
    return table.players[table.game.leader].user_id


def keyboard_of(group: SimulatedGroup, leader: int):
    """The leader's private keyboard of this group's game."""
    return group.latest_with_button(leader, f"t:{group.game_id}:")


def ballot_message(group: SimulatedGroup):
    """The group's message of the proposal being voted on."""
    return group.latest_with_button(group.chat_id, f"v:{group.game_id}:")


def bot_messages(telegram, chat_id: int) -> list:
    """The bot's messages in a chat that a press can be made on (a game's picture has no buttons)."""
    return [m for m in telegram.messages(chat_id) if m.from_bot and m.photo is None]


def start_message(group: SimulatedGroup):
    """The group's first message from the bot: the lobby, which became the start message."""
    return bot_messages(group.telegram, group.chat_id)[0]


def calls_since(telegram, start: int) -> list[str]:
    return [method for method, _ in telegram.calls[start:]]


# ---------------------------------------------------------------- forged presses


async def test_non_player_cannot_vote_and_a_player_votes_only_as_themself(make_bot, telegram):
    group = await started(make_bot, telegram)
    telegram.add_user(OUTSIDER, "Mallory")
    await propose(group, range(team_size(await group.table())))
    ballot = ballot_message(group)
    approve = button_data(ballot, ":a")
    shown_before = telegram.message(group.chat_id, ballot.message_id).text

    before = await snapshot(group, [OUTSIDER])
    answer = await forged(group, OUTSIDER, group.chat_id, ballot.message_id, approve)
    assert answer["text"] == "You are not playing in this game."
    assert await snapshot(group, [OUTSIDER]) == before

    # A player pressing the ballot votes for their own seat and no other: the data names no seat.
    voter = group.user_ids[3]
    version = (await group.table()).game.version
    calls = len(telegram.calls)
    answer = await forged(group, voter, group.chat_id, ballot.message_id, approve)
    assert answer["text"].startswith("You voted 👍 Approve")
    game = (await group.table()).game
    assert game.pending_votes == tuple(True if seat == 3 else None for seat in range(5))
    assert game.version == version + 1
    # The group sees nothing of a single vote: its message is not edited, nothing is posted there.
    assert telegram.message(group.chat_id, ballot.message_id).text == shown_before
    assert bot_texts(telegram, group.chat_id, calls) == []
    # Asked who is still to vote, it hears who, never how anyone voted.
    update = telegram.press(OUTSIDER, group.chat_id, ballot.message_id, button_data(ballot, f"w:{group.game_id}"))
    await group.send(update)
    assert answer_of(telegram, update)["text"] == "Waiting for: Ann, Bob, Cy, Eve"


async def test_resistance_member_cannot_play_fail(make_bot, telegram):
    group = await started(make_bot, telegram)
    table = await group.table()
    honest = next(s for s in range(5) if s not in table.game.spies)
    team = sorted({honest, *[s for s in range(5) if s != honest][: team_size(table) - 1]})
    await propose(group, team)
    await vote_all(group, approve=True)
    assert (await group.table()).game.phase is Phase.MISSION

    user = group.user_ids[honest]
    prompt = group.latest_with_button(user, "c:")
    fail = button_data(prompt, ":f")
    before = await snapshot(group)
    answer = await forged(group, user, user, prompt.message_id, fail)
    assert answer == {"text": "You are in the Resistance: you must play Success.", "show_alert": True}
    assert await snapshot(group) == before
    assert honest not in (await group.table()).game.played_seats
    # The prompt still offers both cards, and Success still works afterwards.
    await group.press(user, user, "c:", ":s")
    assert honest in (await group.table()).game.played_seats


async def test_stale_team_button_and_stale_vote_are_refused(make_bot, telegram):
    group = await started(make_bot, telegram)
    table = await group.table()
    first_ballot, first_leader = ballot_of(table), leader_of(table)
    first_keyboard = keyboard_of(group, first_leader)
    old_tick = button_data(first_keyboard, ":0")
    old_propose = button_data(first_keyboard, ":ok")
    first_team = list(range(team_size(table)))
    await propose(group, first_team)
    # The first leader's keyboard now reads as what they proposed, without buttons.
    done = telegram.message(first_leader, first_keyboard.message_id)
    assert "you proposed Ann, Bob" in plain_text(done.text) and done.buttons() == []
    first_vote = ballot_message(group)
    old_approve = button_data(first_vote, ":a")
    await vote_all(group, approve=False)

    table = await group.table()
    game = table.game
    assert game.phase is Phase.PROPOSING and game.proposal_number == 2
    assert ballot_of(table) > first_ballot and leader_of(table) != first_leader
    leader = leader_of(table)
    keyboard = keyboard_of(group, leader)
    assert button_data(keyboard, ":0") != old_tick

    # The new leader replays a team button of the first proposal's keyboard (an older ballot) on their own.
    before = await snapshot(group)
    for data in (old_tick, old_propose):
        answer = await forged(group, leader, leader, keyboard.message_id, data)
        assert answer["text"] == "This choice is closed.", data
    # The first leader presses their old keyboard again: it is closed for them too.
    answer = await forged(group, first_leader, first_leader, first_keyboard.message_id, old_tick)
    assert answer["text"] == "This choice is closed."
    # A future ballot is no better.
    for ahead in (1, 2, 100):
        data = f"t:{group.game_id}:{ballot_of(table) + ahead}:0"
        answer = await forged(group, leader, leader, keyboard.message_id, data)
        assert answer["text"] == "This choice is closed.", data
    assert await snapshot(group) == before

    # Second proposal goes to a vote; a vote for the first (rejected) proposal is closed.
    await propose(group, first_team)
    second_vote = ballot_message(group)
    assert second_vote.message_id != first_vote.message_id
    assert first_vote.buttons() == [], "the first proposal's message lost its vote buttons when the votes were shown"
    before = await snapshot(group)
    voter = group.user_ids[2]
    for message in (first_vote, second_vote):
        answer = await forged(group, voter, group.chat_id, message.message_id, old_approve)
        assert answer["text"] == "This vote is closed."
    # Ballots that do not exist yet.
    current = ballot_of(await group.table())
    for ahead in (1, 2, 999):
        answer = await forged(
            group, voter, group.chat_id, second_vote.message_id, f"v:{group.game_id}:{current + ahead}:a"
        )
        assert answer["text"] == "This vote is closed."
    assert await snapshot(group) == before
    assert (await group.table()).game.pending_votes == (None,) * 5


async def test_an_old_ballot_of_the_same_game_is_refused_in_the_same_phase(make_bot, telegram):
    """The game, the phase and the presser are right, only the decision is an older one:
    a card of mission 1 pressed during mission 2, a vote of one proposal during the next."""
    group = await started(make_bot, telegram)
    policy = CleanTeams()
    table = await group.table()
    team = policy.choose_team(table, table.game.leader, team_size(table))
    await propose(group, team)
    await vote_all(group, approve=True)
    table = await group.table()
    mission_ballot = ballot_of(table)
    old_cards = {}
    for seat in table.game.current_round.team:
        user = table.players[seat].user_id
        prompt = group.latest_with_button(user, f"c:{group.game_id}:")
        old_cards[user] = (prompt.message_id, button_data(prompt, ":s"))
        await group.press(user, user, "c:", ":s")
    # Mission 1 is played; on to mission 2 and its cards.
    while (await group.table()).game.phase is not Phase.MISSION:
        await group.step(policy)
    table = await group.table()
    assert len(table.game.rounds) == 2 and ballot_of(table) > mission_ballot
    still_to_play = [table.players[s].user_id for s in table.game.current_round.team]
    replaying = [user for user in still_to_play if user in old_cards]
    assert replaying

    before = await snapshot(group)
    for user in replaying:
        message_id, data = old_cards[user]
        assert data == f"c:{group.game_id}:{mission_ballot}:s"
        answer = await forged(group, user, user, message_id, data)
        assert answer["text"] == "This mission is over."
        # The same old ballot on the new prompt: the message does not make the data current.
        prompt = group.latest_with_button(user, f"c:{group.game_id}:")
        answer = await forged(group, user, user, prompt.message_id, data)
        assert answer["text"] == "This mission is over."
    assert await snapshot(group) == before
    assert (await group.table()).game.played_seats == ()


async def test_forged_mission_presses_are_refused_under_targeting(make_bot, telegram):
    group = await started(make_bot, telegram, players=5, seed=3, variants=Variants(targeting=True))
    policy = CleanTeams()
    # Play until mission 1 has been played (a clean team always succeeds).
    while not (await group.table()).game.played_rounds:
        table = await group.table()
        if table.game.phase is Phase.PROPOSING and table.draft_mission is None:
            leader = leader_of(table)
            await group.press(leader, leader, "m:", ":1")
        else:
            await group.step(policy)
    table = await group.table()
    game = table.game
    assert [r.mission for r in game.played_rounds] == [1] and game.phase is Phase.PROPOSING
    leader = leader_of(table)
    keyboard = group.latest_with_button(leader, f"m:{group.game_id}:")
    offered = sorted(int(b["callback_data"].rsplit(":", 1)[1]) for b in keyboard.buttons())
    assert offered == [2, 3, 4]
    ballot = ballot_of(table)

    before = await snapshot(group)
    # The played mission and the fifth (locked until two successes) are refused by the rules;
    # missions that do not exist are not even valid buttons.
    refusals = {1: "That mission cannot be chosen now.", 5: "That mission cannot be chosen now."}
    refusals |= {0: "This button is not valid.", 6: "This button is not valid."}
    for mission, refusal in refusals.items():
        answer = await forged(group, leader, leader, keyboard.message_id, f"m:{group.game_id}:{ballot}:{mission}")
        assert answer["text"] == refusal, mission
    # A mission the rules allow, but pressed in the group or by another player, or with an old ballot.
    answer = await forged(
        group, leader, group.chat_id, start_message(group).message_id, f"m:{group.game_id}:{ballot}:2"
    )
    assert answer["text"] == NOT_HERE
    other = next(u for u in group.user_ids if u != leader)
    answer = await forged(
        group, other, other, bot_messages(telegram, other)[0].message_id, f"m:{group.game_id}:{ballot}:2"
    )
    assert answer["text"] == f"Only the leader, {table.name(game.leader)}, chooses the team."
    answer = await forged(group, leader, leader, keyboard.message_id, f"m:{group.game_id}:{ballot - 1}:2")
    assert answer["text"] == "This choice is closed."
    assert await snapshot(group) == before
    assert (await group.table()).draft_mission is None

    # Once the leader has picked mission 2, a forged press for the played mission changes nothing either.
    await group.press(leader, leader, "m:", ":2")
    before = await snapshot(group)
    answer = await forged(group, leader, leader, keyboard.message_id, f"m:{group.game_id}:{ballot}:1")
    assert answer["text"] == "That mission cannot be chosen now."
    assert await snapshot(group) == before
    assert (await group.table()).draft_mission == 2


async def test_team_and_mission_presses_count_only_in_the_leaders_private_chat(make_bot, telegram):
    """The leader's own, current buttons, pressed anywhere but the leader's private chat, are refused."""
    group = await started(make_bot, telegram, seed=5, variants=Variants(targeting=True))
    table = await group.table()
    leader, ballot = leader_of(table), ballot_of(table)
    mission_keyboard = group.latest_with_button(leader, f"m:{group.game_id}:")
    pick_one = button_data(mission_keyboard, ":1")
    start = start_message(group)

    before = await snapshot(group)
    for data in (pick_one, f"t:{group.game_id}:{ballot}:0", f"t:{group.game_id}:{ballot}:ok"):
        answer = await forged(group, leader, group.chat_id, start.message_id, data)
        assert answer["text"] == NOT_HERE, data
    assert await snapshot(group) == before

    # In the leader's private chat the same press counts; then the team keyboard follows.
    await group.press(leader, leader, "m:", ":1")
    assert (await group.table()).draft_mission == 1
    keyboard = keyboard_of(group, leader)
    tick = button_data(keyboard, ":0")
    before = await snapshot(group)
    for data in (tick, button_data(keyboard, ":ok")):
        answer = await forged(group, leader, group.chat_id, start.message_id, data)
        assert answer["text"] == NOT_HERE, data
    assert await snapshot(group) == before
    assert (await group.table()).draft_team == ()
    await group.send(telegram.press(leader, leader, keyboard.message_id, tick))
    assert (await group.table()).draft_team == (0,)


@pytest.mark.parametrize(
    "data",
    [
        "",
        "hello",
        "v:zz",
        "v:{game}:{ballot}:x",
        "c:{game}:{ballot}:maybe",
        "t:{game}:{ballot}:-1",
        "t:{game}:{ballot}:0:0",
        "v:{game}:{ballot}:a:extra",
        "v:{game}:{ballot}:1:a",  # the old format, with a round and a proposal
        "w:{game}:{ballot}",
        "w:{game}:",
        "x:{game}:yes",
        "m:{game}:{ballot}:6",
        "v:" + "a" * 62,
        "v:{game}:{ballot}:a\n",
        "t:{game}:{ballot}:ok\n",
        "w:{game}\n",
        "\nw:{game}",
        "V:{game}:{ballot}:a",
        "v:{GAME}:{ballot}:a",
        "v:{game}:-{ballot}:a",
        "v:{game}:1234567:a",
        # Numbers as no button writes them, though int() reads them: other scripts' digits, leading zeros.
        "t:{game}:{ballot}:٠",
        "t:{game}:{arabic}:0",
        "t:{game}:0{ballot}:0",
        "t:{game}:{ballot}:00",
        "s:-١٠٠:tg:0",
        "q",
    ],
)
async def test_garbage_data_is_not_valid(make_bot, telegram, data):
    group = await started(make_bot, telegram)
    table = await group.table()
    arabic = str(ballot_of(table)).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    # Upper-case hex, at least one letter of it whatever digits the random id drew.
    shouted = "A" + group.game_id[1:].upper()
    data = data.format(game=group.game_id, GAME=shouted, ballot=ballot_of(table), arabic=arabic)
    leader = leader_of(table)
    start = start_message(group)
    keyboard = keyboard_of(group, leader)
    before = await snapshot(group)
    for user, chat, message_id in (
        (group.user_ids[0], group.chat_id, start.message_id),
        (group.user_ids[4], group.chat_id, start.message_id),
        (leader, leader, keyboard.message_id),
    ):
        calls = len(telegram.calls)
        answer = await forged(group, user, chat, message_id, data)
        assert answer == NOT_VALID
        assert calls_since(telegram, calls) == ["answerCallbackQuery"]
    assert await snapshot(group) == before


async def test_a_press_without_data_is_not_valid(make_bot, telegram):
    """A query with no data at all (a modified client; Telegram's game buttons) matches no kind of button."""
    group = await started(make_bot, telegram)
    leader = leader_of(await group.table())
    before = await snapshot(group)
    for user, chat, message_id in (
        (group.user_ids[0], group.chat_id, start_message(group).message_id),
        (leader, leader, keyboard_of(group, leader).message_id),
    ):
        update = telegram.forged_press(user, chat, message_id, "-")
        del update["callback_query"]["data"]
        await group.send(update)
        assert answer_of(telegram, update) == NOT_VALID
    assert await snapshot(group) == before


async def test_a_trailing_newline_or_an_extra_field_spoils_a_real_button(make_bot, telegram):
    """The data of a real, current button with a newline or one more field after it matches no kind
    of button, though the button itself counts."""
    group = await started(make_bot, telegram)
    table = await group.table()
    leader = leader_of(table)
    keyboard = keyboard_of(group, leader)
    tick = button_data(keyboard, ":1")
    before = await snapshot(group)
    for spoiled in (tick + "\n", tick + ":1", tick + "\r\n", tick + " "):
        assert await forged(group, leader, leader, keyboard.message_id, spoiled) == NOT_VALID, spoiled
    assert await snapshot(group) == before
    await group.send(telegram.press(leader, leader, keyboard.message_id, tick))
    assert (await group.table()).draft_team == (1,)

    await propose(group, range(team_size(await group.table())))
    ballot = ballot_message(group)
    approve, waiting = button_data(ballot, ":a"), button_data(ballot, f"w:{group.game_id}")
    voter = group.user_ids[2]
    before = await snapshot(group)
    for spoiled in (approve + "\n", approve + ":2", waiting + "\n", waiting + ":a"):
        assert await forged(group, voter, group.chat_id, ballot.message_id, spoiled) == NOT_VALID, spoiled
    assert await snapshot(group) == before
    assert (await forged(group, voter, group.chat_id, ballot.message_id, approve))["text"].startswith("You voted")
    assert (await group.table()).game.pending_votes[2] is True


async def test_data_for_another_groups_game_is_refused(make_bot, telegram):
    here = await started(make_bot, telegram, chat_id=-100, title="Here")
    there = await started(make_bot, telegram, seed=2, chat_id=-200, title="There")
    there_leader_ballot = ballot_of(await there.table())
    await propose(there, range(team_size(await there.table())))
    there_ballot = ballot_of(await there.table())

    board = bot_messages(telegram, here.chat_id)[-1]
    before_here, before_there = await snapshot(here), await snapshot(there)
    pressers = [here.user_ids[0], leader_of(await here.table())]
    for user in pressers:
        for data in (
            f"v:{there.game_id}:{there_ballot}:a",
            f"v:{there.game_id}:{there_ballot}:r",
            f"c:{there.game_id}:{there_ballot}:f",
            f"t:{there.game_id}:{there_leader_ballot}:0",
            f"m:{there.game_id}:{there_leader_ballot}:1",
            f"x:{there.game_id}:y",
            f"w:{there.game_id}",
        ):
            calls = len(telegram.calls)
            answer = await forged(here, user, here.chat_id, board.message_id, data)
            # Data naming another group's game counts only on that group's (or the player's) messages;
            # being an admin of this group gives no say over the other group's game.
            assert answer["text"] == NOT_HERE, data
            assert "sendMessage" not in calls_since(telegram, calls), data
    assert await snapshot(here) == before_here
    assert await snapshot(there) == before_there
    assert (await there.table()).game.pending_votes == (None,) * 5


async def test_repeated_vote_counts_once(make_bot, telegram):
    group = await started(make_bot, telegram)
    await propose(group, range(team_size(await group.table())))
    version = (await group.table()).game.version
    voter = group.user_ids[1]
    ballot = ballot_message(group)
    approve, reject = button_data(ballot, ":a"), button_data(ballot, ":r")

    first = await forged(group, voter, group.chat_id, ballot.message_id, approve)
    assert first["text"].startswith("You voted 👍 Approve (mission 1, «Demo group»)")
    after_first = await snapshot(group)
    for data in (approve, reject, approve):
        answer = await forged(group, voter, group.chat_id, ballot.message_id, data)
        assert answer["text"] == "You have already voted."
    assert await snapshot(group) == after_first
    game = (await group.table()).game
    assert game.version == version + 1
    assert game.pending_votes == (None, True, None, None, None)
    update = telegram.press(voter, group.chat_id, ballot.message_id, button_data(ballot, f"w:{group.game_id}"))
    await group.send(update)
    assert answer_of(telegram, update)["text"] == "Waiting for: Ann, Cy, Dan, Eve"


async def test_only_the_leader_picks_the_team(make_bot, telegram):
    group = await started(make_bot, telegram)
    table = await group.table()
    leader = table.game.leader
    leader_user = table.players[leader].user_id
    await group.press(leader_user, leader_user, "t:", f":{leader}")  # the leader ticks themself
    keyboard = keyboard_of(group, leader_user)
    before = await snapshot(group)
    assert (await group.table()).draft_team == (leader,)

    # Another player copies every button of the leader's keyboard onto a message of their own
    # private chat (the only place such a press counts), and onto the group's message.
    intruder = group.user_ids[(leader + 1) % 5]
    own_message = bot_messages(telegram, intruder)[-1]
    start = start_message(group)
    for button in keyboard.buttons():
        data = button["callback_data"]
        answer = await forged(group, intruder, intruder, own_message.message_id, data)
        assert answer["text"] == f"Only the leader, {table.name(leader)}, chooses the team.", data
        answer = await forged(group, intruder, group.chat_id, start.message_id, data)
        assert answer["text"] == NOT_HERE, data
    assert await snapshot(group) == before
    assert (await group.table()).game.phase is Phase.PROPOSING


async def test_presses_on_a_finished_game_are_refused(make_bot, telegram):
    group = await started(make_bot, telegram)
    table = await group.play(CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    game_id, ballot = group.game_id, ballot_of(table)
    last = bot_messages(telegram, group.chat_id)[-1]
    assert "The Resistance wins" in plain_text(last.text)
    assert [b["callback_data"] for b in last.buttons()] == [f"r:{game_id}"], "only 🔁 Play again is left"

    user = group.user_ids[0]
    before = await snapshot(group)
    in_group = {
        f"v:{game_id}:{ballot}:a": "This vote is closed.",
        f"v:{game_id}:{ballot - 1}:a": "This vote is closed.",
        f"c:{game_id}:{ballot}:s": NOT_HERE,  # a card, in the group
        f"t:{game_id}:{ballot}:0": NOT_HERE,  # the leader's keyboard, in the group
        f"x:{game_id}:y": "This game is already over.",
        f"w:{game_id}": "This game is over.",
        "v:0123456789:1:a": "This button belongs to a game that is over.",
        "w:0123456789": "This button belongs to a game that is over.",
    }
    in_private = {
        f"c:{game_id}:{ballot}:s": "This mission is over.",
        f"c:{game_id}:{ballot - 1}:s": "This mission is over.",
        f"t:{game_id}:{ballot}:0": "This choice is closed.",
        f"t:{game_id}:{ballot}:ok": "This choice is closed.",
    }
    for data, refusal in in_group.items():
        answer = await forged(group, user, group.chat_id, last.message_id, data)
        assert answer["text"] == refusal, data
    own = bot_messages(telegram, user)[-1]
    for data, refusal in in_private.items():
        answer = await forged(group, user, user, own.message_id, data)
        assert answer["text"] == refusal, data
    assert await snapshot(group) == before
    # The group is free for a new game and the finished one is not listed as the user's.
    assert await group.store.game_of_chat(group.chat_id) is None
    assert await group.store.games_of_user(user) == []


# ---------------------------------------------------------------- "⏳ Waiting for…"


async def test_waiting_button_answers_who_must_act_and_changes_nothing(make_bot, telegram):
    group = await started(make_bot, telegram)
    telegram.add_user(OUTSIDER, "Mallory")
    table = await group.table()
    spies = table.game.spies
    await propose(group, range(team_size(table)))
    ballot = ballot_message(group)
    waiting = button_data(ballot, f"w:{group.game_id}")
    assert waiting == f"w:{group.game_id}"

    async def ask(user: int, chat: int, message_id: int, data: str = waiting) -> str:
        before = await snapshot(group, [OUTSIDER])
        calls = len(telegram.calls)
        answer = await forged(group, user, chat, message_id, data)
        # Nothing is stored, queued or sent: the presser alone is answered.
        assert calls_since(telegram, calls) == ["answerCallbackQuery"]
        assert await snapshot(group, [OUTSIDER]) == before
        return answer["text"]

    # During the vote: those who have not voted, whoever asks (the group may all see it).
    assert await ask(group.user_ids[0], group.chat_id, ballot.message_id) == "Waiting for: Ann, Bob, Cy, Dan, Eve"
    await group.press(group.user_ids[0], group.chat_id, "v:", ":r")
    await group.press(group.user_ids[3], group.chat_id, "v:", ":a")
    for user in (group.user_ids[1], OUTSIDER):
        assert await ask(user, group.chat_id, ballot.message_id) == "Waiting for: Bob, Cy, Eve"

    # During the mission: the team members who have not played, never who played what.
    await vote_all(group, approve=True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    team = table.game.current_round.team
    first = table.players[team[0]].user_id
    await group.press(first, first, "c:", ":f" if team[0] in spies else ":s")
    board = telegram.message(group.chat_id, ballot.message_id)
    # The board is not edited until the mission's result: its buttons are as they were.
    assert board.buttons() == ballot.buttons() and waiting in [b["callback_data"] for b in board.buttons()]
    rest = ", ".join(table.name(s) for s in team[1:])
    answer = await ask(group.user_ids[4], group.chat_id, ballot.message_id)
    assert answer == f"The team is playing its cards. Waiting for: {rest}"

    # While a leader chooses: the leader. A press on an older message of the game answers the same.
    for seat in team[1:]:
        user = table.players[seat].user_id
        await group.press(user, user, "c:", ":s")
    table = await group.table()
    assert table.game.phase is Phase.PROPOSING
    answer = await ask(group.user_ids[2], group.chat_id, ballot.message_id)
    assert answer == f"Waiting for: {table.name(table.game.leader)}"


async def test_waiting_button_outside_its_group_is_refused(make_bot, telegram):
    here = await started(make_bot, telegram, chat_id=-100, title="Here")
    there = await started(make_bot, telegram, seed=2, chat_id=-200, title="There")
    await propose(here, range(team_size(await here.table())))
    waiting = button_data(ballot_message(here), f"w:{here.game_id}")
    there_board = bot_messages(telegram, there.chat_id)[-1]
    player = here.user_ids[1]
    own = bot_messages(telegram, player)[-1]

    before_here, before_there = await snapshot(here), await snapshot(there)
    for user, chat, message_id in (
        (there.user_ids[0], there.chat_id, there_board.message_id),  # another group's message
        (player, player, own.message_id),  # a player's private chat
    ):
        calls = len(telegram.calls)
        answer = await forged(here, user, chat, message_id, waiting)
        assert answer["text"] == NOT_HERE
        assert calls_since(telegram, calls) == ["answerCallbackQuery"]
    assert await snapshot(here) == before_here
    assert await snapshot(there) == before_there


# ---------------------------------------------------------------- secrets


SPY_WORD = re.compile(r"\bsp(y|ies)\b", re.IGNORECASE)
# The table's setup is public (the rulebook's chart): how many spies, never who.
SETUP_LINE = re.compile(r"\d+ spies · teams [\d*-]+(?: \(\* needs two Fails\))?")
CARD_DATA = re.compile(r"\bc:[0-9a-f]{10}:\d+:[sf]\b")
VOTE_DATA = re.compile(r"\bv:[0-9a-f]{10}:\d+:[ar]\b")
PRIVATE_PHRASES = (
    "you are a spy",
    "you are in the resistance",
    "played ❌ fail",
    "played ✅ success",
    "play your card",
    "you are the leader",
    "you proposed",
)


def reveal_names(text: str) -> list[str]:
    names = []
    for line in text.splitlines():
        for mark in ("👍 ", "👎 "):
            if line.startswith(mark) and not line.startswith(mark + "Approve") and not line.startswith(mark + "Reject"):
                rest = line[len(mark) :]
                names += [] if rest == "—" else rest.split(", ")
    return names


class RandomWithSpiesFailing(Policy):
    def fail(self, table, seat):
        return seat in table.game.spies and self.rng.random() < 0.8


@pytest.mark.parametrize(
    ("players", "variants", "seed"),
    [
        (5, Variants(), 11),
        (10, Variants(), 12),
        (7, Variants(blind_spies=True), 13),
        (10, Variants(targeting=True, blind_spies=True), 14),
    ],
)
async def test_secrets_stay_private(make_bot, telegram, caplog, players, variants, seed):
    caplog.set_level(logging.INFO)
    group = await started(make_bot, telegram, players=players, seed=seed, variants=variants)
    table = await group.play(RandomWithSpiesFailing(rng=random.Random(seed)))
    assert table.game.is_over
    spies = table.game.spies
    spy_names = [table.name(s) for s in spies]
    user_ids = [p.user_id for p in table.players]

    # The group: no role, no card, no hidden vote before the game is over, and the spies named only then.
    texts = bot_texts(telegram, group.chat_id)
    over = next(i for i, text in enumerate(texts) if "🏁" in text)
    assert over == len(texts) - 1, "the game's end is the last thing the group sees"
    assert "Spies: " + ", ".join(spy_names) in texts[over]
    reveals = 0
    for text in texts[:over]:
        lowered = text.lower()
        assert not SPY_WORD.search(SETUP_LINE.sub("", text).replace("Blind Spies", "")), text
        assert not any(phrase in lowered for phrase in PRIVATE_PHRASES), text
        names = reveal_names(text)
        if names:
            # Votes are shown only complete: every player exactly once.
            assert sorted(names) == sorted(table.name(s) for s in range(players)), text
            reveals += 1
        else:
            assert "👍" not in text.replace("👍 Approve", "") and "👎" not in text.replace("👎 Reject", ""), text
    assert reveals >= 1

    # Private texts go to their own player's private chat only, protected from forwarding.
    sent = [
        (method, int(p["chat_id"]), str(p["text"]), p)
        for method, p in telegram.calls
        if method in ("sendMessage", "editMessageText")
    ]
    roles = [(chat, text, p) for method, chat, text, p in sent if text.startswith("Your game in")]
    assert sorted(chat for chat, _, _ in roles) == sorted(user_ids)
    for chat, text, params in roles:
        assert params.get("protect_content") in (True, "true"), text
        seat = table.seat_of(chat)
        assert ("you are a <b>spy</b>" in text) == (seat in spies), text
        assert ("you are in the <b>Resistance</b>" in text) == (seat not in spies), text
        if seat in spies and variants.blind_spies:
            assert not any(name in text for name in spy_names if name != table.name(seat))
    prompts = [(chat, p) for method, chat, text, p in sent if method == "sendMessage" and "Play your card" in text]
    assert prompts and all(chat in user_ids and p.get("protect_content") in (True, "true") for chat, p in prompts)
    keyboards = [
        (chat, p) for method, chat, text, p in sent if method == "sendMessage" and "you are the leader" in text
    ]
    assert keyboards and all(chat in user_ids and p.get("protect_content") in (True, "true") for chat, p in keyboards)
    assert all(
        chat > 0
        for _, chat, text, _ in sent
        if "you played" in text or "you proposed" in text or "Your game in" in text
    )

    # The logs: no card or vote choice, no private text, no spy named as such.
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert records, "the bot logs its work at INFO"
    assert_no_secret_in(records, telegram, table)


def assert_no_secret_in(records, telegram, table) -> None:
    """No log record holds a card or vote choice, a private text, or a spy named as such."""
    spy_names = [table.name(s) for s in table.game.spies]
    private_texts = [
        str(p["text"])
        for method, p in telegram.calls
        if method in ("sendMessage", "editMessageText") and int(p["chat_id"]) > 0
    ]
    for record in records:
        message = record.getMessage()
        if record.exc_info:
            message += logging.Formatter().formatException(record.exc_info)
        assert not CARD_DATA.search(message) and not VOTE_DATA.search(message), message
        assert not any(text in message or plain_text(text) in message for text in private_texts), message
        assert not any(phrase in message.lower() for phrase in PRIVATE_PHRASES), message
        if SPY_WORD.search(message):
            assert not any(re.search(rf"\b{re.escape(name)}\b", message) for name in spy_names), message


async def test_with_debug_logs_on_the_logs_still_hold_no_secret(make_bot, telegram, caplog):
    """LOG_LEVEL=DEBUG (an operator looking into a problem): python-telegram-bot's own debug lines show
    every request's parameters and every update it processes, so every role, card prompt and card
    press. They stay out of the logs, as the HTTP client's lines (which carry the token) stay out of INFO."""
    kept = {name: logging.getLogger(name).level for name in ("", "telegram", "httpx", "apscheduler")}
    try:
        configure_logging("DEBUG")
        caplog.set_level(logging.DEBUG)
        group = await started(make_bot, telegram, seed=11)
        table = await group.play(RandomWithSpiesFailing(rng=random.Random(11)))
    finally:
        for name, level in kept.items():
            logging.getLogger(name).setLevel(level)
    assert table.game.is_over and any(r.fails for r in table.game.rounds if r.fails is not None)
    assert any(r.levelno == logging.DEBUG for r in caplog.records)
    assert_no_secret_in(caplog.records, telegram, table)


async def test_a_player_of_both_games_cannot_vote_there_from_here(make_bot, telegram):
    """Bob sits at both tables; a ballot of one game pressed on the other group's message is refused."""
    application = await make_bot(11)
    here = SimulatedGroup(telegram, application, chat_id=-100, title="Here", players=5)
    there = SimulatedGroup(telegram, application, chat_id=-200, title="There", players=5)
    bob = here.user_ids[1]
    await here.open_lobby_and_join()
    await there.open_lobby_and_join(joining=[bob, *there.user_ids[1:]])
    await here.start()
    await there.start()
    while (await there.table()).game.phase is not Phase.VOTING:
        await there.step(CleanTeams())
    ballot = ballot_of(await there.table())
    real = button_data(ballot_message(there), ":a")
    assert real == f"v:{there.game_id}:{ballot}:a"
    before_here, before_there = await snapshot(here), await snapshot(there)
    board_here = bot_messages(telegram, here.chat_id)[-1]
    for data in (real, f"v:{there.game_id}:{ballot}:r"):
        answer = await forged(here, bob, here.chat_id, board_here.message_id, data)
        assert answer["text"] == NOT_HERE
    role_message = bot_messages(telegram, bob)[-1]
    answer = await forged(here, bob, bob, role_message.message_id, real)
    assert answer["text"] == NOT_HERE
    assert await snapshot(here) == before_here
    assert await snapshot(there) == before_there


async def test_a_team_pressed_before_the_mission_or_a_mission_without_targeting_changes_nothing(make_bot, telegram):
    """Under Targeting the leader's keyboard offers the missions first; a forged tick on it was stored,
    and the team keyboard then came up with a player ticked that the leader never chose. Without
    Targeting no mission is picked at all; a forged mission press was stored all the same."""
    group = await started(make_bot, telegram, seed=5, variants=Variants(targeting=True))
    table = await group.table()
    leader, ballot = leader_of(table), ballot_of(table)
    keyboard = group.latest_with_button(leader, f"m:{group.game_id}:")
    before = await snapshot(group)
    answer = await forged(group, leader, leader, keyboard.message_id, f"t:{group.game_id}:{ballot}:0")
    assert answer["text"] == "Choose the mission first."
    assert await snapshot(group) == before
    await group.press(leader, leader, "m:", ":1")
    assert (await group.table()).draft_team == ()
    assert "Chosen: —" in plain_text(keyboard_of(group, leader).text)

    plain = await started(make_bot, telegram, seed=5, chat_id=-200)
    table = await plain.table()
    leader, ballot = leader_of(table), ballot_of(table)
    keyboard = keyboard_of(plain, leader)
    before = await snapshot(plain)
    answer = await forged(plain, leader, leader, keyboard.message_id, f"m:{plain.game_id}:{ballot}:1")
    assert answer["text"] == "This button is not valid."
    assert await snapshot(plain) == before
    assert (await plain.table()).draft_mission is None
