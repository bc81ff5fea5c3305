"""The Plot Thickens through the bot: whole games at 7 and 10 players, every card used across
them, private results to their one viewer only (protected from forwarding), forged and stale
presses refused, deadlines that pass or deal for whoever let the time run out."""

from __future__ import annotations

import json
import random
import re

import pytest

from engine import PLOT_PHASES, Phase, Variants, export_record, parse_record, public_view, replay
from engine.plot import Card
from tests.bot_helpers import command_text, deadline_played, forged, lobby_message, press, vote_all
from tgbot.offline.simulation import Policy, SimulatedGroup, plain_text
from tgbot.render.plot import card_name
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

ALL_USES = {
    "strong_leader",
    "no_confidence",
    "opinion_maker",
    "deal",
    "take",
    "overheard",
    "open_up",
    "establish_confidence",
    "spotlight",
    "watch",
}


def uses_in(record: dict) -> set[str]:
    """Every kind of Plot card use a record shows."""
    found = set()
    for mission in record["missions"]:
        for proposal in mission["proposals"]:
            if proposal.get("strong_leader"):
                found.add("strong_leader")
            if "no_confidence" in proposal:
                found.add("no_confidence")
            if proposal.get("open_votes"):
                found.add("opinion_maker")
        found |= {event["kind"] for event in mission.get("plot", ())}
    return found


async def play_plot_game(make_bot, telegram, players: int, seed: int) -> tuple[SimulatedGroup, dict]:
    application = await make_bot(seed)
    group = SimulatedGroup(telegram, application, chat_id=-100 - seed, players=players)
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    await group.start()
    table = await group.play(Policy(rng=random.Random(seed), plot_use_rate=0.9), max_steps=2000)
    assert table.stage is Stage.OVER
    record = export_record(table.game, table.id)
    # The record validates and replays to the same game.
    parsed = parse_record(json.loads(json.dumps(record)))
    assert export_record(replay(parsed, table.game.spies, table.game.variants), table.id) == record
    return group, record


@pytest.mark.parametrize("players", [7, 10])
async def test_a_whole_plot_game_is_played_through_the_bot(make_bot, telegram, players):
    group, record = await play_plot_game(make_bot, telegram, players, seed=players)
    assert record["variants"]["plot_cards"] is True
    assert any(m.get("plot") for m in record["missions"])
    transcript = "\n".join(group.transcript(group.chat_id))
    assert "🃏" in transcript and "🏁" in transcript
    # What a card showed one player never reaches the group.
    assert "you saw" not in transcript and "you watched" not in transcript
    # A closed Plot keyboard says what its player chose, with no live buttons left.
    dealt = [m for user in group.user_ids for m in telegram.messages(user) if "you gave" in (m.text or "")]
    assert dealt and not any(m.buttons() for m in dealt)


async def test_every_plot_card_is_used_across_games(make_bot, telegram):
    seen: set[str] = set()
    seed = 0
    while seen != ALL_USES and seed < 12:
        seed += 1
        _, record = await play_plot_game(make_bot, telegram, 7 + seed % 4, seed)
        seen |= uses_in(record)
    assert seen == ALL_USES, f"never used: {ALL_USES - seen}"


def private_result_texts(telegram, chat_id: int) -> list[str]:
    """What cards showed a player: "you saw Ann's role: …", "you watched Bob's card: …"."""
    shown = re.compile(r"you (saw \S.*'s role|watched \S.*'s card):")
    return [plain_text(m.text or "") for m in telegram.messages(chat_id) if m.from_bot and shown.search(m.text or "")]


async def test_private_results_reach_only_their_viewer_and_cannot_be_forwarded(make_bot, telegram):
    found = 0
    for seed in range(1, 6):
        group, _ = await play_plot_game(make_bot, telegram, 9, seed)
        table = await group.table()
        assert private_result_texts(telegram, group.chat_id) == []
        for seat, player in enumerate(table.players):
            mine = [s for s in table.game.plot.seen if s.viewer == seat]
            told = private_result_texts(telegram, player.user_id)
            # One message per thing this player saw, naming whose role or card it was, and nothing else.
            assert len(told) == len(mine)
            for seen, text in zip(mine, told, strict=True):
                assert f"{table.players[seen.seat].name}'s" in text
            found += len(mine)
        sends = [params for method, params in telegram.calls if method == "sendMessage"]
        secret = [params for params in sends if "you saw" in params["text"] or "you watched" in params["text"]]
        assert secret and all(params.get("protect_content") for params in secret)
    assert found >= 3


async def started_plot_game(make_bot, telegram, players=7, seed=3):
    application = await make_bot(seed)
    group = SimulatedGroup(telegram, application, players=players)
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    await group.start()
    return group


async def until(group: SimulatedGroup, policy: Policy, condition, steps: int = 400):
    for _ in range(steps):
        table = await group.table()
        if condition(table):
            return table
        assert await group.step(policy), "the game ended first"
    raise AssertionError("never reached")


async def test_forged_and_stale_plot_presses_change_nothing(make_bot, telegram):
    group = await started_plot_game(make_bot, telegram)
    table = await until(group, Policy(rng=random.Random(1)), lambda t: t.game.phase in PLOT_PHASES)
    asked = public_view(table.game).waiting_for[0]
    asker = table.players[asked].user_id
    other = next(p.user_id for s, p in enumerate(table.players) if s != asked)
    prompt = group.latest_with_button(asker, f"p:{table.id}:")
    data = next(b["callback_data"] for b in prompt.buttons() if b.get("callback_data"))
    version = table.game.version

    # Someone else sends the asked player's choice from their own private chat.
    own_message = telegram.messages(other)[-1].message_id
    assert (await forged(group, other, other, own_message, data))["text"] in (
        "It is not your turn to use a Plot card.",
        "Only the leader deals the Plot cards.",
        "Another player must resolve their card first.",
        "You do not hold that card.",
    )
    # The asked player's own button pressed in the group, a made-up choice, and a stale ballot.
    group_message = next(m for m in reversed(telegram.messages(group.chat_id)) if m.from_bot).message_id
    assert (await forged(group, asker, group.chat_id, group_message, data))["text"] == "This button is not valid here."
    prefix = data.rsplit(":", 1)[0]
    assert (await forged(group, asker, asker, prompt.message_id, prefix + ":zz9"))[
        "text"
    ] == "This button is not valid."
    game_id, ballot = data.split(":")[1:3]
    stale = f"p:{game_id}:{int(ballot) + 1}:pass"  # a decision that is not the one open now
    assert (await forged(group, asker, asker, prompt.message_id, stale))["text"] == "This choice is closed."
    assert (await group.table()).game.version == version


async def a_vote_with_opinion_makers(make_bot, telegram) -> tuple[SimulatedGroup, object, tuple[int, ...]]:
    """A 7-player Plot game played until a vote in which Opinion Makers vote first."""
    for seed in range(1, 30):
        group = await started_plot_game(make_bot, telegram, players=7, seed=seed)
        policy = Policy(rng=random.Random(seed), plot_use_rate=1.0)
        try:
            table = await until(
                group, policy, lambda t: t.game.phase is Phase.VOTING and t.game.current_round.proposals[-1].open_votes
            )
        except AssertionError:
            await group.send(telegram.command(group.user_ids[0], group.chat_id, "/cancel"))
            continue
        return group, table, table.game.current_round.proposals[-1].open_votes
    pytest.fail("no Opinion Maker voted in 29 games")


async def test_opinion_makers_vote_first_and_the_board_tells_the_rest_when_their_turn_comes(make_bot, telegram):
    """The board names the Opinion Makers and says the others vote once they have; a vote pressed too
    early is told when its turn comes. Their last vote edits the board (no new message) to show their
    open votes and say the others vote now, and then the others' votes count."""
    group, table, makers = await a_vote_with_opinion_makers(make_bot, telegram)
    others = [s for s in range(7) if s not in makers]
    board = group.latest_with_button(group.chat_id, f"v:{table.id}:")
    named = ", ".join(table.name(s) for s in makers)
    assert f"Opinion Makers vote first, in the open: {named}. Everyone else votes once they have." in plain_text(
        board.text
    )
    approve = next(b["callback_data"] for b in board.buttons() if b.get("callback_data", "").endswith(":a"))
    early = table.players[others[0]].user_id
    answer = await press(group, early, board, approve)
    assert answer == "Wait: the Opinion Makers vote first; you vote once they have."
    assert (await group.table()).game.pending_votes[others[0]] is None

    group_messages = len(telegram.messages(group.chat_id))
    for seat in makers:
        assert (await press(group, table.players[seat].user_id, board, approve)).startswith("You voted 👍 Approve")
    shown = plain_text(telegram.message(group.chat_id, board.message_id).text)
    votes = ", ".join(f"{table.name(s)} 👍" for s in makers)
    assert f"Opinion Makers voted first, in the open: {votes}" in shown
    assert "Now everyone else votes: approve this team or reject it?" in shown
    assert "Everyone else votes once they have" not in shown
    assert len(telegram.messages(group.chat_id)) == group_messages  # the same board, edited
    assert (await press(group, early, board, approve)).startswith("You voted 👍 Approve")
    assert (await group.table()).game.pending_votes[others[0]] is True


async def test_a_holder_who_lets_the_time_run_out_passes_and_a_missed_deal_is_dealt(make_bot, telegram):
    group = await started_plot_game(make_bot, telegram, players=8, seed=4)
    service = group.application.bot_data["service"]
    passed = dealt = 0
    for _ in range(60):
        table = await group.table()
        if table.game.is_over or (passed and dealt):
            break
        if table.game.phase in PLOT_PHASES:
            kind = table.game.phase
            asked = public_view(table.game).waiting_for[0]
            key_ballot = public_view(table.game).ballot
            await deadline_played(group, service)
            after = await group.table()
            assert public_view(after.game).ballot != key_ballot
            user = table.players[asked].user_id
            closed_as = (
                "Time ran out, so this was drawn at random for you"
                if kind is Phase.DEAL
                else "time ran out, so this was decided for you"
            )
            closed = [m for m in telegram.messages(user) if closed_as in (m.text or "")]
            assert closed and not closed[-1].buttons()
            if kind is Phase.DEAL and table.game.plot.receiving is None:
                assert len(after.game.plot.drawn) < len(table.game.plot.drawn) or after.game.phase is not Phase.DEAL
                dealt += 1
            elif kind is not Phase.DEAL:
                passed += 1
        else:
            assert await group.step(Policy(rng=random.Random(2), approve_rate=1.0))
    assert passed and dealt


async def test_plot_lobby_and_rules(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    lobby = plain_text(lobby_message(telegram, group.chat_id).text)
    assert "Variants: Plot cards." in lobby and "🃏 Plot cards:" in lobby
    rules = await command_text(group, group.user_ids[1], "/rules")
    assert all(name in rules for name in ("Strong Leader", "No Confidence", "Opinion Maker", "Establish Confidence"))


async def test_three_people_and_two_computer_players_play_a_plot_game(make_bot, telegram):
    application = await make_bot(6)
    group = SimulatedGroup(telegram, application, players=3)
    await group.open_lobby_and_join(variants=Variants(plot_cards=True))
    await group.add_computers(4)
    await group.start()
    table = await group.play(Policy(rng=random.Random(6), plot_use_rate=0.9), max_steps=2000)
    assert table.stage is Stage.OVER and len(table.players) == 7
    computers = {seat for seat, p in enumerate(table.players) if p.computer}
    record = export_record(table.game, table.id)
    # The computer players dealt, held or used Plot cards like everyone, and nothing was mailed to them.
    involved = {event.get("by", event.get("to")) for m in record["missions"] for event in m.get("plot", ())}
    assert computers & involved
    assert not [call for call in telegram.calls if call[1].get("chat_id") in {-1, -2, -3, -4}]


async def test_opinion_makers_who_let_the_time_run_out_leave_the_rest_a_full_vote(make_bot, telegram):
    """The vote's deadline fills the Opinion Makers' missing votes first; the others then get
    a deadline of their own, not one that has already passed."""
    group, table, makers = await a_vote_with_opinion_makers(make_bot, telegram)
    service = group.application.bot_data["service"]
    now = table.deadline + 1
    await service.fire_due(now)
    after = await group.table()
    assert after.game.phase is Phase.VOTING
    assert all(after.game.pending_votes[s] is not None for s in makers)
    assert all(after.game.pending_votes[s] is None for s in range(7) if s not in makers)
    assert after.deadline >= now + after.settings.vote_seconds - 1
    # The board tells the rest that their turn has come, with the votes the clock cast.
    shown = plain_text(group.latest_with_button(group.chat_id, f"v:{table.id}:").text)
    assert "⏰ Time is up. These votes were counted as" in shown
    assert "Now everyone else votes: approve this team or reject it?" in shown


@pytest.mark.parametrize(("players", "deal_line"), [(6, "and deals it, then"), (7, "and deals them, then")])
async def test_the_board_says_how_many_cards_the_leader_deals(make_bot, telegram, players, deal_line):
    """One card is drawn per mission at 5-6 players, two at 7-8: the board's grammar follows."""
    group = await started_plot_game(make_bot, telegram, players=players)
    boards = [plain_text(m.text or "") for m in telegram.messages(group.chat_id) if "The leader drew" in (m.text or "")]
    assert boards and all(deal_line in text for text in boards)


async def test_a_deal_or_immediate_card_drawn_at_random_tells_its_player_what_was_drawn(make_bot, telegram):
    """A leader who let the deal's time run out, or a receiver of Open Up, Overheard Conversation or
    Take Responsibility who did, read "this was decided for you (a held card is kept)": they held no
    card, and a spy whose role went to a player drawn at random was not told to whom."""
    group = await started_plot_game(make_bot, telegram, players=8, seed=4)
    service = group.application.bot_data["service"]
    told: dict[str, int] = {}
    for _ in range(200):
        table = await group.table()
        if table.game.is_over or len(told) == 2:
            break
        if table.game.phase is not Phase.DEAL:
            assert await group.step(Policy(rng=random.Random(2), approve_rate=1.0))
            continue
        asked = public_view(table.game).waiting_for[0]
        kind = "deal" if table.game.plot.receiving is None else "immediate"
        uses_before = sum(len(uses) for uses in table.game.plot.uses)
        await deadline_played(group, service)
        after = await group.table()
        drawn = [use for uses in after.game.plot.uses for use in uses][uses_before:]
        drawn = [u for u in drawn if u.by == asked and u.drawn]
        user = table.players[asked].user_id
        timed_out = [m for m in telegram.messages(user) if "time ran out" in (m.text or "").lower()]
        closed = plain_text(timed_out[-1].text) if timed_out else ""
        assert closed.startswith("⏰ Time ran out, so this was drawn at random for you:\n«Demo group»: you "), closed
        assert "a held card is kept" not in closed
        for use in drawn:
            assert table.name(use.target) in closed, (closed, use)
        told[kind] = told.get(kind, 0) + 1
    assert told.keys() == {"deal", "immediate"}


@pytest.mark.parametrize("how", ["pass", "deadline"])
async def test_the_cards_drawn_after_a_strong_leader_holder_let_the_lead_go_are_shown_to_the_group(
    make_bot, telegram, how
):
    """On a mission's first proposal the Strong Leader holders are asked before the deal. Once they
    let the lead go (a pass, or their time running out), the leader draws the cards face up: the
    board says which, as it does when nobody holds Strong Leader."""
    group = await started_plot_game(make_bot, telegram, players=7, seed=1)
    policy = Policy(rng=random.Random(1), plot_use_rate=0.0)
    table = await until(group, policy, lambda t: t.game.phase is Phase.LEAD and t.game.current_round is None)
    if how == "pass":
        assert await group.step(policy)
    else:
        await group.application.bot_data["service"].fire_due(table.deadline + 1)
    after = await group.table()
    assert after.game.phase is Phase.DEAL and after.game.leader == table.game.leader
    drawn = ", ".join(card_name(card, "en") for card in after.game.plot.drawn)
    board = plain_text(group.latest_with_button(group.chat_id, f"w:{table.id}").text)
    assert f"The leader drew {drawn} and deals" in board, board


async def test_who_is_in_the_spotlight_is_known_before_the_team_plays(make_bot, telegram):
    """In the Spotlight is used before anyone picks a mission card, and its use is public: the board
    says at once who was put in the spotlight (and no longer shows the card held), and every other
    member plays knowing whose card will be face up."""
    group = await started_plot_game(make_bot, telegram, players=8, seed=1)
    policy = Policy(rng=random.Random(1), plot_use_rate=1.0, approve_rate=0.9)
    table = await until(group, policy, lambda t: t.game.phase is Phase.MISSION and t.game.plot.spotlight is not None)
    by, target = table.game.plot.spotlight
    by_name, target_name = table.name(by), table.name(target)
    board = plain_text(group.latest_with_button(group.chat_id, f"w:{table.id}").text)
    assert f"🔦 {by_name} put {target_name} in the spotlight: {target_name} plays their card face up." in board
    assert "is asked whether to use it" not in board and "In the Spotlight" not in board
    for seat in table.game.current_round.team:
        prompt = plain_text(group.latest_with_button(table.players[seat].user_id, f"c:{table.id}").text)
        if seat == target:
            assert "You are in the spotlight" in prompt
        else:
            assert f"🔦 {target_name} is in the spotlight: everyone will see the card they play." in prompt


def _took_nothing(table) -> str | None:
    """The receiver of a Take Responsibility dealt in the round being played that found no card to take."""
    uses = table.game.plot.uses[len(table.game.rounds) - 1] if table.game.rounds else ()
    for i, use in enumerate(uses):
        if use.kind.value == "deal" and use.card.value == "take_responsibility":
            after = uses[i + 1] if i + 1 < len(uses) else None
            if after is None or after.kind.value != "take" or after.by != use.target:
                return table.name(use.target)
    return None


async def test_a_take_responsibility_with_nothing_to_take_says_so(make_bot, telegram):
    """Take Responsibility received when nobody else holds a card does nothing: the board says so,
    where it only read that the card was given, as if its receiver had still to take one."""
    for seed in range(1, 12):
        group = await started_plot_game(make_bot, telegram, players=10, seed=seed)
        policy = Policy(rng=random.Random(seed), plot_use_rate=0.9)
        try:
            table = await until(group, policy, lambda t: t.game.phase is Phase.VOTING and _took_nothing(t))
        except AssertionError:
            await group.send(telegram.command(group.user_ids[0], group.chat_id, "/cancel"))
            continue
        name = _took_nothing(table)
        board = plain_text(group.latest_with_button(group.chat_id, f"v:{table.id}").text)
        assert f"gave Take Responsibility to {name}. Nobody else held a Plot card: it was discarded." in board, board
        return
    pytest.fail("no Take Responsibility found nothing to take")


async def test_an_opinion_maker_pressing_after_the_deadline_voted_for_them_is_told_so(make_bot, telegram):
    """The Opinion Makers' deadline casts their votes and the rest vote on the same board: an Opinion
    Maker who presses then is told the clock counted their vote, not that they had already voted."""
    group, table, makers = await a_vote_with_opinion_makers(make_bot, telegram)
    await group.application.bot_data["service"].fire_due(table.deadline + 1)
    after = await group.table()
    maker = makers[0]
    counted = after.game.pending_votes[maker]
    board = group.latest_with_button(group.chat_id, f"v:{table.id}:")
    other_way = ":r" if counted else ":a"
    data = next(b["callback_data"] for b in board.buttons() if b.get("callback_data", "").endswith(other_way))
    answer = await press(group, table.players[maker].user_id, board, data)
    shown_as = "👍 Approve" if counted else "👎 Reject"
    assert answer == f"Time ran out, so your vote was counted as {shown_as}.", answer
    assert (await group.table()).game.pending_votes[maker] is counted


async def test_no_confidence_on_the_fifth_team_warns_that_it_makes_the_spies_win(make_bot, telegram):
    """Throwing out the fifth team of a mission is its fifth rejection, which ends the game: the holder
    is told so before they choose."""
    warning = "This is the fifth team: throwing it out ends the game, and the spies win."
    for seed in range(1, 8):
        group = await started_plot_game(make_bot, telegram, players=7, seed=seed)
        # Every team rejected but the fifth; nobody fails a mission, nobody uses a card.
        policy = Policy(rng=random.Random(seed), approve_rate=0.0, spy_fail_rate=0.0, plot_use_rate=0.0)
        for _ in range(200):
            table = await group.table()
            if table.game.is_over:
                break
            if table.game.phase is Phase.OVERTURN:
                asked = public_view(table.game).waiting_for[0]
                prompt = plain_text(group.latest_with_button(table.players[asked].user_id, f"p:{table.id}:").text)
                assert warning in prompt, prompt
                return
            if table.game.phase is Phase.VOTING and table.game.proposal_number == 5:
                while (await group.table()).game.phase is Phase.VOTING:
                    await vote_all(group, True)  # Opinion Makers first, then the rest
                continue
            assert await group.step(policy)
    pytest.fail("no No Confidence was asked about on a fifth team")


async def _missions_played_with_a_watcher_ahead(make_bot, telegram):
    """Games of 8 (seeds 1 to 9), each at its first mission whose team is about to play while someone
    holds Keeping a Close Eye on You; a game that reaches none is skipped."""
    for seed in range(1, 10):
        group = await started_plot_game(make_bot, telegram, players=8, seed=seed)
        policy = Policy(rng=random.Random(seed), plot_use_rate=0.5)

        def watch_ahead(t) -> bool:
            watcher = any(t.game.plot.holds(s, Card.KEEPING_A_CLOSE_EYE_ON_YOU) for s in range(8))
            return t.game.phase is Phase.MISSION and watcher and not t.game.played_seats

        try:
            table = await until(group, policy, watch_ahead)
        except AssertionError:
            continue
        yield group, table


async def test_a_watcher_is_told_which_cards_the_deadline_played(make_bot, telegram):
    """A card the deadline played counts as Success, which the result will show everyone: the holder
    of Keeping a Close Eye on You asked next is told whose cards those were, so as not to spend the
    card on one of them unknowingly."""
    async for group, table in _missions_played_with_a_watcher_ahead(make_bot, telegram):
        await group.application.bot_data["service"].fire_due(table.deadline + 1)
        after = await group.table()
        if after.game.phase is not Phase.WATCH:
            continue
        watcher = public_view(after.game).waiting_for[0]
        prompt = plain_text(group.latest_with_button(after.players[watcher].user_id, f"p:{table.id}:").text)
        missed = ", ".join(after.name(s) for s in after.game.current_round.team)
        assert f"⏰ Time ran out for these cards, which count as ✅ Success: {missed}" in prompt, prompt
        return
    pytest.fail("no watch came after a deadline played the cards")


def _upcoming_uses(table):
    """The public Plot uses of a mission's first proposal while it is being prepared (dealt, chosen)."""
    plot = table.game.plot
    return plot.uses[len(table.game.rounds)] if len(plot.uses) > len(table.game.rounds) else ()


def _latest_board(group) -> str:
    return plain_text(next(m.text for m in reversed(group.telegram.messages(group.chat_id)) if m.text[0] != "/"))


async def test_each_plot_card_is_public_on_the_board_as_soon_as_it_is_dealt(make_bot, telegram):
    """Every Plot card is public from the moment it is dealt, and what an immediate card did (who
    looked at whose role) is public as it happens: the board says so at once, while the leader
    deals the rest and then chooses the team, not only once the team is proposed."""
    group = await started_plot_game(make_bot, telegram, players=7, seed=2)
    policy = Policy(rng=random.Random(2), plot_use_rate=0.5)
    table = await until(group, policy, lambda t: t.game.phase is Phase.DEAL and _upcoming_uses(t))
    dealt = _upcoming_uses(table)[0]
    leader, receiver, card = table.name(dealt.by), table.name(dealt.target), card_name(dealt.card, "en")
    board = _latest_board(group)
    assert f"{leader} gave {card} to {receiver}." in board, board
    if dealt.card.value not in ("overheard_conversation", "open_up", "take_responsibility"):
        assert f"{receiver}: {card}" in board  # held cards: who holds what
    table = await until(
        group,
        policy,
        lambda t: t.game.phase is Phase.PROPOSING and any(u.kind.value == "overheard" for u in _upcoming_uses(t)),
    )
    overheard = next(u for u in _upcoming_uses(table) if u.kind.value == "overheard")
    board = _latest_board(group)
    assert f"{table.name(overheard.by)} looked at {table.name(overheard.target)}'s role." in board, board


async def test_a_team_member_is_told_their_card_may_be_watched(make_bot, telegram):
    """Keeping a Close Eye on You is used once every card is played: a spy choosing a card is told
    who holds it, as at a table where the card lies face up in front of its holder."""
    async for group, table in _missions_played_with_a_watcher_ahead(make_bot, telegram):
        holders = [s for s in range(8) if table.game.plot.holds(s, Card.KEEPING_A_CLOSE_EYE_ON_YOU)]
        spotlighted = table.game.plot.spotlight[1] if table.game.plot.spotlight is not None else None
        for seat in table.game.current_round.team:
            prompt = plain_text(group.latest_with_button(table.players[seat].user_id, f"c:{table.id}").text)
            others = ", ".join(table.name(s) for s in holders if s != seat)
            line = f"👁 {others}: Keeping a Close Eye on You. Once every card is played, your card may be looked at."
            if others and seat != spotlighted:
                assert line in prompt, prompt
            else:
                assert "Keeping a Close Eye on You" not in prompt, prompt
        return
    pytest.fail("no team played while a Keeping a Close Eye on You was held")
