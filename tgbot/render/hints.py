"""A player's private hints, worded: probabilities as bars, and the reasons in the player's language."""

from __future__ import annotations

from dataclasses import dataclass

from deduction.reasons import EXACT_SEAT_CODES, MIN_POINTS
from tgbot.buttons import HintsPress, encode
from tgbot.i18n import Nn_, t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.render.common import SeatScene, cut, isolated, names, shown, title
from tgbot.table import Table

BAR_CELLS = 10
REASONS_PER_SEAT = 2  # more does not fit a phone screen for ten players
MINUS = "\u2212"  # a real minus sign: a hyphen reads as a dash


def probability_bar(p: float, exact: bool = True) -> str:
    filled = round(p * BAR_CELLS)
    if not exact:  # a full or an empty bar would read as certain
        filled = min(max(filled, 1), BAR_CELLS - 1)
    return "▰" * filled + "▱" * (BAR_CELLS - filled)


def percentage(p: float, exact: bool) -> int:
    """`p` in whole percent; 100% and 0% only for a seat known for certain: 99.6% is not a sure spy."""
    percent = round(p * 100)
    return percent if exact else min(max(percent, 1), 99)


def shown_number(p: float, exact: bool) -> tuple[str, int]:
    """A seat's number as its line shows it: the bar and the whole percentage."""
    return probability_bar(p, exact), percentage(p, exact)


def is_exact(explanation, seat: int) -> bool:
    """Whether the seat is known for certain (its number may read 100% or 0%)."""
    return any(r.code in EXACT_SEAT_CODES for r in explanation.seats[seat])


def listed_seats(seat: int, players: int, spy_view: bool) -> list[int]:
    """The seats the hints show: a spy sees every seat (their own too, as the public record shows it);
    a Resistance member every other seat."""
    return [s for s in range(players) if spy_view or s != seat]


def shown_alike(probabilities, explanation, listed) -> bool:
    """Whether every seat listed shows the same number, bar and percentage, as rounded on its line."""
    return len({shown_number(probabilities[s], is_exact(explanation, s)) for s in listed}) <= 1


def unexplained(probabilities, explanation, listed) -> bool:
    """The numbers shown differ, and nothing said explains them: no seat has a reason, and no mission's
    Fail cards (said under the list) set seats apart."""
    return (
        not any(explanation.seats[s] for s in listed)
        and not any(r.code == "mission_fails" for r in explanation.table)
        and not shown_alike(probabilities, explanation, listed)
    )


def signed_points(points: int) -> str:
    """Bold and set apart, so it does not run into a count that follows."""
    return f"<b>+{points}</b> ·" if points > 0 else f"<b>{MINUS}{-points}</b> ·"


@dataclass(frozen=True)
class Counted:
    """The last thing the numbers count. Each /hints is a new message, and one read later in the
    chat's history must say how old it is."""

    mission: int
    proposal: int  # the latest voted proposal, by its number in the mission's round
    result: bool  # the mission was played since: its result is counted too


def counted_line(counted: Counted, lang: str) -> str:
    if counted.result:
        return t(lang, "Counted up to the result of mission %(mission)d.", mission=counted.mission)
    return t(
        lang,
        "Counted up to the vote on proposal %(number)d of mission %(mission)d.",
        number=counted.proposal,
        mission=counted.mission,
    )


def hints(
    scene: SeatScene, probabilities, possible: int, explanation, spy_view: bool, counted: Counted | None = None
) -> str:
    """One line per seat, most suspect first: a bar, the percentage and the name, and under it
    what moved that seat's number most (signed points), then the exact facts about the table.
    `counted`: how far the record behind the numbers goes (said under the list).

    Where no seat has a reason, the list says why: every number shown is the same (nothing told the
    players apart), a mission's Fail cards set them apart (said under the list), or they differ by
    effects too small to name: `explanation` names effects down to a whole point where nothing else
    explains numbers that differ (`unexplained`: `tgbot.hints.hints_text` asks for them)."""
    lang, seat, players = scene.lang, scene.seat.seat, scene.group.players
    group = title(scene.group.chat_title)
    if spy_view:
        lines = [
            t(
                lang,
                "🔎 «%(group)s»: you are a spy. Each player, you included, as the public record alone "
                "shows them, knowing no role (a Resistance member also knows their own role, so their "
                "numbers differ):",
                group=group,
            )
        ]
    else:
        lines = [t(lang, "🔎 «%(group)s»: how likely each other player is to be a spy.", group=group)]
    listed = listed_seats(seat, len(players), spy_view)
    for other in sorted(listed, key=lambda s: -probabilities[s]):
        name = shown(players[other].name)
        if other == seat:
            name = t(lang, "%(name)s (you)", name=name)
        bar, percent = shown_number(probabilities[other], is_exact(explanation, other))
        lines.append(f"<code>{bar} {percent:3d}%</code> {name}")
        for reason in explanation.seats[other][:REASONS_PER_SEAT]:
            lines.append("   ↳ " + seat_reason_text(players, reason, lang))
    if any("points" in r.args for s in listed for r in explanation.seats[s][:REASONS_PER_SEAT]):
        lines.append(t(lang, "↳ what moved each number most, in percentage points"))
    elif not any(explanation.seats[s] for s in listed):
        if shown_alike(probabilities, explanation, listed):
            # Before the first vote every number is the same, and a newcomer would not know why.
            lines.append(
                t(lang, "Nothing has told the players apart yet: these numbers change with each vote and mission.")
            )
        elif unexplained(probabilities, explanation, listed):
            # No effect was named though `tgbot.hints` then names every one of a whole point: the votes
            # and teams so far each moved the numbers by less. (Otherwise a mission's Fail cards, said
            # under the list, set the seats apart.)
            lines.append(
                t(
                    lang,
                    "These numbers differ only a little: no single vote, team or mission moved any of them "
                    "by a whole percentage point.",
                )
            )
    if counted is not None:
        lines.append(counted_line(counted, lang))
    lines.append("")
    if spy_view:
        remaining = tn(
            lang,
            "From the public record alone, %(n)d way to seat the spies is still possible.",
            "From the public record alone, %(n)d ways to seat the spies are still possible.",
            possible,
        )
    else:
        remaining = tn(
            lang,
            "%(n)d way to seat the spies is still possible.",
            "%(n)d ways to seat the spies are still possible.",
            possible,
        )
    lines.append(remaining)
    # The count is said just above; the missions with Fail cards are what is left to say.
    lines.extend(
        "• " + reason_text(players, reason, lang) for reason in explanation.table if reason.code == "mission_fails"
    )
    return "\n".join(lines)


def seat_reason_text(players, reason, lang: str) -> str:
    """A reason shown under its seat's line: the seat is not named again."""
    a = reason.args
    code = reason.code
    if code == "certain_spy":
        return t(lang, "certainly a spy")
    if code == "certain_resistance":
        return t(lang, "certainly in the Resistance")
    points = signed_points(a["points"])
    if code == "mission_result":
        mission = a["mission"]
        backwards = _mission_text_against_its_points(a, lang)
        if backwards is not None:
            return f"{points} {backwards}"
        if a["on_team"]:
            if a["succeeded"]:
                text = t(lang, "on the team of mission %(mission)d, which succeeded", mission=mission)
            else:
                text = t(lang, "on the team of mission %(mission)d, which failed", mission=mission)
        elif a["succeeded"]:
            text = t(lang, "not on the team of mission %(mission)d, which succeeded", mission=mission)
        else:
            text = t(lang, "not on the team of mission %(mission)d, which failed", mission=mission)
        return f"{points} {text}"
    if code == "off_failed_teams":
        missions = ", ".join(str(m) for m in a["missions"])
        text = tn(
            lang,
            "not on the team of mission %(missions)s, whose Fail card points at those on it",
            "not on the teams of missions %(missions)s, whose Fail cards point at those on them",
            len(a["missions"]),
            missions=missions,
        )
        return f"{points} {text}"
    if code == "small_effects":
        text = tn(
            lang,
            "from %(n)d vote, team or mission, each moving this by under %(least)d points",
            "from %(n)d votes, teams and missions, each moving this by under %(least)d points",
            a["count"],
            least=MIN_POINTS,
        )
        return f"{points} {text}"
    if code == "votes":
        return f"{points} {_votes_text(players, a, lang)}"
    if code == "proposals":
        return f"{points} {_proposals_text(players, a, lang)}"
    return reason_text(players, reason, lang)


def _mission_text_against_its_points(a: dict, lang: str) -> str | None:
    """A mission's result said so that it reads the way it moved the seat, where its plain reading
    points the other way: a seat on a failed team made less likely a spy (its Fail cards are likelier
    the others' on it, most often because there was only one), a seat off it made more likely (one Fail
    card: likely one spy on the team, the rest among those off it), or a success that moved a seat
    against its plain reading (through what it says of the others). None where the plain reading holds."""
    mission, points, fails = a["mission"], a["points"], a.get("fails", 0)
    if a["succeeded"]:
        if (points > 0) == a["on_team"] and points != 0:
            return t(lang, "mission %(mission)d's success, by what it says of others", mission=mission)
        return None
    if a["on_team"] and points < 0:
        if fails == 1:
            return t(
                lang,
                "on the team of mission %(mission)d, failed with one Fail card: likelier another's",
                mission=mission,
            )
        return t(
            lang,
            "on the team of mission %(mission)d, failed: its %(fails)d Fail cards likelier others'",
            mission=mission,
            fails=fails,
        )
    if not a["on_team"] and points > 0:
        if fails == 1:
            return t(
                lang,
                "not on the team of mission %(mission)d, failed with one Fail card: likely one spy on it",
                mission=mission,
            )
        return t(lang, "mission %(mission)d's failure, by what it says of others", mission=mission)
    return None


# The fact a reason cites about a seat's votes or teams (`deduction.reasons`), worded for that
# seat itself and for another seat they moved ("Dan: …"), each with its counted forms.
_OWN_VOTES = {
    "approved_failed": Nn_("%(n)d vote for a team that failed", "%(n)d votes for teams that failed"),
    "rejected_succeeded": Nn_("%(n)d vote against a team that succeeded", "%(n)d votes against teams that succeeded"),
    "rejected_failed": Nn_("%(n)d vote against a team that failed", "%(n)d votes against teams that failed"),
    "approved_succeeded": Nn_("%(n)d vote for a team that succeeded", "%(n)d votes for teams that succeeded"),
    "cast": Nn_("their %(n)d vote", "their %(n)d votes"),
}
_OTHERS_VOTES = {
    "approved_failed": Nn_(
        "%(voter)s: %(n)d vote for a team that failed", "%(voter)s: %(n)d votes for teams that failed"
    ),
    "rejected_succeeded": Nn_(
        "%(voter)s: %(n)d vote against a team that succeeded",
        "%(voter)s: %(n)d votes against teams that succeeded",
    ),
    "rejected_failed": Nn_(
        "%(voter)s: %(n)d vote against a team that failed", "%(voter)s: %(n)d votes against teams that failed"
    ),
    "approved_succeeded": Nn_(
        "%(voter)s: %(n)d vote for a team that succeeded", "%(voter)s: %(n)d votes for teams that succeeded"
    ),
    "cast": Nn_("%(voter)s's %(n)d vote", "%(voter)s's %(n)d votes"),
}
_OWN_TEAMS = {
    "led_failed": Nn_("as leader: %(n)d team that failed", "as leader: %(n)d teams that failed"),
    "led_succeeded": Nn_("as leader: %(n)d team that succeeded", "as leader: %(n)d teams that succeeded"),
    "proposed": Nn_("as leader: %(n)d team proposed", "as leader: %(n)d teams proposed"),
}
_OTHERS_TEAMS = {
    "led_failed": Nn_("%(leader)s as leader: %(n)d team that failed", "%(leader)s as leader: %(n)d teams that failed"),
    "led_succeeded": Nn_(
        "%(leader)s as leader: %(n)d team that succeeded", "%(leader)s as leader: %(n)d teams that succeeded"
    ),
    "proposed": Nn_("%(leader)s as leader: %(n)d team proposed", "%(leader)s as leader: %(n)d teams proposed"),
}


def _votes_text(players, a: dict, lang: str) -> str:
    if a["fact"] == "vote_on":
        return _one_vote_text(players, a, lang)
    if a["voter"] == a["seat"]:
        return tn(lang, *_OWN_VOTES.get(a["fact"], _OWN_VOTES["cast"]), a["count"])
    voter = shown(players[a["voter"]].name)
    return tn(lang, *_OTHERS_VOTES.get(a["fact"], _OTHERS_VOTES["cast"]), a["count"], voter=voter)


def _one_vote_text(players, a: dict, lang: str) -> str:
    """A seat's votes told by the one that moved the seat most: a vote on a team that never went,
    named as the board names its proposal."""
    numbers = {"number": a["proposal"], "mission": a["mission"]}
    if a["voter"] == a["seat"]:
        if a["approved"]:
            return t(lang, "their votes, above all for proposal %(number)d, mission %(mission)d", **numbers)
        return t(lang, "their votes, above all against proposal %(number)d, mission %(mission)d", **numbers)
    voter = shown(players[a["voter"]].name)
    if a["approved"]:
        return t(
            lang,
            "%(voter)s: votes, above all for proposal %(number)d, mission %(mission)d",
            voter=voter,
            **numbers,
        )
    return t(
        lang,
        "%(voter)s: votes, above all against proposal %(number)d, mission %(mission)d",
        voter=voter,
        **numbers,
    )


def _proposals_text(players, a: dict, lang: str) -> str:
    if a["leader"] == a["seat"]:
        return tn(lang, *_OWN_TEAMS.get(a["fact"], _OWN_TEAMS["proposed"]), a["count"])
    leader = shown(players[a["leader"]].name)
    return tn(lang, *_OTHERS_TEAMS.get(a["fact"], _OTHERS_TEAMS["proposed"]), a["count"], leader=leader)


def reason_text(players, reason, lang: str) -> str:
    """An exact reason about the table, a sentence of its own."""
    a = reason.args
    name = shown(players[a["seat"]].name) if "seat" in a else ""
    code = reason.code
    if code == "certain_spy":
        return t(lang, "%(name)s is certainly a spy.", name=name)
    if code == "certain_resistance":
        return t(lang, "%(name)s is certainly in the Resistance.", name=name)
    if code == "assignments_remaining":
        return tn(
            lang, "Only %(n)d way to seat the spies remains.", "Only %(n)d ways to seat the spies remain.", a["count"]
        )
    if code == "mission_fails":
        if a["at_least"] == 1:
            return t(
                lang,
                "Mission %(mission)d had a Fail card: at least one of %(names)s is a spy.",
                mission=a["mission"],
                names=names(players, a["seats"]),
            )
        return tn(
            lang,
            "Mission %(mission)d had %(n)d Fail card: at least %(n)d of %(names)s is a spy.",
            "Mission %(mission)d had %(n)d Fail cards: at least %(n)d of %(names)s are spies.",
            a["at_least"],
            mission=a["mission"],
            names=names(players, a["seats"]),
        )
    raise ValueError(f"no wording for reason {code!r}")


def hints_off(table: Table, lang: str) -> str:
    return t(lang, "Hints are switched off in «%(group)s».", group=title(table.chat_title))


# A button of its own row: about as many characters as a phone shows across it.
CHOICE_LABEL = 40


def choose_game(tables: list[Table], user_id: int, lang: str) -> tuple[str, Keyboard]:
    """A button per game, named by its group; games of groups with the same title name the other
    players too, so that the buttons can be told apart."""
    titles = [table.chat_title for table in tables]

    def label(table: Table) -> str:
        if titles.count(table.chat_title) == 1:
            return isolated(table.chat_title)
        others = ", ".join(isolated(p.name) for p in table.players if p.user_id != user_id)
        return cut(f"{isolated(table.chat_title)} · {others}", CHOICE_LABEL)

    buttons = tuple((Button(label(table), data=encode(HintsPress(table.id))),) for table in tables)
    return t(lang, "You play in several groups. Hints for which game?"), buttons
