"""Fit and measure the ratings (memory/ratings.py) on real games: does a side's rating tell who wins?

    .venv/bin/python benchmarks/ratings_fit.py [--games ../shared/data/human-games/train.jsonl]
        [--players ../shared/data/human-games/players.jsonl] [--write]

The games (resistance-record/1 with outcome) and who sat where (players.jsonl, the same order) are
sorted by when they were played. Ratings run forward through all of them with `memory.ratings.rate`,
each game predicted from the ratings before it. The first 70% of the games are the train part, the
last 30% the test part. Choosing the OpenSkill model, beta, tau and the side offsets in the updates
uses the train part alone: the base log-odds per player count and k are fitted on its first 80% and
scored on its last 20% (validation). The chosen setting is then fitted on the whole train part and
scored on the test part, against the base rate by player count fitted on the same train part.
`--write` saves the chosen parameters to memory/params/ratings.json. Nothing of the data is kept
but those numbers. Prints the time taken and the machine's load average (uptime) before and after.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import subprocess
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np

from memory.ratings import DEFAULT, MU, SIGMA, Params, Rating, rate, skill_edge

ROOT = Path(__file__).resolve().parents[1]

DATA = ROOT.parent / "shared" / "data" / "human-games"
SIZES = range(5, 11)
TRAIN, FIT = 0.7, 0.8  # the train share of all games; the fit share of the train part
MODELS = ("PlackettLuce", "ThurstoneMostellerFull", "BradleyTerryFull")
BETAS = (MU / 6, MU / 12)  # OpenSkill's default first
TAUS = (MU / 300, 0.0, MU / 100)  # OpenSkill's default first
KS = (0.0, 0.5, 1.0, 1.7)  # fixed k values reported beside the fitted one


def load(games_path: Path, players_path: Path) -> list[tuple[int, list[str], list[str], bool]]:
    """(players, resistance ids, spy ids, resistance won) per game, in the order they were played."""
    rows = []
    with games_path.open(encoding="utf-8") as games, players_path.open(encoding="utf-8") as seats:
        for game_line, seat_line in zip(games, seats, strict=True):
            game, seat = json.loads(game_line), json.loads(seat_line)
            if game["id"] != seat["id"]:
                raise SystemExit(f"{players_path} is not in the order of {games_path}")
            spies = set(game["outcome"]["spies"])
            ids = seat["seat_players"]
            rows.append(
                (
                    seat["played_at"],
                    game["players"],
                    [p for s, p in enumerate(ids) if s not in spies],
                    [p for s, p in enumerate(ids) if s in spies],
                    game["outcome"]["winner"] == "resistance",
                )
            )
    rows.sort(key=lambda row: row[0])
    return [row[1:] for row in rows]


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def side_offsets(mode: str, beta: float, base: dict[int, float]) -> dict[int, float]:
    """The Resistance's handicap in updates. raw: none, OpenSkill as is (the bigger side is the
    favourite); even: unknown sides are equal; base: unknown sides win at the base rate."""
    if mode == "raw":  # cancels the size evening memory.ratings does
        spies = {5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}
        return {n: MU * ((n - spies[n]) - spies[n]) for n in SIZES}
    if mode == "even":
        return {n: 0.0 for n in SIZES}
    dist = NormalDist()
    return {n: dist.inv_cdf(1 / (1 + math.exp(-base[n]))) * math.sqrt(2 * beta**2 + n * SIGMA**2) for n in SIZES}


def run(games, params: Params) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Forward through the games: each one's player count, skill edge before it, outcome, and how
    many of its players had played at least 10 games before."""
    ratings: dict[str, Rating] = {}
    played: dict[str, int] = {}
    sizes, edges, won, known = [], [], [], []
    for players, resistance, spies, resistance_won in games:
        sizes.append(players)
        edges.append(skill_edge(ratings, resistance, spies, params=params))
        won.append(resistance_won)
        known.append(sum(played.get(p, 0) >= 10 for p in resistance + spies))
        ratings.update(rate(ratings, resistance, spies, resistance_won, players, params=params))
        for p in resistance + spies:
            played[p] = played.get(p, 0) + 1
    return np.array(sizes), np.array(edges), np.array(won, dtype=float), np.array(known)


def design(sizes: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.column_stack([(sizes == n).astype(float) for n in SIZES] + [edges])


def fit(sizes, edges, won, k: float | None = None) -> np.ndarray:
    """Base log-odds per player count and k by maximum likelihood (Newton steps, a little ridge);
    with `k` given, only the base log-odds, k held there."""
    x = design(sizes, edges)
    free = x if k is None else x[:, :-1]
    w = np.zeros(x.shape[1]) if k is None else np.append(np.zeros(free.shape[1]), k)
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        hess = (free * (p * (1 - p))[:, None]).T @ free + 1e-6 * np.eye(free.shape[1])
        step = np.linalg.solve(hess, free.T @ (won - p) - 1e-6 * w[: free.shape[1]])
        w[: free.shape[1]] += step
        if np.abs(step).max() < 1e-10:
            break
    return w


def predict(w: np.ndarray, sizes, edges) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(design(sizes, edges) @ w, -7, 7)))


def log_loss(p, y) -> float:
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))) if len(y) else float("nan")


def brier(p, y) -> float:
    return float(np.mean((p - y) ** 2)) if len(y) else float("nan")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=Path, default=DATA / "train.jsonl")
    parser.add_argument("--players", type=Path, default=DATA / "players.jsonl")
    parser.add_argument("--write", action="store_true", help="save the chosen parameters to memory/params/ratings.json")
    args = parser.parse_args()
    start, load_before = time.perf_counter(), uptime()

    games = load(args.games, args.players)
    train_end = int(len(games) * TRAIN)
    fit_end = int(train_end * FIT)
    fit_part, train = slice(0, fit_end), slice(0, train_end)
    sizes = np.array([g[0] for g in games])
    won = np.array([g[3] for g in games], dtype=float)
    print(f"{len(games)} games: train {train_end} (fit {fit_end}, validation {train_end - fit_end}), ", end="")
    print(f"test {len(games) - train_end}")

    # The base rates on the fit part, for the "base" side offsets while choosing.
    base_fit = fit(sizes[fit_part], np.zeros(fit_end), won[fit_part], k=0.0)
    base_logit_fit = {n: float(base_fit[i]) for i, n in enumerate(SIZES)}
    val = slice(fit_end, train_end)
    base_val = log_loss(predict(base_fit, sizes[val], np.zeros(train_end - fit_end)), won[val])
    print(f"\nchoosing on the validation part; the base rate alone: log loss {base_val:.4f}")
    print(f"{'model':24} {'beta':>6} {'tau':>6} {'sides':>5} {'k':>6} {'val loss':>9} {'gain':>8}")
    results = []
    for model, beta, tau, mode in itertools.product(MODELS, BETAS, TAUS, ("raw", "even", "base")):
        offsets = side_offsets(mode, beta, base_logit_fit)
        params = Params(model, beta, tau, offsets, {n: 0.0 for n in SIZES}, 0.0)
        s, e, y, _ = run(games[:train_end], params)
        w = fit(s[fit_part], e[fit_part], y[fit_part])
        loss = log_loss(predict(w, s[val], e[val]), y[val])
        # Settings within 0.0001 of each other are a tie, and the first listed (the defaults) wins one.
        results.append((round(loss, 4), len(results), model, beta, tau, mode))
        print(f"{model:24} {beta:6.3f} {tau:6.3f} {mode:>5} {w[-1]:6.3f} {loss:9.4f} {base_val - loss:+8.4f}")
    loss, _, model, beta, tau, mode = min(results)
    print(f"chosen: {model}, beta {beta:.4f}, tau {tau:.4f}, side offsets '{mode}' (validation log loss {loss:.4f})")

    # The chosen setting, fitted on the whole train part, scored on the test part.
    base_train = fit(sizes[train], np.zeros(train_end), won[train], k=0.0)
    offsets = side_offsets(mode, beta, {n: float(base_train[i]) for i, n in enumerate(SIZES)})
    probe = Params(model, beta, tau, offsets, {n: 0.0 for n in SIZES}, 0.0)
    s, e, y, known = run(games, probe)
    w = fit(s[train], e[train], y[train])
    chosen = Params(model, beta, tau, offsets, {n: float(w[i]) for i, n in enumerate(SIZES)}, float(w[-1]))
    test = slice(train_end, len(games))
    st, et, yt, kt = s[test], e[test], y[test], known[test]
    p_rated, p_base = predict(w, st, et), predict(base_train, st, np.zeros(len(st)))

    print(f"\ntest part ({len(yt)} games): k {chosen.k:.3f}")
    print(f"{'players':>7} {'games':>6} {'base':>6} {'loss base':>10} {'loss rated':>11} {'gain':>8}", end="")
    print(f" {'brier base':>11} {'brier rated':>12}")
    for label, mask in [("all", np.ones(len(yt), bool))] + [(str(n), st == n) for n in SIZES]:
        n_base = 1 / (1 + math.exp(-base_train[SIZES.index(int(label))])) if label != "all" else float(np.mean(p_base))
        lb, lr = log_loss(p_base[mask], yt[mask]), log_loss(p_rated[mask], yt[mask])
        print(
            f"{label:>7} {int(mask.sum()):6} {n_base:6.3f} {lb:10.4f} {lr:11.4f} {lb - lr:+8.4f}"
            f" {brier(p_base[mask], yt[mask]):11.4f} {brier(p_rated[mask], yt[mask]):12.4f}"
        )
    print("\nby how many of the game's players had played 10 games before it:")
    for label, mask in (("none", kt == 0), ("some", (kt > 0) & (kt < st)), ("all", kt == st)):
        lb, lr = log_loss(p_base[mask], yt[mask]), log_loss(p_rated[mask], yt[mask])
        print(f"{label:>7} {int(mask.sum()):6} games: loss base {lb:.4f}, rated {lr:.4f} ({lb - lr:+.4f})")

    print("\nfixed k (base log-odds refitted on the train part with k held):")
    for k in KS:
        print(f"  k {k:5.2f}: test log loss {log_loss(predict(fit(s[train], e[train], y[train], k), st, et), yt):.4f}")
    print(f"  k {chosen.k:5.2f} (fitted): test log loss {log_loss(p_rated, yt):.4f}")

    print("\ncalibration on the test part (the rated prediction, by tenths of the games):")
    print(f"{'from':>6} {'to':>6} {'games':>6} {'predicted':>10} {'happened':>9}")
    order = np.argsort(p_rated)
    for part in np.array_split(order, 10):
        print(
            f"{p_rated[part].min():6.3f} {p_rated[part].max():6.3f} {len(part):6}"
            f" {p_rated[part].mean():10.3f} {yt[part].mean():9.3f}"
        )

    # How sure a rating is after n games: the median sigma of those who played exactly n.
    ratings: dict[str, Rating] = {}
    count: dict[str, int] = {}
    for players, resistance, spies, resistance_won in games:
        ratings.update(rate(ratings, resistance, spies, resistance_won, players, params=chosen))
        for p in resistance + spies:
            count[p] = count.get(p, 0) + 1
    print("\nmedian sigma after n games:", end="")
    for n in (1, 2, 5, 10, 20, 50):
        sig = [ratings[p].sigma for p, c in count.items() if c == n]
        print(f"  {n}: {np.median(sig):.2f}" if sig else f"  {n}: -", end="")
    print(f"  (default {DEFAULT.sigma:.2f})")
    # What /top's ordinal (mu - 3 sigma) ranks by among people with 5 games or more (MIN_GAMES_ON_TOP):
    # its rank correlation with how many games they played, beside mu's.
    people = [p for p, c in count.items() if c >= 5]
    games_rank = np.argsort(np.argsort([count[p] for p in people]))
    for label, value in (("ordinal", lambda r: r.ordinal), ("mu", lambda r: r.mu)):
        rank = np.argsort(np.argsort([value(ratings[p]) for p in people]))
        print(f"{len(people)} people with 5+ games: rank correlation of {label} with games played", end="")
        print(f" {np.corrcoef(rank, games_rank)[0, 1]:+.2f}")

    print(f"\ntook {time.perf_counter() - start:.1f} s")
    print(f"load before: {load_before}")
    print(f"load after:  {uptime()}")
    if args.write:
        path = ROOT / "memory" / "params" / "ratings.json"
        path.parent.mkdir(exist_ok=True)
        data = {"format": "resistance-ratings/1", **chosen.to_json()}
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
