"""The pure move layer: a stored table and a press in, a change (new table, messages, answer) out.

No Telegram and no Redis: these say exactly which chat is told what after each step, and so
what one mission costs the group.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import CastVote, Phase, Variants, VotesRevealed, apply, new_game, public_view, rules
from engine.plot import Card
from engine.turns import legal_actions
from tgbot.buttons import CardPress, MissionPress, TeamPress, VotePress, WaitingPress, decode
from tgbot.changes import Change, Refused
from tgbot.moves import announcements, clock, lobby, play
from tgbot.outgoing import Edit, Send
from tgbot.settings import GroupSettings
from tgbot.table import Player, Stage, Table

GROUP = -1000
BOT = "resistance_test_bot"
NAMES = ("Ann", "Bob", "Cy", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon")


def user(seat: int) -> int:
    return 100 + seat


def playing_table(players: int = 5, leader: int = 0, targeting: bool = False, seed: int = 0) -> Table:
    """A running game whose spies are the last seats and whose first leader is `leader`."""
    spies = {5: (3, 4), 6: (4, 5), 7: (4, 5, 6), 8: (5, 6, 7), 9: (6, 7, 8), 10: (6, 7, 8, 9)}[players]
    game = new_game(players, random.Random(seed), Variants(targeting=targeting), spies=spies, first_leader=leader)
    return Table(
        id="0123456789",
        chat_id=GROUP,
        chat_title="Test group",
        creator_id=user(0),
        players=tuple(Player(user(s), NAMES[s], "en") for s in range(players)),
        stage=Stage.PLAYING,
        settings=GroupSettings(targeting=targeting),
        game=game,
    )


def ballot(table: Table) -> int:
    return public_view(table.game).ballot


def group_messages(change: Change) -> list:
    return [item for item in change.outgoing if item.chat_id == GROUP]


def private_messages(change: Change) -> list:
    return [item for item in change.outgoing if item.chat_id != GROUP]


def propose(table: Table, team: tuple[int, ...], mission: int | None = None) -> Change:
    leader = table.game.leader
    if mission is not None:
        table = play.pick_mission(table, user(leader), MissionPress(table.id, ballot(table), mission), "en", BOT).table
    for seat in team:
        table = play.pick_team_member(table, user(leader), TeamPress(table.id, ballot(table), seat), "en", BOT).table
    return play.pick_team_member(table, user(leader), TeamPress(table.id, ballot(table), None), "en", BOT)


def vote_all(table: Table, approve: bool) -> list[Change]:
    changes = []
    for seat in range(table.game.players):
        change = play.vote(table, user(seat), VotePress(table.id, ballot(table), approve), "en", BOT)
        changes.append(change)
        table = change.table
    return changes


# ---------------------------------------------------------------- one step at a time


def test_the_leader_ticks_players_in_private_and_the_group_hears_nothing():
    table = playing_table()
    change = play.pick_team_member(table, user(0), TeamPress(table.id, ballot(table), 2), "en", BOT)
    assert change.table.draft_team == (2,)
    assert group_messages(change) == []
    [edit] = private_messages(change)
    assert isinstance(edit, Edit) and edit.chat_id == user(0) and edit.key == f"lead:{ballot(table)}"
    assert "Chosen: Cy" in edit.text and edit.protected


def test_a_proposal_is_one_new_group_message_with_the_vote_buttons():
    table = playing_table()
    change = propose(table, (0, 2))
    [board] = group_messages(change)
    assert isinstance(board, Send) and board.key == "board:1"
    assert "Team: Ann, Cy" in board.text
    presses = [decode(button.data) for row in board.buttons for button in row]
    after = ballot(change.table)
    assert VotePress(table.id, after, True) in presses and VotePress(table.id, after, False) in presses
    assert WaitingPress(table.id) in presses
    # The leader's private keyboard closes on what was proposed.
    [closed] = private_messages(change)
    assert closed.chat_id == user(0) and "you proposed Ann, Cy" in closed.text and closed.buttons == ()


def test_votes_before_the_last_are_answered_to_the_voter_alone():
    table = propose(playing_table(), (0, 2)).table
    changes = vote_all(table, approve=False)
    for change in changes[:-1]:
        assert change.outgoing == []
        assert "You voted 👎 Reject" in change.reply.text
    [board] = group_messages(changes[-1])
    assert isinstance(board, Edit) and board.key == "board:1"
    assert "Rejected 0–5." in board.text and "👎 Ann, Bob, Cy, Dan, Eve" in board.text


def test_an_approved_team_s_vote_closes_on_the_board_at_once_and_its_votes_wait_for_the_result():
    table = propose(playing_table(), (0, 2)).table
    last = vote_all(table, approve=True)[-1]
    # The board is edited at once: the vote's buttons go (⏳ Waiting for… stays), and the group reads
    # that the mission is under way. The votes, not even their count (5–0 would tell each), wait for
    # the result.
    [board] = group_messages(last)
    assert isinstance(board, Edit) and board.key == "board:1"
    assert [decode(b.data) for row in board.buttons for b in row] == [WaitingPress(table.id)]
    assert "Team: Ann, Cy" in board.text
    assert board.text.endswith("✅ Team approved. The mission is under way: waiting for the team's cards.")
    assert "👍" not in board.text and "👎" not in board.text and "5–0" not in board.text
    # The team plays knowing the votes, in private, protected from forwarding.
    prompts = private_messages(last)
    assert {p.chat_id for p in prompts} == {user(0), user(2)}
    assert all(isinstance(p, Send) and p.protected and p.key.startswith("card:") for p in prompts)
    assert all("👍 Ann, Bob, Cy, Dan, Eve" in p.text for p in prompts)
    waiting = play.waiting(last.table, WaitingPress(table.id), "en")
    assert waiting.text == "The team is playing its cards. Waiting for: Ann, Cy"


def test_a_press_on_the_old_approve_button_after_the_approval_is_refused_and_changes_nothing():
    """A client that has not redrawn the board yet still shows the vote's buttons: a press on them
    is told, in one short line, that the vote is closed and why."""
    table = propose(playing_table(), (0, 2)).table
    old = ballot(table)
    approved = vote_all(table, approve=True)[-1].table
    for seat in (1, 2):  # a voter who approved, and one of the team
        with pytest.raises(Refused) as refused:
            play.vote(approved, user(seat), VotePress(table.id, old, True), "en", BOT)
        assert refused.value.reply.text == "This vote is closed: the team was approved and is playing its cards."
    assert approved.game.phase is Phase.MISSION and approved.game.played_seats == ()


def test_a_rejection_says_who_leads_next_and_sends_that_leader_the_keyboard():
    table = propose(playing_table(), (0, 2)).table
    last = vote_all(table, approve=False)[-1]
    [board] = group_messages(last)
    assert "Rejected 0–5. Rejected teams for this mission: 1/5." in board.text
    assert '➡️ Mission 1: <a href="tg://user?id=101">Bob</a> leads' in board.text
    [keyboard] = private_messages(last)
    assert keyboard.chat_id == user(1) and keyboard.key == f"lead:{ballot(last.table)}"


def test_a_mission_result_is_an_edit_of_the_same_board():
    table = propose(playing_table(), (0, 3)).table
    table = vote_all(table, approve=True)[-1].table
    first = play.play_card(table, user(0), CardPress(table.id, ballot(table), False), "en", BOT)
    assert group_messages(first) == []
    assert [item.chat_id for item in first.outgoing] == [user(0)]  # "you played ✅ Success"
    last = play.play_card(first.table, user(3), CardPress(table.id, ballot(table), True), "en", BOT)
    [board] = group_messages(last)
    assert isinstance(board, Edit) and board.key == "board:1"
    assert "Approved 5–0." in board.text and "👍 Ann, Bob, Cy, Dan, Eve" in board.text
    assert "Mission 1 failed ❌ with 1 Fail card." in board.text


def test_a_stale_vote_is_refused_and_changes_nothing():
    table = propose(playing_table(), (0, 2)).table
    old = ballot(table)
    table = vote_all(table, approve=False)[-1].table
    table = propose(table, (1, 2)).table
    with pytest.raises(Refused) as refused:
        play.vote(table, user(0), VotePress(table.id, old, True), "en", BOT)
    assert refused.value.reply.text == "This vote is closed."


@pytest.mark.parametrize(
    "press",
    [
        TeamPress("0123456789", 1, 2),
        MissionPress("0123456789", 1, 2),
        CardPress("0123456789", 3, False),
    ],
)
def test_private_presses_count_only_in_the_presser_s_own_chat(press):
    table = playing_table()
    with pytest.raises(Refused):
        play.require_pressed_in_place(table, press, GROUP, user(0), "en")
    play.require_pressed_in_place(table, press, user(0), user(0), "en")


def test_under_targeting_a_second_leader_picks_another_mission():
    table = playing_table(targeting=True)
    table = propose(table, (0, 2, 4), mission=2)
    table = vote_all(table.table, approve=False)[-1].table
    change = propose(table, (1, 3), mission=1)
    assert [p.mission for p in change.table.game.rounds[0].proposals] == [2, 1]
    [board] = group_messages(change)
    assert "<b>Mission 1</b> · proposal 2" in board.text


def test_status_leaves_one_live_keyboard():
    table = propose(playing_table(), (0, 2)).table
    change = play.repost_board(table, BOT)
    strip, send = change.outgoing
    assert isinstance(strip, Edit) and strip.key == "board:1" and strip.buttons == ()
    assert isinstance(send, Send) and send.key == "board:1" and send.buttons


def test_a_reminder_goes_in_private_to_those_the_game_waits_for():
    table = propose(playing_table(), (0, 2)).table
    table = play.vote(table, user(1), VotePress(table.id, ballot(table), True), "en", BOT).table
    table = clock.rescheduled(Change(table), now=0).table
    change = clock.on_clock(table, table.reminder_at, random.Random(0), BOT)
    assert group_messages(change) == []
    assert {item.chat_id for item in change.outgoing} == {user(s) for s in (0, 2, 3, 4)}


def test_the_start_is_a_new_group_message_and_the_lobby_s_closes_in_one_line():
    players = tuple(Player(user(s), NAMES[s], "en") for s in range(5))
    opened = lobby.open_lobby("0123456789", GROUP, "Test group", players[0], GroupSettings(), BOT, players=players)
    change = lobby.start_game(opened.table, user(0), False, "en", random.Random(0), BOT)
    closed, start = group_messages(change)
    assert closed == Edit(GROUP, lobby.LOBBY_KEY, "🕵️ This lobby is closed: the game has started.")
    # A new message notifies the group; it takes the lobby's key, for the edits before the first proposal.
    assert isinstance(start, Send) and start.key == lobby.LOBBY_KEY and start.buttons == ()
    assert start.text.startswith("🕵️ <b>The Resistance</b>: the game has started with Ann, Bob, Cy, Dan, Eve.")


def test_the_creator_can_be_seated_with_the_lobby():
    host = Player(user(0), "Ann", "en")
    change = lobby.open_lobby("0123456789", GROUP, "Test group", host, GroupSettings(), BOT, players=(host,))
    assert change.table.players == (host,)
    [message] = change.outgoing
    assert "1 player of 10: Ann" in message.text


# ---------------------------------------------------------------- what a whole game costs the group


def play_whole_game(players: int, seed: int, approve_rate: float, targeting: bool) -> tuple[Table, int]:
    """A random game through the move layer; returns the final table and its group messages from the start on."""
    rng = random.Random(seed)
    table = playing_table(players, leader=rng.randrange(players), targeting=targeting, seed=seed)
    group = 0
    while table.stage is Stage.PLAYING:
        game = table.game
        if game.phase is Phase.PROPOSING:
            mission = rng.choice(game.open_missions()) if targeting else None
            size = rules.team_size(players, mission or game.open_missions()[0])
            change = propose(table, tuple(sorted(rng.sample(range(players), size))), mission)
        elif game.phase is Phase.VOTING:
            seat = rng.choice(public_view(game).waiting_for)
            press = VotePress(table.id, ballot(table), rng.random() < approve_rate)
            change = play.vote(table, user(seat), press, "en", BOT)
        else:
            seat = rng.choice(public_view(game).waiting_for)
            fail = seat in game.spies and rng.random() < 0.7
            change = play.play_card(table, user(seat), CardPress(table.id, ballot(table), fail), "en", BOT)
        group += len(group_messages(change))
        table = change.table
    return table, group


@settings(max_examples=60, deadline=None)
@given(st.integers(5, 10), st.integers(0, 2**32), st.floats(0.2, 0.9), st.booleans())
def test_each_mission_round_costs_the_group_two_messages_per_proposal_and_one_for_its_result(
    players, seed, approve_rate, targeting
):
    table, group = play_whole_game(players, seed, approve_rate, targeting)
    rounds = table.game.rounds
    # Each proposal: its message, then one edit (a rejected team's votes, or an approved team's vote
    # closed); a played mission, one edit more (its result, with its team's votes); +1 at the game's
    # end: the picture of the whole game, after its result.
    assert group == sum(2 * len(r.proposals) + (1 if r.played else 0) for r in rounds) + 1


def test_a_card_the_deadline_played_closes_its_prompt():
    table = propose(playing_table(), (0, 3)).table
    table = vote_all(table, approve=True)[-1].table
    table = play.play_card(table, user(0), CardPress(table.id, ballot(table), False), "en", BOT).table
    table = clock.rescheduled(Change(table), now=0).table
    change = clock.on_clock(table, table.deadline, random.Random(0), BOT)
    [closed] = [item for item in private_messages(change) if item.chat_id == user(3)]
    assert isinstance(closed, Edit) and closed.buttons == () and closed.protected
    assert "time ran out, so your card counted as ✅ Success" in closed.text
    [board] = group_messages(change)
    assert "Cards not played in time count as ✅ Success: Dan" in board.text


def test_a_deadline_that_passed_while_storage_was_unreachable_gives_the_step_back_its_time():
    table = propose(playing_table(), (0, 3)).table
    table = vote_all(table, approve=True)[-1].table
    table = clock.rescheduled(Change(table), now=0).table  # the mission's deadline: 120 s from 0
    later = table.deadline + 300
    # Storage stopped answering 30 s before the deadline, and answers again 300 s after it.
    change = clock.on_clock(table, later, random.Random(0), BOT, unreachable_since=table.deadline - 30)
    assert change.outgoing == [] and change.table.game == table.game and change.table.missed == table.missed
    assert change.table.deadline == later + 30
    # With less than that left, the step gets `RESUMED_SECONDS`.
    change = clock.on_clock(table, later, random.Random(0), BOT, unreachable_since=table.deadline - 1)
    assert change.table.deadline == later + clock.RESUMED_SECONDS
    # A deadline that had passed before storage stopped answering is met as ever.
    change = clock.on_clock(table, later, random.Random(0), BOT, unreachable_since=table.deadline + 1)
    assert change.table.game.phase is not Phase.MISSION


@settings(max_examples=25, deadline=None)
@given(st.integers(7, 10), st.integers(0, 2**32))
def test_with_plot_cards_an_approval_is_shown_at_once_while_a_watch_could_come_before_the_result(players, seed):
    """Whoever holds Keeping a Close Eye decides between the cards and the result, so the votes
    they decide on are on the board; with no such card in anyone's hand they wait as usual. Either
    way the vote closes on the board at once, in one edit."""
    rng = random.Random(seed)
    game = new_game(players, rng, Variants(plot_cards=True))
    table = replace(playing_table(players), game=game)
    approvals = 0
    while not game.is_over:
        seat = rng.choice(public_view(game).waiting_for)
        actions = list(legal_actions(game, seat))
        if game.phase is Phase.VOTING:
            actions = [CastVote(seat, rng.random() < 0.75)]
        after_game, events = apply(game, rng.choice(actions))
        after = table.with_game(after_game)
        if any(isinstance(e, VotesRevealed) for e in events) and after_game.phase is Phase.MISSION:
            approvals += 1
            watch_held = any(Card.KEEPING_A_CLOSE_EYE_ON_YOU in hand for hand in after_game.plot.hands)
            [edit] = [m for m in announcements.after_step(table, after, events, BOT) if m.chat_id == GROUP]
            assert isinstance(edit, Edit)
            assert not any(isinstance(decode(b.data), VotePress) for row in edit.buttons for b in row if b.data)
            # The Opinion Makers' votes were open from the start, and stay on the board either way.
            opinion = after_game.current_round.proposals[-1].open_votes
            assert ("Opinion Makers voted first, in the open: " in edit.text) == bool(opinion)
            assert bool(re.search(r"Approved \d+–\d+\.", edit.text)) == watch_held
            assert ("\n👍 " in edit.text and "\n👎 " in edit.text) == watch_held  # everyone's votes
            assert ("The mission is under way" in edit.text) == (not watch_held)
        table, game = after, after_game
