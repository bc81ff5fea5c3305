"""The /hints text itself: a bar per seat, most suspect first, and under each at most two short
reasons whose signed points are the measured ones, in every language, for both views."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.deduction_speed import full_ten_player_record
from deduction.analysis import deduce
from deduction.knowledge import Viewer
from deduction.reasons import Explanation, Reason, explain
from engine import Variants, apply, new_game
from engine.simulate import random_action
from tgbot.hints import counted_up_to, hints_text
from tgbot.i18n import LANGUAGES
from tgbot.offline.simulation import plain_text
from tgbot.render import hints as render
from tgbot.settings import GroupSettings
from tgbot.table import Player, Stage, Table

NAMES = ("Ana", "Bob", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jo")
SEAT_LINE = re.compile(r"^([▰▱]{10}) +(\d+)% (.+)$")
REASON_LINE = "   ↳ "
PHONE_WIDTH = 70  # characters a reason line may take: it must read on a phone without wrapping much


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("spy_view", [False, True])
def test_hints_show_sorted_bars_and_the_measured_points(lang: str, spy_view: bool) -> None:
    record = full_ten_player_record()
    asker = 1 if spy_view else 0  # seat 1 is a spy in this record; a spy sees what the table sees
    deduction = deduce(record, Viewer.outsider() if spy_view else Viewer.resistance(asker))
    explanation = explain(record, deduction, per_seat=render.REASONS_PER_SEAT)
    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES))
    scene = SimpleNamespace(
        lang=lang, seat=SimpleNamespace(seat=asker), group=SimpleNamespace(players=players, chat_title="T")
    )
    lines = plain_text(render.hints(scene, deduction.spy_probability, deduction.possible, explanation, spy_view)).split(
        "\n"
    )

    seat_rows = [(i, SEAT_LINE.match(line)) for i, line in enumerate(lines) if SEAT_LINE.match(line)]
    assert len(seat_rows) == (10 if spy_view else 9)
    percents = [int(match.group(2)) for _, match in seat_rows]
    assert percents == sorted(percents, reverse=True)
    shown_points = []
    for (first, match), following in zip(seat_rows, [i for i, _ in seat_rows[1:]] + [len(lines)], strict=True):
        name = match.group(3).split(" (")[0]
        seat = NAMES.index(name)
        under = [line[len(REASON_LINE) :] for line in lines[first + 1 : following] if line.startswith(REASON_LINE)]
        expected = explanation.seats[seat][: render.REASONS_PER_SEAT]
        assert len(under) == len(expected) <= 2
        for text, reason in zip(under, expected, strict=True):
            assert len(REASON_LINE + text) <= PHONE_WIDTH, text
            if "points" not in reason.args:  # an exact fact ("certainly a spy")
                continue
            points = reason.args["points"]
            assert text.startswith(f"+{points} · " if points > 0 else f"\u2212{-points} · "), (text, reason)
            shown_points.append(points)
    assert shown_points, "this record moves several seats by more than 3 points"


def test_a_number_shows_100_or_0_percent_only_for_a_seat_known_for_certain() -> None:
    """Almost sure is not sure: a seat at 99.7% that the record does not prove a spy read "100%"
    under a full bar, as if it were certain (a blind spy took it for a fellow spy's identity)."""
    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES[:5]))
    scene = SimpleNamespace(
        lang="en", seat=SimpleNamespace(seat=0), group=SimpleNamespace(players=players, chat_title="T")
    )
    probabilities = (0.5, 0.997, 1.0, 0.003, 0.0)
    reasons = ((), (), (Reason("certain_spy", {"seat": 2}),), (), (Reason("certain_resistance", {"seat": 4}),))
    explanation = Explanation(table=(), seats=reasons)
    lines = plain_text(render.hints(scene, probabilities, 3, explanation, spy_view=True)).split("\n")
    shown = {m.group(3): (m.group(1), int(m.group(2))) for m in map(SEAT_LINE.match, lines) if m}
    assert shown["Bob"] == ("▰" * 9 + "▱", 99)
    assert shown["Cleo"] == ("▰" * 10, 100)
    assert shown["Dan"] == ("▰" + "▱" * 9, 1)
    assert shown["Eve"] == ("▱" * 10, 0)


def test_a_spys_hints_do_not_claim_to_be_the_resistances_view() -> None:
    """A spy's numbers are the public record read with no role known: no Resistance member sees
    those (each knows their own role). The spy read "This is how the Resistance ... sees each
    player" and a count of seatings "still possible" they knew to be wrong."""
    record = full_ten_player_record()
    deduction = deduce(record, Viewer.outsider())
    explanation = explain(record, deduction, per_seat=render.REASONS_PER_SEAT)
    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES))
    scene = SimpleNamespace(
        lang="en", seat=SimpleNamespace(seat=1), group=SimpleNamespace(players=players, chat_title="T")
    )
    lines = plain_text(render.hints(scene, deduction.spy_probability, deduction.possible, explanation, True)).split(
        "\n"
    )
    assert lines[0] == (
        "🔎 «T»: you are a spy. Each player, you included, as the public record alone shows them, knowing no "
        "role (a Resistance member also knows their own role, so their numbers differ):"
    )
    assert "Resistance" not in lines[0].split("(")[0]
    count = f"{deduction.possible} ways" if deduction.possible != 1 else "1 way"
    assert any(line.startswith(f"From the public record alone, {count} to seat the spies") for line in lines)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_hints_say_how_far_the_record_behind_them_goes(lang: str) -> None:
    """Each /hints is a new private message: one read later, further up the chat, must say what it
    counted (the latest vote, and that mission's result once it was played)."""
    record = full_ten_player_record().without_outcome()
    after_two = record.cut_after_mission(2)
    third = record.missions[2]
    voting_on_third = replace(third, proposals=third.proposals[:2], fails=None)
    voting_third = replace(record, missions=(*record.missions[:2], voting_on_third))
    assert counted_up_to(after_two) == render.Counted(mission=2, proposal=5, result=True)
    assert counted_up_to(voting_third) == render.Counted(mission=3, proposal=2, result=False)
    assert counted_up_to(replace(record, missions=())) is None

    players = tuple(Player(seat, name) for seat, name in enumerate(NAMES))
    scene = SimpleNamespace(
        lang=lang, seat=SimpleNamespace(seat=0), group=SimpleNamespace(players=players, chat_title="T")
    )
    said = []
    for cut in (after_two, voting_third):
        deduction = deduce(cut, Viewer.resistance(0))
        explanation = explain(cut, deduction, per_seat=render.REASONS_PER_SEAT)
        probabilities = deduction.spy_probability
        text = render.hints(scene, probabilities, deduction.possible, explanation, False, counted_up_to(cut))
        lines = plain_text(text).split("\n")
        last_seat = max(i for i, line in enumerate(lines) if SEAT_LINE.match(line))
        said.append(next(line for line in lines[last_seat + 1 :] if line and not line.startswith(("↳", " "))))
    assert said[0] == plain_text(render.counted_line(render.Counted(2, 5, True), lang))
    assert said[1] == plain_text(render.counted_line(render.Counted(3, 2, False), lang))
    assert "2" in said[0] and "3" in said[1] and "2" in said[1]
    if lang == "en":
        assert said == ["Counted up to the result of mission 2.", "Counted up to the vote on proposal 2 of mission 3."]
    else:  # worded in the player's language, not left in English
        assert said[0] != "Counted up to the result of mission 2."


# ---------------------------------------------------------------- "nothing has told the players apart"

NOTHING_YET = "Nothing has told the players apart yet"
ONLY_A_LITTLE = "These numbers differ only a little"
FAIL_CARDS = re.compile(r"^• Mission \d had (a|\d+) Fail cards?")


def hints_at(players: int, seed: int, steps: int, seat: int, plot_cards: bool = False, **variants) -> str:
    """/hints of `seat`, in English, in the game the strategies' random play reaches after `steps`."""
    game = played_game(players, seed, steps, plot_cards=plot_cards, **variants)
    people = tuple(Player(100 + s, NAMES[s]) for s in range(players))
    table = Table("a1b2c3d4e5", -100, "T", 100, people, Stage.PLAYING, GroupSettings(language="en"), game)
    return plain_text(hints_text(table, seat))


def played_game(players: int, seed: int, steps: int, *, plot_cards: bool = False, targeting=False, blind_spies=False):
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=targeting, blind_spies=blind_spies, plot_cards=plot_cards))
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng))
    return state


def shown_numbers(text: str) -> list[tuple[str, int]]:
    return [(m.group(1), int(m.group(2))) for m in map(SEAT_LINE.match, text.split("\n")) if m]


def test_a_failed_mission_is_not_called_nothing_telling_the_players_apart() -> None:
    """A spy's hints after mission 1 failed with two players on its team showed 59% and 55% for them, 20-25% for
    the rest, and under them "Nothing has told the players apart yet": the line was chosen because no seat had
    a reason of its own, but a mission's Fail cards are a fact about the table (said under the list), and
    the votes' effects were each under the 3 points a reason needs."""
    text = hints_at(6, 11, 16, 3)
    numbers = [percent for _, percent in shown_numbers(text)]
    assert numbers == [59, 55, 25, 20, 20, 20]
    assert NOTHING_YET not in text and ONLY_A_LITTLE not in text
    assert "• Mission 1 had a Fail card: at least one of Ana, Eve is a spy." in text.split("\n")


def test_the_first_votes_small_effects_are_named_where_nothing_else_sets_the_numbers_apart() -> None:
    """After the first vote a Resistance member read 45%, 40%, 40%, 39%, 36% over "Nothing has told the
    players apart yet": each vote and team moved the numbers by 1-2 points, under the 3 a reason needs.
    Now those effects are named, down to a whole point."""
    text = hints_at(6, 43, 7, 1)
    assert [percent for _, percent in shown_numbers(text)] == [45, 40, 40, 39, 36]
    assert NOTHING_YET not in text and ONLY_A_LITTLE not in text
    points = re.findall(r"^   ↳ ([+\u2212]\d+) · ", text, re.MULTILINE)
    assert points and all(1 <= abs(int(p.replace("\u2212", "-"))) <= 2 for p in points)
    assert "↳ what moved each number most, in percentage points" in text


def test_numbers_that_differ_by_effects_under_a_point_say_so() -> None:
    """41%, 40%, 40%, 40%, 39% after the first vote, with no vote or team moving any number by half a point:
    the list says that the numbers differ only a little, not that nothing told the players apart."""
    text = hints_at(6, 7, 7, 0)
    assert [percent for _, percent in shown_numbers(text)] == [41, 40, 40, 40, 39]
    assert NOTHING_YET not in text
    assert (
        "These numbers differ only a little: no single vote, team or mission moved any of them by a whole "
        "percentage point."
    ) in text.split("\n")
    assert "↳" not in text


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(5, 10),
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 60),
    seat=st.integers(0, 9),
    plot_cards=st.booleans(),
    targeting=st.booleans(),
    blind_spies=st.booleans(),
)
def test_nothing_told_apart_is_said_only_under_numbers_that_are_all_the_same(
    players, seed, steps, seat, plot_cards, targeting, blind_spies
) -> None:
    """Any game, any seat, Plot cards (roles and cards a player was shown), Blind Spies, a spy's view: the line
    comes only under numbers that read the same, bar and percentage; numbers that differ come with what sets
    them apart: a seat's reasons, a mission's Fail cards, or the line saying the effects were under a point."""
    seat %= players
    text = hints_at(players, seed, steps, seat, plot_cards, targeting=targeting, blind_spies=blind_spies)
    lines = text.split("\n")
    numbers = shown_numbers(text)
    assert len(numbers) in (players, players - 1)
    alike = len(set(numbers)) == 1
    reasons = any(line.startswith(REASON_LINE) for line in lines)
    if NOTHING_YET in text:
        assert alike and not reasons
    if not alike:
        assert reasons or any(FAIL_CARDS.match(line) for line in lines) or ONLY_A_LITTLE in text
    elif not reasons:
        assert NOTHING_YET in text
    assert not (NOTHING_YET in text and ONLY_A_LITTLE in text)


# A mission's result in its plain reading, where it moved the seat the other way: "−26 · on the team of
# mission 5, which failed" (less likely a spy for it) read backwards to a person.
BACKWARDS = re.compile(
    rf"^{re.escape(REASON_LINE)}(?:−\d+ · on the team of mission \d, which failed$"
    r"|\+\d+ · not on the team of mission \d, which failed$"
    r"|\+\d+ · on the team of mission \d, which succeeded$"
    r"|−\d+ · not on the team of mission \d, which succeeded$)"
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(5, 10), seed=st.integers(0, 2**32), steps=st.integers(10, 80), seat=st.integers(0, 9))
def test_a_mission_result_never_reads_backwards(players, seed, steps, seat) -> None:
    """Each mission reason reads the way it moved the seat: a seat on a failed team made less likely a
    spy is told that its Fail card is likelier another's, not just that it failed."""
    text = hints_at(players, seed, steps, seat % players)
    assert not [line for line in text.split("\n") if BACKWARDS.match(line)], text


def test_a_failed_mission_that_lowered_a_team_member_says_why() -> None:
    players = tuple(Player(100 + s, name) for s, name in enumerate(("Ann", "Bob", "Cy", "Dan", "Eve")))
    args = {"seat": 1, "mission": 5, "on_team": True, "succeeded": False, "fails": 1, "points": -26}
    text = plain_text(render.seat_reason_text(players, Reason("mission_result", args), "en"))
    assert text == "−26 · on the team of mission 5, failed with one Fail card: likelier another's"
    raised = plain_text(render.seat_reason_text(players, Reason("mission_result", {**args, "points": 26}), "en"))
    assert raised == "+26 · on the team of mission 5, which failed"
    two = {**args, "fails": 2}
    text = plain_text(render.seat_reason_text(players, Reason("mission_result", two), "en"))
    assert text == "−26 · on the team of mission 5, failed: its 2 Fail cards likelier others'"


def test_a_seat_moved_far_without_a_single_large_effect_is_told_what_moved_it() -> None:
    """A seat off every failed team, pushed down by the Fail cards that point at the teams, and a seat
    moved by many small votes: each gets its line, where it used to get none (4.5% of the seats moved
    10 points or more in 150 random games; 2.9% now, nearly all of them named in a mission's Fail line)."""
    players = tuple(Player(100 + s, name) for s, name in enumerate(("Ann", "Bob", "Cy", "Dan", "Eve")))
    off = Reason("off_failed_teams", {"seat": 3, "missions": [1, 3], "points": -14})
    assert plain_text(render.seat_reason_text(players, off, "en")) == (
        "−14 · not on the teams of missions 1, 3, whose Fail cards point at those on them"
    )
    small = Reason("small_effects", {"seat": 2, "points": 11, "count": 7})
    assert plain_text(render.seat_reason_text(players, small, "en")) == (
        "+11 · from 7 votes, teams and missions, each moving this by under 3 points"
    )
