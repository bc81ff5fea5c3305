"""How many one-field changes of a stored Plot game still load, and how many of those play can reach.

    .venv/bin/python tools/plot_state_mutations.py [--games 30] [--every 12] [--seed 0]

Plays random legal Plot games (5 to 10 players, with and without Targeting, deadlines and
Plot card uses at several rates), takes every `--every`-th state of each, stores it as JSON,
and changes one field of the stored form in every plausible way: each number to each other
number from -1 to 11 or to null, each true/false to the other or null, each null to a seat,
a bool or a name the state uses (a phase, a card, a kind of Plot event, a side, an end), each
name to each other name or null, each list with one element dropped, one duplicated, one seat or
card added, or emptied, each object to null. Each changed state is loaded with
`state_from_dict`; a loaded one is reachable when playing again the history it records
(`engine.history.replay_plot_state`) reaches exactly it, version stamp aside: that replay plays
only moves `engine.game.apply` accepts, so a state it reaches is one play reaches (such as a
vote cast the other way, or a card dealt to another seat). Prints the share of changes loaded,
split into reachable and unreachable, and the fields of the unreachable ones.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

from engine import (
    Card,
    EndReason,
    GameState,
    Phase,
    Side,
    StateFormatError,
    UseKind,
    Variants,
    apply,
    new_game,
    state_from_dict,
    state_to_dict,
)
from engine.history import NotReplayable, replay_plot_state
from engine.simulate import random_action

NAMES = sorted({*Phase, *Card, *UseKind, *Side, *EndReason})


def snapshots(games: int, every: int, seed: int) -> Iterator[GameState]:
    for game in range(games):
        rng = random.Random(seed * 100_003 + game)
        players = 5 + game % 6
        variants = Variants(targeting=game % 4 == 3, blind_spies=game % 5 == 4, plot_cards=True)
        state = new_game(players, rng, variants)
        rates = {
            "approve_rate": rng.uniform(0.3, 0.9),
            "spy_fail_rate": rng.uniform(0.2, 0.9),
            "deadline_rate": (0.0, 0.1, 0.4)[game % 3],
            "plot_use_rate": (0.5, 0.9, 0.2)[game % 3],
        }
        step = rng.randrange(every)
        while True:
            if step % every == 0:
                yield state
            if state.is_over:
                break
            state, _ = apply(state, random_action(state, rng, **rates))
            step += 1


def _nodes(data, path=()):
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _nodes(value, (*path, index))


def _replacements(value, players: int) -> list:
    if isinstance(value, bool):
        return [not value, None]
    if isinstance(value, int):
        return [n for n in range(-1, 12) if n != value] + [None]
    if value is None:
        return [True, False, *range(players), *NAMES]
    if isinstance(value, str):
        return [name for name in NAMES if name != value] + [None]
    if isinstance(value, list):
        return [[], None]
    return [None]


def _additions(items: list, players: int) -> list:
    if all(isinstance(item, bool) for item in items) and items:
        return [True, False]
    if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        seats = [seat for seat in range(players) if seat not in items]
        return seats + ([] if items else [card.value for card in Card])
    if all(isinstance(item, str) for item in items):
        return [card.value for card in Card]
    return []


def mutations(stored: dict) -> Iterator[tuple[str, dict]]:
    """Every one-field change of `stored`, each once, with the path of the field changed."""
    players = stored["players"]
    original = json.dumps(stored, sort_keys=True)
    seen = {original}

    def changed(path, change) -> tuple[str, dict] | None:
        mutated = json.loads(original)
        parent = mutated
        for step in path[:-1]:
            parent = parent[step]
        change(parent, path[-1])
        text = json.dumps(mutated, sort_keys=True)
        if text in seen:
            return None
        seen.add(text)
        return ".".join(str(step) for step in path), mutated

    for path, value in list(_nodes(stored)):
        if not path or path == ("schema",):
            continue
        found = []
        for new in _replacements(value, players):
            found.append(changed(path, lambda parent, key, new=new: parent.__setitem__(key, new)))
        if isinstance(value, list):
            for index in range(len(value)):
                found.append(changed((*path, index), lambda parent, key: parent.pop(key)))
                found.append(changed((*path, index), lambda parent, key: parent.insert(key, parent[key])))
            for item in _additions(value, players):
                found.append(changed((*path, len(value)), lambda parent, key, item=item: parent.append(item)))
        yield from (f for f in found if f is not None)


def reachable(state: GameState) -> bool:
    try:
        return replace(replay_plot_state(state), version=state.version) == state
    except NotReplayable:
        return False


def _field(path: str) -> str:
    """The field a path names, list indexes taken out: rounds.proposals.votes, plot.hands."""
    return ".".join(step for step in path.split(".") if not step.isdigit())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--every", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    unreachable_fields: Counter[str] = Counter()
    reachable_fields: Counter[str] = Counter()
    examples: dict[str, str] = {}
    states = 0
    for state in snapshots(args.games, args.every, args.seed):
        states += 1
        stored = json.loads(json.dumps(state_to_dict(state)))
        assert state_from_dict(stored) == state
        for path, mutated in mutations(stored):
            counts["changes"] += 1
            try:
                loaded = state_from_dict(mutated)
            except StateFormatError:
                counts["refused"] += 1
                continue
            if reachable(loaded):
                counts["loaded, reachable"] += 1
                reachable_fields[_field(path)] += 1
                continue
            counts["loaded, unreachable"] += 1
            unreachable_fields[_field(path)] += 1
            examples.setdefault(_field(path), f"{path} in a {state.players}-player state at {state.phase.value}")
    total = counts["changes"]
    print(f"{states} states, {total} one-field changes")
    for name in ("refused", "loaded, reachable", "loaded, unreachable"):
        print(f"  {name:20} {counts[name]:8}  {100 * counts[name] / total:5.1f}%")
    loaded = counts["loaded, reachable"] + counts["loaded, unreachable"]
    print(f"  loaded               {loaded:8}  {100 * loaded / total:5.1f}%")
    print("reachable changes, by field:")
    for field, count in reachable_fields.most_common():
        print(f"  {count:7}  {field}")
    if unreachable_fields:
        print("unreachable changes that load, by field:")
        for field, count in unreachable_fields.most_common():
            print(f"  {count:7}  {field}  (e.g. {examples[field]})")


if __name__ == "__main__":
    main()
