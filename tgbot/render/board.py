"""What the group sees: the lobby and the board, rendered from the public view and names only.

One group message carries each proposal through its life: it is sent when the team is put
forward (with the vote buttons) and edited when the vote closes: a rejected team's votes at
once, saying whose turn comes next; an approved team's message says the mission is under way,
and is edited again with its mission's result and the team's votes. Nothing in between edits
it, so a mission costs the group two messages per proposal and one for its result, however
many votes and cards there are; "⏳ Waiting for…" answers who the game waits for, to whoever
asks.
"""

from __future__ import annotations

from engine import EndReason, MissionRound, Phase, Side, Variants
from engine import rules as game_rules
from tgbot.buttons import ComputerPress, RematchPress, VotePress, WaitingPress, encode
from tgbot.i18n import N_, t, tn
from tgbot.outgoing import Button, Keyboard
from tgbot.render import plot as plot_render
from tgbot.render.common import (
    ANSWER_LIMIT,
    MESSAGE_LIMIT,
    GroupScene,
    filled_votes_line,
    fitting,
    join_link,
    mention,
    minutes,
    names,
    names_within,
    setup_line,
    shown,
    track,
    utf16_length,
    vote_lines,
)
from tgbot.settings import GroupSettings
from tgbot.table import MIN_PEOPLE, Player

# ---------------------------------------------------------------- lobby


def lobby(
    game_id: str, players: tuple[Player, ...], settings: GroupSettings, creator_id: int, lang: str, bot_username: str
) -> tuple[str, Keyboard]:
    creator = next((p for p in players if p.user_id == creator_id), None)
    lines = [
        t(lang, "🕵️ <b>The Resistance</b>: a new game is open."),
        variants_line(settings, lang),
        *(
            [t(lang, "🃏 Plot cards: each mission the leader deals cards that give information or deceit (/rules).")]
            if settings.plot_cards
            else []
        ),
        settings_line(settings, lang),
        tn(
            lang,
            "%(n)d player of %(max)d: %(names)s",
            "%(n)d players of %(max)d: %(names)s",
            len(players),
            max=game_rules.MAX_PLAYERS,
            names=names(players, range(len(players))) or "—",
        ),
    ]
    missing = game_rules.MIN_PLAYERS - len(players)
    people = sum(1 for p in players if not p.computer)
    if missing > 0:
        lines.append(tn(lang, "%(n)d more player needed.", "%(n)d more players needed.", missing))
    elif people < MIN_PEOPLE:
        lines.append(
            tn(
                lang,
                "At least %(n)d person must play: computer players do not count.",
                "At least %(n)d people must play: computer players do not count.",
                MIN_PEOPLE,
            )
        )
    else:
        if creator:
            lines.append(t(lang, "%(name)s or a group admin can start with /startgame.", name=shown(creator.name)))
        else:  # the host left the lobby (and may still start it)
            lines.append(t(lang, "Whoever opened the game or a group admin can start with /startgame."))
    if not players:
        # Whoever sent /newgame before ever opening the bot's private chat is not seated either.
        lines.append(t(lang, "Nobody is seated yet, not even whoever opened the game."))
    lines.append(t(lang, "Press Join: it opens a private chat with me, where your role and cards will come."))
    computers = (Button(t(lang, "🤖 Add a computer player"), data=encode(ComputerPress(game_id, True))),)
    if people < len(players):
        computers += (Button(t(lang, "Remove one"), data=encode(ComputerPress(game_id, False))),)
    return "\n".join(lines), ((Button(t(lang, "Join"), url=join_link(bot_username, game_id)),), computers)


def variant_names(variants: Variants, lang: str) -> list[str]:
    """The names of the variants switched on, in the order the settings show them."""
    return [
        t(lang, name)
        for name, on in (
            (N_("Targeting"), variants.targeting),
            (N_("Blind Spies"), variants.blind_spies),
            (N_("Plot cards"), variants.plot_cards),
        )
        if on
    ]


def variants_line(settings: GroupSettings, lang: str) -> str:
    chosen = variant_names(settings.variants, lang)
    if not chosen:
        return t(lang, "Rules: standard, no variants.")
    return t(lang, "Variants: %(variants)s.", variants=", ".join(chosen))


def kept_on_note(kept: Variants, lang: str) -> str:
    """What a settings press that switched off variants the open lobby was opened with is answered
    (they stay on there); blank when it switched off none."""
    chosen = variant_names(kept, lang)
    if not chosen:
        return ""
    # A press steps one setting: one variant at most.
    return t(
        lang, "The open lobby keeps this variant on, since /newgame named it: %(variant)s.", variant=", ".join(chosen)
    )


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


def computer_took_over(players: tuple[Player, ...], seats: list[int], lang: str) -> str:
    return tn(
        lang,
        "🤖 %(names)s missed two deadlines in a row: a computer player takes their turns until they act again.",
        "🤖 %(names)s missed two deadlines in a row: computer players take their turns until they act again.",
        len(seats),
        names=names(players, seats),
    )


def lobby_timed_out(players: tuple[Player, ...], lang: str, unstarted: bool = False) -> str:
    """`unstarted`: the lobby had enough players but was one the clock does not start (Play again's)."""
    if unstarted:
        return t(lang, "🕵️ This lobby closed: nobody started the game in time.")
    if len(players) >= game_rules.MIN_PLAYERS:
        return tn(
            lang,
            "🕵️ This lobby closed: fewer than %(n)d person joined in time.",
            "🕵️ This lobby closed: fewer than %(n)d people joined in time.",
            MIN_PEOPLE,
        )
    return t(lang, "🕵️ This lobby closed: fewer than %(min)d players joined in time.", min=game_rules.MIN_PLAYERS)


def lobby_reminder(players: tuple[Player, ...], lang: str, rematch: bool = False) -> str:
    missing = game_rules.MIN_PLAYERS - len(players)
    if missing > 0:
        return tn(
            lang,
            "⏰ Half the lobby time is gone: %(n)d more player needed.",
            "⏰ Half the lobby time is gone: %(n)d more players needed.",
            missing,
        )
    people_missing = MIN_PEOPLE - sum(1 for p in players if not p.computer)
    if people_missing > 0:
        # Seats enough, but filled by computer players: the lobby closes unless people join.
        return tn(
            lang,
            "⏰ Half the lobby time is gone: %(n)d more person needed (computer players do not count).",
            "⏰ Half the lobby time is gone: %(n)d more people needed (computer players do not count).",
            people_missing,
        )
    if rematch:
        # Play again seated everyone; only whoever pressed it chose to play again.
        return t(
            lang,
            "⏰ Half the lobby time is gone: start the game with /startgame (whoever pressed Play again, or "
            "an admin), or this lobby closes when the time runs out.",
        )
    return t(lang, "⏰ Half the lobby time is gone: the game starts by itself when it runs out.")


def lobby_started(lang: str) -> str:
    """The lobby's message once its game has started, in the message below it."""
    return t(lang, "🕵️ This lobby is closed: the game has started.")


def lobby_closed(lang: str) -> str:
    return t(lang, "🕵️ This lobby was cancelled.")


def damaged_game(lang: str) -> str:
    return t(lang, "⚠️ This game's saved state is damaged, so the game was ended. Start a new one with /newgame.")


def storage_lost(lang: str, lobby: bool) -> str:
    """The group's word that the bot's storage came back empty: its open lobby or running game is gone."""
    if lobby:
        return t(
            lang,
            "⚠️ The bot lost everything it had stored (its database was emptied), and with it the lobby open here. "
            "Sorry! Open a new one with /newgame.",
        )
    return t(
        lang,
        "⚠️ The bot lost everything it had stored (its database was emptied), and with it the game being played "
        "here: it cannot go on. Sorry! Start a new one with /newgame.",
    )


def started(scene: GroupScene) -> str:
    """The message that starts the game: who plays, the setup, and who leads first."""
    lang = scene.lang
    return "\n".join(
        [
            t(
                lang,
                "🕵️ <b>The Resistance</b>: the game has started with %(names)s. Roles were sent in private.",
                names=names(scene.players, range(len(scene.players))),
            ),
            setup_line(scene.view.players, lang),
            "",
            whose_turn(scene),
            *filter(None, [plot_render.window_line(scene)]),
            *plot_render.upcoming_uses(scene),
            *filter(None, [plot_render.holders_line(scene)]),
        ]
    )


# ---------------------------------------------------------------- the board


def board_key(scene: GroupScene) -> str:
    """Names the group message of the latest proposal; before the first one, the lobby's message."""
    return f"board:{sum(len(r.proposals) for r in scene.view.rounds)}"


# Names the group message that showed the game's end: the last board, once the edit telling the end
# reached it, or the final board posted again on the bot's return to a group that never saw it.
RESULT_KEY = "result"


def board(scene: GroupScene, room: int = MESSAGE_LIMIT) -> tuple[str, Keyboard]:
    """The latest proposal's message as it reads now, within `room` (long names cut shorter if
    the whole story of a long proposal would not fit Telegram's message)."""
    return fitting(_board, scene, room)


def approved(scene: GroupScene) -> tuple[str, Keyboard]:
    """The latest proposal's message once its team is approved and plays its cards, its votes kept
    for the mission's result (not even their count: 5–0 would tell every vote): the vote's buttons
    go, and the group reads that the mission is under way."""
    return fitting(lambda cut: _board(cut, votes_shown=False), scene)


def _board(scene: GroupScene, votes_shown: bool = True) -> tuple[str, Keyboard]:
    view, lang = scene.view, scene.lang
    if not view.rounds:
        return started(scene), ()
    mission_round = view.rounds[-1]
    number = len(mission_round.proposals)
    lines = [header(scene, mission_round, number), *proposal_lines(scene, mission_round, number, votes_shown)]
    buttons: Keyboard = ()
    window = plot_render.window_line(scene)
    if view.phase is Phase.VOTING:
        opinion = plot_render.open_votes_line(scene)
        makers = mission_round.proposals[-1].open_votes
        question = N_(
            "Everyone votes: approve this team or reject it? A rejected team's votes are shown at once, "
            "an approved team's with its mission's result."
        )
        if opinion is not None:
            lines.append(opinion)
            # Opinion Makers who let their time run out: the rest vote knowing the clock cast those votes.
            filled = mission_round.proposals[-1].auto_votes
            if filled and view.plot is not None:
                lines.append(filled_votes_line(scene, filled, dict(view.plot.open_votes)[filled[0]]))
            # The edit that shows their votes is the rest's word that their turn has come.
            question = N_(
                "Now everyone else votes: approve this team or reject it? A rejected team's votes are shown "
                "at once, an approved team's with its mission's result."
            )
        elif makers:
            lines.append(
                t(
                    lang,
                    "Opinion Makers vote first, in the open: %(names)s. Everyone else votes once they have.",
                    names=names(scene.players, makers),
                )
            )
        lines.append(t(lang, question))
        buttons = (
            (
                Button(t(lang, "👍 Approve"), data=encode(VotePress(scene.game_id, view.ballot, True))),
                Button(t(lang, "👎 Reject"), data=encode(VotePress(scene.game_id, view.ballot, False))),
            ),
            waiting_row(scene),
        )
    elif view.phase is Phase.MISSION and not votes_shown:
        lines.append(t(lang, "✅ Team approved. The mission is under way: waiting for the team's cards."))
        buttons = (waiting_row(scene),)  # who is still to play, told to whoever asks
    elif view.phase is Phase.MISSION:
        spotlight = plot_render.spotlight_line(scene)
        lines += [*([spotlight] if spotlight else []), t(lang, "The team plays its cards in private.")]
        buttons = (waiting_row(scene),)
    elif view.phase in (Phase.PROPOSING, Phase.LEAD, Phase.DEAL):
        lines += ["", whose_turn(scene), *([window] if window else []), *plot_render.upcoming_uses(scene)]
        buttons = (waiting_row(scene),) if window else ()
    elif window is not None:
        lines.append(window)
        buttons = (waiting_row(scene),)
    else:
        lines += ["", *game_over_lines(scene)]
        buttons = play_again(scene)
    held = plot_render.holders_line(scene)
    if held is not None and view.phase is not Phase.OVER:
        lines.append(held)
    return "\n".join(lines), buttons


def header(scene: GroupScene, mission_round: MissionRound, number: int) -> str:
    lang, view = scene.lang, scene.view
    proposal = mission_round.proposals[number - 1]
    return "\n".join(
        [
            t(
                lang,
                "Missions: %(track)s   Rejected teams: %(count)d/5",
                track=track(view),
                count=_rejections(mission_round, number),
            ),
            t(
                lang,
                "<b>Mission %(mission)d</b> · proposal %(number)d · leader %(leader)s",
                mission=proposal.mission,
                number=number,
                leader=shown(scene.players[proposal.leader].name),
            ),
        ]
    )


def _rejections(mission_round: MissionRound, number: int) -> int:
    return sum(1 for p in mission_round.proposals[:number] if p.votes is not None and not p.approved)


def proposal_lines(scene: GroupScene, mission_round: MissionRound, number: int, votes_shown: bool = True) -> list[str]:
    """A proposal's team, its revealed votes, and its mission's result once played; without
    `votes_shown`, only the Opinion Makers' open votes of an approved team still playing."""
    lang, players = scene.lang, scene.players
    proposal = mission_round.proposals[number - 1]
    lines = []
    if proposal.auto_team:
        lines.append(
            t(
                lang,
                "⏰ %(leader)s did not propose in time: this team was drawn at random.",
                leader=shown(players[proposal.leader].name),
            )
        )
    round_index = scene.view.rounds.index(mission_round)
    uses = plot_render.proposal_uses(scene, round_index, number - 1)
    if proposal.strong_leader:
        lines.append(
            t(lang, "⚡ %(leader)s took the lead with Strong Leader.", leader=shown(players[proposal.leader].name))
        )
    # What happened before the team was named (the deal), then the team and what came after.
    after_approval = [line for line in uses if line.startswith(("🔦", "👁"))]
    lines += [line for line in uses if line not in after_approval]
    lines.append(t(lang, "Team: %(names)s", names=names(players, proposal.team)))
    if proposal.votes is None:
        return lines
    # The Opinion Makers' votes were open from the start.
    opinion = plot_render.open_votes_line(scene, tuple((s, proposal.votes[s]) for s in proposal.open_votes))
    lines += [opinion] if opinion else []
    if not votes_shown:
        return lines
    lines += vote_lines(scene, proposal)
    yes, no = sum(proposal.votes), len(proposal.votes) - sum(proposal.votes)
    if proposal.no_confidence is not None:
        # Under Targeting the leaders of a round may each name another mission: the five count in a row.
        if scene.view.variants.targeting:
            template = N_(
                "Approved %(yes)d–%(no)d, then thrown out by %(name)s's No Confidence. Rejected teams in a "
                "row: %(count)d/5."
            )
        else:
            template = N_(
                "Approved %(yes)d–%(no)d, then thrown out by %(name)s's No Confidence. Rejected teams for this "
                "mission: %(count)d/5."
            )
        lines.append(
            t(
                lang,
                template,
                yes=yes,
                no=no,
                name=shown(players[proposal.no_confidence].name),
                count=_rejections(mission_round, number),
            )
        )
        return lines
    if not proposal.approved:
        if scene.view.variants.targeting:
            template = N_("Rejected %(yes)d–%(no)d. Rejected teams in a row: %(count)d/5.")
        else:
            template = N_("Rejected %(yes)d–%(no)d. Rejected teams for this mission: %(count)d/5.")
        lines.append(
            t(
                lang,
                template,
                yes=yes,
                no=no,
                count=_rejections(mission_round, number),
            )
        )
        return lines
    lines.append(t(lang, "Approved %(yes)d–%(no)d.", yes=yes, no=no))
    lines += after_approval
    if mission_round.played:
        lines.append(mission_result(mission_round, lang))
        if mission_round.auto_cards:
            lines.append(
                t(
                    lang,
                    "⏰ Cards not played in time count as ✅ Success: %(names)s",
                    names=names(players, mission_round.auto_cards),
                )
            )
    return lines


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


def whose_turn(scene: GroupScene) -> str:
    """Who the game waits for while a leader chooses, said the same way on every message."""
    lang, view = scene.lang, scene.view
    leader = mention(scene.players[view.leader])
    if view.variants.targeting:
        return t(lang, "➡️ %(leader)s leads: choosing a mission and a team in private.", leader=leader)
    mission = view.open_missions[0]
    return tn(
        lang,
        "➡️ Mission %(mission)d: %(leader)s leads, choosing a team of %(n)d in private.",
        "➡️ Mission %(mission)d: %(leader)s leads, choosing a team of %(n)d in private.",
        game_rules.team_size(view.players, mission),
        mission=mission,
        leader=leader,
    )


def waiting_row(scene: GroupScene) -> tuple[Button, ...]:
    return (Button(t(scene.lang, "⏳ Waiting for…"), data=encode(WaitingPress(scene.game_id))),)


def waiting_answer(scene: GroupScene, lang: str) -> str:
    """The answer to "⏳ Waiting for…": who must still act (never what anyone chose)."""
    view = scene.view
    if not view.waiting_for:
        return t(lang, "Nobody: this step is over.")
    if view.phase is Phase.MISSION:
        template = N_("The team is playing its cards. Waiting for: %(names)s")
    else:
        template = N_("Waiting for: %(names)s")
    # An answer Telegram cannot show whole is not shown at all: long names are cut to fit.
    room = ANSWER_LIMIT - utf16_length(t(lang, template, names=""))
    return t(lang, template, names=names_within(scene.players, view.waiting_for, room))


def cancelled(scene: GroupScene) -> str:
    ending = t(scene.lang, "🛑 The game was cancelled.")
    text, _ = board(scene, MESSAGE_LIMIT - utf16_length(ending) - 2)
    return f"{text}\n\n{ending}"


# ---------------------------------------------------------------- the end


def play_again(scene: GroupScene) -> Keyboard:
    return ((Button(t(scene.lang, "🔁 Play again"), data=encode(RematchPress(scene.game_id))),),)


def game_over_lines(scene: GroupScene) -> list[str]:
    lang, view = scene.lang, scene.view
    reasons = {
        EndReason.THREE_SUCCESSFUL_MISSIONS: t(lang, "three missions succeeded"),
        EndReason.THREE_FAILED_MISSIONS: t(lang, "three missions failed"),
        EndReason.FIVE_REJECTIONS: (
            t(lang, "five teams in a row were rejected")
            if view.variants.targeting
            else t(lang, "five teams in a row were rejected for one mission")
        ),
    }
    if view.winner is Side.RESISTANCE:
        headline = t(lang, "🏁 <b>The Resistance wins</b>: %(reason)s.", reason=reasons[view.end_reason])
    else:
        headline = t(lang, "🏁 <b>The spies win</b>: %(reason)s.", reason=reasons[view.end_reason])
    spies = view.revealed_spies or ()
    resistance = [s for s in range(view.players) if s not in spies]
    return [
        headline,
        t(lang, "Missions: %(track)s", track=track(view)),
        t(lang, "Spies: %(names)s", names=names(scene.players, spies)),
        t(lang, "Resistance: %(names)s", names=names(scene.players, resistance)),
        t(lang, "/record sends this game's record as a file."),
        t(lang, "🔁 Play again seats the same players in a new lobby; /settings changes the next game's rules."),
    ]


def unreachable_notice(player: Player, lang: str, bot_username: str, waits: bool = True) -> tuple[str, Keyboard]:
    """The group hears that a private message did not reach `player`; `waits`: whether it asked for
    a decision the game waits for (otherwise it held what only they may see: their role, what a card
    showed them)."""
    from tgbot.render.common import open_chat_link

    if waits:
        text = t(
            lang,
            "%(player)s, I cannot write to you in private, so the game is waiting for you. Press the "
            "button, then Start (or unblock me): I will send you what you need.",
            player=mention(player),
        )
    else:
        text = t(
            lang,
            "%(player)s, I cannot write to you in private, where I send what only you may see. Press the "
            "button, then Start (or unblock me): I will send it to you.",
            player=mention(player),
        )
    return text, ((Button(t(lang, "Open the private chat"), url=open_chat_link(bot_username)),),)
