"""The play a Plot game's state records, played again: whether the state is one play reaches.

A Plot state keeps its history: each proposal (leader, team, votes, who took the lead or
threw the team out), each mission's Fail cards, and every public Plot event of each round
(`PlotState.uses`: each card dealt, taken, looked at, shown). Every other Plot field is
derived from it: the hands, the deck's drawn cards, who is asked in a window, what each seat
has seen, the count of decisions. `replay_plot_state` plays that history again from a new
game (its deck put together from the cards dealt, the cards drawn and the cards left), asking
each window's holders in turn and letting pass those the history shows did nothing, and
returns the state reached; `engine.invariants` refuses a stored state that differs from it.

What the state does not keep is chosen where no choice changes the state: the order of the
votes, which spies of a played mission put in its Fail cards beyond those someone saw (a
watched card, a spotlighted one), and whether a window's holder passed or let the time run out.
So the play is found whenever one exists, and the state it reaches is the stored one exactly
when the stored state is reachable.
"""

from __future__ import annotations

from engine.actions import (
    Action,
    CardsTimedOut,
    CastVote,
    DealCard,
    DealTimedOut,
    ImmediateTimedOut,
    LeaderTimedOut,
    OpenUp,
    Overhear,
    Pass,
    PlayCard,
    ProposeTeam,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    VotesTimedOut,
    Watch,
)
from engine.errors import IllegalAction
from engine.game import apply, new_game
from engine.plot import CardSeen, PlotUse, UseKind
from engine.state import GameState, MissionRound, Phase, Proposal
from engine.steps import round_index

# No game of five missions of five proposals comes near this many actions: a guard against a loop.
_MAX_ACTIONS = 2000


class NotReplayable(Exception):
    """The history a state records cannot be played by the rules."""


def replay_plot_state(state: GameState) -> GameState:
    """The state reached by playing again the history `state` records, from a new game with its
    roles, first leader and a deck that deals the cards its history dealt; its `version` is the
    number of actions played. Raises `NotReplayable` where the history breaks a rule."""
    assert state.plot is not None
    game = _new_game(state)
    played = 0
    while True:
        actions = _next_actions(game, state)
        if actions is None:
            return game
        for action in actions:
            try:
                game, _ = apply(game, action)
            except IllegalAction as exc:
                raise NotReplayable(f"{type(action).__name__}: {exc}") from None
        played += len(actions)
        if played > _MAX_ACTIONS or not actions:
            raise NotReplayable("the history does not end")


def _new_game(state: GameState) -> GameState:
    plot = state.plot
    assert plot is not None
    dealt = tuple(use.card for uses in plot.uses for use in uses if use.kind is UseKind.DEAL)
    if any(card is None for card in dealt):
        raise NotReplayable("a deal names no card")
    first_leader = state.rounds[0].proposals[0].leader if state.rounds else state.leader
    try:
        return new_game(
            state.players,
            variants=state.variants,
            spies=state.spies,
            first_leader=first_leader,
            deck=dealt + plot.drawn + plot.deck,  # type: ignore[operator]
        )
    except ValueError as exc:
        raise NotReplayable(f"the deck: {exc}") from None


def _next_actions(game: GameState, target: GameState) -> list[Action] | None:
    """The actions the history of `target` plays next from `game`, or None once `game` has
    played all of it (or is where the history breaks off: the comparison then refuses it)."""
    plot, goal = game.plot, target.plot
    assert plot is not None and goal is not None
    index = round_index(game)
    made = len(game.rounds[index].proposals) if index < len(game.rounds) else 0
    goal_round = target.rounds[index] if index < len(target.rounds) else None
    # The proposal the history has next (LEAD, DEAL, PROPOSING) or in play (the later steps).
    number = made if game.phase in (Phase.LEAD, Phase.DEAL, Phase.PROPOSING) else made - 1
    proposal = goal_round.proposals[number] if goal_round is not None and number < len(goal_round.proposals) else None
    # Whether `target` stops at this very step: same round, same proposal, same window.
    here = (
        target.phase is game.phase
        and round_index(target) == index
        and (len(goal_round.proposals) if goal_round is not None else 0) == made
    )
    phase = game.phase
    if phase is Phase.OVER:
        return None
    if phase is Phase.PROPOSING:
        if proposal is None:
            return None
        mission = proposal.mission if game.variants.targeting else None
        if proposal.auto_team:
            return [LeaderTimedOut(proposal.team, mission)]
        return [ProposeTeam(game.leader, proposal.team, mission)]
    if phase is Phase.DEAL:
        return _deal(game, target, index, here)
    if phase is Phase.VOTING:
        return _votes(game, target, proposal, here)
    if phase is Phase.MISSION:
        return _cards(game, target, goal_round, index, here)
    seat = plot.asked[0]
    if phase is Phase.LEAD:
        if proposal is not None:
            took = proposal.strong_leader and proposal.leader == seat
        else:
            # The lead taken on the proposal the target is about to make.
            at_proposal = round_index(target) == index and not here and target.phase in (Phase.DEAL, Phase.PROPOSING)
            took = at_proposal and goal.took_lead and target.leader == seat
        if took:
            return [UseStrongLeader(seat)]
    elif phase is Phase.OVERTURN:
        if proposal is not None and proposal.no_confidence == seat:
            return [UseNoConfidence(seat)]
    elif phase is Phase.SPOTLIGHT:
        spotlight = _spotlight(target, index, number)
        if spotlight is not None and spotlight[0] == seat:
            return [Spotlight(seat, spotlight[1])]
    else:
        assert phase is Phase.WATCH
        watched = tuple(use.target for use in _uses(target, index) if use.kind is UseKind.WATCH and use.by == seat)
        if watched:
            return [Watch(seat, watched)]
    if here and goal.asked == plot.asked:
        return None
    return [Pass(seat)]


def _uses(state: GameState, index: int) -> tuple[PlotUse, ...]:
    assert state.plot is not None
    return state.plot.uses[index] if index < len(state.plot.uses) else ()


def _deal(game: GameState, target: GameState, index: int, here: bool) -> list[Action] | None:
    plot, goal = game.plot, target.plot
    assert plot is not None and goal is not None
    done = _uses(game, index)
    history = _uses(target, index)
    if len(history) <= len(done):
        return None
    use = history[len(done)]
    if plot.receiving is None:
        if use.kind is not UseKind.DEAL:
            return None
        if not use.drawn:
            assert use.card is not None
            return [DealCard(game.leader, use.card, use.target)]
        # The leader let the time run out: every card still to give went in one draw.
        deals = tuple((u.card, u.target) for u in history[len(done) :] if u.kind is UseKind.DEAL)
        queue = goal.deal_queue if here else ()
        return [DealTimedOut(deals + queue)]  # type: ignore[arg-type]
    if use.drawn:
        return [ImmediateTimedOut(use.target, use.card)]
    receiver = plot.receiving
    if use.kind is UseKind.TAKE and use.card is not None:
        return [TakeCard(receiver, use.card, use.target)]
    if use.kind is UseKind.OVERHEARD:
        return [Overhear(receiver, use.target)]
    if use.kind is UseKind.OPEN_UP:
        return [OpenUp(receiver, use.target)]
    return None


def _votes(game: GameState, target: GameState, proposal: Proposal | None, here: bool) -> list[Action] | None:
    """Every vote of the proposal, the Opinion Makers' first; with the target still voting,
    the votes it has, after which the history ends."""
    if game.pending_votes and any(vote is not None for vote in game.pending_votes):
        return None  # the votes the target has are in: it is voting still
    if proposal is None:
        return None
    if proposal.votes is not None:
        votes: tuple[bool | None, ...] = proposal.votes
    elif here and len(target.pending_votes) == game.players:
        votes = target.pending_votes
    else:
        return None
    current = game.current_round
    assert current is not None
    open_seats = current.proposals[-1].open_votes
    filled = proposal.auto_votes
    actions: list[Action] = []
    for group in (open_seats, tuple(s for s in range(game.players) if s not in open_seats)):
        actions += [CastVote(s, bool(votes[s])) for s in group if s not in filled and votes[s] is not None]
        missed = [s for s in group if s in filled]
        if missed:
            actions.append(VotesTimedOut(bool(votes[missed[0]])))
    if proposal.votes is None and not actions:
        return None  # nobody has voted yet
    return actions


def _spotlight(target: GameState, index: int, number: int) -> tuple[int, int] | None:
    """Who used In the Spotlight on whom, on proposal `number` of round `index` of `target`."""
    assert target.plot is not None
    current = target.current_round
    in_play = current is not None and round_index(target) == index and len(current.proposals) - 1 == number
    if target.plot.spotlight is not None and in_play:
        return target.plot.spotlight
    for use in _uses(target, index):
        if use.kind is UseKind.SPOTLIGHT and use.proposal == number:
            return use.by, use.target
    return None


def _cards(
    game: GameState, target: GameState, goal_round: MissionRound | None, index: int, here: bool
) -> list[Action] | None:
    """The team's cards: those of a played mission (which spies failed beyond those someone
    saw does not show in the state), or those the target has in."""
    if game.pending_cards or goal_round is None:
        return None
    if goal_round.played:
        known = _cards_seen(target, goal_round, index)
        fails = (goal_round.fails or 0) - sum(known.values())
        actions: list[Action] = []
        for seat in goal_round.card_players:
            fail = known.get(seat)
            if fail is None:
                fail = seat in target.spies and fails > 0
                fails -= fail
            actions.append(PlayCard(seat, fail))
        return actions + ([CardsTimedOut()] if goal_round.auto_cards else [])
    if here:
        return [PlayCard(seat, fail) for seat, fail in target.pending_cards] or None
    if target.phase is Phase.WATCH and round_index(target) == index:
        played = [PlayCard(seat, fail) for seat, fail in target.pending_cards if seat not in goal_round.auto_cards]
        return played + ([CardsTimedOut()] if goal_round.auto_cards else [])
    return None


def _cards_seen(target: GameState, goal_round: MissionRound, index: int) -> dict[int, bool]:
    """The cards of a played mission someone saw: watched, or played face up in the spotlight."""
    assert target.plot is not None
    known: dict[int, bool] = {}
    for seen in target.plot.seen:
        if isinstance(seen, CardSeen) and seen.mission == goal_round.mission:
            known.setdefault(seen.seat, seen.fail)
    for use in _uses(target, index):
        if use.kind is UseKind.SPOTLIGHT and use.fail is not None:
            known.setdefault(use.target, use.fail)
    return {seat: fail for seat, fail in known.items() if seat in goal_round.card_players}
