"""Telegram failing the bot: blocked players, refused edits, expired queries, flood waits, timeouts."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from telegram import Update

from engine import Phase
from tests.bot_helpers import (
    CleanTeams,
    NobodyFails,
    button_data,
    last_message,
    lobby_message,
    next_on_the_clock,
    outbox_length,
    press,
    propose,
    started,
    team_size,
    texts,
    vote_all,
)
from tgbot import keys
from tgbot.offline.fake_telegram import NOT_MODIFIED
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.ratelimit import ANSWER_RESERVE, PAUSE_KEY, RedisRateLimiter
from tgbot.render import board
from tgbot.render.common import group_scene
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

OPEN_CHAT_LINK = "https://t.me/resistance_test_bot?start=hello"


async def leader_of(group: SimulatedGroup) -> int:
    table = await group.table()
    return table.players[table.game.leader].user_id


def keyboard(group: SimulatedGroup, user_id: int):
    """The leader's keyboard of this group's game in `user_id`'s private chat."""
    return group.latest_with_button(user_id, f"t:{group.game_id}:")


async def waiting_for(group: SimulatedGroup, user_id: int) -> str:
    """What "⏳ Waiting for…" on the group's newest board answers `user_id`."""
    board = group.latest_with_button(group.chat_id, f"w:{group.game_id}")
    return await press(group, user_id, board, button_data(board, f"w:{group.game_id}"))


def card_prompts(telegram, user_id: int) -> list[str]:
    return [text for text in texts(telegram, user_id) if "Play your card" in text]


# ---------------------------------------------------------------- a player who blocked the bot


async def test_blocked_player_holds_the_mission_until_they_come_back(make_bot, telegram):
    group = await started(make_bot, telegram)
    table = await group.table()
    size = team_size(table)
    team = list(range(size))
    blocked_seat = team[-1]
    blocked = group.user_ids[blocked_seat]
    name = table.name(blocked_seat)
    await propose(group, team)
    telegram.block(blocked)
    group_messages_before = len(telegram.messages(group.chat_id))
    private_before = texts(telegram, blocked)
    assert len([text for text in private_before if text.startswith("Your game in")]) == 1

    await vote_all(group, approve=True)
    game = (await group.table()).game
    assert game.phase is Phase.MISSION

    # The group is told, with a link that opens the private chat: its only new message.
    [notice] = telegram.messages(group.chat_id)[group_messages_before:]
    assert plain_text(notice.text) == (
        f"{name}, I cannot write to you in private, so the game is waiting for you. Press the button, "
        "then Start (or unblock me): I will send you what you need."
    )
    assert f'href="tg://user?id={blocked}"' in notice.text
    assert notice.buttons() == [{"text": "Open the private chat", "url": OPEN_CHAT_LINK}]
    assert texts(telegram, blocked) == private_before  # nothing reached them

    # The rest of the team plays; the mission waits for the blocked player, and anyone may ask who it waits for.
    for seat in team[:-1]:
        await group.press(group.user_ids[seat], group.user_ids[seat], "c:", ":s")
    game = (await group.table()).game
    assert game.phase is Phase.MISSION and blocked_seat not in game.played_seats
    assert set(game.played_seats) == set(team[:-1])
    assert await waiting_for(group, group.user_ids[0]) == f"The team is playing its cards. Waiting for: {name}"
    assert len(telegram.messages(group.chat_id)) == group_messages_before + 1  # no group message per card
    assert await outbox_length(group) == 0

    # They unblock the bot and send /start: the card prompt that never reached them comes; the role,
    # which did reach them before they blocked the bot, does not come twice. Start again sends nothing more.
    telegram.unblock(blocked)
    for _ in range(2):
        await group.send(telegram.command(blocked, blocked, "/start"))
    private = texts(telegram, blocked)
    assert len([text for text in private if text.startswith("Your game in «Demo group»")]) == 1
    assert card_prompts(telegram, blocked) == [
        "«Demo group», mission 1: you are on the team. Play your card.\n👍 Ann, Bob, Cy, Dan, Eve\n👎 —"
    ]
    prompt = group.latest_with_button(blocked, "c:")
    await group.press(blocked, blocked, "c:", ":s")

    game = (await group.table()).game
    assert game.phase is Phase.PROPOSING and game.mission_track()[0] is True
    assert plain_text(telegram.message(blocked, prompt.message_id).text) == (
        "«Demo group», mission 1: you played ✅ Success."
    )
    assert telegram.message(blocked, prompt.message_id).buttons() == []
    assert "Mission 1 succeeded ✅ with 0 Fail cards." in "\n".join(texts(telegram, group.chat_id))
    assert await outbox_length(group) == 0

    # And the game plays on to its end.
    table = await group.play(NobodyFails())
    assert table.game.is_over
    assert await outbox_length(group) == 0


async def test_player_blocked_from_the_start_gets_role_and_card_after_start(make_bot, telegram):
    application = await make_bot(3)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    blocked = group.user_ids[2]
    telegram.block(blocked)
    await group.start()
    table = await group.table()
    assert table.game.leader != 2
    notices = [m for m in telegram.messages(group.chat_id) if "cannot write to you" in (m.text or "")]
    # The game itself is not held up by a role message, and the group is not told it is.
    assert [plain_text(m.text) for m in notices] == [
        f"{table.name(2)}, I cannot write to you in private, where I send what only you may see. Press the "
        "button, then Start (or unblock me): I will send it to you."
    ]
    assert not any(text.startswith("Your game in") for text in texts(telegram, blocked))
    assert table.game.phase is Phase.PROPOSING

    await group.send(telegram.command(blocked, blocked, "/start"))
    roles = [text for text in texts(telegram, blocked) if text.startswith("Your game in")]
    assert len(roles) == 1
    assert ("you are a spy" in roles[0]) == (2 in table.game.spies)
    assert not any("Play your card" in text for text in texts(telegram, blocked))
    assert await outbox_length(group) == 0

    # Later the card prompt reaches them like anyone else's.
    await propose(group, [1, 2])
    await vote_all(group, approve=True)
    assert card_prompts(telegram, blocked) == [
        "«Demo group», mission 1: you are on the team. Play your card.\n👍 Ann, Bob, Cy, Dan, Eve\n👎 —"
    ]
    assert len([m for m in telegram.messages(group.chat_id) if "cannot write to you" in (m.text or "")]) == 1



async def test_a_player_who_deleted_their_card_prompt_and_role_gets_them_back_with_start(make_bot, telegram):
    """A team member cleared their private chat while the mission waits for their card: /start puts the
    card prompt and the role back, protected as before, once however often they press it; the rest of
    their chat and the group get nothing."""
    group = await started(make_bot, telegram)
    table = await group.table()
    team = list(range(team_size(table)))
    await propose(group, team)
    await vote_all(group, approve=True)
    seat = team[0]
    member = group.user_ids[seat]
    prompt = group.latest_with_button(member, f"c:{group.game_id}:")
    role = next(m for m in telegram.messages(member) if m.from_bot and (m.text or "").startswith("Your game in"))
    for message in (prompt, role):
        await group.application.bot.delete_message(member, message.message_id)  # what clearing the chat does
    group_before = [(m.message_id, m.text, m.reply_markup) for m in telegram.messages(group.chat_id)]
    others_before = {user: texts(telegram, user) for user in group.user_ids if user != member}

    calls = len(telegram.calls)
    for _ in range(2):
        await group.send(telegram.command(member, member, "/start"))
    sent = [p for m, p in telegram.calls[calls:] if m == "sendMessage" and int(p["chat_id"]) == member]
    assert len([p for p in sent if p.get("protect_content") is True]) == 2  # besides the greetings: the two, once
    assert [t for t in texts(telegram, member) if t.startswith("Your game in")] == [plain_text(role.text)]
    assert card_prompts(telegram, member) == [plain_text(prompt.text)]
    assert [(m.message_id, m.text, m.reply_markup) for m in telegram.messages(group.chat_id)] == group_before
    assert {user: texts(telegram, user) for user in others_before} == others_before
    assert await outbox_length(group) == 0

    # The prompt put back plays the card.
    await group.press(member, member, "c:", ":s")
    assert seat in (await group.table()).game.played_seats


# ---------------------------------------------------------------- refused edits


async def test_message_not_modified_is_ignored(make_bot, telegram, caplog):
    group = await started(make_bot, telegram)
    table = await group.table()
    leader = await leader_of(group)
    prompt = keyboard(group, leader)
    size = team_size(table)

    await group.press(leader, leader, "t:", ":0")
    assert "Chosen: Ann" in plain_text(telegram.message(leader, prompt.message_id).text)

    telegram.fail_next("editMessageText", status=400, description=NOT_MODIFIED)
    update = telegram.press(leader, leader, prompt.message_id, button_data(prompt, ":1"))
    await group.send(update)
    # The press was taken and answered; the refused edit left the old text, and nothing broke.
    assert telegram.callback_answers[update["callback_query"]["id"]]["show_alert"] is False
    assert (await group.table()).draft_team == (0, 1)
    assert plain_text(telegram.message(leader, prompt.message_id).text).endswith("Chosen: Ann")
    assert await outbox_length(group) == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]

    # The next redraw shows the whole truth.
    await group.press(leader, leader, "t:", ":4")
    assert "Chosen: Ann, Bob, Eve" in plain_text(telegram.message(leader, prompt.message_id).text)
    await group.press(leader, leader, "t:", ":4")
    for seat in range(2, size):
        await group.press(leader, leader, "t:", f":{seat}")
    names = ", ".join(table.name(s) for s in range(size))
    assert f"Chosen: {names}" in plain_text(telegram.message(leader, prompt.message_id).text)
    await group.press(leader, leader, "t:", ":ok")
    game = (await group.table()).game
    assert game.phase is Phase.VOTING and game.current_round.team == tuple(range(size))
    assert plain_text(telegram.message(leader, prompt.message_id).text).endswith(f"you proposed {names}.")

    # A not-modified refusal of the votes' reveal loses no vote, and the next leader still gets their keyboard.
    telegram.fail_next("editMessageText", status=400, description=NOT_MODIFIED)
    await vote_all(group, approve=False)
    game = (await group.table()).game
    assert game.current_round.proposals[0].votes == (False,) * 5
    assert game.phase is Phase.PROPOSING and game.proposal_number == 2
    next_leader = await leader_of(group)
    assert "you are the leader" in plain_text(keyboard(group, next_leader).text)
    assert await outbox_length(group) == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_deleted_round_message_is_posted_again(make_bot, telegram):
    group = await started(make_bot, telegram)
    service = group.application.bot_data["service"]
    table = await group.table()
    team = list(range(team_size(table)))
    await propose(group, team)
    ballot = group.latest_with_button(group.chat_id, "v:")
    for seat in range(4):
        await group.press(group.user_ids[seat], group.chat_id, "v:", ":a")
    await group.application.bot.delete_message(group.chat_id, ballot.message_id)  # an admin tidies up

    # Eve never votes: the deadline approves the team, and the edit closing the vote finds the message
    # gone and posts it again, the votes kept for the result.
    before = len(telegram.messages(group.chat_id))
    assert await service.fire_due(now=(await group.table()).deadline) == 1
    assert (await group.table()).game.phase is Phase.MISSION
    assert len(telegram.messages(group.chat_id)) == before + 1
    reposted = telegram.messages(group.chat_id)[-1]
    assert reposted.message_id > ballot.message_id and reposted.from_bot
    assert plain_text(reposted.text).endswith("The mission is under way: waiting for the team's cards.")
    # Later edits go to the new message: the result's, with the votes.
    assert await group.store.redis.hget(keys.messages(group.game_id), "board:1") == (
        f"{group.chat_id}:{reposted.message_id}"
    )
    for seat in team:
        await group.press(group.user_ids[seat], group.user_ids[seat], "c:", ":s")
    assert len(telegram.messages(group.chat_id)) == before + 1
    closed = plain_text(telegram.message(group.chat_id, reposted.message_id).text)
    assert "Approved 5–0." in closed and "These votes were counted as 👍 Approve: Eve" in closed
    assert "Mission 1 succeeded ✅ with 0 Fail cards." in closed
    game = (await group.table()).game
    assert game.phase is Phase.PROPOSING and game.mission_track()[0] is True
    assert len([m for m in telegram.messages(group.chat_id) if "Mission 1 succeeded" in (m.text or "")]) == 1
    assert await outbox_length(group) == 0


async def test_status_after_the_board_was_deleted_posts_it_once(make_bot, telegram):
    group = await started(make_bot, telegram)
    await propose(group, range(team_size(await group.table())))
    ballot = group.latest_with_button(group.chat_id, "v:")
    await group.application.bot.delete_message(group.chat_id, ballot.message_id)
    before = len(telegram.messages(group.chat_id))

    await group.send(telegram.command(group.user_ids[2], group.chat_id, "/status"))
    [status, board] = telegram.messages(group.chat_id)[before:]
    assert status.text == "/status" and not status.from_bot
    assert plain_text(board.text) == plain_text(ballot.text) and board.buttons() == ballot.buttons()
    assert await outbox_length(group) == 0

    # The votes go on on the new copy, and its reveal edits it.
    await vote_all(group, approve=False)
    assert "Rejected 0–5." in plain_text(telegram.message(group.chat_id, board.message_id).text)
    assert len(telegram.messages(group.chat_id)) == before + 2


# ---------------------------------------------------------------- expired queries


async def test_expired_callback_query_still_records_the_vote(make_bot, telegram, caplog):
    group = await started(make_bot, telegram)
    await propose(group, range(team_size(await group.table())))
    ballot = group.latest_with_button(group.chat_id, "v:")
    shown = ballot.text
    approve = button_data(ballot, ":a")
    version = (await group.table()).game.version

    update = telegram.press(group.user_ids[2], group.chat_id, ballot.message_id, approve)
    telegram.expire_callback_queries()  # the bot was busy for too long before it read the press
    await group.send(update)

    game = (await group.table()).game
    assert game.pending_votes == (None, None, True, None, None)
    assert game.version == version + 1
    assert update["callback_query"]["id"] not in telegram.callback_answers
    # Votes stay secret until all are in: the board is as it was, and only Cy is no longer waited for.
    assert telegram.message(group.chat_id, ballot.message_id).text == shown
    assert await waiting_for(group, group.user_ids[0]) == "Waiting for: Ann, Bob, Dan, Eve"
    assert any("callback answer not delivered: BadRequest" in r.getMessage() for r in caplog.records)
    assert await outbox_length(group) == 0

    # The others vote normally and the proposal is decided, Cy's vote counted: the team's card prompts show it.
    await vote_all(group, approve=True)
    assert (await group.table()).game.phase is Phase.MISSION
    for user_id in group.user_ids[:2]:
        [prompt] = card_prompts(telegram, user_id)
        assert "👍 Ann, Bob, Cy, Dan, Eve" in prompt


# ---------------------------------------------------------------- flood waits and timeouts


async def test_flood_wait_delays_but_delivers(make_bot, telegram):
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    group_messages = len(telegram.messages(group.chat_id))
    telegram.fail_next("sendMessage", status=429, description="Too Many Requests: retry after 1", retry_after=1)
    began = time.monotonic()
    await group.start()
    elapsed = time.monotonic() - began

    assert elapsed >= 0.9, "the bot waited as Telegram asked"
    table = await group.table()
    for player in table.players:
        roles = [text for text in texts(telegram, player.user_id) if text.startswith("Your game in")]
        assert len(roles) == 1, player.name
    leader = table.players[table.game.leader].user_id
    keyboards = [
        m
        for player in table.players
        for m in telegram.messages(player.user_id)
        if any(b.get("callback_data", "").startswith("t:") for b in m.buttons())
    ]
    assert [m.chat_id for m in keyboards] == [leader]
    # The group's lobby message was closed and the start posted below /startgame, once.
    assert len(telegram.messages(group.chat_id)) == group_messages + 2  # /startgame itself, and the start
    assert texts(telegram, group.chat_id)[1] == "🕵️ This lobby is closed: the game has started."  # after /newgame
    assert "the game has started with" in texts(telegram, group.chat_id)[-1]
    assert await outbox_length(group) == 0
    # The order of the queue was kept: the start (the first message sent, refused once) before the
    # roles, and the leader's keyboard after every role.
    sends = [p for m, p in telegram.calls if m == "sendMessage"][-8:]
    assert [int(p["chat_id"]) for p in sends[:2]] == [group.chat_id] * 2  # one refused, one delivered
    assert all("the game has started with" in str(p["text"]) for p in sends[:2])
    assert all(str(p["text"]).startswith("Your game in") for p in sends[2:7])
    assert int(sends[-1]["chat_id"]) == leader and "you are the leader" in str(sends[-1]["text"])


async def test_timeouts_are_retried(make_bot, telegram, caplog, short_timings):
    group = await started(make_bot, telegram)
    await propose(group, range(team_size(await group.table())))
    table = await group.table()
    ballot = group.latest_with_button(group.chat_id, "v:")
    # The last vote rejects the team: the next leader's keyboard must survive two timeouts.
    for seat in range(4):
        await group.press(table.players[seat].user_id, group.chat_id, "v:", ":r")
    telegram.fail_next("sendMessage", status=0, description="Timed out", times=2)
    await group.press(table.players[4].user_id, group.chat_id, "v:", ":r")

    game = (await group.table()).game
    assert game.phase is Phase.PROPOSING and game.proposal_number == 2
    assert "Rejected 0–5." in plain_text(telegram.message(group.chat_id, ballot.message_id).text)
    leader = await leader_of(group)
    prompts = [m for m in telegram.messages(leader) if any(b["callback_data"].startswith("t:") for b in m.buttons())]
    assert len(prompts) == 1 and "you are the leader" in plain_text(prompts[0].text)
    retries = [r.getMessage() for r in caplog.records if "delivery attempt" in r.getMessage()]
    assert len(retries) == 2 and all("TimedOut" in r for r in retries)
    assert await outbox_length(group) == 0

    # A timeout on an edit is retried too.
    telegram.fail_next("editMessageText", status=0, description="Timed out")
    await group.press(leader, leader, "t:", ":0")
    assert "Chosen: Ann" in plain_text(telegram.message(leader, prompts[0].message_id).text)
    assert (await group.table()).draft_team == (0,)
    assert len([r for r in caplog.records if "delivery attempt" in r.getMessage()]) == 3
    assert await outbox_length(group) == 0

    # The game goes on to its end with an empty outbox.
    table = await group.play(NobodyFails())
    assert table.game.is_over
    assert await outbox_length(group) == 0


async def test_a_bot_api_slower_than_the_clients_timeout_posts_each_message_once(make_bot, telegram):
    """Telegram answers later than python-telegram-bot's HTTP client waits by default (5 s; here 0.2 s)
    and posts every message all the same: a timed-out message must not be posted again, nor an edit
    hold up what is queued behind it."""
    group = await started(make_bot, telegram)
    table = await group.table()
    telegram.read_timeout = 0.2
    telegram.delays.update(sendmessage=0.3, editmessagetext=0.3)
    await propose(group, range(team_size(table)))
    boards = [
        m for m in telegram.messages(group.chat_id) if any(b["callback_data"].startswith("v:") for b in m.buttons())
    ]
    assert len(boards) == 1
    await vote_all(group, approve=True)
    team = (await group.table()).game.current_round.team
    for seat in team:
        assert len(card_prompts(telegram, table.players[seat].user_id)) == 1, seat
    assert await outbox_length(group) == 0

    telegram.delays.clear()
    table = await group.play(NobodyFails())
    assert table.game.is_over
    assert await outbox_length(group) == 0
    counts = {}
    for message in telegram.messages(group.chat_id):
        counts[message.text] = counts.get(message.text, 0) + 1
    assert [text for text, n in counts.items() if n > 1] == []


async def test_a_worker_starts_when_telegram_times_out_setting_the_command_menu(make_bot, telegram, caplog):
    """The command menu is set at every worker's start (Telegram keeps the last one set): a worker that
    met a timeout or a flood limit there exited, and a slow Telegram kept every restarted worker down."""
    telegram.fail_next("setMyCommands", status=0, description="Timed out")
    telegram.fail_next("setMyCommands", status=429, description="Too Many Requests: retry after 1", retry_after=1)
    group = await started(make_bot, telegram)
    assert (await group.table()).game.phase is Phase.PROPOSING
    assert any("command menu" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_removed_mid_game_the_bot_posts_the_board_again_when_it_is_added_back(make_bot, telegram):
    """Someone removes the bot from the group mid-game: the game goes on by its deadlines (nothing the
    bot says reaches the group meanwhile). Added back, it posts the board as it is now, with its
    buttons, and the game goes on from there. Added to a group without a game, it says what it does."""
    group = SimulatedGroup(telegram, await make_bot(1), players=5)
    await group.open_lobby_and_join()
    await group.start()
    service = group.application.bot_data["service"]
    telegram.remove_bot(group.chat_id)
    seen_before = [(m.message_id, m.text, m.edits) for m in telegram.messages(group.chat_id)]
    # Nobody can act in the group: the leader's turn and then the vote run out (a team drawn, the
    # missing votes approving it).
    for _ in range(12):
        table = await group.table()
        if table.game.phase is Phase.MISSION:
            break
        await next_on_the_clock(group, service)
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    assert [(m.message_id, m.text, m.edits) for m in telegram.messages(group.chat_id)] == seen_before

    await group.send(telegram.add_bot(group.chat_id))
    text, buttons = board.board(group_scene(table))
    reposted = telegram.messages(group.chat_id)[-1]
    assert reposted.from_bot and reposted.text == text and len(reposted.buttons()) == len(
        [button for row in buttons for button in row]
    )
    # Only that message carries the decision's buttons; the game goes on from it.
    assert [m.message_id for m in telegram.messages(group.chat_id) if m.from_bot and m.buttons()] == [
        reposted.message_id
    ]
    finished = await group.play(NobodyFails())
    assert finished.game.is_over
    assert any("🏁" in (m.text or "") for m in telegram.messages(group.chat_id)[len(seen_before) :])

    # A group without a game: what the bot does and how to start.
    telegram.add_group(-777, "New friends", admins=[group.user_ids[0]])
    await group.send(telegram.add_bot(-777))
    [greeting] = [m for m in telegram.messages(-777) if m.from_bot]
    assert plain_text(greeting.text).startswith("👋 Hello! I run games of The Resistance here")


# ---------------------------------------------------------------- a command deleted before its answer


async def test_a_command_deleted_before_the_bot_answers_still_gets_its_answer(make_bot, telegram, caplog):
    """Groups often have a bot (or an admin) that deletes commands at once. The answer quotes the
    command, and Telegram refuses a reply to a message that is gone: /cancel's question (with its
    buttons), /settings' keyboard and every refusal were lost."""
    group = await started(make_bot, telegram)
    host, other = group.user_ids[0], group.user_ids[1]

    async def deleted_at_once(user_id: int, text: str):
        update = telegram.command(user_id, group.chat_id, text)
        telegram.delete(group.chat_id, update["message"]["message_id"])
        await group.send(update)
        return telegram.messages(group.chat_id)[-1]

    question = await deleted_at_once(host, "/cancel")
    assert question.from_bot and plain_text(question.text) == "Cancel this game for everyone?"
    await press(group, host, question, f"x:{group.game_id}:n")
    refusal = await deleted_at_once(other, "/startgame")
    assert refusal.from_bot and plain_text(refusal.text) == "This game has already started."
    between = await deleted_at_once(host, "/settings")  # no keyboard while the game runs
    assert between.from_bot and plain_text(between.text) == "Settings can be changed between games."
    await press(group, host, await deleted_at_once(host, "/cancel"), f"x:{group.game_id}:y")
    menu = await deleted_at_once(host, "/settings")
    assert menu.from_bot and any(b["callback_data"].startswith("s:") for b in menu.buttons())
    assert [r.getMessage() for r in caplog.records if "not delivered" in r.getMessage()] == []


async def test_newgame_and_join_are_answered_when_telegram_cannot_say_whether_the_private_chat_is_open(
    make_bot, telegram
):
    """/newgame and /join first ask Telegram whether the bot can write to the sender in private (a
    chat action). When that question timed out, the command failed with an error in the log: no lobby,
    no answer, nothing for the sender to press. The lobby opens (its sender not yet seated), and /join
    answers with the link that seats its sender."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    host, other = group.user_ids
    telegram.fail_next("sendChatAction", status=0, description="timed out")
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    assert group.game_id is not None
    assert "0 players of 10" in plain_text(lobby_message(telegram, group.chat_id).text)
    telegram.fail_next("sendChatAction", status=0, description="timed out")
    await group.send(telegram.command(other, group.chat_id, "/join"))
    [link] = telegram.messages(group.chat_id)[-1].buttons()
    await group.send(telegram.open_link(other, link["url"]))
    assert [p.user_id for p in (await group.table()).players] == [other]


async def test_kept_from_posting_mid_game_the_bot_posts_the_board_again_when_it_may_post_again(make_bot, telegram):
    """An admin takes the bot's right to post: the proposal made meanwhile never reaches the group, whose
    players cannot vote on it. Given the right back, the bot posts the board as it is now, with its
    buttons, and the vote goes on from there."""
    group = SimulatedGroup(telegram, await make_bot(1), players=5)
    await group.open_lobby_and_join()
    await group.start()
    chat = group.chat_id
    await group.send(telegram.restrict_bot(chat))
    seen_before = [(m.message_id, m.text, m.edits) for m in telegram.messages(chat)]
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    for seat in range(team_size(table)):
        await group.press(leader, leader, "t:", f":{seat}")
    await group.press(leader, leader, "t:", ":ok")
    table = await group.table()
    assert table.game.phase is Phase.VOTING
    assert [(m.message_id, m.text, m.edits) for m in telegram.messages(chat)] == seen_before
    assert await outbox_length(group) == 0

    await group.send(telegram.allow_bot(chat))
    text, buttons = board.board(group_scene(table))
    reposted = telegram.messages(chat)[-1]
    assert reposted.from_bot and reposted.text == text and reposted.buttons()
    assert [m.message_id for m in telegram.messages(chat) if m.from_bot and m.buttons()] == [reposted.message_id]
    await vote_all(group, approve=True)
    assert (await group.table()).game.phase is Phase.MISSION


# ---------------------------------------------------------------- a game that ended while the bot was away


async def ended_by_deadlines(group: SimulatedGroup):
    """Nobody in the group can act (the bot posts nothing there): the deadlines, and the computer players
    who take over the seats that miss them, play the game to its end."""
    service = group.application.bot_data["service"]
    for _ in range(300):
        table = await group.table()
        if not table.is_active:
            return table
        await next_on_the_clock(group, service)
    raise AssertionError("the deadlines did not end the game")


def results(telegram, chat_id: int) -> list:
    """The bot's messages in the group that tell a game's end."""
    return [m for m in telegram.messages(chat_id) if m.from_bot and "🏁" in (m.text or "")]


def helps(telegram, chat_id: int) -> list:
    """The bot's messages in the group that say what it does and how to start (its greeting)."""
    greeting = "I run games of The Resistance"
    return [m for m in telegram.messages(chat_id) if m.from_bot and greeting in plain_text(m.text or "")]


def shows_the_end_of(message, finished) -> None:
    """`message` is the finished game's last board: who won, the spies named, and Play again."""
    text, _ = board.board(group_scene(finished))
    assert message.text == text
    spies = [finished.players[seat].name for seat in finished.game.spies]
    spies_line = next(line for line in plain_text(message.text).splitlines() if line.startswith("Spies: "))
    assert all(name in spies_line for name in spies)
    assert [b["callback_data"] for b in message.buttons()] == [f"r:{finished.id}"]


async def test_a_game_that_ended_while_the_bot_was_removed_is_told_when_it_is_added_back(make_bot, telegram):
    """Someone removes the bot mid-game and the deadlines play the game to its end: the edit telling the
    end was refused with everything else, and the bot, added back, posted /help, so the group never
    learnt who won or who the spies were. Now it posts the end with Play again, which works; removed
    and added back once more, it does not post the end again."""
    group = SimulatedGroup(telegram, await make_bot(1), players=5)
    await group.open_lobby_and_join()
    await group.start()
    chat = group.chat_id
    telegram.remove_bot(chat)
    seen_before = [(m.message_id, m.text, m.edits) for m in telegram.messages(chat)]
    finished = await ended_by_deadlines(group)
    assert finished.stage is Stage.OVER
    assert [(m.message_id, m.text, m.edits) for m in telegram.messages(chat)] == seen_before

    await group.send(telegram.add_bot(chat))
    [result] = results(telegram, chat)
    shows_the_end_of(result, finished)
    assert helps(telegram, chat) == []

    # The group has seen it now: the next return is like any return to a group without a game.
    telegram.remove_bot(chat)
    await group.send(telegram.add_bot(chat))
    assert results(telegram, chat) == [result]
    assert len(helps(telegram, chat)) == 1

    await group.send(telegram.press(group.user_ids[2], chat, result.message_id, f"r:{finished.id}"))
    group.game_id = await group.store.game_of_chat(chat)
    lobby = await group.table()
    assert lobby.stage is Stage.LOBBY and lobby.id != finished.id
    assert [p.user_id for p in lobby.players] == [p.user_id for p in finished.players]


async def test_a_group_that_saw_the_end_gets_help_and_not_the_end_again_when_the_bot_is_added_back(make_bot, telegram):
    """The game ended with the bot in the group: the outbox remembers that the edit telling the end reached
    the group's board. The bot removed afterwards and added back says what it does, as in any group
    without a game, and does not post the end a second time."""
    group = await started(make_bot, telegram)
    chat = group.chat_id
    finished = await group.play(CleanTeams())
    [result] = results(telegram, chat)
    shows_the_end_of(result, finished)
    assert await group.store.message_of(finished.id, board.RESULT_KEY) == (chat, result.message_id)

    telegram.remove_bot(chat)
    await group.send(telegram.add_bot(chat))
    assert results(telegram, chat) == [result]
    [greeting] = helps(telegram, chat)
    assert telegram.messages(chat)[-1].message_id == greeting.message_id


async def test_a_game_that_ended_while_the_bot_was_kept_from_posting_is_told_when_it_may_post_again(
    make_bot, telegram
):
    """An admin takes the bot's right to post mid-game, and the deadlines play the game to its end: the
    proposals made meanwhile never reached the group, so neither did the end told on the last of them.
    Given the right back, the bot posts the end with Play again."""
    group = SimulatedGroup(telegram, await make_bot(1), players=5)
    await group.open_lobby_and_join()
    await group.start()
    chat = group.chat_id
    await group.send(telegram.restrict_bot(chat))
    seen_before = [(m.message_id, m.text, m.edits) for m in telegram.messages(chat)]
    finished = await ended_by_deadlines(group)
    assert [(m.message_id, m.text, m.edits) for m in telegram.messages(chat)] == seen_before

    await group.send(telegram.allow_bot(chat))
    [result] = results(telegram, chat)
    shows_the_end_of(result, finished)
    assert telegram.messages(chat)[-1].message_id == result.message_id


async def test_the_end_is_told_once_when_two_workers_hear_of_the_bots_return_at_once(make_bot, telegram):
    """An admin keeps the bot from posting, someone removes it, and the game ends meanwhile. Added back
    with its right to post, the bot hears of it twice (the service message and its own membership's
    change), here on two workers at the same moment: the group gets the end once."""
    workers = (await make_bot(1), await make_bot(2))
    group = SimulatedGroup(telegram, workers[0], players=5)
    await group.open_lobby_and_join()
    await group.start()
    chat = group.chat_id
    await group.send(telegram.restrict_bot(chat))
    telegram.remove_bot(chat)
    finished = await ended_by_deadlines(group)
    assert results(telegram, chat) == []

    added = telegram.add_bot(chat)
    may_post = telegram.allow_bot(chat)
    # Removed while restricted, it was no member any more until it was added back.
    may_post["my_chat_member"]["old_chat_member"]["is_member"] = False
    await asyncio.gather(
        workers[0].process_update(Update.de_json(added, workers[0].bot)),
        workers[1].process_update(Update.de_json(may_post, workers[1].bot)),
    )
    [result] = results(telegram, chat)
    shows_the_end_of(result, finished)


# ---------------------------------------------------------------- the bot removed while a lobby is open

REMOVED = "I was removed from the group «{}», so the game that was being gathered there will not start."


def roles(telegram, user_id: int) -> list[str]:
    """The role messages in the user's private chat: what a game dealt them."""
    return [text for text in texts(telegram, user_id) if text.startswith("Your game in")]


def calls_to(telegram, chat_id: int, start: int) -> list[str]:
    """The bot's calls naming `chat_id` from call number `start` on."""
    return [method for method, params in telegram.calls[start:] if str(params.get("chat_id")) == str(chat_id)]


def said_to(telegram, chat_id: int, start: int) -> list[str]:
    """The calls of `calls_to` but its questions (whether the bot is still in the group)."""
    return [method for method in calls_to(telegram, chat_id, start) if method != "getChatMember"]


@pytest.mark.parametrize("kicked", [False, True], ids=["removed", "kicked"])
async def test_the_bot_removed_from_a_group_with_an_open_lobby_closes_it_and_tells_who_sat_in_it(
    make_bot, telegram, kicked
):
    """Someone removed the bot from a group (or deleted the group) while a lobby was open there: the
    lobby stayed open, started by itself when its time ran out, and dealt roles and the leader's keyboard
    in private for a game whose boards and votes were in a group the bot could no longer reach. The lobby
    is closed, and each person seated in it is told in private, in their language (one who blocked the
    bot cannot be; a computer player is not); nothing is sent to the group. Added back, the bot opens a
    new game there with /newgame."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, title="Night <&>", players=7)
    chat, service = group.chat_id, application.bot_data["service"]
    spanish, blocked, stranger = group.user_ids[4], group.user_ids[5], group.user_ids[6]
    telegram.add_user(spanish, "Eve", language_code="es")
    await group.open_lobby_and_join(joining=group.user_ids[:6])
    await group.add_computers(1)
    telegram.block(blocked)
    lobby = await group.table()
    assert lobby.stage is Stage.LOBBY and len(lobby.players) == 7 and len(lobby.people) == 6
    before = {user: texts(telegram, user) for user in group.user_ids}
    calls_before = len(telegram.calls)

    await group.send(telegram.remove_bot(chat, kicked=kicked))
    table = await group.table()
    assert table.stage is Stage.CANCELLED and table.game is None
    assert await group.store.game_of_chat(chat) is None
    for user in group.user_ids[:4]:
        assert texts(telegram, user) == before[user] + [REMOVED.format("Night <&>")]
    assert texts(telegram, spanish) == before[spanish] + [
        "Me han eliminado del grupo «Night <&>», así que la partida que se estaba formando allí no empezará."
    ]
    assert texts(telegram, blocked) == before[blocked]
    assert texts(telegram, stranger) == before[stranger] == []
    assert said_to(telegram, chat, calls_before) == []

    # Told again (Telegram repeats an update, or the group is deleted after the kick), nobody hears it twice.
    await group.send(telegram.remove_bot(chat))
    # The lobby's time runs out: no game starts, nobody is dealt a role.
    assert await service.fire_due(lobby.deadline + 1) == 0
    table = await group.table()
    assert table.stage is Stage.CANCELLED and table.game is None
    for user in group.user_ids:
        assert roles(telegram, user) == []
    assert texts(telegram, group.user_ids[0]) == before[group.user_ids[0]] + [REMOVED.format("Night <&>")]
    assert said_to(telegram, chat, calls_before) == []

    # Added back, it says what it does, and the group opens a new game as usual.
    await group.send(telegram.add_bot(chat))
    assert helps(telegram, chat)[-1].message_id == telegram.messages(chat)[-1].message_id
    await group.send(telegram.command(group.user_ids[1], chat, "/newgame"))
    new_id = await group.store.game_of_chat(chat)
    assert new_id not in (None, lobby.id)
    assert (await group.store.load(new_id)).stage is Stage.LOBBY


async def test_a_removal_that_arrives_after_the_bot_was_added_back_closes_nothing(make_bot, telegram):
    """Telegram's word that the bot was removed reaches the bot late: after it was added back and a new
    lobby opened (webhook workers take updates in parallel, and Telegram sends one again whose worker
    died). The bot is in the group: the lobby stays open and nobody is told it was removed."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, title="Night", players=5)
    chat = group.chat_id
    removed = telegram.remove_bot(chat)  # delivered late, below
    await group.send(telegram.add_bot(chat))
    await group.open_lobby_and_join()
    before = {user: texts(telegram, user) for user in group.user_ids}

    await group.send(removed)
    table = await group.table()
    assert table.stage is Stage.LOBBY and len(table.people) == 5
    assert await group.store.game_of_chat(chat) == group.game_id
    assert {user: texts(telegram, user) for user in group.user_ids} == before
    # A removal that is still true closes it, as before.
    await group.send(telegram.remove_bot(chat))
    assert (await group.table()).stage is Stage.CANCELLED
    assert texts(telegram, group.user_ids[1]) == before[group.user_ids[1]] + [REMOVED.format("Night")]


async def test_the_bot_removed_from_a_group_whose_game_runs_leaves_that_game_running(make_bot, telegram):
    """Only an open lobby is closed when the bot is removed: a running game goes on by its deadlines, and
    its board is posted again when the bot is added back. The bot is removed here from two groups a
    player plays in, one with a running game, one with an open lobby: the game plays on and nobody hears
    of it; the lobby closes, and its people are told of that group alone."""
    application = await make_bot(1)
    day = SimulatedGroup(telegram, application, chat_id=-100, title="Day", players=5)
    night = SimulatedGroup(telegram, application, chat_id=-200, title="Night", players=5)
    both = day.user_ids[1]
    night.user_ids[1] = both
    await day.open_lobby_and_join()
    await day.start()
    await night.open_lobby_and_join()
    service = application.bot_data["service"]
    running = await day.table()
    assert running.game.phase is Phase.PROPOSING and (await night.table()).stage is Stage.LOBBY
    before = {user: texts(telegram, user) for user in day.user_ids + night.user_ids}

    await day.send(telegram.remove_bot(day.chat_id, kicked=True))
    table = await day.table()
    assert table.stage is Stage.PLAYING and table.game == running.game
    assert await day.store.game_of_chat(day.chat_id) == day.game_id
    # Nobody can act in the group: the leader's time runs out and a drawn team goes to the vote.
    await service.fire_due(running.deadline)
    table = await day.table()
    assert table.stage is Stage.PLAYING and table.game.phase is Phase.VOTING
    for user in day.user_ids:
        assert not any("I was removed" in text for text in texts(telegram, user)[len(before[user]) :])

    await night.send(telegram.remove_bot(night.chat_id))
    assert (await night.table()).stage is Stage.CANCELLED
    assert (await day.table()).stage is Stage.PLAYING
    for user in night.user_ids:
        assert texts(telegram, user)[len(before[user]) :] == [REMOVED.format("Night")]
    assert [text for text in texts(telegram, day.user_ids[0]) if "I was removed" in text] == []

    # Added back to the group of the running game, the bot posts its board as it is now.
    await day.send(telegram.add_bot(day.chat_id))
    text, _ = board.board(group_scene(await day.table()))
    reposted = telegram.messages(day.chat_id)[-1]
    assert reposted.from_bot and reposted.text == text and reposted.buttons()


@pytest.mark.parametrize("gone", ["left", "restricted, no longer a member"])
async def test_a_bot_kept_from_posting_keeps_its_lobby_open_until_it_is_removed(make_bot, telegram, gone):
    """An admin who takes the bot's right to post does not remove it: the lobby stays open, its people
    seated, and nobody is told anything (the bot posts the lobby again once it may post). Removed while
    kept from posting (Telegram may then still call it restricted, but no longer a member), it closes the
    lobby like any removal, and no game starts when the lobby's time runs out."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=5)
    chat, service = group.chat_id, application.bot_data["service"]
    await group.open_lobby_and_join()
    lobby = await group.table()
    before = {user: texts(telegram, user) for user in group.user_ids}

    await group.send(telegram.restrict_bot(chat))
    table = await group.table()
    assert table.stage is Stage.LOBBY and table.players == lobby.players and table.deadline == lobby.deadline
    assert {user: texts(telegram, user) for user in group.user_ids} == before

    removed = telegram.remove_bot(chat)
    if gone != "left":
        removed["my_chat_member"]["new_chat_member"] = removed["my_chat_member"]["old_chat_member"] | {
            "is_member": False
        }
    await group.send(removed)
    assert (await group.table()).stage is Stage.CANCELLED
    for user in group.user_ids:
        assert texts(telegram, user) == before[user] + [REMOVED.format("Demo group")]
    await service.fire_due(lobby.deadline + 1)
    table = await group.table()
    assert table.stage is Stage.CANCELLED and table.game is None
    assert all(roles(telegram, user) == [] for user in group.user_ids)


async def crowd(group: SimulatedGroup, wait: float = 6.0) -> None:
    """As if commands answered in the group had used its budget down to the game's reserve in the last
    minute: an answer would wait `wait` seconds for its turn, the game's own messages none."""
    redis = group.store.redis
    seconds, micros = await redis.time()
    window_ms = RedisRateLimiter(redis).group_window_ms
    count, _ = RedisRateLimiter(redis).group_rate
    stamp = seconds * 1000 + micros // 1000 - window_ms + wait * 1000
    await redis.zadd(keys.rate_chat(group.chat_id), {f"answer {i}": stamp for i in range(count - ANSWER_RESERVE)})


async def test_commands_sent_over_and_over_leave_the_group_budget_to_the_game(make_bot, telegram):
    """Telegram lets a bot post 20 messages a minute in a group, its answers to commands included. When
    only the share left for the game's own messages remains, an answer to a command (here /join in a
    running game) is not sent, and not kept waiting either; the game's board still goes out at once."""
    application = await make_bot(1, rate_limited=True)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    await propose(group, range(team_size(table)))
    ballot = group.latest_with_button(group.chat_id, "v:")
    for seat in range(4):
        await group.press(table.players[seat].user_id, group.chat_id, "v:", ":r")
    await crowd(group)

    in_group = texts(telegram, group.chat_id)
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/join"))
    assert texts(telegram, group.chat_id) == [*in_group, "/join"]  # no answer

    await group.press(table.players[4].user_id, group.chat_id, "v:", ":r")
    assert (await group.table()).game.proposal_number == 2
    assert "Rejected 0–5." in plain_text(telegram.message(group.chat_id, ballot.message_id).text)
    assert await outbox_length(group) == 0


CANCEL_QUESTION = "Cancel this game for everyone?"


async def test_cancel_question_in_a_crowded_group_waits_for_its_turn_instead_of_being_dropped(make_bot, telegram):
    """/cancel's question carries the buttons that cancel the game: in a group whose budget is down to
    the game's share it waits for its turn (longer than a plain answer may), and the host can then
    cancel. A plain answer (a player refused the cancel) is still dropped."""
    application = await make_bot(1, rate_limited=True)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    await crowd(group)
    in_group = texts(telegram, group.chat_id)

    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/cancel"))
    assert texts(telegram, group.chat_id) == [*in_group, "/cancel"]  # refused, and the refusal dropped

    host = (await group.table()).creator_id
    asked = time.monotonic()
    await group.send(telegram.command(host, group.chat_id, "/cancel"))
    question = telegram.messages(group.chat_id)[-1]
    assert question.from_bot and plain_text(question.text) == CANCEL_QUESTION
    assert time.monotonic() - asked > 5.0  # longer than a plain answer is kept waiting
    assert await press(group, host, question, button_data(question, ":y")) == "Cancelled."
    assert (await group.table()).stage is Stage.CANCELLED


async def test_join_link_for_someone_the_bot_cannot_write_to_waits_for_its_turn_in_a_crowded_group(
    make_bot, telegram
):
    """/join from someone who never opened the private chat is answered with the link that seats them:
    in a crowded group it waits for its turn rather than leave them nothing to press."""
    application = await make_bot(1, rate_limited=True)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join(joining=group.user_ids[:4])
    newcomer = group.user_ids[4]
    telegram.block(newcomer)
    await crowd(group)

    await group.send(telegram.command(newcomer, group.chat_id, "/join"))
    answer = telegram.messages(group.chat_id)[-1]
    assert answer.from_bot and "I cannot write to you in private yet" in plain_text(answer.text)
    link = next(b["url"] for b in answer.buttons() if "url" in b)
    telegram.unblock(newcomer)
    await group.send(telegram.open_link(newcomer, link))
    assert len((await group.table()).players) == 5


async def test_a_question_waiting_for_its_turn_holds_no_webhook_update_and_is_asked_once(make_bot, telegram):
    """In webhook mode a worker answers Telegram once the handler is done: a question waiting for a
    crowded group's turn waits in the background, and /cancel sent again meanwhile does not ask twice."""
    application = await make_bot(1, rate_limited=True)
    service = application.bot_data["service"]
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    service.deliver_in_background = True
    await crowd(group)
    host = (await group.table()).creator_id

    sent = time.monotonic()
    for _ in range(2):
        await group.send(telegram.command(host, group.chat_id, "/cancel"))
    assert time.monotonic() - sent < 2.0
    assert CANCEL_QUESTION not in texts(telegram, group.chat_id)
    await service.finish_deliveries()
    assert texts(telegram, group.chat_id).count(CANCEL_QUESTION) == 1


async def test_a_press_is_answered_at_once_while_a_flood_pause_holds_the_messages(make_bot, telegram):
    """A 429 pauses every worker's messages for its retry_after. Answering a press posts no message: it
    is given while the pause lasts (waiting it out kept the presser's spinner on, in every group, and
    each press's update open)."""
    application = await make_bot(1, rate_limited=True)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    await propose(group, range(team_size(await group.table())))
    ballot = group.latest_with_button(group.chat_id, "v:")
    redis = group.store.redis
    await redis.set(PAUSE_KEY, "1", px=60_000)  # Telegram said: retry after 60 s

    answer = await press(group, group.user_ids[1], ballot, button_data(ballot, ":a"))
    assert answer == "You voted 👍 Approve (mission 1, «Demo group»)."
    assert await redis.pttl(PAUSE_KEY) > 0  # answered within the pause
    assert (await group.table()).game.pending_votes[1] is True


async def test_a_group_renamed_mid_game_is_named_anew_in_private(make_bot, telegram):
    """Private messages name the group a game is played in; after a rename they use the new name,
    not the one the lobby was opened under."""
    group = await started(make_bot, telegram)
    await group.send(telegram.rename_group(group.chat_id, "Night owls"))
    assert (await group.table()).chat_title == "Night owls"
    table = await group.table()
    await propose(group, range(team_size(table)))
    await vote_all(group, approve=True)
    member = table.players[0].user_id
    assert plain_text(telegram.messages(member)[-1].text).startswith("«Night owls»")


async def test_play_again_after_the_group_was_renamed_names_it_anew(make_bot, telegram):
    """The group renamed between two games: Play again opened the next game under the old name, and
    every private message of that game named the group by it."""
    group = await started(make_bot, telegram)
    finished = await group.play(CleanTeams())
    over = last_message(telegram, group.chat_id)
    await group.send(telegram.rename_group(group.chat_id, "Night owls"))
    await group.send(telegram.press(group.user_ids[1], group.chat_id, over.message_id, f"r:{finished.id}"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    assert (await group.table()).chat_title == "Night owls"
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/startgame"))
    role = group.latest_with_button(group.user_ids[2], f"h:{group.game_id}")
    assert plain_text(role.text).startswith("Your game in «Night owls»")
