"""Texts and keyboards: what the group and each player see, rendered from a table.

Group texts are rendered only from `engine.public_view`; a player's private texts from
`engine.seat_view` of that player's own seat. Nothing here decides a rule.
"""

from __future__ import annotations

from html import escape

from telegram.helpers import create_deep_linked_url

from engine import CardsFilled, Phase, Side, TeamProposed, VotesFilled, public_view, seat_view
from engine import rules as game_rules
from engine.record import GameRecord
from engine.state import EndReason, MissionRound, Proposal
from tgbot import callbacks
from tgbot.callbacks import (
    CardPress,
    HintsPress,
    LanguagePress,
    MissionPress,
    RematchPress,
    SettingsPress,
    TeamPress,
    VotePress,
)
from tgbot.i18n import N_, supported, t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.settings import GroupSettings
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
    return variants_line_for(table.settings, lang)


def lobby(table: Table, bot_username: str) -> tuple[str, Keyboard]:
    lang = table.language
    creator = next((p for p in table.players if p.user_id == table.creator_id), None)
    lines = [
        t(lang, "🕵️ <b>The Resistance</b>: a new game is open."),
        variants_line(table, lang),
        settings_line(table.settings, lang),
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


def minutes(seconds: int) -> str:
    return f"{seconds / 60:g}"


def settings_line(settings: GroupSettings, lang: str) -> str:
    missing = t(lang, "👍 Approve") if settings.missing_vote_approves else t(lang, "👎 Reject")
    hints = t(lang, "on") if settings.hints else t(lang, "off")
    return t(
        lang,
        "Time to choose a team: %(team)s min, to vote: %(vote)s min, to play a card: %(card)s min. "
        "A missing vote counts as %(missing)s. Hints: %(hints)s.",
        team=minutes(settings.proposal_seconds),
        vote=minutes(settings.vote_seconds),
        card=minutes(settings.mission_seconds),
        missing=missing,
        hints=hints,
    )


def lobby_timed_out(table: Table) -> str:
    return t(
        table.language, "🕵️ This lobby closed: fewer than %(min)d players joined in time.", min=game_rules.MIN_PLAYERS
    )


def lobby_started(table: Table) -> str:
    lang = table.language
    return (
        t(
            lang,
            "🕵️ <b>The Resistance</b>: the game has started with %(names)s. Roles were sent in private.",
            names=names(table, range(len(table.players))),
        )
        + "\n"
        + setup_line(table.game.players, lang)
    )


def lobby_closed(table: Table) -> str:
    return t(table.language, "🕵️ This lobby was cancelled.")


def damaged_game(lang: str) -> str:
    return t(lang, "⚠️ This game's saved state is damaged, so the game was ended. Start a new one with /newgame.")


# ---------------------------------------------------------------- the round message


def proposal_key(table: Table) -> str:
    """Names the group message of the proposal being made, voted or played now."""
    assert table.game is not None
    game = table.game
    index = len(game.rounds) - 1 if game.current_round is not None else len(game.rounds)
    return f"proposal:{index}:{game.proposal_number}"


def key_of(round_index: int, proposal_number: int) -> str:
    return f"proposal:{round_index}:{proposal_number}"


def team_sizes(players: int) -> str:
    """Each mission's team size in order, a mission that needs two Fail cards marked *: "2-3-3-4*-4"."""
    return "-".join(
        f"{game_rules.team_size(players, m)}{'*' if game_rules.fails_required(players, m) > 1 else ''}"
        for m in range(1, game_rules.MISSION_COUNT + 1)
    )


def setup_line(players: int, lang: str) -> str:
    """The table's setup, which every player may know: how many spies, each mission's team size,
    and which mission needs two Fail cards. The numbers are the engine's."""
    spies = game_rules.spy_count(players)
    teams = team_sizes(players)
    if "*" in teams:
        return tn(
            lang,
            "%(n)d spy · teams %(teams)s (* needs two Fails)",
            "%(n)d spies · teams %(teams)s (* needs two Fails)",
            spies,
            teams=teams,
        )
    return tn(lang, "%(n)d spy · teams %(teams)s", "%(n)d spies · teams %(teams)s", spies, teams=teams)


def header(table: Table, lang: str) -> str:
    view = public_view(table.game)
    leader = table.players[view.leader]
    mission = view.current_mission
    if view.phase is Phase.PROPOSING and view.variants.targeting:
        # Under Targeting the leader names the mission anew, even after a rejection.
        mission = table.draft_mission
    lines = [
        t(lang, "Missions: %(track)s   Rejected teams: %(count)d/5", track=track(table), count=view.rejections),
        setup_line(view.players, lang),
    ]
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
    mission = table.draft_mission or game.open_missions()[0]
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
    if game.variants.targeting:
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
        *drawn_line(table, view.rounds[-1].proposals[-1], lang),
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
        *drawn_line(table, proposal, lang),
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


def drawn_line(table: Table, proposal: Proposal, lang: str) -> tuple[str, ...]:
    """Says so when the team was drawn at random because its leader missed the deadline."""
    if not proposal.auto_team:
        return ()
    return (
        t(
            lang,
            "⏰ %(leader)s did not propose in time: this team was drawn at random.",
            leader=escape(table.name(proposal.leader)),
        ),
    )


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
        needs_mission = game.variants.targeting and table.draft_mission is None
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
    proposal = mission_round.proposals[proposal_number - 1]
    title = t(
        lang,
        "<b>Mission %(mission)d</b> · proposal %(number)d · leader %(leader)s",
        mission=proposal.mission,  # under Targeting each proposal of a round names its own
        number=proposal_number,
        leader=escape(table.name(proposal.leader)),
    )
    return f"{title}\n{proposal_outcome(table, mission_round, proposal_number, lang)}"


# ---------------------------------------------------------------- the end


def play_again(table: Table) -> Keyboard:
    return ((Button(t(table.language, "🔁 Play again"), data=callbacks.encode(RematchPress(table.id))),),)


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


def role_buttons(table: Table, seat: int) -> Keyboard:
    hint = hints_button(table, player_language(table, table.players[seat]))
    return (hint,) if hint else ()


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
    hint = hints_button(table, lang)
    return text, buttons + ((hint,) if hint else ())


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
    # Who may use /settings and /language is `GameService.may_configure`: a group admin, or
    # whoever opened the lobby while it is open.
    return t(
        lang,
        "<b>The Resistance</b>: commands\n"
        "/newgame — open a game in this group; add targeting, blind or both for those variants "
        "(/newgame targeting blind)\n"
        "/join — join the open game (or press Join)\n"
        "/leave — leave the game before it starts\n"
        "/startgame — start with 5 to 10 players (whoever opened the game, or an admin)\n"
        "/status — the missions, the leader, whose turn it is\n"
        "/cancel — end the lobby or the game (whoever opened it, or an admin)\n"
        "/record — the last finished game's record as a file\n"
        "/hints — in private: who could the spies be, and why\n"
        "/settings — variants, deadlines, hints, language (a group admin, or whoever opened the lobby "
        "while it is open)\n"
        "/language — the language I speak in this group (the same people as /settings)\n"
        "/rules — how to play",
    )


def setup_table(lang: str) -> str:
    """Spies and team sizes for every table size, from the engine's rule tables."""
    rows = [t(lang, "Spies and team sizes for missions 1 to 5 (* the mission needs two Fail cards):")]
    for players in range(game_rules.MIN_PLAYERS, game_rules.MAX_PLAYERS + 1):
        rows.append(
            tn(
                lang,
                "%(players)d players: %(n)d spy · teams %(teams)s",
                "%(players)d players: %(n)d spies · teams %(teams)s",
                game_rules.spy_count(players),
                players=players,
                teams=team_sizes(players),
            )
        )
    return "\n".join(rows)


def rules_text(lang: str) -> str:
    return t(
        lang,
        "<b>The Resistance</b> in short\n"
        "Most players are the Resistance; a few are spies, who know each other. Nobody else knows who is who.\n"
        "%(setup)s\n"
        "Seats follow the order in which players joined. The first leader is drawn at random; after every "
        "proposal the leader's role passes clockwise, to the next seat.\n"
        "The leader proposes a team for the next mission. Everyone votes: the team goes only if more than half "
        "approve; a tied vote rejects it. If five teams in a row are rejected for one mission, the spies win.\n"
        "On a mission each member secretly plays Success or Fail; the Resistance must play Success. One Fail "
        "card sinks a mission; the one marked * needs two. Only the number of Fail cards is shown.\n"
        "Three successful missions win for the Resistance, three failed ones for the spies.\n"
        "Targeting (/newgame targeting): every leader chooses both the mission and the team. Each mission is "
        "attempted only once (a rejected team does not use it up), and the fifth only after two successes.\n"
        "Blind Spies (/newgame blind): the spies do not learn who the other spies are.\n"
        "Deadlines (see /settings): if the leader does not propose in time, a team is drawn at random and "
        "everyone votes on it as usual; missing votes count as the group's setting says (Approve unless "
        "changed), and the group is told whose; a card not played in time counts as Success. A lobby that has "
        "not reached 5 players in time closes; one that has starts by itself.",
        setup=setup_table(lang),
    )


# ---------------------------------------------------------------- deadlines


def reminder(table: Table) -> str:
    """Half the step's time is gone: who the table is waiting for (never what anyone chose)."""
    lang = table.language
    if table.game is None:
        missing = game_rules.MIN_PLAYERS - len(table.players)
        if missing > 0:
            return tn(
                lang,
                "⏰ Half the lobby time is gone: %(n)d more player needed.",
                "⏰ Half the lobby time is gone: %(n)d more players needed.",
                missing,
            )
        return t(lang, "⏰ Half the lobby time is gone: the game starts by itself when it runs out.")
    game = table.game
    if game.phase is Phase.PROPOSING:
        waiting = [game.leader]
    elif game.phase is Phase.VOTING:
        waiting = [s for s in range(game.players) if s not in game.voted_seats]
    else:
        waiting = [s for s in game.current_round.team if s not in game.played_seats]
    return t(
        lang,
        "⏰ Half the time is gone. Still waiting for: %(names)s",
        names=", ".join(mention(table.players[s]) for s in waiting),
    )


def deadline_notice(table: Table, event) -> str:
    lang = table.language
    if isinstance(event, TeamProposed) and event.drawn:
        return t(
            lang,
            "⏰ %(leader)s did not propose in time: a team was drawn at random for mission %(mission)d: "
            "%(names)s. Vote on it.",
            leader=escape(table.name(event.leader)),
            mission=event.mission,
            names=names(table, event.team),
        )
    if isinstance(event, VotesFilled):
        if not event.seats:
            return ""
        if event.approve:
            return t(
                lang,
                "⏰ Time is up. These votes were counted as 👍 Approve: %(names)s",
                names=names(table, event.seats),
            )
        return t(
            lang, "⏰ Time is up. These votes were counted as 👎 Reject: %(names)s", names=names(table, event.seats)
        )
    if isinstance(event, CardsFilled) and event.seats:
        return t(
            lang, "⏰ Time is up. Cards not played count as ✅ Success: %(names)s", names=names(table, event.seats)
        )
    return ""


# ---------------------------------------------------------------- settings


LANGUAGE_NAMES = {"en": "English", "es": "Español", "ru": "Русский", "bg": "Български", "eo": "Esperanto"}


def _switch(lang: str, on: bool, when_on: str, when_off: str) -> str:
    return t(lang, when_on) if on else t(lang, when_off)


def settings_menu(chat_id: int, settings: GroupSettings, lang: str) -> tuple[str, Keyboard]:
    def press(name: str) -> str:
        return callbacks.encode(SettingsPress(chat_id, name))

    text = "\n".join(
        [
            t(lang, "⚙️ <b>Settings for this group</b>"),
            t(lang, "Press a button to change it. Changes apply to the next game, and to a lobby that is open."),
            settings_line(settings, lang),
        ]
    )
    missing = (
        t(lang, "Missing vote: 👍 Approve") if settings.missing_vote_approves else t(lang, "Missing vote: 👎 Reject")
    )
    buttons = (
        (
            Button(
                _switch(lang, settings.targeting, N_("Targeting: on"), N_("Targeting: off")), data=press("targeting")
            ),
            Button(
                _switch(lang, settings.blind_spies, N_("Blind Spies: on"), N_("Blind Spies: off")),
                data=press("blind_spies"),
            ),
        ),
        (
            Button(_switch(lang, settings.hints, N_("Hints: on"), N_("Hints: off")), data=press("hints")),
            Button(missing, data=press("missing_vote_approves")),
        ),
        (
            Button(
                t(lang, "Team time: %(minutes)s min", minutes=minutes(settings.proposal_seconds)),
                data=press("proposal_seconds"),
            ),
            Button(
                t(lang, "Vote time: %(minutes)s min", minutes=minutes(settings.vote_seconds)),
                data=press("vote_seconds"),
            ),
        ),
        (
            Button(
                t(lang, "Card time: %(minutes)s min", minutes=minutes(settings.mission_seconds)),
                data=press("mission_seconds"),
            ),
            Button(
                t(lang, "Lobby time: %(minutes)s min", minutes=minutes(settings.lobby_seconds)),
                data=press("lobby_seconds"),
            ),
        ),
        (
            Button(LANGUAGE_NAMES[settings.language or lang], data=press("language")),
            Button(t(lang, "Done"), data=press("done")),
        ),
    )
    return text, buttons


def settings_closed(settings: GroupSettings, lang: str) -> str:
    return "\n".join([t(lang, "⚙️ Settings saved."), variants_line_for(settings, lang), settings_line(settings, lang)])


def variants_line_for(settings: GroupSettings, lang: str) -> str:
    if settings.targeting and settings.blind_spies:
        return t(lang, "Variants: Targeting, Blind Spies.")
    if settings.targeting:
        return t(lang, "Variants: Targeting.")
    if settings.blind_spies:
        return t(lang, "Variants: Blind Spies.")
    return t(lang, "Rules: standard, no variants.")


def language_menu(chat_id: int, lang: str) -> tuple[str, Keyboard]:
    buttons = tuple(
        (Button(name, data=callbacks.encode(LanguagePress(chat_id, code))),) for code, name in LANGUAGE_NAMES.items()
    )
    return t(lang, "Which language should I speak in this group?"), buttons


# ---------------------------------------------------------------- hints


def hints_button(table: Table, lang: str) -> tuple[Button, ...]:
    if not table.settings.hints:
        return ()
    return (Button(t(lang, "🔎 Hints"), data=callbacks.encode(HintsPress(table.id))),)


def probability_bar(p: float) -> str:
    filled = round(p * 5)
    return "▓" * filled + "░" * (5 - filled)


def hints(table: Table, seat: int, probabilities, possible: int, reasons, spy_view: bool) -> str:
    player = table.players[seat]
    lang = player_language(table, player)
    group = group_title(table)
    if spy_view:
        lines = [
            t(
                lang,
                "🔎 «%(group)s»: you are a spy. This is how the Resistance, seeing only the public "
                "record, sees each player, you included:",
                group=group,
            )
        ]
    else:
        lines = [t(lang, "🔎 «%(group)s»: how likely each other player is to be a spy.", group=group)]
    shown = [s for s in range(len(table.players)) if spy_view or s != seat]
    for other in sorted(shown, key=lambda s: -probabilities[s]):
        name = escape(table.name(other))
        if other == seat:
            name = t(lang, "%(name)s (you)", name=name)
        lines.append(
            f"<code>{probability_bar(probabilities[other])} {round(probabilities[other] * 100):3d}%</code> {name}"
        )
    lines.append("")
    lines.append(
        tn(
            lang,
            "%(n)d way to seat the spies is still possible.",
            "%(n)d ways to seat the spies are still possible.",
            possible,
        )
    )
    if reasons:
        lines.append(t(lang, "Why:"))
        lines.extend("• " + reason_text(table, reason, lang) for reason in reasons)
    return "\n".join(lines)


def reason_text(table: Table, reason, lang: str) -> str:
    a = reason.args
    name = escape(table.name(a["seat"])) if "seat" in a else ""
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
                names=names(table, a["seats"]),
            )
        return tn(
            lang,
            "Mission %(mission)d had %(n)d Fail card: at least %(n)d of %(names)s is a spy.",
            "Mission %(mission)d had %(n)d Fail cards: at least %(n)d of %(names)s are spies.",
            a["at_least"],
            mission=a["mission"],
            names=names(table, a["seats"]),
        )
    if code == "approved_failed_teams":
        return tn(
            lang,
            "%(name)s approved %(n)d team that then failed, without being on it.",
            "%(name)s approved %(n)d teams that then failed, without being on them.",
            a["count"],
            name=name,
        )
    if code == "led_failed_team":
        return t(
            lang,
            "%(name)s led a team that then failed (mission %(missions)s).",
            name=name,
            missions=", ".join(str(m) for m in a["missions"]),
        )
    if code == "rejected_successful_teams":
        return tn(
            lang,
            "%(name)s voted against %(n)d team that then succeeded.",
            "%(name)s voted against %(n)d teams that then succeeded.",
            a["count"],
            name=name,
        )
    if code == "behaviour_suspicious":
        return t(lang, "%(name)s's votes and choices look more like a spy's.", name=name)
    return t(lang, "%(name)s's votes and choices look more like the Resistance's.", name=name)


def hints_off(table: Table, lang: str) -> str:
    return t(lang, "Hints are switched off in «%(group)s».", group=group_title(table))


def choose_game(tables: list[Table], lang: str) -> tuple[str, Keyboard]:
    buttons = tuple((Button(table.chat_title, data=callbacks.encode(HintsPress(table.id))),) for table in tables)
    return t(lang, "You play in several groups. Hints for which game?"), buttons
