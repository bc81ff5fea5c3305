"""Texts and keyboards: what the group and each player see, rendered from a table.

Group texts are rendered only from `engine.public_view`; a player's private texts from
`engine.seat_view` of that player's own seat. Nothing here decides a rule.
"""

from __future__ import annotations

from html import escape

from telegram.helpers import create_deep_linked_url

from engine import Phase, Side, public_view, seat_view
from engine import rules as game_rules
from engine.record import GameRecord
from engine.state import EndReason, MissionRound
from tgbot import callbacks
from tgbot.callbacks import CardPress, MissionPress, TeamPress, VotePress
from tgbot.i18n import supported, t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.table import Player, Table

TRACK_SUCCESS, TRACK_FAIL, TRACK_OPEN = "✅", "❌", "⬜"


def player_language(table: Table, player: Player) -> str:
    return supported(player.language) or table.language


def mention(player: Player) -> str:
    return f'<a href="tg://user?id={player.user_id}">{escape(player.name)}</a>'


def names(table: Table, seats) -> str:
    return ", ".join(escape(table.name(s)) for s in seats)


def join_link(bot_username: str, game_id: str) -> str:
    return create_deep_linked_url(bot_username, f"join_{game_id}")


def open_chat_link(bot_username: str) -> str:
    return create_deep_linked_url(bot_username, "hello")


def track(table: Table) -> str:
    assert table.game is not None
    marks = {True: TRACK_SUCCESS, False: TRACK_FAIL, None: TRACK_OPEN}
    return "".join(marks[result] for result in table.game.mission_track())


def group_title(table: Table) -> str:
    return escape(table.chat_title)


# ---------------------------------------------------------------- lobby


def variants_line(table: Table, lang: str) -> str:
    chosen = []
    if table.variants.targeting:
        chosen.append(t(lang, "Targeting"))
    if table.variants.blind_spies:
        chosen.append(t(lang, "Blind Spies"))
    if not chosen:
        return t(lang, "Rules: standard, no variants.")
    return t(lang, "Variants: %(variants)s.", variants=", ".join(chosen))


def lobby(table: Table, bot_username: str) -> tuple[str, Keyboard]:
    lang = table.language
    creator = next((p for p in table.players if p.user_id == table.creator_id), None)
    lines = [
        t(lang, "🕵️ <b>The Resistance</b>: a new game is open."),
        variants_line(table, lang),
        tn(
            lang,
            "%(n)d player of %(max)d: %(names)s",
            "%(n)d players of %(max)d: %(names)s",
            len(table.players),
            max=game_rules.MAX_PLAYERS,
            names=names(table, range(len(table.players))) or "—",
        ),
    ]
    missing = game_rules.MIN_PLAYERS - len(table.players)
    if missing > 0:
        lines.append(tn(lang, "%(n)d more player needed.", "%(n)d more players needed.", missing))
    else:
        who = escape(creator.name) if creator else t(lang, "the host")
        lines.append(t(lang, "%(name)s or a group admin can start with /startgame.", name=who))
    lines.append(t(lang, "Press Join: it opens a private chat with me, where your role and cards will come."))
    buttons = ((Button(t(lang, "Join"), url=join_link(bot_username, table.id)),),)
    return "\n".join(lines), buttons


def lobby_started(table: Table) -> str:
    lang = table.language
    return t(
        lang,
        "🕵️ <b>The Resistance</b>: the game has started with %(names)s. Roles were sent in private.",
        names=names(table, range(len(table.players))),
    )


def lobby_closed(table: Table) -> str:
    return t(table.language, "🕵️ This lobby was cancelled.")


# ---------------------------------------------------------------- the round message


def proposal_key(table: Table) -> str:
    """Names the group message of the proposal being made, voted or played now."""
    assert table.game is not None
    game = table.game
    index = len(game.rounds) - 1 if game.current_round is not None else len(game.rounds)
    return f"proposal:{index}:{game.proposal_number}"


def key_of(round_index: int, proposal_number: int) -> str:
    return f"proposal:{round_index}:{proposal_number}"


def header(table: Table, lang: str) -> str:
    view = public_view(table.game)
    leader = table.players[view.leader]
    mission = view.current_mission
    lines = [t(lang, "Missions: %(track)s   Rejected teams: %(count)d/5", track=track(table), count=view.rejections)]
    if mission is not None:
        lines.append(
            t(
                lang,
                "<b>Mission %(mission)d</b> · proposal %(number)d · leader %(leader)s",
                mission=mission,
                number=view.proposal_number,
                leader=mention(leader),
            )
        )
    else:
        lines.append(
            t(
                lang,
                "<b>Next mission</b> · proposal %(number)d · leader %(leader)s",
                number=view.proposal_number,
                leader=mention(leader),
            )
        )
    return "\n".join(lines)


def _mission_choice(table: Table, lang: str) -> tuple[str, Keyboard]:
    game = table.game
    leader = table.players[game.leader]
    text = t(lang, "%(leader)s, choose which mission the team attempts.", leader=mention(leader))
    row = tuple(
        Button(
            t(lang, "Mission %(mission)d (%(size)d)", mission=m, size=game_rules.team_size(game.players, m)),
            data=callbacks.encode(MissionPress(table.id, game.version, m)),
        )
        for m in game.open_missions()
    )
    return text, (row,)


def _team_choice(table: Table, lang: str) -> tuple[str, Keyboard]:
    game = table.game
    mission = game.current_round.mission if game.current_round else table.draft_mission or game.open_missions()[0]
    size = game_rules.team_size(game.players, mission)
    leader = table.players[game.leader]
    ticked = set(table.draft_team)
    lines = [
        t(
            lang,
            "%(leader)s, choose %(size)d players for mission %(mission)d.",
            leader=mention(leader),
            size=size,
            mission=mission,
        ),
        t(lang, "Chosen: %(names)s", names=names(table, sorted(ticked)) or "—"),
    ]
    seat_buttons = [
        Button(
            ("✔ " if seat in ticked else "") + player.name,
            data=callbacks.encode(TeamPress(table.id, game.version, seat)),
        )
        for seat, player in enumerate(table.players)
    ]
    rows = [tuple(seat_buttons[i : i + 2]) for i in range(0, len(seat_buttons), 2)]
    if game.variants.targeting and game.current_round is None:
        other_missions = tuple(
            Button(
                t(lang, "Mission %(mission)d (%(size)d)", mission=m, size=game_rules.team_size(game.players, m)),
                data=callbacks.encode(MissionPress(table.id, game.version, m)),
            )
            for m in game.open_missions()
            if m != mission
        )
        if other_missions:
            rows.append(other_missions)
    rows.append(
        (
            Button(
                t(lang, "Propose this team (%(chosen)d/%(size)d)", chosen=len(ticked), size=size),
                data=callbacks.encode(TeamPress(table.id, game.version, None)),
            ),
        )
    )
    return "\n".join(lines), tuple(rows)


def _voting(table: Table, lang: str) -> tuple[str, Keyboard]:
    view = public_view(table.game)
    round_index = len(view.rounds) - 1
    voted = view.voted_seats
    lines = [
        t(lang, "Team: %(names)s", names=names(table, view.team)),
        t(lang, "Everyone votes: approve this team or reject it? Votes are shown when all are in."),
        t(
            lang,
            "Voted (%(count)d/%(total)d): %(names)s",
            count=len(voted),
            total=view.players,
            names=names(table, voted) or "—",
        ),
    ]
    buttons = (
        (
            Button(
                t(lang, "👍 Approve"),
                data=callbacks.encode(VotePress(table.id, round_index, view.proposal_number, True)),
            ),
            Button(
                t(lang, "👎 Reject"),
                data=callbacks.encode(VotePress(table.id, round_index, view.proposal_number, False)),
            ),
        ),
    )
    return "\n".join(lines), buttons


def proposal_outcome(table: Table, mission_round: MissionRound, number: int, lang: str) -> str:
    """The revealed votes of one proposal, and the mission's result if it was played."""
    proposal = mission_round.proposals[number - 1]
    approvers = [s for s, v in enumerate(proposal.votes or ()) if v]
    rejecters = [s for s, v in enumerate(proposal.votes or ()) if not v]
    lines = [
        t(lang, "Team: %(names)s", names=names(table, proposal.team)),
        t(lang, "👍 %(approvers)s", approvers=names(table, approvers) or "—"),
        t(lang, "👎 %(rejecters)s", rejecters=names(table, rejecters) or "—"),
    ]
    if proposal.approved:
        lines.append(t(lang, "Approved %(yes)d–%(no)d.", yes=len(approvers), no=len(rejecters)))
        if mission_round.played:
            lines.append(mission_result(mission_round, lang))
    else:
        lines.append(
            t(
                lang,
                "Rejected %(yes)d–%(no)d. Rejected teams for this mission: %(count)d/5.",
                yes=len(approvers),
                no=len(rejecters),
                count=_rejections_up_to(mission_round, number),
            )
        )
    return "\n".join(lines)


def _rejections_up_to(mission_round: MissionRound, number: int) -> int:
    return sum(1 for p in mission_round.proposals[:number] if p.votes is not None and not p.approved)


def mission_result(mission_round: MissionRound, lang: str) -> str:
    fails = mission_round.fails or 0
    if mission_round.succeeded:
        return tn(
            lang,
            "Mission %(mission)d succeeded ✅ with %(n)d Fail card.",
            "Mission %(mission)d succeeded ✅ with %(n)d Fail cards.",
            fails,
            mission=mission_round.mission,
        )
    return tn(
        lang,
        "Mission %(mission)d failed ❌ with %(n)d Fail card.",
        "Mission %(mission)d failed ❌ with %(n)d Fail cards.",
        fails,
        mission=mission_round.mission,
    )


def _mission_under_way(table: Table, lang: str) -> str:
    view = public_view(table.game)
    current = table.game.current_round
    waiting = [s for s in view.team if s not in view.played_seats]
    return "\n".join(
        [
            proposal_outcome(table, current, len(current.proposals), lang),
            t(lang, "The team plays its cards in private. Waiting for: %(names)s", names=names(table, waiting)),
        ]
    )


def round_message(table: Table) -> tuple[str, Keyboard]:
    """The group message of the current proposal, at whatever step it is."""
    lang = table.language
    game = table.game
    head = header(table, lang)
    if game.phase is Phase.PROPOSING:
        needs_mission = game.variants.targeting and game.current_round is None and table.draft_mission is None
        body, buttons = _mission_choice(table, lang) if needs_mission else _team_choice(table, lang)
    elif game.phase is Phase.VOTING:
        body, buttons = _voting(table, lang)
    else:
        body, buttons = _mission_under_way(table, lang), ()
    return f"{head}\n\n{body}", buttons


def closed_proposal(table: Table, round_index: int, proposal_number: int) -> str:
    """The final form of a proposal's message once play has moved past it."""
    lang = table.language
    mission_round = table.game.rounds[round_index]
    title = t(
        lang,
        "<b>Mission %(mission)d</b> · proposal %(number)d · leader %(leader)s",
        mission=mission_round.mission,
        number=proposal_number,
        leader=escape(table.name(mission_round.proposals[proposal_number - 1].leader)),
    )
    return f"{title}\n{proposal_outcome(table, mission_round, proposal_number, lang)}"


# ---------------------------------------------------------------- the end


def game_over(table: Table) -> str:
    lang = table.language
    view = public_view(table.game)
    reasons = {
        EndReason.THREE_SUCCESSFUL_MISSIONS: t(lang, "three missions succeeded"),
        EndReason.THREE_FAILED_MISSIONS: t(lang, "three missions failed"),
        EndReason.FIVE_REJECTIONS: t(lang, "five teams in a row were rejected for one mission"),
    }
    if view.winner is Side.RESISTANCE:
        headline = t(lang, "🏁 <b>The Resistance wins</b>: %(reason)s.", reason=reasons[view.end_reason])
    else:
        headline = t(lang, "🏁 <b>The spies win</b>: %(reason)s.", reason=reasons[view.end_reason])
    spies = view.revealed_spies or ()
    resistance = [s for s in range(view.players) if s not in spies]
    return "\n".join(
        [
            headline,
            t(lang, "Missions: %(track)s", track=track(table)),
            t(lang, "Spies: %(names)s", names=names(table, spies)),
            t(lang, "Resistance: %(names)s", names=names(table, resistance)),
            t(lang, "/record sends this game's record as a file."),
        ]
    )


# ---------------------------------------------------------------- private messages


def role_message(table: Table, seat: int) -> str:
    player = table.players[seat]
    lang = player_language(table, player)
    view = seat_view(table.game, seat)
    group = group_title(table)
    if view.role.value == "resistance":
        return t(
            lang,
            "Your game in «%(group)s»: you are in the <b>Resistance</b>. Make three missions succeed.",
            group=group,
        )
    if table.variants.blind_spies:
        return t(
            lang,
            "Your game in «%(group)s»: you are a <b>spy</b>. Under Blind Spies you do not know the "
            "other spies. Make three missions fail.",
            group=group,
        )
    others = [s for s in view.known_spies if s != seat]
    return t(
        lang,
        "Your game in «%(group)s»: you are a <b>spy</b>. The other spies: %(names)s. Make three missions fail.",
        group=group,
        names=names(table, others),
    )


def card_key(round_index: int, seat: int) -> str:
    return f"card:{round_index}:{seat}"


def card_prompt(table: Table, seat: int) -> tuple[str, Keyboard]:
    player = table.players[seat]
    lang = player_language(table, player)
    game = table.game
    round_index = len(game.rounds) - 1
    text = t(
        lang,
        "«%(group)s», mission %(mission)d: you are on the team. Play your card.",
        group=group_title(table),
        mission=game.current_round.mission,
    )
    buttons = (
        (
            Button(t(lang, "✅ Success"), data=callbacks.encode(CardPress(table.id, round_index, False))),
            Button(t(lang, "❌ Fail"), data=callbacks.encode(CardPress(table.id, round_index, True))),
        ),
    )
    return text, buttons


def card_played(table: Table, seat: int, mission: int, fail: bool) -> str:
    lang = player_language(table, table.players[seat])
    if fail:
        return t(
            lang, "«%(group)s», mission %(mission)d: you played ❌ Fail.", group=group_title(table), mission=mission
        )
    return t(
        lang, "«%(group)s», mission %(mission)d: you played ✅ Success.", group=group_title(table), mission=mission
    )


def unreachable_notice(table: Table, seat: int, bot_username: str) -> tuple[str, Keyboard]:
    lang = table.language
    player = table.players[seat]
    text = t(
        lang,
        "%(player)s, I cannot write to you in private, so the game is waiting for you. Press the "
        "button, then Start (or unblock me): I will send you what you need.",
        player=mention(player),
    )
    return text, ((Button(t(lang, "Open the private chat"), url=open_chat_link(bot_username)),),)


def record_caption(table: Table, record: GameRecord) -> str:
    return t(table.language, "The record of game %(id)s (resistance-record/1).", id=record.id)


# ---------------------------------------------------------------- help


def help_text(lang: str) -> str:
    return t(
        lang,
        "<b>The Resistance</b>: commands\n"
        "/newgame — open a game in this group\n"
        "/join — join the open game (or press Join)\n"
        "/leave — leave the game before it starts\n"
        "/startgame — start with 5 to 10 players (whoever opened the game, or an admin)\n"
        "/status — the missions, the leader, whose turn it is\n"
        "/cancel — end the lobby or the game (whoever opened it, or an admin)\n"
        "/record — the last finished game's record as a file\n"
        "/rules — how to play",
    )


def rules_text(lang: str) -> str:
    return t(
        lang,
        "<b>The Resistance</b> in short\n"
        "Most players are the Resistance; a few are spies, who know each other. Nobody else knows who is who.\n"
        "Each round the leader proposes a team for the next mission. Everyone votes: the team goes only if more "
        "than half approve (a tie rejects). If five teams in a row are rejected for one mission, the spies win.\n"
        "On a mission each member secretly plays Success or Fail; the Resistance must play Success. One Fail "
        "card sinks the mission (the 4th mission with 7 or more players needs two). Only the number of Fail "
        "cards is shown.\n"
        "Three successful missions win for the Resistance, three failed ones for the spies. The leader's role "
        "passes to the next player after every proposal.\n"
        "Variants: under Targeting the leader also picks which mission the team attempts (mission 5 only after "
        "two successes); under Blind Spies the spies do not learn who the other spies are.",
    )
