"""Reminders and deadlines: the clock is driven by the test, through `GameService.clock` and `fire_due`.

The bots run with `clock_seconds=0`, so nothing ticks by itself: a test sets the service's clock
before the lobby opens, moves it forward and calls `fire_due`, as a worker's tick would.

What a deadline did is shown on the group's board (one message per proposal, edited once: with a
rejected team's votes, or with an approved team's votes and its mission's result); reminders go in
private to the players the game waits for, and only a lobby reminds its group.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import replace

import pytest

from engine import EndReason, Phase, Side, parse_record, public_view
from tests.bot_helpers import (
    RejectEverything,
    button_data,
    lobby_message,
    next_on_the_clock,
    press,
    propose,
    team_size,
    vote_all,
)
from tests.bot_helpers import texts as group_texts
from tgbot import keys
from tgbot.moves import clock
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.settings import GroupSettings
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

T0 = 1_000_000.0
DEFAULTS = GroupSettings()
PROPOSAL, VOTE, MISSION, LOBBY = (
    DEFAULTS.proposal_seconds,
    DEFAULTS.vote_seconds,
    DEFAULTS.mission_seconds,
    DEFAULTS.lobby_seconds,
)
LEADER_REMINDER = "⏰ «Demo group» waits for you to choose the next team, until "
WAITING_BUTTON = "⏳ Waiting for…"
MESSAGE_CALLS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage", "sendDocument")


# ---------------------------------------------------------------- helpers


def is_reminder(text: str | None) -> bool:
    return plain_text(text or "").startswith("⏰ «Demo group» waits for ")


def set_clock(application, now: list[float]):
    service = application.bot_data["service"]
    service.clock = lambda: now[0]
    return service


async def clocked_group(make_bot, telegram, players: int = 5, seed: int = 1, joined: int | None = None, **settings):
    """A group whose bot reads the test's clock, its lobby opened at T0 and joined by the first `joined` users.

    `settings` are stored for the group before its lobby opens."""
    application = await make_bot(seed)
    now = [T0]
    service = set_clock(application, now)
    group = SimulatedGroup(telegram, application, players=players)
    if settings:
        await group.store.update_settings(group.chat_id, lambda current: replace(current, **settings))
    await group.open_lobby_and_join(joining=None if joined is None else group.user_ids[:joined])
    return group, service, now


async def started_game(make_bot, telegram, players: int = 5, seed: int = 1, **settings):
    group, service, now = await clocked_group(make_bot, telegram, players, seed, **settings)
    await group.start()
    assert (await group.table()).stage is Stage.PLAYING
    return group, service, now


def message_calls(telegram, start: int, chat_id: int | None = None) -> list[tuple[str, dict]]:
    """The bot's calls that send, edit or delete a message from call number `start` on (in `chat_id` only, if given)."""
    return [
        (method, params)
        for method, params in telegram.calls[start:]
        if method in MESSAGE_CALLS and (chat_id is None or int(params.get("chat_id", 0)) == chat_id)
    ]


def sends(telegram, start: int, chat_id: int) -> list[str]:
    """The texts of the messages the bot sent to a chat from call number `start` on."""
    return [plain_text(str(p["text"])) for m, p in message_calls(telegram, start, chat_id) if m == "sendMessage"]


def group_edits(telegram, start: int, chat_id: int) -> list[str]:
    return [plain_text(str(p["text"])) for m, p in message_calls(telegram, start, chat_id) if m == "editMessageText"]


def callback_datas(message) -> list[str]:
    return [b["callback_data"] for b in message.buttons() if "callback_data" in b]


def button_labels(message) -> list[str]:
    return [b["text"] for b in message.buttons()]


async def vote(group: SimulatedGroup, seat: int, approve: bool) -> None:
    table = await group.table()
    await group.press(table.players[seat].user_id, group.chat_id, "v:", ":a" if approve else ":r")


async def play_card(group: SimulatedGroup, seat: int, fail: bool = False) -> None:
    user = (await group.table()).players[seat].user_id
    await group.press(user, user, "c:", ":f" if fail else ":s")


def leader_keyboard(group: SimulatedGroup, user_id: int):
    """The leader's private message with the team buttons of this game."""
    return group.latest_with_button(user_id, f"t:{group.game_id}:")


def board_message(group: SimulatedGroup, telegram):
    """The group's newest message: the board of the latest proposal (or the start message)."""
    return [m for m in telegram.messages(group.chat_id) if m.from_bot][-1]


def names(table, seats) -> str:
    return ", ".join(table.name(s) for s in seats)


def whose_turn(table, mission: int, size: int) -> str:
    leader = table.name(table.game.leader)
    return f"➡️ Mission {mission}: {leader} leads, choosing a team of {size} in private."


def first_team(table) -> list[int]:
    """Mission 1 with five players takes two: the leader and the next seat clockwise."""
    leader = table.game.leader
    return sorted([leader, table.game.next_seat(leader)])


# ---------------------------------------------------------------- half-way reminders


async def test_half_way_reminders_come_once_per_step_at_half_time(make_bot, telegram):
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    table = await group.table()
    leader = table.game.leader
    leader_user = table.players[leader].user_id
    assert table.step == "proposing:1"
    assert (table.deadline, table.reminder_at) == (T0 + PROPOSAL, T0 + PROPOSAL / 2)
    assert await group.store.redis.zscore(keys.deadlines_of(group.game_id), group.game_id) == T0 + PROPOSAL / 2

    # Not yet half-way: nothing at all is sent.
    now[0] = T0 + PROPOSAL / 2 - 1
    calls = len(telegram.calls)
    assert await service.fire_due() == 0
    assert len(telegram.calls) == calls

    # Half-way through the leader's turn: one private message, to the leader; nothing in the group.
    now[0] = T0 + PROPOSAL / 2
    calls = len(telegram.calls)
    group_before = [(m.text, m.edits) for m in telegram.messages(chat)]
    assert await service.fire_due() == 1
    assert [(m, int(p["chat_id"])) for m, p in message_calls(telegram, calls)] == [("sendMessage", leader_user)]
    [reminder_text] = sends(telegram, calls, leader_user)
    assert reminder_text.startswith(LEADER_REMINDER)
    assert [(m.text, m.edits) for m in telegram.messages(chat)] == group_before
    reminder = telegram.messages(leader_user)[-1]
    assert plain_text(reminder.text) == reminder_text
    # It answers the leader's keyboard: a tap on the quote leads there.
    keyboard = next(m for m in telegram.messages(leader_user) if "you are the leader" in (m.text or ""))
    assert reminder.reply_to == keyboard.message_id
    after = await group.table()
    assert after.reminder_at is None and after.deadline == T0 + PROPOSAL
    assert after.game == table.game  # a reminder changes nothing in the game
    # The deadline is what the game waits for now.
    assert await group.store.redis.zscore(keys.deadlines_of(group.game_id), group.game_id) == T0 + PROPOSAL

    # Firing again at the same moment, or a little later, reminds nobody twice.
    calls = len(telegram.calls)
    assert await service.fire_due() == 0
    assert await service.fire_due(now[0] + 10) == 0
    assert len(telegram.calls) == calls

    # Voting: a new step, with its own reminder time; it too comes once. The leader's reminder is
    # taken back: the step it asked for is over.
    now[0] = T0 + 100
    team = first_team(table)
    await propose(group, team)
    assert reminder.message_id not in [m.message_id for m in telegram.messages(leader_user)]
    table = await group.table()
    assert table.step == "voting:2"
    assert (table.deadline, table.reminder_at) == (now[0] + VOTE, now[0] + VOTE / 2)
    await vote(group, team[0], True)
    now[0] = T0 + 100 + VOTE / 2 - 1
    assert await service.fire_due() == 0
    now[0] = T0 + 100 + VOTE / 2
    assert await service.fire_due() == 1
    assert await service.fire_due() == 0
    assert await service.fire_due(now[0] + 10) == 0

    # Mission: the same.
    now[0] += 20
    for seat in range(5):
        if seat != team[0]:
            await vote(group, seat, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION and table.step == "mission:3"
    mission_start = now[0]
    assert (table.deadline, table.reminder_at) == (mission_start + MISSION, mission_start + MISSION / 2)
    now[0] = mission_start + MISSION / 2
    assert await service.fire_due() == 1
    calls = len(telegram.calls)
    assert await service.fire_due() == 0
    assert len(telegram.calls) == calls


async def test_a_half_way_reminder_reaches_exactly_the_players_the_game_waits_for_in_private(make_bot, telegram):
    """Each step's reminder goes to the players who must still act, one protected private message each;
    the group sees nothing of it, and nobody is told how anyone voted or played."""
    group, service, now = await started_game(make_bot, telegram, players=7)
    chat = group.chat_id
    table = await group.table()
    users = [p.user_id for p in table.players]

    async def remind_at(when: float) -> dict[int, list[dict]]:
        """Fire the reminder due at `when`; return every message it caused, by chat."""
        now[0] = when
        calls = len(telegram.calls)
        seen_in_group = [(m.message_id, m.text, m.reply_markup, m.edits) for m in telegram.messages(chat)]
        assert await service.fire_due() == 1
        caused: dict[int, list[dict]] = {}
        for method, params in message_calls(telegram, calls):
            assert method == "sendMessage", (method, params)
            caused.setdefault(int(params["chat_id"]), []).append(params)
        # Nothing is posted or edited in the group.
        assert chat not in caused
        assert [(m.message_id, m.text, m.reply_markup, m.edits) for m in telegram.messages(chat)] == seen_in_group
        for params in (p for sent in caused.values() for p in sent):
            assert plain_text(str(params["text"])).startswith("⏰ «Demo group» waits for ")
            assert params.get("protect_content") is True  # a private game message may not be forwarded
            # Nothing to press but a link to the group's board.
            markup = json.loads(params["reply_markup"]) if params.get("reply_markup") else {}
            assert all("url" in button for row in markup.get("inline_keyboard", []) for button in row)
        # A second firing reminds nobody again.
        calls = len(telegram.calls)
        assert await service.fire_due() == 0
        assert len(telegram.calls) == calls
        return caused

    # The leader's turn: the leader alone.
    leader = table.game.leader
    caused = await remind_at(T0 + PROPOSAL / 2)
    assert {user: len(sent) for user, sent in caused.items()} == {users[leader]: 1}
    assert plain_text(telegram.messages(users[leader])[-1].text).startswith(LEADER_REMINDER)

    # The vote: three have voted (two ways); the four others are reminded, each once.
    now[0] = T0 + PROPOSAL / 2 + 10
    team = first_team(table)
    await propose(group, team)
    voted = {0: True, 3: False, 6: True}
    for seat, approve in voted.items():
        await vote(group, seat, approve)
    start = (await group.table()).deadline - VOTE
    caused = await remind_at(start + VOTE / 2)
    waiting = [s for s in range(7) if s not in voted]
    assert {user: len(sent) for user, sent in caused.items()} == {users[s]: 1 for s in waiting}

    # The mission: one of the two members has played; only the other is reminded.
    now[0] += 10
    for seat in waiting:
        await vote(group, seat, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION and table.game.current_round.team == tuple(team)
    await play_card(group, team[0])
    caused = await remind_at(table.deadline - MISSION / 2)
    assert {user: len(sent) for user, sent in caused.items()} == {users[team[1]]: 1}


async def test_a_reminder_that_cannot_reach_a_voter_says_nothing_in_the_group(make_bot, telegram):
    """A voter who blocked the bot only misses their private reminder: the vote is cast on the group's
    board, so the group is not told that the game waits for them to open the private chat (nothing there
    would help them). A team member who blocked it is named at their card's reminder, as at its prompt."""
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    table = await group.table()
    team = first_team(table)
    await propose(group, team)
    voter = next(seat for seat in range(5) if seat not in team)
    member = team[0]
    for seat in (voter, member):
        telegram.block(group.user_ids[seat])
    in_group = group_texts(telegram, chat)
    start = (await group.table()).deadline - VOTE
    now[0] = start + VOTE / 2
    assert await service.fire_due() == 1
    assert group_texts(telegram, chat) == in_group
    reminded = [user for user in group.user_ids if is_reminder(telegram.messages(user)[-1].text)]
    assert reminded == [user for seat, user in enumerate(group.user_ids) if seat not in (voter, member)]

    # They vote on the board all the same; the team member's card prompt does not reach them, and the
    # group hears it, at the prompt and again at its reminder.
    for seat in range(5):
        await vote(group, seat, True)
    assert (await group.table()).game.phase is Phase.MISSION
    waits = (
        f"{table.name(member)}, I cannot write to you in private, so the game is waiting for you. Press the "
        "button, then Start (or unblock me): I will send you what you need."
    )
    assert group_texts(telegram, chat)[len(in_group) :] == [waits]
    await play_card(group, team[1])
    start = (await group.table()).deadline - MISSION
    now[0] = start + MISSION / 2
    assert await service.fire_due() == 1
    assert group_texts(telegram, chat)[len(in_group) :] == [waits, waits]


async def test_a_lobby_reminds_its_group(make_bot, telegram):
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    chat = group.chat_id
    now[0] = T0 + LOBBY / 2
    calls = len(telegram.calls)
    assert await service.fire_due() == 1
    # One message, in the group: nobody is reminded in private.
    assert [(m, int(p["chat_id"])) for m, p in message_calls(telegram, calls)] == [("sendMessage", chat)]
    assert group_texts(telegram, chat)[-1] == "⏰ Half the lobby time is gone: 2 more players needed."
    assert await service.fire_due() == 0
    assert len(message_calls(telegram, calls)) == 1


async def test_a_lobby_of_one_person_and_computer_players_is_not_promised_to_start(make_bot, telegram):
    """One person with four computer players: the half-way reminder said the game would start by itself,
    and at the deadline the lobby closed (a game needs two people). It says a person is missing."""
    group, service, now = await clocked_group(make_bot, telegram, players=2, joined=1)
    chat = group.chat_id
    await group.add_computers(4)
    lobby = lobby_message(telegram, chat)
    now[0] = T0 + LOBBY / 2
    assert await service.fire_due() == 1
    assert group_texts(telegram, chat)[-1] == (
        "⏰ Half the lobby time is gone: 1 more person needed (computer players do not count)."
    )
    now[0] = T0 + LOBBY
    assert await service.fire_due() == 1
    assert (await group.table()).stage is Stage.CANCELLED
    closed = telegram.message(chat, lobby.message_id)
    assert plain_text(closed.text) == "🕵️ This lobby closed: fewer than 2 people joined in time."


# ---------------------------------------------------------------- the leader's deadline


async def test_leader_deadline_puts_a_drawn_team_to_the_vote(make_bot, telegram):
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    table = await group.table()
    leader = table.game.leader
    leader_user = table.players[leader].user_id
    keyboard = leader_keyboard(group, leader_user)
    start_message = board_message(group, telegram)

    now[0] = T0 + PROPOSAL
    calls = len(telegram.calls)
    assert await service.fire_due() == 1
    table = await group.table()
    game = table.game
    [mission_round] = game.rounds
    [drawn] = mission_round.proposals
    # The leader's turn is not a rejection: a team of the mission's size is up for the vote.
    assert drawn.auto_team and drawn.leader == leader and drawn.votes is None
    assert len(drawn.team) == 2 and len(set(drawn.team)) == 2
    assert mission_round.rejections == 0
    assert game.phase is Phase.VOTING and game.leader == leader and game.proposal_number == 1
    assert table.step == "voting:2" and table.deadline == now[0] + VOTE

    # The group gets one new message, the proposal's board, which says the team was drawn; no separate notice.
    [shown] = sends(telegram, calls, chat)
    board = board_message(group, telegram)
    assert plain_text(board.text) == shown and board.message_id != start_message.message_id
    assert f"⏰ {table.name(leader)} did not propose in time: this team was drawn at random." in shown
    assert f"Team: {names(table, drawn.team)}" in shown
    assert "Rejected teams: 0/5" in shown
    assert button_labels(board) == ["👍 Approve", "👎 Reject", WAITING_BUTTON]
    assert all(data.startswith(f"v:{group.game_id}:2:") for data in callback_datas(board)[:2])
    assert group_edits(telegram, calls, chat) == []
    assert await group.store.message_of(group.game_id, "board:1") == (chat, board.message_id)
    # The leader's keyboard says what happened, and has no buttons left.
    closed = telegram.message(leader_user, keyboard.message_id)
    assert plain_text(closed.text) == (
        f"«Demo group», mission 1: time ran out, so a team was drawn at random: {names(table, drawn.team)}."
    )
    assert closed.buttons() == []
    # Nobody else heard anything in private.
    assert {int(p["chat_id"]) for _, p in message_calls(telegram, calls)} == {chat, leader_user}

    # The table votes on it as on any team: rejected, the leader card passes on.
    await vote_all(group, False)
    table = await group.table()
    assert table.game.phase is Phase.PROPOSING and table.game.rounds[0].rejections == 1
    assert table.game.leader == (leader + 1) % 5
    revealed = plain_text(telegram.message(chat, board.message_id).text)
    assert "this team was drawn at random" in revealed and "Rejected 0–5." in revealed
    assert revealed.endswith(whose_turn(table, 1, 2))
    assert telegram.message(chat, board.message_id).buttons() == []
    record = table.game.rounds[0].proposals[0]
    assert record.auto_team and record.auto_votes == ()


async def test_a_drawn_team_reaches_a_leader_who_deleted_the_keyboard_in_private_and_protected(make_bot, telegram):
    """The leader cleared their private chat: what the deadline did is posted there again, as private as
    the keyboard was (it cannot be forwarded), and the group still gets only the proposal's board."""
    group, service, now = await started_game(make_bot, telegram)
    table = await group.table()
    leader_user = table.players[table.game.leader].user_id
    keyboard = leader_keyboard(group, leader_user)
    await group.application.bot.delete_message(leader_user, keyboard.message_id)

    now[0] = T0 + PROPOSAL
    calls = len(telegram.calls)
    assert await service.fire_due() == 1
    drawn = (await group.table()).game.rounds[0].proposals[0]
    assert drawn.auto_team
    reposted = [p for m, p in message_calls(telegram, calls, leader_user) if m == "sendMessage"]
    assert [plain_text(str(p["text"])) for p in reposted] == [
        f"«Demo group», mission 1: time ran out, so a team was drawn at random: {names(table, drawn.team)}."
    ]
    assert reposted[0].get("protect_content") is True
    assert not any(m.buttons() for m in telegram.messages(leader_user) if m.from_bot and "time ran out" in m.text)
    assert [m for m, _ in message_calls(telegram, calls, group.chat_id)] == ["sendMessage"]


async def test_a_leader_missing_the_fifth_proposal_does_not_lose_the_game(make_bot, telegram):
    """Four teams rejected, the fifth leader misses the deadline: the drawn team is voted on and may go."""
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    for _ in range(4):
        table = await group.table()
        await propose(group, first_team(table))
        await vote_all(group, False)
    table = await group.table()
    fifth_leader = table.game.leader
    assert table.game.rounds[0].rejections == 4 and table.game.proposal_number == 5
    fourth = plain_text(board_message(group, telegram).text)
    assert "Rejected teams: 4/5" in fourth and fourth.endswith(whose_turn(table, 1, 2))
    assert leader_keyboard(group, table.players[fifth_leader].user_id)

    now[0] = table.deadline
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.stage is Stage.PLAYING and not table.game.is_over
    assert table.game.phase is Phase.VOTING
    drawn = table.game.rounds[0].proposals[-1]
    assert drawn.auto_team and drawn.leader == fifth_leader and len(drawn.team) == 2
    assert not any("🏁" in text for text in group_texts(telegram, chat))
    fifth = plain_text(board_message(group, telegram).text)
    assert "proposal 5" in fifth and "Rejected teams: 4/5" in fifth and "this team was drawn at random" in fifth

    await vote_all(group, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION and table.game.current_round.team == drawn.team
    assert table.game.rounds[0].rejections == 4
    # The drawn team's members get their card prompts like any team's.
    for seat in drawn.team:
        user = table.players[seat].user_id
        assert group.latest_with_button(user, f"c:{group.game_id}:")


async def test_when_nobody_plays_the_deadlines_finish_the_game(make_bot, telegram):
    """Every turn left to the clock: drawn teams, votes filled as Approve, cards as Success.

    The engine decides what each deadline does; the Resistance wins by three successes and
    the record marks every automatic turn. The group gets one message per proposal, which
    ends up telling everything the deadlines did. Nobody playing, the game pauses at every second
    deadline (`test_an_idle_table_is_paused_not_decided`); here someone sends /resume each time."""
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    messages_before = len(telegram.messages(chat))
    pauses = 0
    for _ in range(30):
        table = await group.table()
        if not table.is_active:
            break
        if table.is_paused:
            pauses += await next_on_the_clock(group, service, now)
            continue
        now[0] = table.deadline
        assert await service.fire_due() == 1
    table = await group.table()
    game = table.game
    assert table.stage is Stage.OVER and game.winner is Side.RESISTANCE
    assert game.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert [len(r.proposals) for r in game.rounds] == [1, 1, 1]
    # Nine deadlines: each after the first paused the game once, the one before it having passed idle.
    assert pauses == 8

    boards = [m for m in telegram.messages(chat)[messages_before:] if "· proposal" in (m.text or "")]
    assert len(boards) == 3
    for number, (message, mission_round) in enumerate(zip(boards, game.rounds, strict=True), start=1):
        text = plain_text(message.text)
        [proposal] = mission_round.proposals
        assert f"Mission {number} · proposal 1" in text
        assert "did not propose in time: this team was drawn at random." in text
        assert f"⏰ Time is up. These votes were counted as 👍 Approve: {names(table, range(5))}" in text
        assert f"Mission {number} succeeded ✅ with 0 Fail cards." in text
        assert f"⏰ Cards not played in time count as ✅ Success: {names(table, proposal.team)}" in text
    assert [button_labels(m) for m in boards] == [[], [], ["🔁 Play again"]]
    last = plain_text(boards[-1].text)
    assert "🏁 The Resistance wins: three missions succeeded." in last
    assert "\n".join(group_texts(telegram, chat)).count("🏁") == 1
    record = json.loads(await group.store.last_record(chat))
    for mission in record["missions"]:
        [proposal] = mission["proposals"]
        assert proposal["auto_team"] is True and proposal["auto_votes"] == list(range(5))
        assert mission["auto_cards"] == proposal["team"] and mission["fails"] == 0
    assert parse_record(record).outcome.reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    # Every leader's keyboard was closed by its deadline; no deadline is left to fire.
    for player in table.players:
        keyboards = [m for m in telegram.messages(player.user_id) if "you are the leader" in plain_text(m.text or "")]
        assert keyboards == [], player.name  # each was edited to say the team was drawn
        assert not any(
            data.startswith(("t:", "m:")) for m in telegram.messages(player.user_id) for data in callback_datas(m)
        )
    drawn_notes = [
        m
        for p in table.players
        for m in telegram.messages(p.user_id)
        if "time ran out, so a team was drawn" in (m.text or "")
    ]
    assert len(drawn_notes) == 3
    assert await group.store.redis.zscore(keys.deadlines_of(group.game_id), group.game_id) is None
    assert await group.store.game_of_chat(chat) is None
    calls = len(telegram.calls)
    assert await service.fire_due(now[0] + 10 * PROPOSAL) == 0
    assert len(telegram.calls) == calls


# ---------------------------------------------------------------- the vote deadline


@pytest.mark.parametrize("approves", [None, False], ids=["default-approve", "reject"])
async def test_vote_deadline_fills_missing_votes_by_the_group_setting(make_bot, telegram, approves):
    settings = {} if approves is None else {"missing_vote_approves": approves}
    group, service, now = await started_game(make_bot, telegram, **settings)
    filled_as = True if approves is None else approves
    chat = group.chat_id
    table = await group.table()
    assert table.settings.missing_vote_approves is filled_as
    team = first_team(table)

    now[0] = T0 + 10
    await propose(group, team)
    ballot = group.latest_with_button(chat, f"v:{group.game_id}:")
    vote_data = next(data for data in callback_datas(ballot) if data.endswith(":a"))
    cast = {team[0]: True, next(s for s in range(5) if s not in team): False}
    for seat, approve in cast.items():
        await vote(group, seat, approve)
    missing = [s for s in range(5) if s not in cast]

    now[0] = T0 + 10 + VOTE
    calls = len(telegram.calls)
    assert await service.fire_due() == 1
    table = await group.table()
    expected = tuple(cast.get(s, filled_as) for s in range(5))
    proposal = table.game.rounds[0].proposals[0]
    assert proposal.votes == expected and not proposal.auto_team
    assert proposal.auto_votes == tuple(missing)

    # No separate notice: the votes, the filled ones named, are shown in one place. A rejected team's
    # at once, in the one edit of the ballot's message; an approved team's go to its card prompts,
    # and reach the group only with the mission's result (the ballot's edit then closes the vote).
    assert sends(telegram, calls, chat) == []
    word = "👍 Approve" if filled_as else "👎 Reject"
    approvers = [s for s in range(5) if expected[s]]
    rejecters = [s for s in range(5) if not expected[s]]
    vote_lines = [
        f"👍 {names(table, approvers)}",
        f"👎 {names(table, rejecters)}",
        f"⏰ Time is up. These votes were counted as {word}: {names(table, missing)}",
    ]
    stored = (await group.table()).to_json()
    late = telegram.forged_press(table.players[missing[0]].user_id, chat, ballot.message_id, vote_data)
    if filled_as:
        [approved] = group_edits(telegram, calls, chat)
        assert approved.endswith("✅ Team approved. The mission is under way: waiting for the team's cards.")
        assert not any(line in approved for line in vote_lines), approved
        assert not any(data.startswith("v:") for data in callback_datas(telegram.message(chat, ballot.message_id)))
        assert table.game.phase is Phase.MISSION
        assert table.deadline == now[0] + MISSION
        for seat in team:
            prompt = plain_text(group.latest_with_button(table.players[seat].user_id, f"c:{group.game_id}:").text)
            assert all(line in prompt for line in vote_lines), prompt
        # A late vote, pressed on the ballot's old buttons, is told the vote is closed and changes nothing.
        await group.send(late)
        assert telegram.callback_answers[late["callback_query"]["id"]]["text"] == (
            "This vote is closed: the team was approved and is playing its cards."
        )
        assert (await group.table()).to_json() == stored
        calls = len(telegram.calls)
        for seat in team:
            await play_card(group, seat)
        [revealed] = group_edits(telegram, calls, chat)
        assert "Approved 4–1." in revealed and "Mission 1 succeeded ✅" in revealed
        shown = telegram.message(chat, ballot.message_id)
        assert plain_text(shown.text) == revealed
        assert all(line in revealed for line in vote_lines), revealed
        assert not any(data.startswith("v:") for data in callback_datas(shown))  # the vote is closed
    else:
        [revealed] = group_edits(telegram, calls, chat)
        shown = telegram.message(chat, ballot.message_id)
        assert plain_text(shown.text) == revealed
        assert all(line in revealed for line in vote_lines), revealed
        assert not any(data.startswith("v:") for data in callback_datas(shown))  # the vote is closed
        assert "Rejected 1–4. Rejected teams for this mission: 1/5." in revealed
        assert table.game.phase is Phase.PROPOSING and table.game.rounds[0].rejections == 1
        assert table.deadline == now[0] + PROPOSAL
        assert revealed.endswith(whose_turn(table, 1, 2))
        assert shown.buttons() == []
        assert leader_keyboard(group, table.players[table.game.leader].user_id)
        # A late vote, pressed on the ballot as it was, is refused and changes nothing.
        await group.send(late)
        assert telegram.callback_answers[late["callback_query"]["id"]]["text"] == "This vote is closed."
        assert (await group.table()).to_json() == stored
    assert await service.fire_due() == 0


# ---------------------------------------------------------------- the mission deadline


async def test_mission_deadline_counts_missing_cards_as_success(make_bot, telegram):
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    table = await group.table()
    spy = table.game.spies[0]
    honest = next(s for s in range(5) if s not in table.game.spies)
    team = sorted([spy, honest])

    now[0] = T0 + 10
    await propose(group, team)
    board = board_message(group, telegram)
    for seat in range(5):
        await vote(group, seat, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    await play_card(group, honest)
    card_prompt = group.latest_with_button(table.players[spy].user_id, f"c:{group.game_id}:")
    fail_data = next(data for data in callback_datas(card_prompt) if data.endswith(":f"))

    now[0] = T0 + 10 + MISSION
    calls = len(telegram.calls)
    assert await service.fire_due() == 1
    table = await group.table()
    [played] = table.game.played_rounds
    assert played.fails == 0 and played.succeeded
    assert table.game.mission_track()[0] is True
    assert table.game.phase is Phase.PROPOSING and len(table.game.rounds) == 1
    # The proposal's board is edited once with the result and the card the deadline played; nothing is sent.
    assert sends(telegram, calls, chat) == []
    [result] = group_edits(telegram, calls, chat)
    assert plain_text(telegram.message(chat, board.message_id).text) == result
    assert "Mission 1 succeeded ✅ with 0 Fail cards." in result
    assert f"⏰ Cards not played in time count as ✅ Success: {table.name(spy)}" in result
    assert "Missions: ✅⬜⬜⬜⬜" in result
    assert result.endswith(whose_turn(table, 2, 3))
    assert telegram.message(chat, board.message_id).buttons() == []
    # The next leader chooses in private.
    assert "Choose 3 players for mission 2." in plain_text(
        leader_keyboard(group, table.players[table.game.leader].user_id).text
    )
    # The spy's card prompt says the deadline played it, and keeps no buttons.
    closed = telegram.message(table.players[spy].user_id, card_prompt.message_id)
    assert "time ran out, so your card counted as ✅ Success" in plain_text(closed.text)
    assert closed.buttons() == []
    # Its old data, pressed anyway, can no longer be played.
    update = telegram.forged_press(
        table.players[spy].user_id, table.players[spy].user_id, card_prompt.message_id, fail_data
    )
    stored = (await group.table()).to_json()
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == "This mission is over."
    assert (await group.table()).to_json() == stored
    assert (await group.table()).game.played_rounds[0].fails == 0


# ---------------------------------------------------------------- the lobby deadline


async def test_lobby_deadline_closes_a_lobby_of_fewer_than_five(make_bot, telegram):
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    chat = group.chat_id
    lobby = lobby_message(telegram, chat)
    assert "a new game is open" in plain_text(lobby.text)
    table = await group.table()
    assert table.step == f"lobby:{LOBBY}" and (table.deadline, table.reminder_at) == (T0 + LOBBY, T0 + LOBBY / 2)

    now[0] = T0 + LOBBY / 2
    assert await service.fire_due() == 1
    assert group_texts(telegram, chat)[-1] == "⏰ Half the lobby time is gone: 2 more players needed."

    now[0] = T0 + LOBBY
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.stage is Stage.CANCELLED and table.game is None
    closed = telegram.message(chat, lobby.message_id)
    assert plain_text(closed.text) == "🕵️ This lobby closed: fewer than 5 players joined in time."
    assert closed.buttons() == []
    assert await group.store.game_of_chat(chat) is None
    assert await group.store.games_of_user(group.user_ids[0]) == []
    assert await group.store.redis.zscore(keys.deadlines_of(group.game_id), group.game_id) is None
    assert await service.fire_due(now[0] + LOBBY) == 0

    # The group can open a new game at once.
    old_id = group.game_id
    await group.send(telegram.command(group.user_ids[1], chat, "/newgame"))
    new_id = await group.store.game_of_chat(chat)
    assert new_id is not None and new_id != old_id
    assert "a new game is open" in group_texts(telegram, chat)[-1]
    assert (await group.store.load(new_id)).deadline == now[0] + LOBBY


async def test_lobby_deadline_starts_a_lobby_of_five_or_more(make_bot, telegram):
    group, service, now = await clocked_group(make_bot, telegram, players=6)
    chat = group.chat_id
    lobby = lobby_message(telegram, chat)

    now[0] = T0 + LOBBY / 2
    assert await service.fire_due() == 1
    assert group_texts(telegram, chat)[-1] == (
        "⏰ Half the lobby time is gone: the game starts by itself when it runs out."
    )

    now[0] = T0 + LOBBY
    calls = len(telegram.calls)
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.stage is Stage.PLAYING and table.game.players == 6
    assert [p.user_id for p in table.players] == group.user_ids
    assert table.step == "proposing:1" and table.deadline == now[0] + PROPOSAL
    # The start is a new message, naming the first leader, which notifies the group as the
    # /startgame of a person would; the lobby's message closes in one line, its buttons gone.
    start = (
        "🕵️ The Resistance: the game has started with Ann, Bob, Cy, Dan, Eve, Fay. Roles were sent in private.\n"
        "2 spies · teams 2-3-4-3-4\n\n" + whose_turn(table, 1, 2)
    )
    assert sends(telegram, calls, chat) == [start]
    assert group_edits(telegram, calls, chat) == ["🕵️ This lobby is closed: the game has started."]
    assert plain_text(telegram.message(chat, lobby.message_id).text) == "🕵️ This lobby is closed: the game has started."
    assert telegram.message(chat, lobby.message_id).buttons() == []
    assert plain_text(telegram.messages(chat)[-1].text) == start and telegram.messages(chat)[-1].buttons() == []
    for seat, player in enumerate(table.players):
        [role] = [t for t in group_texts(telegram, player.user_id) if t.startswith("Your game in «Demo group»")]
        assert ("you are a spy" in role) == (seat in table.game.spies)
    # The leader's keyboard came in private, and only to the leader.
    keyboard = leader_keyboard(group, table.players[table.game.leader].user_id)
    assert "you are the leader. Choose 2 players for mission 1." in plain_text(keyboard.text)
    for seat, player in enumerate(table.players):
        has_keyboard = any(
            data.startswith(f"t:{group.game_id}:")
            for m in telegram.messages(player.user_id)
            for data in callback_datas(m)
        )
        assert has_keyboard == (seat == table.game.leader)
    assert await service.fire_due() == 0


# ---------------------------------------------------------------- stale deadlines


async def test_a_deadline_whose_step_moved_on_does_nothing(make_bot, telegram):
    group, service, now = await started_game(make_bot, telegram)
    table = await group.table()
    old_deadline = table.deadline
    assert old_deadline == T0 + PROPOSAL

    # The leader proposes just before the deadline: the vote has its own, later, times.
    now[0] = T0 + PROPOSAL - 10
    await propose(group, first_team(table))
    table = await group.table()
    assert table.step == "voting:2"
    assert table.deadline == now[0] + VOTE and table.reminder_at == now[0] + VOTE / 2
    assert await group.store.redis.zscore(keys.deadlines_of(group.game_id), group.game_id) == table.reminder_at
    stored = table.to_json()
    calls = len(telegram.calls)

    # The leader's old deadline comes: nothing happens.
    assert await service.fire_due(old_deadline) == 0
    # Even when a worker still finds the game due at the old time (a stale schedule), nothing happens.
    await group.store.redis.zadd(keys.deadlines_of(group.game_id), {group.game_id: old_deadline})
    assert await service.fire_due(old_deadline) == 0
    assert await service.fire_due(old_deadline + 1) == 0
    after = await group.table()
    assert after.to_json() == stored
    assert after.game.version == table.game.version
    assert after.game.rounds[0].proposals[-1].auto_team is False
    assert len(telegram.calls) == calls


async def test_a_mission_gets_its_whole_time_when_the_deadline_that_opened_it_waited_for_redis(
    make_bot, telegram, monkeypatch
):
    """The clock fires a vote deadline and the write waits 20 s for Redis (every pooled connection busy,
    a cluster master restarting): the mission it opens has its whole time from when it was stored, not
    20 s less for the team."""
    group, service, now = await started_game(make_bot, telegram)
    await propose(group, first_team(await group.table()))
    await vote(group, 0, True)  # someone plays: the mission's deadline is not a second idle one
    now[0] = (await group.table()).deadline
    stored = service.store.update

    async def waits_for_redis(*args, **kwargs):
        now[0] += 20
        return await stored(*args, **kwargs)

    monkeypatch.setattr(service.store, "update", waits_for_redis)
    assert await service.fire_due() == 1
    monkeypatch.setattr(service.store, "update", stored)
    opened = now[0]
    assert (await group.table()).game.phase is Phase.MISSION

    now[0] = opened + MISSION - 1
    await service.fire_due()
    table = await group.table()
    assert table.game.phase is Phase.MISSION and not any(table.game.current_round.auto_cards)
    now[0] = opened + MISSION
    await service.fire_due()
    assert (await group.table()).game.phase is not Phase.MISSION


# ---------------------------------------------------------------- several workers


async def test_a_deadline_survives_a_restart(make_bot, telegram):
    first = await make_bot(1)
    now = [T0]
    set_clock(first, now)
    group = SimulatedGroup(telegram, first, players=5)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    leader = table.game.leader
    keyboard = leader_keyboard(group, table.players[leader].user_id)
    messages_before = len(telegram.messages(group.chat_id))
    await first.shutdown()

    # A new worker process on the same Redis, reading the same clock.
    second = await make_bot(2)
    service = set_clock(second, now)
    group.application = second
    now[0] = T0 + PROPOSAL
    assert await service.fire_due() == 1
    assert await service.fire_due() == 0
    table = await group.table()
    [proposal] = table.game.rounds[0].proposals
    assert proposal.auto_team and proposal.leader == leader
    assert table.game.phase is Phase.VOTING and table.game.leader == leader
    # One board for the drawn team, and the leader's keyboard closed.
    [board] = telegram.messages(group.chat_id)[messages_before:]
    assert "this team was drawn at random" in plain_text(board.text)
    assert sum("this team was drawn at random" in text for text in group_texts(telegram, group.chat_id)) == 1
    assert "time ran out, so a team was drawn at random" in plain_text(
        telegram.message(table.players[leader].user_id, keyboard.message_id).text
    )
    # The new worker goes on from there: its buttons work.
    await vote_all(group, True)
    assert (await group.table()).game.phase is Phase.MISSION
    for seat in proposal.team:
        await play_card(group, seat)
    shown = plain_text(telegram.message(group.chat_id, board.message_id).text)
    assert "Approved 5–0." in shown and "Mission 1 succeeded ✅" in shown


async def test_two_workers_firing_at_once_apply_a_deadline_once(make_bot, telegram):
    first, second = await make_bot(1), await make_bot(2)
    now = [T0]
    services = set_clock(first, now), set_clock(second, now)
    group = SimulatedGroup(telegram, first, players=5)
    await group.open_lobby_and_join()
    await group.start()
    chat = group.chat_id

    async def fire_both(when: float) -> None:
        """Both workers fire at once: the deadline is applied once, and its messages go out once."""
        before = await group.table()
        calls = len(telegram.calls)
        results = await asyncio.gather(services[0].fire_due(when), services[1].fire_due(when))
        assert sorted(results) == [0, 1]
        after = await group.table()
        in_group = [method for method, _ in message_calls(telegram, calls, chat)]
        if after.is_paused:
            # A second idle deadline in a row: the game stops where it was, and the group is told once.
            assert after.game == before.game and in_group == ["sendMessage"]
            return
        assert after.game.version == before.game.version + 1
        if before.game.phase is Phase.PROPOSING:
            # The drawn team comes from the firing worker's random source: one draw, of the right size.
            [drawn] = [p for p in after.game.rounds[-1].proposals if p.auto_team and p.votes is None]
            assert len(drawn.team) == team_size(before)
            assert in_group == ["sendMessage"]  # the drawn team's board, once
        else:
            expected = clock.on_clock(before, when, random.Random(0), telegram.bot_username).table
            assert after.game == expected.game
            # The board, edited once (an approved team's votes wait for its mission's result, but its vote closes).
            assert in_group == ["editMessageText"]
        # Each private message it causes goes out once.
        private = [
            (int(p["chat_id"]), p.get("text"), p.get("message_id"))
            for _, p in message_calls(telegram, calls)
            if int(p["chat_id"]) != chat
        ]
        assert len(private) == len(set(private)), private

    # A vote deadline: one fill, shown once.
    table = await group.table()
    now[0] = T0 + 10
    await propose(group, first_team(table))
    await vote(group, 0, False)
    board = board_message(group, telegram)

    # The vote's half-way reminder, fired by both workers at once: each player still to vote gets it once.
    now[0] = T0 + 10 + VOTE / 2
    calls = len(telegram.calls)
    results = await asyncio.gather(services[0].fire_due(now[0]), services[1].fire_due(now[0]))
    assert sorted(results) == [0, 1]
    reminded = [int(p["chat_id"]) for _, p in message_calls(telegram, calls)]
    assert sorted(reminded) == sorted(table.players[s].user_id for s in range(1, 5))
    [text] = sends(telegram, calls, reminded[0])
    assert is_reminder(text)

    now[0] = T0 + 10 + VOTE
    await fire_both(now[0])
    assert (await group.table()).game.rounds[0].proposals[0].votes == (False, True, True, True, True)

    # A mission deadline, then the rest of the game left to the clock, each deadline fired by both workers.
    # The approved team's votes, the filled ones named, are shown once, with the mission's result.
    now[0] += MISSION
    await fire_both(now[0])
    shown = plain_text(telegram.message(chat, board.message_id).text)
    assert shown.count("⏰ Time is up. These votes were counted as 👍 Approve") == 1
    assert f"⏰ Time is up. These votes were counted as 👍 Approve: {names(table, range(1, 5))}" in shown
    assert shown.count("⏰ Cards not played in time") == 1
    for missed in range(1, 3):
        for _ in range(3):  # the leader's, the vote's and the mission's deadline
            now[0] = (await group.table()).deadline
            await fire_both(now[0])
            if await next_on_the_clock(group, service=services[0], now=now):  # paused: resumed
                now[0] = (await group.table()).deadline
                await fire_both(now[0])
        texts = group_texts(telegram, chat)
        assert sum("this team was drawn at random" in text for text in texts) == missed
    table = await group.table()
    assert table.game.is_over and table.game.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert sum("🏁" in text for text in group_texts(telegram, chat)) == 1
    # The lobby, closed, the start message and one board per proposal, besides the pauses' and
    # resumptions' notices.
    notices = [m for m in telegram.messages(chat) if (m.text or "").startswith(("⏸", "▶️"))]
    # ... and the game's picture.
    assert len(notices) % 2 == 0
    assert sum(m.from_bot for m in telegram.messages(chat)) == 5 + len(notices) + 1
    results = await asyncio.gather(services[0].fire_due(now[0] + 999), services[1].fire_due(now[0] + 999))
    assert results == [0, 0]


async def test_a_worker_whose_machine_clock_runs_a_minute_ahead_fires_no_deadline_early(make_bot, telegram):
    """Two workers on one Redis, the second on a machine whose clock reads a minute ahead. A vote's
    deadline and reminder that the first worker set are fired by the second when they are due, not a
    minute early (its voters losing their turn); the mission deadline the second worker then set is
    fired by the first when it is due, not a minute late. Both read Redis's clock."""
    passed = [0.0]  # time going by for both machines alike, without the test waiting for it
    first = await make_bot(1, local_clock=lambda: time.monotonic() + passed[0])
    ahead = await make_bot(2, local_clock=lambda: time.monotonic() + passed[0] + 60)
    on_time, fast = first.bot_data["service"], ahead.bot_data["service"]
    group = SimulatedGroup(telegram, first, players=5)
    await group.store.update_settings(
        group.chat_id, lambda current: replace(current, proposal_seconds=60, vote_seconds=60, mission_seconds=60)
    )
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    await propose(group, first_team(table))
    await vote(group, 0, True)
    voters = [p.user_id for p in table.players[1:]]
    calls = len(telegram.calls)

    assert await fast.fire_due() == 0
    assert await on_time.fire_due() == 0
    table = await group.table()
    assert table.game.phase is Phase.VOTING and table.game.pending_votes[1:] == (None,) * 4
    assert not any(sends(telegram, calls, voter) for voter in voters)

    passed[0] += 31  # half the vote's time gone: its reminder, not its deadline
    assert await fast.fire_due() == 1
    assert all(len(sends(telegram, calls, voter)) == 1 for voter in voters)
    assert all(is_reminder(sends(telegram, calls, voter)[0]) for voter in voters)
    assert (await group.table()).game.phase is Phase.VOTING

    passed[0] += 30  # the vote's time is up
    assert await fast.fire_due() == 1
    table = await group.table()
    assert table.game.phase is Phase.MISSION and table.game.rounds[0].proposals[0].auto_votes

    passed[0] += 31  # the mission's half-way reminder, set by the worker ahead
    assert await on_time.fire_due() == 1
    assert (await group.table()).game.phase is Phase.MISSION
    passed[0] += 30
    assert await on_time.fire_due() == 1
    assert (await group.table()).game.phase is not Phase.MISSION


async def test_a_wall_clock_set_an_hour_forward_mid_game_fires_no_deadline(make_bot, telegram, monkeypatch):
    """An administrator or NTP steps the worker machine's clock an hour forward mid-vote: the vote's
    deadline is still Redis's, and nothing fires (a worker reading its wall clock would fill every
    vote at its next tick)."""
    application = await make_bot(1)
    service = application.bot_data["service"]
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    await propose(group, first_team(table))
    before = (await group.table()).to_json()
    stepped_from = time.time
    monkeypatch.setattr(time, "time", lambda: stepped_from() + 3600)
    assert await service.fire_due() == 0
    assert (await group.table()).to_json() == before


async def test_a_person_taken_over_gets_the_seat_back_with_a_press_the_computer_beat(make_bot, telegram):
    """A computer player acts for a taken-over seat a few seconds after each decision opens, so the
    person's first press back usually comes after it: that press still gives them the seat back."""
    group, service, now = await started_game(make_bot, telegram, computer_takeover=True)

    def computer_voted_for_a_person(table) -> list[int]:
        if table.game.phase is not Phase.VOTING or None not in table.game.pending_votes:
            return []
        return [s for s in table.autopilot if table.game.pending_votes[s] is not None]

    # Nobody acts: deadlines pass until people are taken over, and a computer votes for one of them
    # while the vote is still open for others.
    table = await group.table()
    while not computer_voted_for_a_person(table):
        await next_on_the_clock(group, service, now)
        table = await group.table()
    voted = computer_voted_for_a_person(table)
    seat = voted[0]
    user = table.players[seat].user_id
    board = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    answer = await press(group, user, board, button_data(board, ":a"))
    assert answer == "That choice was already made. From now on you play yourself again."
    table = await group.table()
    assert seat not in table.autopilot and table.missed[seat] == 0
    # The next decision waits for the person.
    while table.game.phase is Phase.VOTING:
        await next_on_the_clock(group, service, now)
        table = await group.table()
    assert seat not in table.autopilot


async def test_a_person_taken_over_whose_press_is_refused_before_the_computer_chose_is_told_why(make_bot, telegram):
    """A taken-over Resistance member on a mission's team presses ❌ Fail before the computer player
    played for them: the seat is theirs again, the card still to play, and they are told why the
    press was refused, not that a computer player chose for them."""
    group, service, now = await started_game(make_bot, telegram, computer_takeover=True)

    def taken_over_and_still_to_play(table) -> list[int]:
        if table.game.phase is not Phase.MISSION:
            return []
        waiting = set(public_view(table.game).waiting_for)
        return [s for s in table.autopilot if s in waiting and s not in table.game.spies]

    table = await group.table()
    while not taken_over_and_still_to_play(table):
        await next_on_the_clock(group, service, now)
        table = await group.table()
    seat = taken_over_and_still_to_play(table)[0]
    user = table.players[seat].user_id
    prompt = group.latest_with_button(user, f"c:{group.game_id}:")
    answer = await press(group, user, prompt, button_data(prompt, ":f"))
    assert answer == "You are in the Resistance: you must play Success."
    table = await group.table()
    assert seat not in table.autopilot and seat in public_view(table.game).waiting_for


async def test_a_play_again_lobby_is_not_started_by_the_clock(make_bot, telegram):
    """Play again seats every player of the last game, but only whoever pressed it chose to play again:
    its lobby is started by them or an admin, and when its time runs out it closes instead of dealing
    roles to people who never agreed to a game."""
    group, service, now = await started_game(make_bot, telegram)
    finished = await group.play(RejectEverything())
    assert finished.stage is Stage.OVER
    over = group.latest_with_button(group.chat_id, f"r:{finished.id}")
    presser = group.user_ids[2]
    assert await press(group, presser, over, f"r:{finished.id}") == "A new game is open with the same players."
    rematch_id = await group.store.game_of_chat(group.chat_id)
    rematch = await group.store.load(rematch_id)
    assert rematch.rematch and len(rematch.players) == 5 and rematch.stage is Stage.LOBBY
    opened = now[0]

    now[0] = opened + LOBBY / 2
    assert await service.fire_due() == 1
    assert group_texts(telegram, group.chat_id)[-1] == (
        "⏰ Half the lobby time is gone: start the game with /startgame (whoever pressed Play again, or an "
        "admin), or this lobby closes when the time runs out."
    )
    now[0] = opened + LOBBY
    assert await service.fire_due() == 1
    closed = await group.store.load(rematch_id)
    assert closed.stage is Stage.CANCELLED and closed.game is None
    assert await group.store.game_of_chat(group.chat_id) is None
    [closing] = [m for m in telegram.messages(group.chat_id) if m.from_bot and "This lobby closed" in (m.text or "")]
    assert plain_text(closing.text) == "🕵️ This lobby closed: nobody started the game in time." and not closing.buttons()
    # Nobody was dealt a role.
    for user in group.user_ids:
        assert sum(text.startswith("Your game in") for text in group_texts(telegram, user)) == 1  # the first game's

    # Pressed again and started by whoever pressed it, it is a game like any other.
    assert await press(group, presser, over, f"r:{finished.id}") == "A new game is open with the same players."
    await group.send(telegram.command(presser, group.chat_id, "/startgame"))
    second = await group.store.load(await group.store.game_of_chat(group.chat_id))
    assert second.rematch and second.stage is Stage.PLAYING and second.id != rematch_id


LEFT_OUT = (
    "A new game is open with the same players, but for those who left the group or whom I can no longer write "
    "to in private."
)


async def test_play_again_leaves_out_who_left_the_group(make_bot, telegram):
    """Someone who left the group since the game could not see the boards they would vote on: Play
    again seats the others, and whoever pressed it is told why the table is smaller."""
    group, service, now = await started_game(make_bot, telegram)
    finished = await group.play(RejectEverything())
    gone = group.user_ids[4]
    telegram.leave_group(group.chat_id, gone)
    over = group.latest_with_button(group.chat_id, f"r:{finished.id}")
    answer = await press(group, group.user_ids[2], over, f"r:{finished.id}")
    assert answer == LEFT_OUT
    rematch = await group.store.load(await group.store.game_of_chat(group.chat_id))
    assert [p.user_id for p in rematch.players] == [u for u in group.user_ids if u != gone]


async def test_play_again_leaves_out_who_blocked_the_bot(make_bot, telegram):
    """Someone who blocked the bot since the game would get no role and no card prompt: Play again
    seats the others."""
    group, service, now = await started_game(make_bot, telegram)
    finished = await group.play(RejectEverything())
    blocked = group.user_ids[3]
    telegram.block(blocked)
    over = group.latest_with_button(group.chat_id, f"r:{finished.id}")
    assert await press(group, group.user_ids[0], over, f"r:{finished.id}") == LEFT_OUT
    rematch = await group.store.load(await group.store.game_of_chat(group.chat_id))
    assert [p.user_id for p in rematch.players] == [u for u in group.user_ids if u != blocked]


async def test_the_group_is_not_told_the_game_waits_for_a_person_a_computer_player_took_over(make_bot, telegram):
    """A person who blocked the bot misses their deadlines and a computer player takes their turns:
    their team and card keyboards still go to them (a press gives the seat back), but the group is
    no longer told that the game waits for them when those cannot reach them: it does not."""
    group, service, now = await started_game(make_bot, telegram, computer_takeover=True)
    cy = group.user_ids[2]
    telegram.block(cy)
    notice = "Cy, I cannot write to you in private, so the game is waiting for you."
    table = await group.table()
    seat = table.seat_of(cy)
    asked = 0
    while table.stage is Stage.PLAYING:
        before, calls = table, len(telegram.calls)
        await next_on_the_clock(group, service, now)
        table = await group.table()
        if seat in before.autopilot:
            assert not [text for text in sends(telegram, calls, group.chat_id) if notice in text]
            # The game asked for a decision of theirs in private: a team to propose, a card to play.
            asked += any(int(p["chat_id"]) == cy for _, p in message_calls(telegram, calls))
    assert seat in table.autopilot and asked >= 1
