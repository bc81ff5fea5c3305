"""Two worker processes on one Redis: presses arriving at the same moment through either of them.

Each `make_bot` call is a separate Application with its own Redis connection, as two
processes sharing a bot token would be. Every change is a compare-and-set, so a press
must count exactly once whichever worker handles it and however the presses interleave.
"""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest
from telegram import Update

from engine import Phase, parse_record
from tests.bot_helpers import bot_texts, button_data, outbox_length, pictures, started_on, team_size
from tgbot.moves import play
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text

pytestmark = pytest.mark.usefixtures("no_handler_errors")

REVEAL = re.compile(r"(Approved|Rejected) \d+–\d+")
WAITING_BUTTON = "⏳ Waiting for…"


# ---------------------------------------------------------------- helpers


async def send_via(application, update: dict) -> None:
    await application.process_update(Update.de_json(update, application.bot))


async def two_workers(make_bot, telegram, players: int, seed: int = 1):
    first, second = await make_bot(seed), await make_bot(seed + 100)
    group = await started_on(first, telegram, players)
    return group, (first, second)


async def propose_alternating(group: SimulatedGroup, workers, seats) -> None:
    """The leader ticks and proposes on their private keyboard, each press through the next worker."""
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    presses = [f":{seat}" for seat in sorted(set(seats) ^ set(table.draft_team))] + [":ok"]
    for i, ending in enumerate(presses):
        keyboard = group.latest_with_button(leader, f"t:{group.game_id}:")
        update = group.telegram.press(leader, leader, keyboard.message_id, button_data(keyboard, ending))
        await send_via(workers[i % 2], update)
    assert (await group.table()).game.phase is Phase.VOTING


async def vote_burst(group: SimulatedGroup, workers, choices: dict[int, bool]) -> list[dict]:
    """Every pending vote pressed at the same moment, alternating workers; returns the updates."""
    table = await group.table()
    ballot = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    updates = [
        group.telegram.press(
            table.players[seat].user_id,
            group.chat_id,
            ballot.message_id,
            button_data(ballot, ":a" if approve else ":r"),
        )
        for seat, approve in choices.items()
    ]
    await asyncio.gather(*(send_via(workers[i % 2], u) for i, u in enumerate(updates)))
    return updates


async def card_burst(group: SimulatedGroup, workers, fails: dict[int, bool]) -> list[dict]:
    table = await group.table()
    updates = []
    for seat, fail in fails.items():
        user = table.players[seat].user_id
        prompt = group.latest_with_button(user, f"c:{group.game_id}:")
        updates.append(group.telegram.press(user, user, prompt.message_id, button_data(prompt, ":f" if fail else ":s")))
    await asyncio.gather(*(send_via(workers[i % 2], u) for i, u in enumerate(updates)))
    return updates


def answers(telegram, updates) -> list[str | None]:
    return [telegram.callback_answers[u["callback_query"]["id"]]["text"] for u in updates]


def calls_in(telegram, chat_id: int, start: int) -> list[str]:
    """The bot's message calls (sends and edits) in one chat, from call number `start` on."""
    return [
        method
        for method, params in telegram.calls[start:]
        if method in ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")
        and int(params.get("chat_id", 0)) == chat_id
    ]


def leader_keyboards_sent(telegram, start: int) -> list[int]:
    """To whom the bot sent a leader's keyboard (a private message with team buttons) from call number `start` on."""
    return [
        int(params["chat_id"])
        for method, params in telegram.calls[start:]
        if method == "sendMessage" and any(data.startswith("t:") for data in callback_datas(params))
    ]


def callback_datas(params: dict) -> list[str]:
    """The callback data of the buttons a sendMessage call carried."""
    markup = params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row if "callback_data" in b]


# ---------------------------------------------------------------- one proposal's votes at once


@pytest.mark.parametrize("approve", [True, False])
async def test_simultaneous_votes_through_two_workers_count_once_each(make_bot, telegram, monkeypatch, approve):
    players = 10
    group, workers = await two_workers(make_bot, telegram, players)
    table = await group.table()
    team = list(range(team_size(table)))
    await propose_alternating(group, workers, team)
    before = (await group.table()).game
    # Six of ten approve (a majority) or four (a rejection); every seat's choice is known.
    choices = {seat: (seat < 6) if approve else (seat < 4) for seat in range(players)}
    calls_before = len(telegram.calls)
    attempts = []
    real_vote = play.vote

    def counted_vote(*args, **kwargs):
        attempts.append(args[1])
        return real_vote(*args, **kwargs)

    monkeypatch.setattr(play, "vote", counted_vote)

    updates = await vote_burst(group, workers, choices)

    # The presses really raced: some compare-and-set attempts lost and were retried on the newer table.
    assert len(attempts) > players

    after = (await group.table()).game
    assert after.version == before.version + players
    proposal = after.rounds[0].proposals[0]
    assert proposal.votes == tuple(choices[s] for s in range(players))
    assert proposal.approved is approve
    for text, seat in zip(answers(telegram, updates), choices, strict=True):
        assert text.startswith("You voted 👍 Approve" if choices[seat] else "You voted 👎 Reject"), text

    approvers = [s for s in range(players) if choices[s]]
    approved_line = f"👍 {', '.join(table.name(s) for s in approvers)}"
    [ballot] = [m for m in telegram.messages(group.chat_id) if "proposal 1" in plain_text(m.text or "")]
    assert await outbox_length(group) == 0
    if not approve:
        # The group saw no vote one by one: its board was edited once, to reveal them all.
        assert calls_in(telegram, group.chat_id, calls_before) == ["editMessageText"]
        shown = bot_texts(telegram, group.chat_id, calls_before)
        reveals = [text for text in shown if REVEAL.search(text)]
        assert len(reveals) == 1, shown
        final = plain_text(ballot.text)
        assert final == reveals[0]
        assert "Rejected 4–6." in final and approved_line in final
        assert not any(b.get("callback_data", "").startswith("v:") for b in ballot.buttons())  # the vote is closed
        assert after.phase is Phase.PROPOSING and after.proposal_number == 2
        assert ballot.buttons() == []
        # The next leader is named once on the board and gets one keyboard, in private.
        next_leader = table.players[after.leader]
        assert final.endswith(f"➡️ Mission 1: {next_leader.name} leads, choosing a team of 3 in private.")
        assert leader_keyboards_sent(telegram, calls_before) == [next_leader.user_id]
        assert not any("proposal 2" in plain_text(m.text or "") for m in telegram.messages(group.chat_id))
    else:
        # The vote closed on the board in one edit, without its votes (they wait for the mission's
        # result) and without the vote's buttons; each of the team's card prompts (and only theirs)
        # carries the votes.
        assert calls_in(telegram, group.chat_id, calls_before) == ["editMessageText"]
        closed = plain_text(ballot.text)
        assert closed.endswith("✅ Team approved. The mission is under way: waiting for the team's cards.")
        assert approved_line not in closed and not REVEAL.search(closed)
        assert not any(b.get("callback_data", "").startswith("v:") for b in ballot.buttons())
        assert after.phase is Phase.MISSION
        for seat in range(players):
            prompts = [
                p
                for m, p in telegram.calls
                if m == "sendMessage"
                and int(p["chat_id"]) == table.players[seat].user_id
                and "Play your card" in p["text"]
            ]
            assert len(prompts) == (1 if seat in team else 0)
            assert all(approved_line in plain_text(p["text"]) for p in prompts)
        assert leader_keyboards_sent(telegram, calls_before) == []


async def test_same_button_pressed_at_once_counts_once(make_bot, telegram):
    group, workers = await two_workers(make_bot, telegram, 5, seed=3)
    table = await group.table()
    team = list(range(team_size(table)))
    await propose_alternating(group, workers, team)

    # One player's Approve arrives four times at once (a double tap, resent by two workers).
    ballot = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    voter = table.players[2].user_id
    version = (await group.table()).game.version
    updates = [telegram.press(voter, group.chat_id, ballot.message_id, button_data(ballot, ":a")) for _ in range(4)]
    await asyncio.gather(*(send_via(workers[i % 2], u) for i, u in enumerate(updates)))
    game = (await group.table()).game
    assert game.version == version + 1
    assert game.pending_votes == (None, None, True, None, None)
    texts = answers(telegram, updates)
    assert sum(t.startswith("You voted 👍 Approve") for t in texts) == 1
    assert texts.count("You have already voted.") == 3

    await vote_burst(group, workers, {seat: True for seat in range(5) if seat != 2})
    assert (await group.table()).game.phase is Phase.MISSION

    # A team member's Success card, pressed four times at once through both workers.
    player = table.players[team[0]].user_id
    prompt = group.latest_with_button(player, f"c:{group.game_id}:")
    version = (await group.table()).game.version
    updates = [telegram.press(player, player, prompt.message_id, button_data(prompt, ":s")) for _ in range(4)]
    await asyncio.gather(*(send_via(workers[i % 2], u) for i, u in enumerate(updates)))
    game = (await group.table()).game
    assert game.version == version + 1
    assert game.pending_cards == ((team[0], False),)
    texts = answers(telegram, updates)
    assert sum("played ✅ Success" in t for t in texts) == 1
    assert texts.count("You have already played your card.") == 3
    assert plain_text(telegram.message(player, prompt.message_id).text) == (
        "«Demo group», mission 1: you played ✅ Success."
    )
    assert await outbox_length(group) == 0

    # Both cards at once from the last member: only one of them counts, and the mission ends once.
    last_seat = team[1]
    last = table.players[last_seat].user_id
    prompt = group.latest_with_button(last, f"c:{group.game_id}:")
    calls_before = len(telegram.calls)
    updates = [
        telegram.press(last, last, prompt.message_id, button_data(prompt, end)) for end in (":s", ":f", ":s", ":f")
    ]
    await asyncio.gather(*(send_via(workers[i % 2], u) for i, u in enumerate(updates)))
    game = (await group.table()).game
    texts = answers(telegram, updates)
    played = [t for t in texts if "you played" in t.lower()]
    assert len(played) == 1
    assert game.rounds[0].fails == (1 if "Fail" in played[0] else 0)
    if last_seat not in game.spies:
        assert game.rounds[0].fails == 0
    assert game.phase is Phase.PROPOSING
    outcome = "succeeded ✅" if game.rounds[0].fails == 0 else "failed ❌"
    # The result reached the group once, as the one edit of the proposal's board, naming the next leader.
    assert calls_in(telegram, group.chat_id, calls_before) == ["editMessageText"]
    results = [t for t in bot_texts(telegram, group.chat_id, calls_before) if f"Mission 1 {outcome}" in t]
    assert len(results) == 1
    next_leader = table.players[game.leader]
    assert results[0].endswith(f"➡️ Mission 2: {next_leader.name} leads, choosing a team of 3 in private.")
    # The next leader's keyboard went out once, in private.
    assert leader_keyboards_sent(telegram, calls_before) == [next_leader.user_id]
    keyboard = group.latest_with_button(next_leader.user_id, f"t:{group.game_id}:")
    assert "Choose 3 players for mission 2." in plain_text(keyboard.text)
    assert await outbox_length(group) == 0


# ---------------------------------------------------------------- a whole game through two workers


@pytest.mark.parametrize(("players", "seed"), [(5, 21), (8, 22), (10, 23)])
async def test_whole_game_through_two_workers_with_bursts(make_bot, telegram, players, seed):
    group, workers = await two_workers(make_bot, telegram, players, seed=seed)
    policy = Policy(rng=random.Random(seed), approve_rate=0.6, spy_fail_rate=0.7)
    expected_version = 0
    reveals_expected = 0
    for _ in range(200):
        table = await group.table()
        game = table.game
        if game.is_over:
            break
        assert game.version == expected_version
        if game.phase is Phase.PROPOSING:
            team = policy.choose_team(table, game.leader, team_size(table))
            await propose_alternating(group, workers, team)
            expected_version += 1
        elif game.phase is Phase.VOTING:
            choices = {seat: policy.vote(table, seat) for seat in range(players)}
            updates = await vote_burst(group, workers, choices)
            assert all(t.startswith("You voted") for t in answers(telegram, updates))
            expected_version += players
            reveals_expected += 1
            votes = (await group.table()).game.rounds[-1].proposals[-1].votes
            assert votes == tuple(choices[s] for s in range(players))
        else:
            team = game.current_round.team
            fails = {seat: policy.fail(table, seat) for seat in team}
            updates = await card_burst(group, workers, fails)
            assert all("you played" in t.lower() for t in answers(telegram, updates))
            expected_version += len(team)
            played = (await group.table()).game.rounds[-1]
            assert played.fails == sum(fails.values())
    else:
        pytest.fail("the game did not end")

    table = await group.table()
    assert table.game.is_over and table.game.version == expected_version
    assert await outbox_length(group) == 0
    record = parse_record(json.loads(await group.store.last_record(group.chat_id)))
    assert record.outcome is not None and record.outcome.winner is table.game.winner
    assert sum(len(m.proposals) for m in record.missions) == reveals_expected

    # The group: the lobby, closed, the start message, then one message per proposal, each ending
    # revealed; the last one ends the game (the game's picture follows it).
    from_bot = [m for m in telegram.messages(group.chat_id) if m.from_bot and m.photo is None]
    assert len(pictures(telegram, group.chat_id)) == 1
    group_now = [plain_text(m.text or "") for m in from_bot]
    assert len(group_now) == 2 + reveals_expected
    assert group_now[0] == "🕵️ This lobby is closed: the game has started."
    assert "the game has started with" in group_now[1]
    assert all(len(REVEAL.findall(text)) == 1 for text in group_now[2:])
    assert sum("🏁" in text for text in group_now) == 1
    assert "🏁" in group_now[-1]
    # Only the last message keeps a button: Play again.
    assert [m.buttons() for m in from_bot if m.buttons()] == [
        [{"text": "🔁 Play again", "callback_data": f"r:{group.game_id}"}]
    ]
    for seat, player in enumerate(table.players):
        private = [plain_text(m.text or "") for m in telegram.messages(player.user_id) if m.from_bot]
        # Every team member got one card prompt per mission they were on, all answered.
        missions_on = sum(1 for r in table.game.played_rounds if seat in r.team)
        prompts = [m for m in telegram.messages(player.user_id) if "you played" in (m.text or "")]
        assert len(prompts) == missions_on
        assert not any("Play your card" in text for text in private)
        assert all(not m.buttons() for m in prompts)
        # Every keyboard a leader got ended with the team they proposed.
        led = sum(1 for r in table.game.rounds for p in r.proposals if p.leader == seat)
        assert sum(": you proposed " in text for text in private) == led
        assert not any("you are the leader" in text for text in private)
