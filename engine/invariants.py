"""Whether a game state could have come from playing by the rules.

A stored game is untrusted input: `state_from_dict` checks every state it builds here and
refuses one that breaks a rule (two spies on one seat, a game over without a winner, a
Resistance member's Fail card waiting to be revealed, play going on after three failed
missions...), so that no play ever continues from a state the rules could not reach.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import fields, replace

from engine import rules
from engine.errors import StateFormatError
from engine.history import NotReplayable, replay_plot_state
from engine.plot import (
    IMMEDIATE_CARDS,
    Card,
    CardSeen,
    RoleSeen,
    UseKind,
    cards_per_mission,
    deck_counts,
    full_deck,
)
from engine.state import PLOT_PHASES, EndReason, GameState, MissionRound, Phase, Proposal, Side
from engine.steps import WINDOW_CARDS, may_use

# The steps in which a proposed team is on the table, and those before a team is named.
_TEAM_IN_PLAY = (Phase.VOTING, Phase.OVERTURN, Phase.SPOTLIGHT, Phase.MISSION, Phase.WATCH)
_BEFORE_TEAM = (Phase.LEAD, Phase.DEAL, Phase.PROPOSING)
# What the clock draws at random for whoever let the time run out (`engine.deadlines`).
_DRAWN_KINDS = (UseKind.DEAL, UseKind.ESTABLISH_CONFIDENCE, UseKind.TAKE, UseKind.OVERHEARD, UseKind.OPEN_UP)


def _require(condition: bool, problem: str) -> None:
    if not condition:
        raise StateFormatError(problem)


def _distinct_seats(seats: tuple[int, ...], players: int) -> bool:
    return len(set(seats)) == len(seats) and all(0 <= s < players for s in seats)


def _seats_in_order(seats: tuple[int, ...], players: int) -> bool:
    return _distinct_seats(seats, players) and list(seats) == sorted(seats)


def check_state(state: GameState) -> None:
    """Raise `StateFormatError` naming the first rule `state` breaks."""
    players = state.players
    _require(rules.MIN_PLAYERS <= players <= rules.MAX_PLAYERS, f"players: {players} is not a table size")
    _require(
        len(state.spies) == rules.spy_count(players) and _seats_in_order(state.spies, players),
        f"spies: a table of {players} has {rules.spy_count(players)} distinct spy seats, listed in order",
    )
    _require(0 <= state.leader < players, "leader: not a seat at the table")
    _require(state.version >= 0, "version: must not be negative")
    _require(
        state.variants.plot_cards or state.phase not in PLOT_PHASES,
        f"phase: {state.phase.value} is a step of the Plot cards, in a game without them",
    )

    leader = None  # who must lead the next proposal, once the first is known
    successes = failures = 0
    played_before: list[int] = []
    for index, current in enumerate(state.rounds):
        field = f"rounds[{index}]"
        last_round = index == len(state.rounds) - 1
        _require(successes < rules.MISSIONS_TO_WIN and failures < rules.MISSIONS_TO_WIN, f"{field}: the game was over")
        _require(1 <= len(current.proposals) <= rules.MAX_PROPOSALS_PER_MISSION, f"{field}: 1 to 5 proposals")
        for number, proposal in enumerate(current.proposals):
            pfield = f"{field}.proposals[{number}]"
            _require(
                leader is None or proposal.leader == leader or proposal.strong_leader, f"{pfield}.leader: out of turn"
            )
            _check_proposal(state, proposal, pfield, played_before, successes)
            last = number == len(current.proposals) - 1
            if not last:
                _require(
                    proposal.votes is not None and not proposal.approved,
                    f"{pfield}: only a round's last proposal may be approved or still open",
                )
            leader = (proposal.leader + 1) % players
        latest = current.proposals[-1]
        _require(
            (current.mission, current.team_size, current.fails_required)
            == (latest.mission, len(latest.team), rules.fails_required(players, latest.mission)),
            f"{field}: mission, team size and Fails needed must be those of its latest proposal",
        )
        if current.played:
            _check_played(state, current, field)
            successes += bool(current.succeeded)
            failures += not current.succeeded
            played_before.append(current.mission)
        else:
            _require(last_round, f"{field}: a round before the last was not played")
            _require(
                not current.auto_cards or state.phase is Phase.WATCH, f"{field}.auto_cards: the mission was not played"
            )
            _check_auto_cards(state, current, field)
    _check_phase(state, successes, failures, leader)
    if state.plot is not None or state.variants.plot_cards:
        _check_plot(state)


def _check_proposal(state: GameState, proposal: Proposal, field: str, played_before: list[int], successes: int) -> None:
    players = state.players
    _require(0 <= proposal.leader < players, f"{field}.leader: not a seat")
    _require(1 <= proposal.mission <= rules.MISSION_COUNT, f"{field}.mission: missions are 1 to 5")
    if not state.variants.targeting:
        _require(proposal.mission == len(played_before) + 1, f"{field}.mission: missions are played in order")
    else:
        _require(proposal.mission not in played_before, f"{field}.mission: attempted already")
        _require(
            proposal.mission != rules.MISSION_COUNT or successes >= rules.TARGETING_MISSION_5_SUCCESSES,
            f"{field}.mission: mission 5 opens after two successes",
        )
    _require(_seats_in_order(proposal.team, players), f"{field}.team: distinct seats, in order")
    _require(len(proposal.team) == rules.team_size(players, proposal.mission), f"{field}.team: wrong size")
    plot_cards = state.variants.plot_cards
    _require(
        plot_cards or (not proposal.strong_leader and not proposal.open_votes and proposal.no_confidence is None),
        f"{field}: Plot card fields in a game without Plot cards",
    )
    _require(_seats_in_order(proposal.open_votes, players), f"{field}.open_votes: distinct seats, in order")
    _require(
        proposal.no_confidence is None or (proposal.majority and 0 <= proposal.no_confidence < players),
        f"{field}.no_confidence: only a seat overturns, and only an approved team",
    )
    if proposal.votes is None:
        # With Opinion Makers the deadline may already have filled their votes.
        _require(
            not proposal.auto_votes
            or (set(proposal.auto_votes) <= set(proposal.open_votes) and state.phase is Phase.VOTING),
            f"{field}.auto_votes: the votes are not in",
        )
        if proposal.auto_votes and len(state.pending_votes) == players:
            filled = {state.pending_votes[s] for s in proposal.auto_votes}
            _require(
                len(filled) == 1 and None not in filled,
                f"{field}.auto_votes: one setting fills every missing vote",
            )
    else:
        _require(len(proposal.votes) == players, f"{field}.votes: one per seat")
        _require(_seats_in_order(proposal.auto_votes, players), f"{field}.auto_votes: distinct seats, in order")
        filled = {proposal.votes[s] for s in proposal.auto_votes}
        _require(len(filled) <= 1, f"{field}.auto_votes: one setting fills every missing vote")


def _check_played(state: GameState, current: MissionRound, field: str) -> None:
    latest = current.proposals[-1]
    _require(latest.approved, f"{field}.fails: played, but its last proposal was not approved")
    assert current.fails is not None
    _check_auto_cards(state, current, field)
    played_by_spies = [s for s in latest.team if s in state.spies and s not in current.auto_cards]
    _require(0 <= current.fails <= len(played_by_spies), f"{field}.fails: more Fail cards than spies who played")


def _check_auto_cards(state: GameState, current: MissionRound, field: str) -> None:
    """The members whose card the deadline played (while the watcher looks, before the round counts
    as played, too): each a member of the team, once, in order."""
    latest = current.proposals[-1]
    _require(
        _seats_in_order(current.auto_cards, state.players) and set(current.auto_cards) <= set(latest.team),
        f"{field}.auto_cards: team members, once each, in order",
    )


def _check_phase(state: GameState, successes: int, failures: int, next_leader: int | None) -> None:
    current = state.rounds[-1] if state.rounds else None
    latest = current.proposals[-1] if current is not None else None
    open_round = current is not None and not current.played
    five_rejections = open_round and current.rejections >= rules.MAX_PROPOSALS_PER_MISSION

    if successes >= rules.MISSIONS_TO_WIN:
        expected: tuple[Side, EndReason] | None = (Side.RESISTANCE, EndReason.THREE_SUCCESSFUL_MISSIONS)
    elif failures >= rules.MISSIONS_TO_WIN:
        expected = (Side.SPIES, EndReason.THREE_FAILED_MISSIONS)
    elif five_rejections:
        expected = (Side.SPIES, EndReason.FIVE_REJECTIONS)
    else:
        expected = None
    if expected is not None:
        _require(state.phase is Phase.OVER, f"phase: the game is over ({expected[1].value}) but play goes on")
        _require(
            (state.winner, state.end_reason) == expected,
            f"winner: {expected[0].value} win by {expected[1].value}",
        )
    else:
        _require(state.phase is not Phase.OVER, "phase: over, but neither side has won")
        _require(state.winner is None and state.end_reason is None, "winner: the game is not over")

    voting = state.phase is Phase.VOTING
    mission = state.phase is Phase.MISSION
    watch = state.phase is Phase.WATCH
    _require(len(state.pending_votes) == (state.players if voting else 0), "pending_votes: only while voting")
    _require(not state.pending_cards or mission or watch, "pending_cards: only during a mission")
    if not voting:
        _require(latest is None or latest.votes is not None, "phase: a proposal is waiting for its votes")
    if state.phase is Phase.OVER and latest is not None:
        _require(state.leader == latest.leader, "leader: the card stays with the last leader when the game ends")
    took_lead = state.plot is not None and state.plot.took_lead
    if state.phase in _BEFORE_TEAM:
        _require(
            next_leader is None or state.leader == next_leader or took_lead, "leader: the leader card passes clockwise"
        )
        # An approved team goes on its mission: nobody proposes again in its round (a No Confidence
        # taken off a stored proposal would otherwise leave two approved teams in one round).
        _require(
            not (open_round and latest is not None and latest.approved),
            "phase: a team was approved, so its mission comes next, not another proposal",
        )
    if state.phase in _TEAM_IN_PLAY:
        _require(open_round and latest is not None, f"phase: {state.phase.value} needs a proposal in play")
        _require(state.leader == latest.leader, "leader: the proposal's leader holds the card until it is settled")
    if voting:
        _require(latest.votes is None, "phase: voting on a proposal whose votes are revealed")
        _require(any(v is None for v in state.pending_votes), "pending_votes: all in, but not revealed")
    if state.phase is Phase.OVERTURN:
        _require(latest.majority and latest.no_confidence is None, "phase: No Confidence needs an approved team")
    if state.phase in (Phase.SPOTLIGHT, Phase.MISSION, Phase.WATCH):
        _require(latest.approved, "phase: a mission needs an approved team")
    if mission or watch:
        seats = tuple(seat for seat, _ in state.pending_cards)
        every_card = set(seats) == set(latest.team) if watch else set(seats) < set(latest.team)
        _require(
            _distinct_seats(seats, state.players) and every_card,
            "pending_cards: one card from each team member, all of them only in the watch window",
        )
        _require(
            all(not fail or seat in state.spies for seat, fail in state.pending_cards),
            "pending_cards: only a spy can play Fail",
        )


def _check_plot(state: GameState) -> None:
    """The Plot cards: none more than the deck holds, each where the step allows it."""
    plot = state.plot
    _require(plot is not None and state.variants.plot_cards, "plot: present exactly in a game with Plot cards")
    assert plot is not None
    players, phase = state.players, state.phase
    _require(len(plot.hands) == players, "plot.hands: one hand per seat")
    _require(
        all(card not in IMMEDIATE_CARDS for hand in plot.hands for card in hand),
        "plot.hands: immediate cards are never held",
    )
    in_play = plot.cards_in_play()
    _require(in_play <= Counter(deck_counts(players)), "plot: more cards than the deck holds")
    new_round = state.current_round is None and not state.is_over
    deals = len(state.rounds) + (1 if new_round and phase in (Phase.DEAL, Phase.PROPOSING) else 0)
    _require(
        len(plot.deck) == len(full_deck(players)) - deals * cards_per_mission(players),
        "plot.deck: the deck loses its cards at each mission's deal only",
    )
    dealing = phase is Phase.DEAL
    _require(dealing or (not plot.drawn and plot.receiving is None and not plot.deal_queue), "plot: a deal is over")
    if dealing:
        _require(new_round, "phase: the deal comes before a mission's first proposal")
        _require(bool(plot.drawn) or plot.receiving is not None, "plot.drawn: a deal with nothing left to do")
        _require(
            (plot.receiving is None) == (plot.receiving_card is None)
            and plot.receiving_card in (None, Card.TAKE_RESPONSIBILITY, Card.OVERHEARD_CONVERSATION, Card.OPEN_UP)
            and (plot.receiving is None or 0 <= plot.receiving < players),
            "plot.receiving: a receiver with an immediate card to resolve",
        )
        queued = Counter(card for card, _ in plot.deal_queue)
        _require(not queued or queued == Counter(plot.drawn), "plot.deal_queue: deals the drawn cards, once each")
    if phase in WINDOW_CARDS:
        _require(bool(plot.asked) and _distinct_seats(plot.asked, players), "plot.asked: a window asks someone")
        _require(
            all(plot.holds(seat, WINDOW_CARDS[phase]) for seat in plot.asked) and may_use(state, plot.asked[0]),
            "plot.asked: only holders who can use the window's card",
        )
    else:
        _require(not plot.asked, "plot.asked: only in a window")
    _require(not plot.took_lead or phase in (Phase.DEAL, Phase.PROPOSING), "plot.took_lead: before the team only")
    if plot.spotlight is not None:
        current = state.current_round
        by, target = plot.spotlight
        _require(
            phase in (Phase.MISSION, Phase.WATCH)
            and current is not None
            and target in (current.team or ())
            and by != target
            and 0 <= by < players,
            "plot.spotlight: on another member of the team playing",
        )
    _require(len(plot.uses) <= len(state.rounds) + 1, "plot.uses: one list per round")
    _require(
        all(not use.drawn or use.kind in _DRAWN_KINDS for uses in plot.uses for use in uses),
        "plot.uses: only a deal or an immediate card is drawn at random",
    )
    for seen in plot.seen:
        _require(seen.viewer != seen.seat, "plot.seen: nobody is shown their own role or card")
        if isinstance(seen, RoleSeen):
            _require(seen.spy == (seen.seat in state.spies), "plot.seen: a role seen is the seat's role")
        else:
            assert isinstance(seen, CardSeen)
            _require(not seen.fail or seen.seat in state.spies, "plot.seen: only a spy plays Fail")
    _check_history(state)


def _check_history(state: GameState) -> None:
    """Everything the Plot cards derive from the history (hands, deck, drawn cards, who is
    asked, what each seat saw, the count of decisions) is what playing that history again
    gives: the state is one that play reaches (`engine.history`)."""
    try:
        replayed = replay_plot_state(state)
    except NotReplayable as exc:
        raise StateFormatError(f"plot: the history breaks a rule ({exc})") from None
    replayed = replace(replayed, version=state.version)
    if replayed != state:
        raise StateFormatError(f"{_first_difference(replayed, state)}: not what playing the state's history gives")


def _first_difference(replayed: GameState, state: GameState) -> str:
    for field in fields(GameState):
        if getattr(replayed, field.name) != getattr(state, field.name):
            if field.name != "plot" or replayed.plot is None or state.plot is None:
                return field.name
            for plot_field in fields(replayed.plot):
                if getattr(replayed.plot, plot_field.name) != getattr(state.plot, plot_field.name):
                    return f"plot.{plot_field.name}"
    return "state"
