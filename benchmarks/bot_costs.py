"""What one game costs: Redis commands and Bot API calls, for 5 and for 10 players.

    .venv/bin/python benchmarks/bot_costs.py [--games 20] [--players 5 10] [--seed 1]
                                             [--redis-url redis://127.0.0.1:6379/14]
                                             [--attempts 5] [--own-server]
                                             [--pace fast human] [--human-seconds 3] [--plot]

Plays whole games (/newgame, every player joining through the link, /startgame, then every
move to the end) with `SimulatedGroup` and a random `Policy`, one game at a time, through the
real bot on the in-memory fake Bot API and a real Redis. Every game has a seed of its own, so
the same games are played on every run.

Redis commands are the deltas of `INFO commandstats` (calls per command) around each game, so
they include the commands Lua scripts run (an EVALSHA counts once, and so does each command its
script runs). Round trips are the requests the bot's own client writes to Redis (a command, a
pipeline, a MULTI/EXEC block or an EVALSHA each count one). The simulated players read the
stored game to decide their moves through a client of their own; those reads are counted on
that client and taken off, as are this script's INFO and CLIENT LIST calls.

`INFO commandstats` counts the whole server, so the counts are only right on an otherwise idle
server. After each game the script looks at CLIENT LIST: if a client not its own sent a command
or connected during the game, the game is played again (the same game), up to `--attempts`
times; games still disturbed are reported. `--own-server` starts a private redis-server on a
free port instead, as the tests' fixture does when no Redis answers.

Bot API calls are counted from `FakeTelegram.calls` by method. For each button press, also the
Bot API calls the bot made before it answered the press (none is expected: the press is answered
once its change is stored, and its messages are delivered after that). Group messages per
mission round: sendMessage and editMessageText calls to the group chat from /startgame to the
end of the game, divided by the number of mission rounds (every mission attempted, played or
not: after five rejected teams the spies win and that round's mission is never played).

Pace: `fast` makes every move as soon as the previous one is answered, one at a time.
`human` lets each player act after a random delay (uniform up to --human-seconds, default
3 s): a vote's or a mission's players act at the same time, each after a delay of their own,
and the leader pauses before each tick. The bot's behaviour does not depend on the clock
within a step, so the two paces should cost the same; both are measured to show it.

`--plot` plays with the Plot cards (holders use a card 70% of the times they are asked).

Uses Redis database 14 by default and flushes it at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

from redis.asyncio import Connection, Redis

from engine import Phase, Variants, public_view
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.harness import start_offline_bot
from tgbot.offline.simulation import Policy, SimulatedGroup
from tgbot.store import Store

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"
CLIENT_NAME = "bot-costs"  # every connection of this script is named so, the bot's included
GROUP_MESSAGES = ("sendMessage", "editMessageText")


class OwnConnection(Connection):
    """Every connection this script opens counts itself, so that the server's count of connections
    received tells another client's from one more of ours (a pool grows when two commands overlap)."""

    opened = 0

    async def _connect(self) -> None:
        # The socket being opened (each try of it), which is what the server counts as a
        # connection received; redis-py has no public hook at that point.
        OwnConnection.opened += 1
        await super()._connect()


class CountingConnection(OwnConnection):
    """The bot's connections: every request written to Redis is one round trip (a command, a
    pipeline, a MULTI/EXEC block or an EVALSHA, whatever its script runs)."""

    round_trips = 0

    async def send_packed_command(self, command, check_health: bool = True) -> None:
        CountingConnection.round_trips += 1
        await super().send_packed_command(command, check_health)


class CountingRedis(Redis):
    """The simulated players' own client: counts what it sends, to take it off the server's counts."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.sent: Counter[str] = Counter()

    async def execute_command(self, *args, **options):
        self.sent[str(args[0]).lower()] += 1
        return await super().execute_command(*args, **options)


class ReadingGroup(SimulatedGroup):
    """A simulated group that reads the game through the players' client and counts its updates."""

    def __init__(self, *args, players_store: Store, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._players_store = players_store
        self.updates = 0
        self.before_answer: list[int] = []  # per press: Bot API calls the bot made before answering it

    @property
    def store(self) -> Store:
        return self._players_store

    async def send(self, update: dict) -> None:
        self.updates += 1
        first = len(self.telegram.calls)
        await super().send(update)
        if "callback_query" in update:
            methods = [method for method, _ in self.telegram.calls[first:]]
            self.before_answer.append(methods.index("answerCallbackQuery"))


class HumanPacedGroup(ReadingGroup):
    """Players who take their time: a vote's (or a mission's) players act together, each after a random delay."""

    def __init__(self, *args, rng: random.Random, seconds: float, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rng = rng
        self._seconds = seconds

    async def _pause(self) -> None:
        await asyncio.sleep(self._rng.uniform(0, self._seconds))

    async def press(self, user_id: int, chat_id: int, prefix: str, ending: str) -> None:
        await self._pause()
        await super().press(user_id, chat_id, prefix, ending)

    async def step(self, policy: Policy) -> bool:
        table = await self.table()
        game = table.game
        if game is None or not table.is_active or game.phase not in (Phase.VOTING, Phase.MISSION):
            return await super().step(policy)
        waiting = public_view(game).waiting_for
        if game.phase is Phase.VOTING:
            moves = [
                (table.players[s].user_id, self.chat_id, "v:", ":a" if policy.vote(table, s) else ":r") for s in waiting
            ]
        else:
            moves = [
                (table.players[s].user_id, table.players[s].user_id, "c:", ":f" if policy.fail(table, s) else ":s")
                for s in waiting
            ]
        await asyncio.gather(*(self.press(*move) for move in moves))
        return True


@dataclass
class Played:
    updates: int
    missions: int
    rounds: int
    proposals: int
    redis: Counter[str]
    api: Counter[str]
    group_messages: Counter[str]  # from /startgame on
    private_messages: Counter[str]
    before_answer: list[int]
    round_trips: int = 0  # requests the bot wrote to Redis


@dataclass
class Totals:
    games: list[Played] = field(default_factory=list)

    def mean(self, value) -> float:
        return statistics.mean(value(game) for game in self.games)


async def commandstats(redis: Redis) -> Counter[str]:
    info = await redis.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): stats["calls"] for name, stats in info.items()})


async def others(admin: Redis) -> tuple[int, dict[str, int]]:
    """Connections the server has received from other clients, and the clients not ours: id -> idle seconds."""
    received = int((await admin.info("stats"))["total_connections_received"]) - OwnConnection.opened
    clients = await admin.client_list()
    return received, {c["id"]: int(c["idle"]) for c in clients if not c.get("name", "").startswith(CLIENT_NAME)}


async def others_were_quiet(admin: Redis, before: tuple[int, dict[str, int]], seconds: float) -> bool:
    """Since `before`: no client connected or went away, and none but ours sent a command (idle is
    counted in whole seconds, so a command shortly before the game counts as during it)."""
    received, idle = await others(admin)
    return (
        received == before[0]
        and idle.keys() == before[1].keys()
        and min(idle.values(), default=99) > math.ceil(seconds)
    )


async def play_one(
    telegram, application, admin, players_redis, chat_id, players, seed, human_seconds: float | None, plot: bool = False
) -> tuple[Played, bool]:
    """One whole game (at human pace if `human_seconds`); also whether the server was otherwise quiet meanwhile."""
    application.bot_data["service"].rng = random.Random(seed)
    common = dict(chat_id=chat_id, players=players, players_store=Store(players_redis))
    if human_seconds is None:
        group = ReadingGroup(telegram, application, **common)
    else:
        group = HumanPacedGroup(telegram, application, rng=random.Random(seed + 2), seconds=human_seconds, **common)
    players_redis.sent.clear()
    round_trips = CountingConnection.round_trips
    quiet_before = await others(admin)
    started = time.perf_counter()
    before, first_call = await commandstats(admin), len(telegram.calls)
    await group.open_lobby_and_join(variants=Variants(plot_cards=plot))
    start_call = len(telegram.calls)
    await group.start()
    table = await group.play(Policy(rng=random.Random(seed + 1)))
    after = await commandstats(admin)
    round_trips = CountingConnection.round_trips - round_trips
    quiet = await others_were_quiet(admin, quiet_before, time.perf_counter() - started)
    redis = after - before - players_redis.sent
    for ours in ("info", "client|list"):
        redis.pop(ours, None)
    calls = telegram.calls[first_call:]
    in_game = telegram.calls[start_call:]
    played = Played(
        updates=group.updates,
        missions=len(table.game.played_rounds),
        rounds=len(table.game.rounds),
        proposals=sum(len(r.proposals) for r in table.game.rounds),
        redis=redis,
        api=Counter(method for method, _ in calls),
        group_messages=Counter(m for m, p in in_game if m in GROUP_MESSAGES and int(p["chat_id"]) == chat_id),
        private_messages=Counter(m for m, p in calls if m in GROUP_MESSAGES and int(p.get("chat_id", 0)) > 0),
        before_answer=group.before_answer,
        round_trips=round_trips,
    )
    return played, quiet


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_own_server(data_dir: str) -> tuple[subprocess.Popen, str]:
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("--own-server needs redis-server on the PATH (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", data_dir],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/14"
    probe = Redis.from_url(url)
    for _ in range(100):
        try:
            await probe.ping()
            break
        except Exception:
            await asyncio.sleep(0.05)
    await probe.aclose()
    return process, url


async def measure(url: str, args) -> None:
    def client(role: str, cls=Redis) -> Redis:
        return cls.from_url(
            url, decode_responses=True, client_name=f"{CLIENT_NAME}-{role}", connection_class=OwnConnection
        )

    admin = client("admin")
    await admin.flushdb()
    telegram = FakeTelegram()
    bot_redis = Redis.from_url(
        url, decode_responses=True, client_name=f"{CLIENT_NAME}-bot", connection_class=CountingConnection
    )
    players_redis = client("players", CountingRedis)
    application = await start_offline_bot(telegram, bot_redis, None)
    try:
        await bot_redis.ping()
        await players_redis.ping()
        chat_id, replayed, disturbed = -1001, 0, 0
        for pace in args.pace:
            human_seconds = args.human_seconds if pace == "human" else None
            totals: dict[int, Totals] = {}
            started = time.perf_counter()
            for players in args.players:
                totals[players] = Totals()
                for index in range(args.games):
                    seed = (args.seed * 1000 + players) * 1000 + 2 * index
                    for attempt in range(1, args.attempts + 1):
                        played, quiet = await play_one(
                            telegram,
                            application,
                            admin,
                            players_redis,
                            chat_id,
                            players,
                            seed,
                            human_seconds,
                            args.plot,
                        )
                        chat_id -= 1
                        if quiet:
                            break
                        replayed += attempt < args.attempts
                    disturbed += not quiet
                    totals[players].games.append(played)
            elapsed = time.perf_counter() - started
            title = (
                "as fast as possible" if human_seconds is None else f"at human pace (delays up to {human_seconds:g} s)"
            )
            print(f"\n===== {title}\n")
            print_table(totals, args.games, elapsed)
        if replayed or disturbed:
            print(f"\nother clients were busy on the server: {replayed} games played again", end="")
            if disturbed:
                print(f"; warning: {disturbed} games still counted with other clients active (try --own-server)")
            else:
                print("; every game counted was undisturbed")
    finally:
        await application.shutdown()
        await bot_redis.aclose()
        await players_redis.aclose()
        await admin.flushdb()
        await admin.aclose()


async def main_async(args) -> None:
    if not args.own_server:
        await measure(args.redis_url, args)
        return
    with tempfile.TemporaryDirectory() as data_dir:
        process, url = await start_own_server(data_dir)
        try:
            print(f"own redis-server at {url}")
            await measure(url, args)
        finally:
            process.terminate()
            process.wait(timeout=10)


def print_table(totals: dict[int, Totals], games: int, elapsed: float) -> None:
    sizes = list(totals)
    width = 12
    header = "".join(f"{f'{n} players':>{width}}" for n in sizes)

    def row(label: str, value, fmt: str = ".1f") -> None:
        print(f"{label:<42}" + "".join(f"{value(totals[n]):>{width}{fmt}}" for n in sizes))

    print(f"{games} whole games per size, played in {elapsed:.1f} s; means per game\n")
    print(f"{'':<42}{header}")
    row("updates (commands and presses)", lambda t: t.mean(lambda g: g.updates))
    row("missions played", lambda t: t.mean(lambda g: g.missions))
    row("mission rounds (played or not)", lambda t: t.mean(lambda g: g.rounds))
    row("team proposals", lambda t: t.mean(lambda g: g.proposals))

    def counted_per_game(title: str, counts: str, total_label: str) -> None:
        """A table section for one of the per-game Counters (Redis commands, Bot API calls)."""
        print(f"\n{title:<42}{header}")
        names = Counter()
        for t in totals.values():
            for g in t.games:
                names.update(getattr(g, counts))
        row(total_label, lambda t: t.mean(lambda g: sum(getattr(g, counts).values())))
        for name in sorted(names, key=lambda n: (-names[n], n)):
            row(f"  {name}", lambda t, name=name: t.mean(lambda g: getattr(g, counts)[name]))
        row("per update", lambda t: t.mean(lambda g: sum(getattr(g, counts).values()) / g.updates), ".2f")

    counted_per_game("Redis commands per game", "redis", "all commands")
    row("round trips of the bot to Redis per update", lambda t: t.mean(lambda g: g.round_trips / g.updates), ".2f")
    counted_per_game("Bot API calls per game", "api", "all calls")
    row("  of which private send + edit", lambda t: t.mean(lambda g: sum(g.private_messages.values())))

    print(f"\n{'Bot API calls before a press is answered':<42}{header}")
    row("  mean", lambda t: statistics.mean(n for g in t.games for n in g.before_answer), ".2f")
    for share in (0.5, 0.9, 0.99):
        row(f"  {share:.0%} of presses at most", lambda t, share=share: _quantile(t, share), ".0f")
    row("  most", lambda t: max(n for g in t.games for n in g.before_answer), ".0f")

    print(f"\n{'Group messages per mission round':<42}{header}")
    for method in GROUP_MESSAGES:
        row(f"  {method}", lambda t, method=method: _per_round(t, lambda g: g.group_messages[method]), ".2f")
    row("  together", lambda t: _per_round(t, lambda g: sum(g.group_messages.values())), ".2f")


def _quantile(totals: Totals, share: float) -> int:
    ordered = sorted(n for g in totals.games for n in g.before_answer)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _per_round(totals: Totals, count) -> float:
    """Over all games of a size: messages from /startgame on, per mission round."""
    return sum(count(g) for g in totals.games) / sum(g.rounds for g in totals.games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--games", type=int, default=20, help="whole games per player count")
    parser.add_argument("--players", type=int, nargs="+", default=[5, 10], choices=range(5, 11), metavar="5-10")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--attempts", type=int, default=5, help="plays of a game disturbed by other clients")
    parser.add_argument("--own-server", action="store_true", help="start a private redis-server instead")
    parser.add_argument("--pace", nargs="+", choices=("fast", "human"), default=["fast", "human"])
    parser.add_argument("--human-seconds", type=float, default=3.0, help="longest delay of a player at human pace")
    parser.add_argument("--plot", action="store_true", help="play with the Plot cards")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
