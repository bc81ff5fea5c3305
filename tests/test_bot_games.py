"""Whole games through the real Application, a fake Bot API and real Redis."""

from __future__ import annotations

import json
import random

import pytest

from engine import EndReason, Phase, Side, Variants, export_record, parse_record
from tests.bot_helpers import (
    CleanTeams,
    RejectEverything,
    SpiesAlwaysFail,
    command_text,
    press,
    propose,
    started,
    vote_all,
)
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text

pytestmark = pytest.mark.usefixtures("no_handler_errors")


async def play(make_bot, telegram, players, policy, variants=None, seed=1):
    group = await started(make_bot, telegram, players, seed, variants=variants)
    table = await group.play(policy)
    return group, table


@pytest.mark.parametrize("players", [5, 10])
async def test_resistance_wins_with_clean_teams(make_bot, telegram, players):
    group, table = await play(make_bot, telegram, players, CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    assert table.game.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    final = group.transcript(group.chat_id)[-1]
    assert "The Resistance wins" in final
    assert all(table.name(s) in final for s in table.game.spies)
    # The group got one message per proposal besides the lobby (closed when the game started) and
    # the start message; the end was edited into the last proposal's message, with Play again; then
    # the game's picture.
    sent = [m for m in telegram.messages(group.chat_id) if m.from_bot]
    proposals = sum(len(r.proposals) for r in table.game.rounds)
    assert len(sent) == 2 + proposals + 1 and sent[-1].photo is not None
    assert [b["text"] for b in sent[-2].buttons()] == ["🔁 Play again"]


@pytest.mark.parametrize("players", [5, 10])
async def test_spies_win_by_three_failures(make_bot, telegram, players):
    group, table = await play(make_bot, telegram, players, SpiesAlwaysFail())
    assert table.game.winner is Side.SPIES
    assert table.game.end_reason is EndReason.THREE_FAILED_MISSIONS
    assert "The spies win: three missions failed" in group.transcript(group.chat_id)[-1]


@pytest.mark.parametrize("players", [5, 10])
async def test_spies_win_by_five_rejections(make_bot, telegram, players):
    group, table = await play(make_bot, telegram, players, RejectEverything())
    assert table.game.end_reason is EndReason.FIVE_REJECTIONS
    assert "five teams in a row were rejected" in group.transcript(group.chat_id)[-1]
    record = json.loads(await group.store.last_record(group.chat_id))
    assert parse_record(record).outcome.reason is EndReason.FIVE_REJECTIONS


class RejectEachMission(RejectEverything):
    """Every leader of the round names another mission, and every team is rejected."""

    def choose_mission(self, table, seat, missions):
        current = table.game.current_round
        return missions[(len(current.proposals) if current else 0) % len(missions)]


async def test_under_targeting_five_rejections_in_a_row_are_not_said_to_be_for_one_mission(make_bot, telegram):
    """Under Targeting each leader of a round may name another mission and the five rejections
    count in a row across them: the group read "Rejected teams for this mission: 2/5" under a
    mission's first team, and "five teams in a row were rejected for one mission" at the end."""
    group, table = await play(make_bot, telegram, 5, RejectEachMission(), variants=Variants(targeting=True))
    assert table.game.end_reason is EndReason.FIVE_REJECTIONS
    assert len({p.mission for p in table.game.rounds[0].proposals}) > 1
    shown = "\n".join(group.transcript(group.chat_id))
    assert "for this mission" not in shown and "for one mission" not in shown
    for count in range(1, 6):
        assert f". Rejected teams in a row: {count}/5." in shown
    assert "The spies win: five teams in a row were rejected.\n" in shown
    rules = await command_text(group, group.user_ids[0], "/rules")
    assert "five teams rejected in a row win for the spies even when they were for different missions" in rules


async def test_random_games_end_and_keep_a_valid_record(make_bot, telegram):
    for seed, players in enumerate([5, 6, 7, 8, 9, 10]):
        telegram_for_game = telegram
        application = await make_bot(seed)
        group = SimulatedGroup(telegram_for_game, application, chat_id=-(100 + seed), players=players)
        await group.open_lobby_and_join()
        await group.start()
        table = await group.play(Policy(rng=random.Random(seed)))
        assert table.game.is_over
        record = parse_record(json.loads(await group.store.last_record(group.chat_id)))
        assert record.outcome is not None and record.outcome.winner is table.game.winner


async def test_targeting_and_blind_spies_game(make_bot, telegram):
    group, table = await play(
        make_bot, telegram, 7, Policy(rng=random.Random(3)), variants=Variants(targeting=True, blind_spies=True)
    )
    assert table.game.is_over and table.variants == Variants(targeting=True, blind_spies=True)
    for seat in table.game.spies:
        role_text = next(t for t in group.transcript(table.players[seat].user_id) if "you are a spy" in t)
        assert "do not know the other spies" in role_text
        assert not any(table.name(s) in role_text for s in table.game.spies if s != seat)


def mission_buttons(message) -> dict[int, str]:
    """The mission buttons of a board: mission number -> callback data."""
    return {
        int(b["callback_data"].rsplit(":", 1)[1]): b["callback_data"]
        for b in message.buttons()
        if b.get("callback_data", "").startswith("m:")
    }


async def test_under_targeting_a_later_leader_of_a_round_picks_another_mission(make_bot, telegram):
    group = await started(make_bot, telegram, players=7, seed=5, variants=Variants(targeting=True))
    chat = group.chat_id
    table = await group.table()
    first_leader = table.game.leader
    leader_user = table.players[first_leader].user_id
    # The group is told who leads; the choice is made in the leader's private chat.
    assert group.transcript(chat)[-1].endswith(
        f"➡️ {table.name(first_leader)} leads: choosing a mission and a team in private."
    )
    assert not any(
        b.get("callback_data", "").startswith(("m:", "t:")) for m in telegram.messages(chat) for b in m.buttons()
    )

    # The first leader is offered every mission but the fifth, picks mission 3 and changes to mission 2.
    keyboard = group.latest_with_button(leader_user, f"m:{group.game_id}:")
    assert plain_text(keyboard.text) == "«Demo group»: you are the leader. Choose which mission the team attempts."
    assert sorted(mission_buttons(keyboard)) == [1, 2, 3, 4]
    assert await press(group, leader_user, keyboard, mission_buttons(keyboard)[3]) is None  # no refusal
    keyboard = telegram.message(leader_user, keyboard.message_id)
    assert plain_text(keyboard.text).startswith("«Demo group»: you are the leader. Choose 3 players for mission 3.")
    assert sorted(mission_buttons(keyboard)) == [1, 2, 4]  # the other missions stay on offer
    await press(group, leader_user, keyboard, mission_buttons(keyboard)[2])
    assert (await group.table()).draft_mission == 2
    await propose(group, [0, 1, 2])
    first_keyboard = keyboard
    assert plain_text(telegram.message(leader_user, keyboard.message_id).text) == (
        "«Demo group», mission 2: you proposed Ann, Bob, Cy."
    )
    first_board = group.latest_with_button(chat, f"v:{group.game_id}:")
    await vote_all(group, False)
    # The rejected proposal's message keeps the mission it named.
    assert (
        plain_text(telegram.message(chat, first_board.message_id).text)
        .splitlines()[1]
        .startswith("Mission 2 · proposal 1")
    )

    # The round goes on with the next leader, who is asked for a mission again and picks mission 1.
    table = await group.table()
    second_leader = table.game.leader
    second_user = table.players[second_leader].user_id
    assert second_leader == (first_leader + 1) % 7 and table.game.phase is Phase.PROPOSING
    assert table.draft_mission is None and table.game.rounds[0].rejections == 1
    assert plain_text(telegram.message(chat, first_board.message_id).text).endswith(
        f"➡️ {table.name(second_leader)} leads: choosing a mission and a team in private."
    )
    keyboard = group.latest_with_button(second_user, f"m:{group.game_id}:")
    assert plain_text(keyboard.text) == "«Demo group»: you are the leader. Choose which mission the team attempts."
    assert sorted(mission_buttons(keyboard)) == [1, 2, 3, 4]
    # The first leader's keyboard kept no buttons once the team was proposed.
    assert telegram.message(leader_user, first_keyboard.message_id).buttons() == []
    await press(group, second_user, keyboard, mission_buttons(keyboard)[1])
    assert "Choose 2 players for mission 1." in plain_text(telegram.message(second_user, keyboard.message_id).text)
    team = sorted(s for s in range(7) if s not in table.game.spies)[:2]
    await propose(group, team)
    await vote_all(group, True)
    for seat in team:
        user = table.players[seat].user_id
        await group.press(user, user, "c:", ":s")

    # Mission 1 was played with the second proposal's team; its round kept both proposals.
    table = await group.table()
    [played] = table.game.played_rounds
    assert played.mission == 1 and played.succeeded and played.team == tuple(team)
    assert [p.mission for p in played.proposals] == [2, 1]
    assert (
        plain_text(telegram.message(chat, first_board.message_id).text)
        .splitlines()[1]
        .startswith("Mission 2 · proposal 1")
    )
    assert "Mission 1 succeeded ✅" in "\n".join(group.transcript(chat))
    # The next leader may choose among the missions not yet played.
    third_user = table.players[table.game.leader].user_id
    keyboard = group.latest_with_button(third_user, f"m:{group.game_id}:")
    assert sorted(mission_buttons(keyboard)) == [2, 3, 4]
    # The exported record names each proposal's mission.
    record = export_record(table.game, table.id)
    assert [p["mission"] for p in record["missions"][0]["proposals"]] == [2, 1]


async def seven_players_targeting_mission_four(make_bot, telegram):
    """A 7-player Targeting game whose first leader has chosen mission 4, the one needing two Fails:
    the group, its table, the leader's user id and the message of the leader's keyboard."""
    group = await started(make_bot, telegram, players=7, seed=5, variants=Variants(targeting=True))
    table = await group.table()
    leader_user = table.players[table.game.leader].user_id
    keyboard = group.latest_with_button(leader_user, f"m:{group.game_id}:")
    await press(group, leader_user, keyboard, mission_buttons(keyboard)[4])
    return group, table, leader_user, keyboard


async def test_a_spy_playing_the_two_fail_mission_is_told_one_fail_will_not_fail_it(make_bot, telegram):
    group, table, _, _ = await seven_players_targeting_mission_four(make_bot, telegram)
    spy = min(table.game.spies)
    others = [s for s in range(7) if s != spy][:3]
    await propose(group, [spy, *others])
    await vote_all(group, True)
    prompt = plain_text(group.latest_with_button(table.players[spy].user_id, f"c:{group.game_id}:").text)
    assert prompt.startswith("«Demo group», mission 4: you are on the team. Play your card.")
    assert "This mission fails only with two Fail cards: a single Fail will not fail it." in prompt


@pytest.mark.parametrize("blind", [False, True])
async def test_a_spys_role_message_says_both_ways_the_spies_win(make_bot, telegram, blind):
    group = await started(make_bot, telegram, players=7, variants=Variants(blind_spies=blind))
    table = await group.table()
    for seat in table.game.spies:
        role_text = next(t for t in group.transcript(table.players[seat].user_id) if "you are a spy" in t)
        assert "To win, make three missions fail or get five teams in a row rejected" in role_text
        others = [table.name(s) for s in table.game.spies if s != seat]
        if blind:
            assert "do not know the other spies" in role_text
            assert not any(name in role_text for name in others)
        else:
            assert all(name in role_text for name in others)


@pytest.mark.parametrize("players", [5, 7])
async def test_a_spy_is_told_how_many_other_spies_there_are_by_their_names(make_bot, telegram, players):
    group = await started(make_bot, telegram, players=players)
    table = await group.table()
    for seat in table.game.spies:
        role_text = next(t for t in group.transcript(table.players[seat].user_id) if "you are a spy" in t)
        others = ", ".join(table.name(s) for s in table.game.spies if s != seat)
        label = "The other spy" if players == 5 else "The other spies"
        assert f"you are a spy. {label}: {others}.\n" in role_text


async def test_a_leader_choosing_the_team_of_the_two_fail_mission_is_told_it_needs_two_fails(make_bot, telegram):
    group, _, leader_user, keyboard = await seven_players_targeting_mission_four(make_bot, telegram)
    lines = plain_text(telegram.message(leader_user, keyboard.message_id).text).split("\n")
    assert lines[:2] == [
        "«Demo group»: you are the leader. Choose 4 players for mission 4.",
        "This mission fails only with two Fail cards: a single Fail will not fail it.",
    ]
    await press(group, leader_user, keyboard, mission_buttons(telegram.message(leader_user, keyboard.message_id))[3])
    text = plain_text(telegram.message(leader_user, keyboard.message_id).text)
    assert "Choose 3 players for mission 3." in text and "two Fail cards" not in text
