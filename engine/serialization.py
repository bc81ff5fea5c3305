"""Game state to and from plain JSON-compatible data, with a schema version.

Loading is strict: stored data is read back exactly or refused with `StateFormatError`,
never coerced, and a state that breaks a rule of the game is refused too
(`engine.invariants`), so a corrupted or foreign value cannot become a playable game.

Schema 1 (before each proposal named its mission and before missed deadlines were marked
seat by seat) is still read, so that games running across an upgrade go on. A game with
Plot cards is written as schema 3 (schema 2 plus the Plot fields), every other game still
as schema 2, so that an engine that cannot play Plot cards refuses only those games.
"""

from __future__ import annotations

from typing import Any

from engine import rules
from engine.errors import StateFormatError
from engine.invariants import check_state
from engine.plot import Card, CardSeen, PlotState, PlotUse, RoleSeen, Seen, UseKind
from engine.state import EndReason, GameState, MissionRound, Phase, Proposal, Side, Variants

SCHEMA_VERSION = 2
PLOT_SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)


def state_to_dict(state: GameState) -> dict[str, Any]:
    data = _plain_to_dict(state)
    if state.plot is None:
        return data
    data["schema"] = PLOT_SCHEMA_VERSION
    data["variants"]["plot_cards"] = True
    for r, stored in zip(state.rounds, data["rounds"], strict=True):
        for p, proposal in zip(r.proposals, stored["proposals"], strict=True):
            proposal.update(strong_leader=p.strong_leader, open_votes=list(p.open_votes), no_confidence=p.no_confidence)
    data["plot"] = _plot_to_dict(state.plot)
    return data


def _plot_to_dict(plot: PlotState) -> dict[str, Any]:
    return {
        "deck": [card.value for card in plot.deck],
        "hands": [[card.value for card in hand] for hand in plot.hands],
        "drawn": [card.value for card in plot.drawn],
        "receiving": plot.receiving,
        "receiving_card": None if plot.receiving_card is None else plot.receiving_card.value,
        "deal_queue": [[card.value, to] for card, to in plot.deal_queue],
        "asked": list(plot.asked),
        "took_lead": plot.took_lead,
        "spotlight": None if plot.spotlight is None else list(plot.spotlight),
        "uses": [[_use_to_dict(use) for use in uses] for uses in plot.uses],
        "seen": [_seen_to_dict(seen) for seen in plot.seen],
        "decisions": plot.decisions,
    }


def _use_to_dict(use: PlotUse) -> dict[str, Any]:
    written = {
        "kind": use.kind.value,
        "proposal": use.proposal,
        "by": use.by,
        "target": use.target,
        "card": None if use.card is None else use.card.value,
        "fail": use.fail,
    }
    if use.drawn:
        written["drawn"] = True  # only when true: a state written before the field reads the same
    return written


def _seen_to_dict(seen: Seen) -> dict[str, Any]:
    if isinstance(seen, RoleSeen):
        return {"viewer": seen.viewer, "seat": seen.seat, "spy": seen.spy}
    return {"viewer": seen.viewer, "seat": seen.seat, "mission": seen.mission, "fail": seen.fail}


def _plain_to_dict(state: GameState) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "version": state.version,
        "players": state.players,
        "spies": list(state.spies),
        "variants": {"targeting": state.variants.targeting, "blind_spies": state.variants.blind_spies},
        "leader": state.leader,
        "phase": state.phase.value,
        "rounds": [
            {
                "mission": r.mission,
                "team_size": r.team_size,
                "fails_required": r.fails_required,
                "proposals": [
                    {
                        "leader": p.leader,
                        "team": list(p.team),
                        "mission": p.mission,
                        "votes": None if p.votes is None else list(p.votes),
                        "auto_team": p.auto_team,
                        "auto_votes": list(p.auto_votes),
                    }
                    for p in r.proposals
                ],
                "fails": r.fails,
                "auto_cards": list(r.auto_cards),
            }
            for r in state.rounds
        ],
        "pending_votes": list(state.pending_votes),
        "pending_cards": [[seat, fail] for seat, fail in state.pending_cards],
        "winner": state.winner.value if state.winner else None,
        "end_reason": state.end_reason.value if state.end_reason else None,
    }


def _int(value: Any, name: str, low: int = 0, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        raise StateFormatError(f"{name}: expected a whole number from {low}{'' if high is None else f' to {high}'}")
    return value


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise StateFormatError(f"{name}: expected true or false")
    return value


def _list(value: Any, name: str, length: int | None = None) -> list:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise StateFormatError(f"{name}: expected a list" + ("" if length is None else f" of {length}"))
    return value


def _optional(value: Any, read, name: str):
    return None if value is None else read(value, name)


def state_from_dict(data: Any) -> GameState:
    if not isinstance(data, dict):
        raise StateFormatError("game state must be an object")
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema not in READABLE_SCHEMAS:
        raise StateFormatError(f"unsupported game state schema {schema!r}; this engine reads {READABLE_SCHEMAS}")
    state = _read(data, schema)
    check_state(state)
    return state


def _read(data: dict, schema: int) -> GameState:
    try:
        players = _int(data["players"], "players", rules.MIN_PLAYERS, rules.MAX_PLAYERS)
        seat = players - 1
        spies = tuple(_int(s, "spies[]", 0, seat) for s in _list(data["spies"], "spies", rules.spy_count(players)))
        variants = data["variants"]
        rounds = tuple(_round(r, players, schema) for r in _list(data["rounds"], "rounds"))
        pending_votes = tuple(
            _optional(v, _bool, "pending_votes[]") for v in _list(data["pending_votes"], "pending_votes")
        )
        if len(pending_votes) not in (0, players):
            raise StateFormatError(f"pending_votes: expected none or {players}")
        plot_cards = schema == PLOT_SCHEMA_VERSION
        if plot_cards != ("plot" in data):
            raise StateFormatError(f"plot: only schema {PLOT_SCHEMA_VERSION} has Plot cards, not schema {schema!r}")
        if set(variants) != {"targeting", "blind_spies"} | ({"plot_cards"} if plot_cards else set()):
            raise StateFormatError("variants: unexpected fields")
        if plot_cards and variants["plot_cards"] is not True:
            raise StateFormatError("variants.plot_cards: a schema 3 state is a game with Plot cards")
        return GameState(
            players=players,
            spies=spies,
            variants=Variants(
                targeting=_bool(variants["targeting"], "variants.targeting"),
                blind_spies=_bool(variants["blind_spies"], "variants.blind_spies"),
                plot_cards=plot_cards,
            ),
            leader=_int(data["leader"], "leader", 0, seat),
            phase=Phase(data["phase"]),
            rounds=rounds,
            pending_votes=pending_votes,
            pending_cards=tuple(
                (_int(card[0], "pending_cards[][0]", 0, seat), _bool(card[1], "pending_cards[][1]"))
                for card in (_list(c, "pending_cards[]", 2) for c in _list(data["pending_cards"], "pending_cards"))
            ),
            winner=None if data["winner"] is None else Side(data["winner"]),
            end_reason=None if data["end_reason"] is None else EndReason(data["end_reason"]),
            version=_int(data["version"], "version"),
            plot=_plot(data["plot"], players) if plot_cards else None,
        )
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFormatError(f"malformed game state: {exc!r}") from exc


def _seats(value: Any, name: str, players: int) -> tuple[int, ...]:
    return tuple(_int(s, f"{name}[]", 0, players - 1) for s in _list(value, name))


def _round(r: Any, players: int, schema: int) -> MissionRound:
    mission = _int(r["mission"], "rounds[].mission", 1, rules.MISSION_COUNT)
    return MissionRound(
        mission=mission,
        team_size=_int(r["team_size"], "rounds[].team_size", 1, players),
        fails_required=_int(r["fails_required"], "rounds[].fails_required", 1, 2),
        proposals=tuple(_proposal(p, players, schema, mission) for p in _list(r["proposals"], "rounds[].proposals")),
        fails=_optional(r["fails"], lambda v, n: _int(v, n, 0, players), "rounds[].fails"),
        auto_cards=() if schema == 1 else _seats(r["auto_cards"], "rounds[].auto_cards", players),
    )


def _proposal(p: Any, players: int, schema: int, round_mission: int) -> Proposal:
    votes = (
        None
        if p["votes"] is None
        else tuple(_bool(v, "proposals[].votes[]") for v in _list(p["votes"], "proposals[].votes", players))
    )
    leader = _int(p["leader"], "proposals[].leader", 0, players - 1)
    team = _seats(p["team"], "proposals[].team", players)
    if schema == 1:
        # Schema 1 kept one mission per round, and a leader's missed turn as a proposal that
        # everyone "rejected": now a drawn team whose every vote the deadline filled in.
        missed = _bool(p.get("timed_out", False), "proposals[].timed_out")
        return Proposal(
            leader=leader,
            team=team,
            mission=round_mission,
            votes=votes,
            auto_team=missed,
            auto_votes=tuple(range(players)) if missed else (),
        )
    proposal = Proposal(
        leader=leader,
        team=team,
        mission=_int(p["mission"], "proposals[].mission", 1, rules.MISSION_COUNT),
        votes=votes,
        auto_team=_bool(p["auto_team"], "proposals[].auto_team"),
        auto_votes=_seats(p["auto_votes"], "proposals[].auto_votes", players),
    )
    if schema < PLOT_SCHEMA_VERSION:
        return proposal
    return Proposal(
        leader=proposal.leader,
        team=proposal.team,
        mission=proposal.mission,
        votes=proposal.votes,
        auto_team=proposal.auto_team,
        auto_votes=proposal.auto_votes,
        strong_leader=_bool(p["strong_leader"], "proposals[].strong_leader"),
        open_votes=_seats(p["open_votes"], "proposals[].open_votes", players),
        no_confidence=_optional(p["no_confidence"], _seat_reader(players), "proposals[].no_confidence"),
    )


def _seat_reader(players: int):
    return lambda value, name: _int(value, name, 0, players - 1)


def _card(value: Any, name: str) -> Card:
    if not isinstance(value, str):
        raise StateFormatError(f"{name}: expected a Plot card")
    try:
        return Card(value)
    except ValueError:
        raise StateFormatError(f"{name}: no Plot card {value!r}") from None


def _cards(value: Any, name: str) -> tuple[Card, ...]:
    return tuple(_card(c, f"{name}[]") for c in _list(value, name))


def _plot(p: Any, players: int) -> PlotState:
    if not isinstance(p, dict):
        raise StateFormatError("plot: expected an object")
    seat = players - 1
    spotlight = _optional(p["spotlight"], lambda v, n: _seats(_list(v, n, 2), n, players), "plot.spotlight")
    return PlotState(
        deck=_cards(p["deck"], "plot.deck"),
        hands=tuple(_cards(hand, "plot.hands[]") for hand in _list(p["hands"], "plot.hands", players)),
        drawn=_cards(p["drawn"], "plot.drawn"),
        receiving=_optional(p["receiving"], lambda v, n: _int(v, n, 0, seat), "plot.receiving"),
        receiving_card=_optional(p["receiving_card"], _card, "plot.receiving_card"),
        deal_queue=tuple(
            (_card(d[0], "plot.deal_queue[][0]"), _int(d[1], "plot.deal_queue[][1]", 0, seat))
            for d in (_list(d, "plot.deal_queue[]", 2) for d in _list(p["deal_queue"], "plot.deal_queue"))
        ),
        asked=_seats(p["asked"], "plot.asked", players),
        took_lead=_bool(p["took_lead"], "plot.took_lead"),
        spotlight=None if spotlight is None else (spotlight[0], spotlight[1]),
        uses=tuple(
            tuple(_use(u, players) for u in _list(uses, "plot.uses[]")) for uses in _list(p["uses"], "plot.uses")
        ),
        seen=tuple(_seen(s, players) for s in _list(p["seen"], "plot.seen")),
        decisions=_int(p["decisions"], "plot.decisions"),
    )


def _use(u: Any, players: int) -> PlotUse:
    if not isinstance(u, dict) or set(u) - {"drawn"} != {"kind", "proposal", "by", "target", "card", "fail"}:
        raise StateFormatError("plot.uses[][]: expected kind, proposal, by, target, card, fail (and drawn)")
    return PlotUse(
        kind=UseKind(u["kind"]),
        proposal=_int(u["proposal"], "plot.uses[][].proposal", 0, rules.MAX_PROPOSALS_PER_MISSION - 1),
        by=_int(u["by"], "plot.uses[][].by", 0, players - 1),
        target=_int(u["target"], "plot.uses[][].target", 0, players - 1),
        card=_optional(u["card"], _card, "plot.uses[][].card"),
        fail=_optional(u["fail"], _bool, "plot.uses[][].fail"),
        drawn=_bool(u.get("drawn", False), "plot.uses[][].drawn"),
    )


def _seen(s: Any, players: int) -> Seen:
    if not isinstance(s, dict):
        raise StateFormatError("plot.seen[]: expected an object")
    viewer = _int(s["viewer"], "plot.seen[].viewer", 0, players - 1)
    seat = _int(s["seat"], "plot.seen[].seat", 0, players - 1)
    if set(s) == {"viewer", "seat", "spy"}:
        return RoleSeen(viewer=viewer, seat=seat, spy=_bool(s["spy"], "plot.seen[].spy"))
    if set(s) == {"viewer", "seat", "mission", "fail"}:
        mission = _int(s["mission"], "plot.seen[].mission", 1, rules.MISSION_COUNT)
        return CardSeen(viewer=viewer, seat=seat, mission=mission, fail=_bool(s["fail"], "plot.seen[].fail"))
    raise StateFormatError("plot.seen[]: expected a role or a mission card seen")
