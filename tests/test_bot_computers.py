"""Computer players in a group: seated from the lobby, playing whole games on the clock, and
taking over the seat of a person who keeps missing deadlines when the group allows it."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from engine import Phase, apply, export_record, new_game, parse_record, public_view
from tests.bot_helpers import AlwaysApprove, button_data, command_text, forged, lobby_message, press
from tgbot.buttons import VotePress
from tgbot.changes import Change
from tgbot.moves import clock, computers, play
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.settings import GroupSettings
from tgbot.table import Player, Stage, Table

pytestmark = pytest.mark.usefixtures("no_handler_errors")


def api_calls_to(telegram, chat_ids) -> list:
    return [call for call in telegram.calls if call[1].get("chat_id") in set(chat_ids)]


async def test_three_people_and_two_computer_players_play_a_whole_game(make_bot, telegram):
    application = await make_bot(5)
    group = SimulatedGroup(telegram, application, players=3)
    await group.open_lobby_and_join()
    host = group.user_ids[0]
    assert await command_text(group, host, "/addbot") == "🤖 Ada takes a seat."
    lobby = lobby_message(telegram, group.chat_id)
    assert await press(group, host, lobby, button_data(lobby, ":a")) == "🤖 Alan takes a seat."
    lobby = lobby_message(telegram, group.chat_id)
    assert "5 players of 10: Ann, Bob, Cy, 🤖 Ada, 🤖 Alan" in plain_text(lobby.text)

    await group.start()
    table = await group.play(AlwaysApprove(rng=random.Random(2)))

    assert table.stage is Stage.OVER
    assert [p.name for p in table.players if p.computer] == ["🤖 Ada", "🤖 Alan"]
    computer_seats = {seat for seat, p in enumerate(table.players) if p.computer}
    record = parse_record(json.loads(json.dumps(export_record(table.game, table.id))))
    proposals = [p for m in record.missions for p in m.proposals]
    # The computer players led teams and voted like everyone, through the same engine.
    assert computer_seats & {p.leader for p in proposals}
    assert all(len(p.votes) == 5 and not p.auto_votes and not p.auto_team for p in proposals)
    assert all(not m.auto_cards for m in record.missions)
    # Nothing was ever addressed to a computer player, and nobody needed a deadline.
    assert api_calls_to(telegram, [p.user_id for p in table.players if p.computer]) == []
    assert table.missed == () or not any(table.missed)


async def test_only_the_host_or_an_admin_seats_computer_players(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    await group.open_lobby_and_join()
    host, guest = group.user_ids
    lobby = lobby_message(telegram, group.chat_id)
    refused = await press(group, guest, lobby, button_data(lobby, ":a"))
    assert refused == "Only Ann, who opened the game, or a group admin can add computer players."
    assert await command_text(group, guest, "/addbot") == refused
    assert [p.computer for p in (await group.table()).players] == [False, False]

    # A removal with nobody to remove says so; the host removes the one seated last.
    assert await command_text(group, host, "/removebot") == "No computer player sits at this table."
    for _ in range(3):
        await command_text(group, host, "/addbot")
    assert await command_text(group, host, "/removebot") == "🤖 Grace left the table."
    assert [p.name for p in (await group.table()).players] == ["Ann", "Bob", "🤖 Ada", "🤖 Alan"]


async def test_a_table_of_computer_players_needs_two_people(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    await group.open_lobby_and_join()
    host = group.user_ids[0]
    for _ in range(9):
        await command_text(group, host, "/addbot")
    assert await command_text(group, host, "/addbot") == "The table is full: 10 players."
    assert "At least 2 people must play: computer players do not count." in plain_text(
        lobby_message(telegram, group.chat_id).text
    )
    assert await command_text(group, host, "/startgame") == "A game needs at least 2 people besides computer players."
    assert (await group.table()).stage is Stage.LOBBY


async def test_forged_computer_presses_change_nothing(make_bot, telegram):
    application = await make_bot()
    north = SimulatedGroup(telegram, application, chat_id=-100, players=5)
    south = SimulatedGroup(telegram, application, chat_id=-200, players=2)
    await north.open_lobby_and_join()
    await south.open_lobby_and_join()
    lobby = lobby_message(telegram, north.chat_id)
    data = button_data(lobby, ":a")
    # The north lobby's button pressed on the south lobby, and data no button carries.
    south_lobby = lobby_message(telegram, south.chat_id).message_id
    elsewhere = await forged(south, south.user_ids[0], south.chat_id, south_lobby, data)
    assert elsewhere["text"] == "This button is not valid here."
    made_up = await forged(north, north.user_ids[0], north.chat_id, lobby.message_id, data[:-1] + "x")
    assert made_up["text"] == "This button is not valid."
    await north.start()
    after_start = await forged(north, north.user_ids[0], north.chat_id, lobby.message_id, data)
    assert after_start["text"] == "This game has already started."
    assert not any(p.computer for p in (await north.table()).players + (await south.table()).players)


# ---------------------------------------------------------------- turns on the clock (pure)


def playing_table(spies: tuple[int, ...], takeover: bool = False) -> Table:
    people = tuple(Player(100 + i, f"P{i}") for i in range(3))
    bots = tuple(Player(-(i + 1), f"🤖 B{i}", computer=True) for i in range(2))
    game = new_game(5, spies=spies, first_leader=3)
    settings = GroupSettings(language="en", computer_takeover=takeover)
    return Table("a1b2c3d4e5", -100, "G", 100, people + bots, Stage.PLAYING, settings, game)


def test_a_computer_players_delay_does_not_depend_on_roles():
    """Two tables that differ only in who the spies are schedule the same moments: a
    computer player's timing tells nothing about its role."""
    moments = []
    for spies in ((0, 1), (3, 4)):
        change = clock.settled(Change(playing_table(spies)), 1000.0, random.Random(7))
        table = change.table
        times = [table.computer_at]
        for _ in range(6):
            step = clock.settled(
                clock.on_clock(table, table.computer_at, random.Random(1), "resistance_test_bot"),
                table.computer_at,
                random.Random(2),
            )
            table = step.table
            if table.computer_at is None:
                break
            times.append(table.computer_at)
        moments.append(times)
        assert all(1000.0 + computers.DECISION_DELAY[0] <= t for t in times)
    assert moments[0] == moments[1]


def test_a_computer_leader_proposes_on_the_clock_and_nothing_is_mailed_to_it():
    table = clock.settled(Change(playing_table((0, 1))), 0.0, random.Random(1)).table
    assert table.game.leader == 3 and computers.LEADER_DELAY[0] <= table.computer_at <= computers.LEADER_DELAY[1]
    assert clock.on_clock(table, table.computer_at - 0.01, random.Random(1), "resistance_test_bot").table == table
    change = clock.settled(
        clock.on_clock(table, table.computer_at, random.Random(1), "resistance_test_bot"),
        table.computer_at,
        random.Random(1),
    )
    assert change.table.game.phase is Phase.VOTING
    assert {item.chat_id for item in change.outgoing} <= {-100, 100, 101, 102}
    # Both computer players vote in one turn, soon after the vote opens, while the people's votes are awaited.
    voting = change.table
    opened = table.computer_at  # when the computer leader proposed
    assert opened + computers.DECISION_DELAY[0] <= voting.computer_at <= opened + computers.DECISION_DELAY[1]
    assert set(public_view(voting.game).waiting_for) == {0, 1, 2, 3, 4}
    voting = clock.settled(
        clock.on_clock(voting, voting.computer_at, random.Random(3), "resistance_test_bot"),
        voting.computer_at,
        random.Random(3),
    ).table
    assert set(public_view(voting.game).waiting_for) == {0, 1, 2} and voting.computer_at is None


def test_a_person_who_misses_two_deadlines_is_taken_over_only_if_the_group_allows_it():
    for takeover in (False, True):
        table = replace(playing_table((0, 1), takeover), game=new_game(5, spies=(0, 1), first_leader=0))
        table = clock.settled(Change(table), 0.0, random.Random(1)).table
        outgoing = []
        for _ in range(6):  # seat 0 leads and then never acts: its deadlines pass one by one
            if table.game.is_over or 0 in table.autopilot:
                break
            # The others play each step (an idle table would be paused: `moves.pace`); seat 0 never does.
            table = replace(table, person_acted=True)
            if 0 not in public_view(table.game).waiting_for:
                now = table.computer_at if table.computer_at is not None else table.deadline
            else:
                now = table.deadline
            change = clock.settled(
                clock.on_clock(table, now, random.Random(4), "resistance_test_bot"), now, random.Random(4)
            )
            table, outgoing = change.table, outgoing + change.outgoing
        told = [item.text for item in outgoing if getattr(item, "chat_id", None) == -100 and "missed two" in item.text]
        if takeover:
            assert table.autopilot == (0,)
            assert told == [
                "🤖 P0 missed two deadlines in a row: a computer player takes their turns until they act again."
            ]
        else:
            assert table.autopilot == () and table.missed[0] >= 2 and not told


def test_a_seat_taken_over_is_played_by_the_computer_until_its_person_acts():
    table = replace(playing_table((0, 1), takeover=True), autopilot=(0,), missed=(2, 0, 0, 0, 0))
    table = replace(table, game=new_game(5, spies=(0, 1), first_leader=0))
    table = clock.settled(Change(table), 0.0, random.Random(1)).table
    # The person's seat leads: the computer proposes for it on the clock.
    assert table.computer_at is not None
    table = clock.settled(
        clock.on_clock(table, table.computer_at, random.Random(5), "resistance_test_bot"),
        table.computer_at,
        random.Random(5),
    ).table
    assert table.game.phase is Phase.VOTING and not table.game.current_round.proposals[-1].auto_team
    # Its person votes again: the seat is theirs again, and their count of missed deadlines starts over.
    ballot = public_view(table.game).ballot
    change = play.vote(table, 100, VotePress(table.id, ballot, True), "en", "resistance_test_bot")
    assert change.table.autopilot == () and change.table.missed[0] == 0
    assert 0 not in computers.waiting_computers(change.table)


def test_a_lapsed_chance_to_use_a_plot_card_is_no_missed_turn():
    """Letting a held card's moment pass is a pass the rules allow: it never counts towards a
    computer player taking the seat over."""
    from engine import PLOT_PHASES, Variants
    from engine.simulate import random_action

    rng = random.Random(5)
    for _ in range(50):
        game = new_game(7, rng, Variants(plot_cards=True))
        while not game.is_over and not (game.phase in PLOT_PHASES and game.phase is not Phase.DEAL):
            game, _ = apply(game, random_action(game, rng, plot_use_rate=0.0))
        if not game.is_over:
            break
    people = tuple(Player(100 + i, f"P{i}") for i in range(7))
    settings = GroupSettings(language="en", computer_takeover=True, plot_cards=True)
    table = Table("a1b2c3d4e5", -100, "G", 100, people, Stage.PLAYING, settings, game, missed=(1,) * 7)
    table = clock.settled(Change(table), 0.0, random.Random(1)).table
    asked = public_view(game).waiting_for[0]
    after = clock.on_clock(table, table.deadline, random.Random(2), "resistance_test_bot").table
    assert public_view(after.game).ballot != public_view(game).ballot
    assert after.missed == (1,) * 7 and asked not in after.autopilot


# Telegram names may hold several robots and characters that show as nothing (the Hangul filler).
@pytest.mark.parametrize("name", ["🤖 Ada", "🤖 🤖 Ada", "🤖\u3164🤖 Ada", "\u3164🤖 Ada"])
async def test_a_person_cannot_pass_for_a_computer_player(make_bot, telegram, name):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[1], name, language_code="en")
    await group.open_lobby_and_join()
    await command_text(group, group.user_ids[0], "/addbot")
    (ann, person, computer) = (await group.table()).players
    assert (ann.name, computer.name, computer.computer) == ("Ann", "🤖 Ada", True)
    assert "🤖" not in person.name and person.name.strip("\u3164 ") == "Ada" and not person.computer


def test_a_person_whose_plot_decision_a_computer_player_made_is_told_what_it_chose():
    """A computer player deals the Plot cards of a person it took over: the person's closed
    keyboard says which card went to whom in their name, not only that it is done."""
    from engine import Variants
    from tgbot.outgoing import Edit
    from tgbot.render.plot import card_name, plot_key

    people = tuple(Player(100 + i, f"P{i}") for i in range(7))
    game = new_game(7, random.Random(3), Variants(plot_cards=True), first_leader=0)
    assert game.phase is Phase.DEAL and public_view(game).waiting_for == (0,)
    settings = GroupSettings(language="en", computer_takeover=True, plot_cards=True)
    table = Table("a1b2c3d4e5", -100, "G", 100, people, Stage.PLAYING, settings, game, autopilot=(0,))
    table = clock.settled(Change(table), 0.0, random.Random(1)).table
    ballot = public_view(table.game).ballot
    change = clock.on_clock(table, table.computer_at, random.Random(2), "resistance_test_bot")
    [deal] = [use for use in change.table.game.plot.uses[0] if use.kind.value == "deal"][:1]
    closed = [item for item in change.outgoing if isinstance(item, Edit) and item.key == plot_key(ballot, 0)]
    assert [item.chat_id for item in closed] == [100]
    given = f"you gave {card_name(deal.card, 'en')} to P{deal.target}."
    assert plain_text(closed[0].text) == f"🤖 A computer player chose for you:\n«G»: {given}"
