"""Reminders and deadlines: the clock is driven by the test, through `GameService.clock` and `fire_due`.

The bots run with `clock_seconds=0`, so nothing ticks by itself: a test sets the service's clock
before the lobby opens, moves it forward and calls `fire_due`, as a worker's tick would.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import replace

import pytest

from engine import EndReason, Phase, Side, parse_record
from tests.bot_helpers import lobby_message, propose, team_size, vote_all
from tests.bot_helpers import texts as group_texts
from tgbot import moves
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.settings import GroupSettings
from tgbot.store import DEADLINES_KEY
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


# ---------------------------------------------------------------- helpers


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


def sent_to(telegram, chat_id: int) -> list[str]:
    """Every sendMessage text the bot sent to a chat, in order."""
    return [
        plain_text(params["text"])
        for method, params in telegram.calls
        if method == "sendMessage" and int(params["chat_id"]) == chat_id
    ]


async def vote(group: SimulatedGroup, seat: int, approve: bool) -> None:
    table = await group.table()
    await group.press(table.players[seat].user_id, group.chat_id, "v:", ":a" if approve else ":r")


async def play_card(group: SimulatedGroup, seat: int, fail: bool = False) -> None:
    user = (await group.table()).players[seat].user_id
    await group.press(user, user, "c:", ":f" if fail else ":s")


def names(table, seats) -> str:
    return ", ".join(table.name(s) for s in seats)


def first_team(table) -> list[int]:
    """Mission 1 with five players takes two: the leader and the next seat clockwise."""
    leader = table.game.leader
    return sorted([leader, table.game.next_seat(leader)])


# ---------------------------------------------------------------- half-way reminders


async def test_half_way_reminders_name_only_who_is_missing(make_bot, telegram):
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    table = await group.table()
    leader = table.game.leader
    assert table.step == "proposing:0:1"
    assert (table.deadline, table.reminder_at) == (T0 + PROPOSAL, T0 + PROPOSAL / 2)
    assert await group.store.redis.zscore(DEADLINES_KEY, group.game_id) == T0 + PROPOSAL / 2

    # Not yet half-way: nothing at all is sent.
    now[0] = T0 + PROPOSAL / 2 - 1
    calls = len(telegram.calls)
    assert await service.fire_due() == 0
    assert len(telegram.calls) == calls

    # Half-way through the leader's turn: one message naming the leader.
    now[0] = T0 + PROPOSAL / 2
    before = len(group_texts(telegram, chat))
    assert await service.fire_due() == 1
    texts = group_texts(telegram, chat)
    assert texts[before:] == [f"⏰ Half the time is gone. Still waiting for: {table.name(leader)}"]
    # The mention links the leader.
    assert f"tg://user?id={table.players[leader].user_id}" in telegram.messages(chat)[-1].text
    assert (await group.table()).reminder_at is None
    assert (await group.table()).deadline == T0 + PROPOSAL

    # Firing again at the same moment, or a little later, reminds nobody twice.
    calls = len(telegram.calls)
    assert await service.fire_due() == 0
    assert await service.fire_due(now[0] + 10) == 0
    assert len(telegram.calls) == calls
    assert len(group_texts(telegram, chat)) == len(texts)

    # Voting: two have voted (one each way); the reminder names the other three, and no vote.
    now[0] = T0 + 100
    team = first_team(table)
    await propose(group, team)
    table = await group.table()
    assert (table.deadline, table.reminder_at) == (now[0] + VOTE, now[0] + VOTE / 2)
    voters = {team[0]: True, team[1]: False}
    for seat, approve in voters.items():
        await vote(group, seat, approve)
    waiting = [s for s in range(5) if s not in voters]
    now[0] = T0 + 100 + VOTE / 2
    before = len(group_texts(telegram, chat))
    assert await service.fire_due() == 1
    new = group_texts(telegram, chat)[before:]
    assert new == [f"⏰ Half the time is gone. Still waiting for: {names(table, waiting)}"]
    for word in ("👍", "👎", "Approve", "Reject", "approve", "reject"):
        assert word not in new[0]
    assert all(table.name(s) not in new[0] for s in voters)
    assert await service.fire_due() == 0
    assert len(group_texts(telegram, chat)) == before + 1

    # Mission: one of the two members has played; the reminder names only the other.
    now[0] += 10
    for seat in waiting:
        await vote(group, seat, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    mission_start = now[0]
    assert table.deadline == mission_start + MISSION
    await play_card(group, team[0])
    now[0] = mission_start + MISSION / 2
    before = len(group_texts(telegram, chat))
    assert await service.fire_due() == 1
    new = group_texts(telegram, chat)[before:]
    assert new == [f"⏰ Half the time is gone. Still waiting for: {table.name(team[1])}"]
    assert await service.fire_due() == 0
    assert len(group_texts(telegram, chat)) == before + 1


# ---------------------------------------------------------------- the leader's deadline


async def test_leader_deadline_puts_a_drawn_team_to_the_vote(make_bot, telegram):
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    table = await group.table()
    leader = table.game.leader
    board = group.latest_with_button(chat, f"t:{group.game_id}:")

    now[0] = T0 + PROPOSAL
    before = len(group_texts(telegram, chat))
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
    assert table.step == "voting:1:1" and table.deadline == now[0] + VOTE

    # The group is told once, with the team; the board now asks everyone to vote on it.
    new = group_texts(telegram, chat)[before:]
    assert new == [
        f"⏰ {table.name(leader)} did not propose in time: a team was drawn at random for mission 1: "
        f"{names(table, drawn.team)}. Vote on it."
    ]
    shown = telegram.message(chat, board.message_id)
    assert f"⏰ {table.name(leader)} did not propose in time: this team was drawn at random." in plain_text(shown.text)
    assert f"Team: {names(table, drawn.team)}" in plain_text(shown.text)
    assert "Rejected teams: 0/5" in plain_text(shown.text)
    assert any(b.get("callback_data", "").startswith(f"v:{group.game_id}:") for b in shown.buttons())

    # The table votes on it as on any team: rejected, the leader card passes on.
    await vote_all(group, False)
    table = await group.table()
    assert table.game.phase is Phase.PROPOSING and table.game.rounds[0].rejections == 1
    assert table.game.leader == (leader + 1) % 5
    closed = plain_text(telegram.message(chat, board.message_id).text)
    assert "this team was drawn at random" in closed and "Rejected 0–5." in closed
    record = table.game.rounds[0].proposals[0]
    assert record.auto_team and record.auto_votes == ()


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
    assert "Rejected teams: 4/5" in plain_text(group.latest_with_button(chat, f"t:{group.game_id}:").text)

    now[0] = table.deadline
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.stage is Stage.PLAYING and not table.game.is_over
    assert table.game.phase is Phase.VOTING
    drawn = table.game.rounds[0].proposals[-1]
    assert drawn.auto_team and drawn.leader == fifth_leader and len(drawn.team) == 2
    assert not any(text.startswith("🏁") for text in group_texts(telegram, chat))

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
    the record marks every automatic turn."""
    group, service, now = await started_game(make_bot, telegram)
    chat = group.chat_id
    for _ in range(9):
        table = await group.table()
        if not table.is_active:
            break
        now[0] = table.deadline
        assert await service.fire_due() == 1
    table = await group.table()
    game = table.game
    assert table.stage is Stage.OVER and game.winner is Side.RESISTANCE
    assert game.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert [len(r.proposals) for r in game.rounds] == [1, 1, 1]
    texts = "\n".join(group_texts(telegram, chat))
    assert texts.count("a team was drawn at random for mission") == 3
    assert texts.count("⏰ Time is up. These votes were counted as 👍 Approve") == 3
    assert texts.count("⏰ Time is up. Cards not played count as ✅ Success") == 3
    record = json.loads(await group.store.last_record(chat))
    for mission in record["missions"]:
        [proposal] = mission["proposals"]
        assert proposal["auto_team"] is True and proposal["auto_votes"] == list(range(5))
        assert mission["auto_cards"] == proposal["team"] and mission["fails"] == 0
    assert parse_record(record).outcome.reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    # No buttons left to press, no deadline left to fire.
    assert await group.store.redis.zscore(DEADLINES_KEY, group.game_id) is None
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
    cast = {team[0]: True, next(s for s in range(5) if s not in team): False}
    for seat, approve in cast.items():
        await vote(group, seat, approve)
    missing = [s for s in range(5) if s not in cast]

    now[0] = T0 + 10 + VOTE
    before = len(group_texts(telegram, chat))
    assert await service.fire_due() == 1
    table = await group.table()
    expected = tuple(cast.get(s, filled_as) for s in range(5))
    proposal = table.game.rounds[0].proposals[0]
    assert proposal.votes == expected and not proposal.auto_team
    assert proposal.auto_votes == tuple(missing)

    word = "👍 Approve" if filled_as else "👎 Reject"
    notices = [text for text in group_texts(telegram, chat)[before:] if text.startswith("⏰")]
    assert notices == [f"⏰ Time is up. These votes were counted as {word}: {names(table, missing)}"]

    # The ballot's message shows the revealed votes, which are right.
    revealed = plain_text(telegram.message(chat, ballot.message_id).text)
    approvers = [s for s in range(5) if expected[s]]
    rejecters = [s for s in range(5) if not expected[s]]
    assert f"👍 {names(table, approvers)}" in revealed
    assert f"👎 {names(table, rejecters)}" in revealed
    assert telegram.message(chat, ballot.message_id).buttons() == []
    if filled_as:
        assert "Approved 4–1." in revealed
        assert table.game.phase is Phase.MISSION
        assert table.deadline == now[0] + MISSION
    else:
        assert "Rejected 1–4. Rejected teams for this mission: 1/5." in revealed
        assert table.game.phase is Phase.PROPOSING and table.game.rounds[0].rejections == 1
        assert table.deadline == now[0] + PROPOSAL
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
    for seat in range(5):
        await vote(group, seat, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    board = telegram.messages(chat)[-1]
    await play_card(group, honest)
    card_prompt = group.latest_with_button(table.players[spy].user_id, f"c:{group.game_id}:")

    now[0] = T0 + 10 + MISSION
    before = len(group_texts(telegram, chat))
    assert await service.fire_due() == 1
    table = await group.table()
    [played] = table.game.played_rounds
    assert played.fails == 0 and played.succeeded
    assert table.game.mission_track()[0] is True
    assert table.game.phase is Phase.PROPOSING and len(table.game.rounds) == 1
    new = group_texts(telegram, chat)[before:]
    assert f"⏰ Time is up. Cards not played count as ✅ Success: {table.name(spy)}" in new
    assert "Mission 1 succeeded ✅ with 0 Fail cards." in plain_text(telegram.message(chat, board.message_id).text)
    assert "Missions: ✅⬜⬜⬜⬜" in plain_text(group.latest_with_button(chat, f"t:{group.game_id}:").text)
    # The spy's card prompt can no longer be played.
    update = telegram.press(
        table.players[spy].user_id,
        table.players[spy].user_id,
        card_prompt.message_id,
        next(b["callback_data"] for b in card_prompt.buttons() if b.get("callback_data", "").endswith(":f")),
    )
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == "This mission is over."
    assert (await group.table()).game.played_rounds[0].fails == 0


# ---------------------------------------------------------------- the lobby deadline


async def test_lobby_deadline_closes_a_lobby_of_fewer_than_five(make_bot, telegram):
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    chat = group.chat_id
    lobby = lobby_message(telegram, chat)
    assert "a new game is open" in plain_text(lobby.text)
    table = await group.table()
    assert table.step == "lobby" and (table.deadline, table.reminder_at) == (T0 + LOBBY, T0 + LOBBY / 2)

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
    assert await group.store.redis.zscore(DEADLINES_KEY, group.game_id) is None
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
    assert await service.fire_due() == 1
    table = await group.table()
    assert table.stage is Stage.PLAYING and table.game.players == 6
    assert [p.user_id for p in table.players] == group.user_ids
    assert table.step == "proposing:0:1" and table.deadline == now[0] + PROPOSAL
    assert plain_text(telegram.message(chat, lobby.message_id).text) == (
        "🕵️ The Resistance: the game has started with Ann, Bob, Cy, Dan, Eve, Fay. Roles were sent in private.\n"
        "2 spies · teams 2-3-4-3-4"
    )
    for seat, player in enumerate(table.players):
        [role] = [t for t in group_texts(telegram, player.user_id) if t.startswith("Your game in «Demo group»")]
        assert ("you are a spy" in role) == (seat in table.game.spies)
    board = group.latest_with_button(chat, f"t:{group.game_id}:")
    assert f"leader {table.name(table.game.leader)}" in plain_text(board.text)
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
    assert table.step == "voting:1:1"
    assert table.deadline == now[0] + VOTE and table.reminder_at == now[0] + VOTE / 2
    assert await group.store.redis.zscore(DEADLINES_KEY, group.game_id) == table.reminder_at
    stored = table.to_json()
    calls = len(telegram.calls)

    # The leader's old deadline comes: nothing happens.
    assert await service.fire_due(old_deadline) == 0
    # Even when a worker still finds the game due at the old time (a stale schedule), nothing happens.
    await group.store.redis.zadd(DEADLINES_KEY, {group.game_id: old_deadline})
    assert await service.fire_due(old_deadline) == 0
    assert await service.fire_due(old_deadline + 1) == 0
    after = await group.table()
    assert after.to_json() == stored
    assert after.game.version == table.game.version
    assert after.game.rounds[0].proposals[-1].auto_team is False
    assert len(telegram.calls) == calls


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
    board = group.latest_with_button(group.chat_id, f"t:{group.game_id}:")
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
    texts = group_texts(telegram, group.chat_id)
    assert sum("a team was drawn at random" in text for text in texts) == 1
    assert "this team was drawn at random" in plain_text(telegram.message(group.chat_id, board.message_id).text)
    # The new worker goes on from there: its buttons work.
    await vote_all(group, True)
    assert (await group.table()).game.phase is Phase.MISSION


async def test_two_workers_firing_at_once_apply_a_deadline_once(make_bot, telegram):
    first, second = await make_bot(1), await make_bot(2)
    now = [T0]
    services = set_clock(first, now), set_clock(second, now)
    group = SimulatedGroup(telegram, first, players=5)
    await group.open_lobby_and_join()
    await group.start()
    chat = group.chat_id

    async def fire_both(when: float) -> None:
        before = await group.table()
        results = await asyncio.gather(services[0].fire_due(when), services[1].fire_due(when))
        assert sorted(results) == [0, 1]
        after = await group.table()
        assert after.game.version == before.game.version + 1
        if before.game.phase is Phase.PROPOSING:
            # The drawn team comes from the firing worker's random source: one draw, of the right size.
            [drawn] = [p for p in after.game.rounds[-1].proposals if p.auto_team and p.votes is None]
            assert len(drawn.team) == team_size(before)
        else:
            expected = moves.on_clock(before, when, random.Random(0), telegram.bot_username).table
            assert after.game == expected.game

    # A vote deadline: one fill, one notice.
    table = await group.table()
    now[0] = T0 + 10
    await propose(group, first_team(table))
    await vote(group, 0, False)
    before = len(group_texts(telegram, chat))
    now[0] = T0 + 10 + VOTE
    await fire_both(now[0])
    notices = [text for text in group_texts(telegram, chat)[before:] if text.startswith("⏰ Time is up")]
    assert notices == [f"⏰ Time is up. These votes were counted as 👍 Approve: {names(table, range(1, 5))}"]
    assert (await group.table()).game.rounds[0].proposals[0].votes == (False, True, True, True, True)

    # A mission deadline, then the rest of the game left to the clock, each deadline fired by both workers.
    now[0] += MISSION
    await fire_both(now[0])
    assert sum(text.startswith("⏰ Time is up. Cards not played") for text in group_texts(telegram, chat)) == 1
    for missed in range(1, 3):
        for _ in range(3):  # the leader's, the vote's and the mission's deadline
            now[0] = (await group.table()).deadline
            await fire_both(now[0])
        texts = group_texts(telegram, chat)
        assert sum("a team was drawn at random" in text for text in texts) == missed
    table = await group.table()
    assert table.game.is_over and table.game.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert sum(text.startswith("🏁") for text in group_texts(telegram, chat)) == 1
    results = await asyncio.gather(services[0].fire_due(now[0] + 999), services[1].fire_due(now[0] + 999))
    assert results == [0, 0]
