"""Forged and stale button presses, and secrets that must never reach the group or the logs.

Any Telegram client can send any callback data for any message it can see, so every press
is checked against the stored game. A refused press must leave the stored table, the
outbox, the remembered message ids and every message players see exactly as they were.
"""

from __future__ import annotations

import logging
import random
import re

import pytest

from engine import Phase, Side, Variants
from tests.bot_helpers import (
    CleanTeams,
    answer_of,
    bot_texts,
    forged,
    propose,
    snapshot,
    started,
    team_size,
    vote_all,
)
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text

pytestmark = pytest.mark.usefixtures("no_handler_errors")

OUTSIDER = 999


# ---------------------------------------------------------------- forged presses


async def test_non_player_cannot_vote_and_a_player_votes_only_as_themself(make_bot, telegram):
    group = await started(make_bot, telegram)
    telegram.add_user(OUTSIDER, "Mallory")
    await propose(group, range(team_size(await group.table())))
    ballot = group.latest_with_button(group.chat_id, "v:")
    approve = next(b["callback_data"] for b in ballot.buttons() if b["callback_data"].endswith(":a"))

    before = await snapshot(group, [OUTSIDER])
    answer = await forged(group, OUTSIDER, group.chat_id, ballot.message_id, approve)
    assert answer["text"] == "You are not playing in this game."
    assert await snapshot(group, [OUTSIDER]) == before

    # A player pressing the ballot votes for their own seat and no other: the data names no seat.
    voter = group.user_ids[3]
    version = (await group.table()).game.version
    answer = await forged(group, voter, group.chat_id, ballot.message_id, approve)
    assert answer["text"].startswith("You voted 👍 Approve")
    game = (await group.table()).game
    assert game.pending_votes == tuple(True if seat == 3 else None for seat in range(5))
    assert game.version == version + 1
    # The group sees who voted, never how.
    shown = plain_text(telegram.message(group.chat_id, ballot.message_id).text)
    assert "Voted (1/5): Dan" in shown and "👍" not in shown


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
    fail = next(b["callback_data"] for b in prompt.buttons() if b["callback_data"].endswith(":f"))
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
    first_version, first_leader = table.game.version, table.game.leader
    first_team = list(range(team_size(table)))
    await propose(group, first_team)
    ballot = group.latest_with_button(group.chat_id, "v:")
    old_approve = next(b["callback_data"] for b in ballot.buttons() if b["callback_data"].endswith(":a"))
    await vote_all(group, approve=False)

    table = await group.table()
    game = table.game
    assert game.phase is Phase.PROPOSING and game.proposal_number == 2
    assert game.version > first_version and game.leader != first_leader
    leader = table.players[game.leader].user_id
    board = group.latest_with_button(group.chat_id, "t:")

    # The new leader replays a team button of the first proposal's keyboard (an older version).
    before = await snapshot(group)
    answer = await forged(group, leader, group.chat_id, board.message_id, f"t:{group.game_id}:{first_version}:0")
    assert answer["text"] == "This choice is closed."
    answer = await forged(group, leader, group.chat_id, board.message_id, f"t:{group.game_id}:{first_version}:ok")
    assert answer["text"] == "This choice is closed."
    # A future version is no better.
    answer = await forged(group, leader, group.chat_id, board.message_id, f"t:{group.game_id}:{game.version + 1}:0")
    assert answer["text"] == "This choice is closed."
    assert await snapshot(group) == before

    # Second proposal goes to a vote; a vote for the first (rejected) proposal is closed.
    await propose(group, first_team)
    before = await snapshot(group)
    voter = group.user_ids[2]
    answer = await forged(group, voter, group.chat_id, ballot.message_id, old_approve)
    assert answer["text"] == "This vote is closed."
    newer = group.latest_with_button(group.chat_id, "v:")
    answer = await forged(group, voter, group.chat_id, newer.message_id, old_approve)
    assert answer["text"] == "This vote is closed."
    # A proposal that does not exist yet, and a round that does not exist yet.
    answer = await forged(group, voter, group.chat_id, newer.message_id, f"v:{group.game_id}:0:3:a")
    assert answer["text"] == "This vote is closed."
    answer = await forged(group, voter, group.chat_id, newer.message_id, f"v:{group.game_id}:1:2:a")
    assert answer["text"] == "This vote is closed."
    assert await snapshot(group) == before
    assert (await group.table()).game.pending_votes == (None,) * 5


async def test_forged_mission_presses_are_refused_under_targeting(make_bot, telegram):
    group = await started(make_bot, telegram, players=5, seed=3, variants=Variants(targeting=True))
    chat = group.chat_id
    policy = CleanTeams()
    # Play until mission 1 has been played (a clean team always succeeds).
    while not (await group.table()).game.played_rounds:
        table = await group.table()
        if table.game.phase is Phase.PROPOSING and table.draft_mission is None:
            await group.press(table.players[table.game.leader].user_id, chat, "m:", ":1")
        else:
            await group.step(policy)
    table = await group.table()
    game = table.game
    assert [r.mission for r in game.played_rounds] == [1] and game.phase is Phase.PROPOSING
    leader = table.players[game.leader].user_id
    board = group.latest_with_button(chat, f"m:{group.game_id}:")
    offered = sorted(int(b["callback_data"].rsplit(":", 1)[1]) for b in board.buttons())
    assert offered == [2, 3, 4]

    before = await snapshot(group)
    # The played mission and the fifth (locked until two successes) are refused by the rules;
    # missions that do not exist are not even valid buttons.
    refusals = {1: "That mission cannot be chosen now.", 5: "That mission cannot be chosen now."}
    refusals |= {0: "This button is not valid.", 6: "This button is not valid."}
    for mission, refusal in refusals.items():
        answer = await forged(group, leader, chat, board.message_id, f"m:{group.game_id}:{game.version}:{mission}")
        assert answer["text"] == refusal, mission
    assert await snapshot(group) == before
    assert (await group.table()).draft_mission is None

    # Once the leader has picked mission 2, a forged press for the played mission changes nothing either.
    await group.press(leader, chat, "m:", ":2")
    before = await snapshot(group)
    answer = await forged(group, leader, chat, board.message_id, f"m:{group.game_id}:{game.version}:1")
    assert answer["text"] == "That mission cannot be chosen now."
    assert await snapshot(group) == before
    assert (await group.table()).draft_mission == 2


@pytest.mark.parametrize(
    "data",
    [
        "hello",
        "v:zz",
        "v:0123456789:0:1:x",
        "c:0123456789:0:maybe",
        "t:0123456789:0:-1",
        "v:0123456789:0:1:a:extra",
        "x:0123456789:yes",
        "m:0123456789:0:6",
        "v:" + "a" * 62,
        "v:0123456789:0:1:a\n",
        "V:0123456789:0:1:a",
        "q",
    ],
)
async def test_garbage_data_is_not_valid(make_bot, telegram, data):
    group = await started(make_bot, telegram)
    board = group.latest_with_button(group.chat_id, "t:")
    before = await snapshot(group)
    for user in (group.user_ids[0], group.user_ids[4]):
        answer = await forged(group, user, group.chat_id, board.message_id, data)
        assert answer == {"text": "This button is not valid.", "show_alert": False}
    assert await snapshot(group) == before


async def test_data_for_another_groups_game_is_refused(make_bot, telegram):
    here = await started(make_bot, telegram, chat_id=-100, title="Here")
    there = await started(make_bot, telegram, seed=2, chat_id=-200, title="There")
    await propose(there, range(team_size(await there.table())))
    there_table = await there.table()
    there_leader_version = there_table.game.version

    board = here.latest_with_button(here.chat_id, "t:")
    before_here, before_there = await snapshot(here), await snapshot(there)
    pressers = [here.user_ids[0], here.user_ids[(await here.table()).game.leader]]
    for user in pressers:
        for data in (
            f"v:{there.game_id}:0:1:a",
            f"v:{there.game_id}:0:1:r",
            f"c:{there.game_id}:0:f",
            f"t:{there.game_id}:{there_leader_version}:0",
            f"x:{there.game_id}:y",
        ):
            answer = await forged(here, user, here.chat_id, board.message_id, data)
            # Data naming another group's game counts only on that group's (or the player's) messages;
            # being an admin of this group gives no say over the other group's game.
            assert answer["text"] == "This button is not valid here.", data
    assert await snapshot(here) == before_here
    assert await snapshot(there) == before_there
    assert (await there.table()).game.pending_votes == (None,) * 5


async def test_repeated_vote_counts_once(make_bot, telegram):
    group = await started(make_bot, telegram)
    await propose(group, range(team_size(await group.table())))
    version = (await group.table()).game.version
    voter = group.user_ids[1]
    ballot = group.latest_with_button(group.chat_id, "v:")
    approve, reject = (
        next(b["callback_data"] for b in ballot.buttons() if b["callback_data"].endswith(end)) for end in (":a", ":r")
    )

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
    assert "Voted (1/5): Bob" in plain_text(telegram.message(group.chat_id, ballot.message_id).text)


async def test_only_the_leader_picks_the_team(make_bot, telegram):
    group = await started(make_bot, telegram)
    table = await group.table()
    leader = table.game.leader
    board = group.latest_with_button(group.chat_id, "t:")
    leader_user = table.players[leader].user_id
    await group.press(leader_user, group.chat_id, "t:", f":{leader}")  # the leader ticks themself
    before = await snapshot(group)
    assert (await group.table()).draft_team == (leader,)

    intruder = group.user_ids[(leader + 1) % 5]
    for button in board.buttons():
        update = telegram.press(intruder, group.chat_id, board.message_id, button["callback_data"])
        await group.send(update)
        assert answer_of(telegram, update)["text"] == f"Only the leader, {table.name(leader)}, chooses the team."
    assert await snapshot(group) == before
    assert (await group.table()).game.phase is Phase.PROPOSING


async def test_presses_on_a_finished_game_are_refused(make_bot, telegram):
    group = await started(make_bot, telegram)
    # Keep the last ballot, board and card prompt to press them again once the game is over.
    table = await group.play(CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    game_id, version = group.game_id, table.game.version
    last = telegram.messages(group.chat_id)[-1]
    assert "The Resistance wins" in plain_text(last.text)

    user = group.user_ids[0]
    before = await snapshot(group)
    cases = {
        f"v:{game_id}:{len(table.game.rounds) - 1}:1:a": "This vote is closed.",
        f"c:{game_id}:{len(table.game.rounds) - 1}:s": "This button is not valid here.",  # a card, in the group
        f"t:{game_id}:{version}:0": "This choice is closed.",
        f"t:{game_id}:{version}:ok": "This choice is closed.",
        f"x:{game_id}:y": "This game is already over.",
        "v:0123456789:0:1:a": "This button belongs to a game that is over.",
    }
    for data, refusal in cases.items():
        answer = await forged(group, user, group.chat_id, last.message_id, data)
        assert answer["text"] == refusal, data
    assert await snapshot(group) == before
    # The group is free for a new game and the finished one is not listed as the user's.
    assert await group.store.game_of_chat(group.chat_id) is None
    assert await group.store.games_of_user(user) == []


# ---------------------------------------------------------------- secrets


SPY_WORD = re.compile(r"\bsp(y|ies)\b", re.IGNORECASE)
# The table's setup is public (the rulebook's chart): how many spies, never who.
SETUP_LINE = re.compile(r"\d+ spies · teams [\d*-]+(?: \(\* needs two Fails\))?")
CARD_DATA = re.compile(r"\bc:[0-9a-f]{10}:\d+:[sf]\b")
VOTE_DATA = re.compile(r"\bv:[0-9a-f]{10}:\d+:\d+:[ar]\b")
PRIVATE_PHRASES = (
    "you are a spy",
    "you are in the resistance",
    "played ❌ fail",
    "played ✅ success",
    "play your card",
)
VOTED = re.compile(r"Voted \((\d+)/(\d+)\)")


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

    # The group: no role, no card, no hidden vote before the game-over message.
    texts = bot_texts(telegram, group.chat_id)
    over = next(i for i, text in enumerate(texts) if text.startswith("🏁"))
    assert over == len(texts) - 1, "the game-over message is the last thing the group sees"
    assert "Spies: " + ", ".join(spy_names) in texts[over]
    reveals = 0
    for text in texts[:over]:
        lowered = text.lower()
        assert not SPY_WORD.search(SETUP_LINE.sub("", text).replace("Blind Spies", "")), text
        assert not any(phrase in lowered for phrase in PRIVATE_PHRASES), text
        voted = VOTED.search(text)
        if voted:
            assert int(voted.group(1)) < int(voted.group(2)) == players, text
            assert "👍" not in text and "👎" not in text, text
        names = reveal_names(text)
        if names:
            # Votes are shown only complete: every player exactly once.
            assert sorted(names) == sorted(table.name(s) for s in range(players)), text
            reveals += 1
    assert reveals >= 1

    # Private texts go to their own player's private chat only.
    sent = [(int(p["chat_id"]), str(p["text"])) for m, p in telegram.calls if m == "sendMessage"]
    roles = [(chat, text) for chat, text in sent if text.startswith("Your game in")]
    assert sorted(chat for chat, _ in roles) == sorted(user_ids)
    for chat, text in roles:
        seat = table.seat_of(chat)
        assert ("you are a <b>spy</b>" in text) == (seat in spies), text
        assert ("you are in the <b>Resistance</b>" in text) == (seat not in spies), text
        if seat in spies and variants.blind_spies:
            assert not any(name in text for name in spy_names if name != table.name(seat))
    prompts = [chat for chat, text in sent if "Play your card" in text]
    assert prompts and all(chat in user_ids for chat in prompts)
    assert all(chat > 0 for chat, text in sent if "you played" in text or "Your game in" in text)

    # The logs: no card or vote choice, no private text, no spy named as such.
    private_texts = [text for chat, text in sent if chat > 0]
    records = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert records, "the bot logs its work at INFO"
    for record in records:
        message = record.getMessage()
        if record.exc_info:
            message += logging.Formatter().formatException(record.exc_info)
        assert not CARD_DATA.search(message) and not VOTE_DATA.search(message), message
        assert not any(text in message or plain_text(text) in message for text in private_texts), message
        assert not any(phrase in message.lower() for phrase in PRIVATE_PHRASES), message
        if SPY_WORD.search(message):
            assert not any(re.search(rf"\b{re.escape(name)}\b", message) for name in spy_names), message


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
    while (await there.table()).game.phase.value != "voting":
        await there.step(CleanTeams())
    before_there = await snapshot(there)
    board_here = telegram.messages(here.chat_id)[-1]
    for data in (f"v:{there.game_id}:0:1:a", f"v:{there.game_id}:0:1:r"):
        answer = await forged(here, bob, here.chat_id, board_here.message_id, data)
        assert answer["text"] == "This button is not valid here."
    role_message = telegram.messages(bob)[-1]
    answer = await forged(here, bob, bob, role_message.message_id, f"v:{there.game_id}:0:1:a")
    assert answer["text"] == "This button is not valid here."
    assert await snapshot(there) == before_there
