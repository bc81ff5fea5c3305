"""How many updates one worker handles a second: the game bot beside a bare Redis handler.

    .venv/bin/python benchmarks/bot_throughput.py [--games 40] [--updates 6000] [--concurrency 20]
                                                  [--redis-url redis://127.0.0.1:6379/14] [--profile 25]

One worker is one Application built by `tgbot.app.build_application` (no rate limiter, no
clock) on the in-memory fake Bot API and a real Redis. `--games` groups of 5 to 10 simulated
players are opened, joined, started and played forward a random number of steps, so the games
stand in different phases. Then the stream: in rounds, every game contributes the presses its
players would make next (the leader's team ticks, then the confirm; every pending vote; every
pending card; the mission pick under Targeting), with noise in realistic proportions: double
taps and non-leaders poking the leader's keyboard (refused), presses on buttons of an earlier
step (stale), callback data no button carried (forged) and /status. Every press is made on
a message the bot really sent (`FakeTelegram.press`), or, for stale and forged ones, on a real
message with other data (`FakeTelegram.forged_press`). A game that ends is replaced by a new
one (outside the timing). Each round's updates are shuffled and fed through
`Application.process_update` by `--concurrency` tasks; only the feeding is timed, the making
of the presses is not.

The bot logs at INFO, formatted as in production, to /dev/null. Latency is per update, from
the JSON update to `process_update` returning (`Update.de_json` included), while the other
tasks keep the worker busy. The fake Bot API answers at once, so these are the worker's own
costs: a real Bot API round trip adds tens of milliseconds to the latency, not to the CPU per
update. CPU per update is this process's CPU time over the timed rounds (the Redis server's is
not in it), which other load on the machine disturbs less than the rate.

The bare handler is a second Application in the same process, on the same fake Bot API: one
CallbackQueryHandler doing one Redis GET and one SET and answering the query, fed the same
number of button presses in rounds of the same sizes with the same concurrency.

Uses Redis database 14 by default and flushes it at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import logging
import os
import pstats
import random
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from redis.asyncio import Redis
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import Application, ApplicationBuilder, CallbackQueryHandler, ContextTypes

from engine import Phase, Variants, waiting_for
from engine import rules as game_rules
from tgbot.moves.clock import step_of
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.harness import start_offline_bot
from tgbot.offline.simulation import Policy, SimulatedGroup

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"
KINDS = ("vote", "toggle", "confirm", "mission", "card", "status", "refused", "stale", "forged")

# Noise, per game and round of presses.
DOUBLE_TAP = 0.05  # each voter presses the vote button twice
POKE = 0.25  # in a round of team ticks, a player who is not the leader presses a tick
STALE = 0.10  # someone presses a button of an earlier step (their client had not seen the edit yet)
FORGED = 0.02  # a modified client sends callback data no button carried
STATUS = 0.03  # someone sends /status


class LogCounter(logging.Handler):
    """Counts the bot's log records instead of printing them; errors are kept to show."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.levels: Counter[str] = Counter()
        self.errors: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.levels[record.levelname] += 1
        if record.levelno >= logging.ERROR and len(self.errors) < 5:
            self.errors.append(record.getMessage())


# ---------------------------------------------------------------- making presses


@dataclass
class Pressed:
    """A press once made, to be replayed later as a stale one."""

    step: str
    user_id: int
    chat_id: int
    message_id: int
    data: str


@dataclass
class Game:
    group: SimulatedGroup
    history: list[Pressed] = field(default_factory=list)
    team: tuple[str, set[int]] = ("", set())  # the team the leader settled on, for which step


class Stream:
    """Keeps `games` games going on one application and makes their next presses."""

    def __init__(self, telegram: FakeTelegram, application: Application, rng: random.Random) -> None:
        self.telegram, self.application, self.rng = telegram, application, rng
        self.policy = Policy(rng=rng)
        self.games: list[Game] = []
        self.next_chat = -1001
        self.finished = 0

    async def new_game(self) -> Game:
        chat_id, self.next_chat = self.next_chat, self.next_chat - 1
        group = SimulatedGroup(self.telegram, self.application, chat_id=chat_id, players=self.rng.randint(5, 10))
        await group.open_lobby_and_join(variants=Variants(targeting=self.rng.random() < 0.25))
        await group.start()
        return Game(group)

    async def setup(self, count: int) -> None:
        """Open the games and play each a random number of steps, so they stand in various phases."""
        for _ in range(count):
            game = await self.new_game()
            for _ in range(self.rng.randrange(12)):
                if not await game.group.step(self.policy):
                    self.finished += 1
                    game = await self.new_game()
            self.games.append(game)

    def _press(self, game: Game, kind: str, step: str, user_id: int, chat_id: int, prefix: str, ending: str):
        message = game.group.latest_with_button(chat_id, prefix)
        data = next(
            b["callback_data"]
            for b in message.buttons()
            if b.get("callback_data", "").startswith(prefix) and b["callback_data"].endswith(ending)
        )
        game.history.append(Pressed(step, user_id, chat_id, message.message_id, data))
        return kind, self.telegram.press(user_id, chat_id, message.message_id, data)

    async def round_of_presses(self) -> list[tuple[str, dict]]:
        """The next presses of every game, with their noise, shuffled together."""
        updates: list[tuple[str, dict]] = []
        late: list[tuple[str, dict]] = []
        for index, game in enumerate(self.games):
            table = await game.group.table()
            if not table.is_active:
                self.finished += 1
                game = self.games[index] = await self.new_game()
                table = await game.group.table()
            presses = self._presses_of(game, table)
            updates += [p for p in presses if p[0] != "double"]
            late += [("refused", p[1]) for p in presses if p[0] == "double"]
        # A double tap comes a moment after the first tap.
        self.rng.shuffle(updates)
        self.rng.shuffle(late)
        return updates + late

    def _presses_of(self, game: Game, table) -> list[tuple[str, dict]]:
        rng, group, state = self.rng, game.group, table.game
        chat, gid, step = group.chat_id, group.game_id, step_of(table)
        players = [p.user_id for p in table.players]
        out: list[tuple[str, dict]] = []
        if state.phase is Phase.PROPOSING:
            leader = players[state.leader]
            # The leader chooses on the keyboard in their private chat; under Targeting the mission first.
            if state.variants.targeting and table.draft_mission is None:
                mission = self.policy.choose_mission(table, state.leader, state.open_missions())
                out.append(self._press(game, "mission", step, leader, leader, f"m:{gid}:", f":{mission}"))
            else:
                mission = table.draft_mission or state.open_missions()[0]
                size = game_rules.team_size(state.players, mission)
                if game.team[0] != step:
                    game.team = (step, set(self.policy.choose_team(table, state.leader, size)))
                wanted = game.team[1]
                ticks = sorted(wanted ^ set(table.draft_team))
                for seat in ticks:
                    out.append(self._press(game, "toggle", step, leader, leader, f"t:{gid}:", f":{seat}"))
                if not ticks:
                    out.append(self._press(game, "confirm", step, leader, leader, f"t:{gid}:", ":ok"))
                elif rng.random() < POKE:
                    # Another player sends the leader's button data from a group message: refused.
                    other = rng.choice([u for u in players if u != leader])
                    keyboard = group.latest_with_button(leader, f"t:{gid}:")
                    data = rng.choice([b["callback_data"] for b in keyboard.buttons()])
                    board = next(m for m in reversed(group.telegram.messages(chat)) if m.from_bot)
                    out.append(("refused", self.telegram.forged_press(other, chat, board.message_id, data)))
        elif state.phase is Phase.VOTING:
            for seat in waiting_for(state):
                choice = "a" if self.policy.vote(table, seat) else "r"
                out.append(self._press(game, "vote", step, players[seat], chat, f"v:{gid}:", f":{choice}"))
                if rng.random() < DOUBLE_TAP:
                    ballot = group.latest_with_button(chat, f"v:{gid}:")
                    data = game.history[-1].data
                    out.append(("double", self.telegram.press(players[seat], chat, ballot.message_id, data)))
        else:
            for seat in waiting_for(state):
                user = players[seat]
                ending = ":f" if self.policy.fail(table, seat) else ":s"
                out.append(self._press(game, "card", step, user, user, f"c:{gid}:", ending))
        earlier = [p for p in game.history if p.step != step]
        if earlier and rng.random() < STALE:
            old = rng.choice(earlier[-30:])
            out.append(("stale", self.telegram.forged_press(old.user_id, old.chat_id, old.message_id, old.data)))
        if rng.random() < FORGED:
            out.append(("forged", self._forged(game, table)))
        if rng.random() < STATUS:
            out.append(("status", self.telegram.command(rng.choice(players), chat, "/status")))
        return out

    def _forged(self, game: Game, table) -> dict:
        """Data no button of this message carried: garbage, another game's button, a card pressed in the group."""
        group, rng = game.group, self.rng
        user = rng.choice([p.user_id for p in table.players])
        board = next(m for m in reversed(group.telegram.messages(group.chat_id)) if m.from_bot)
        other = rng.choice(self.games)
        choices = [f"v:{'z' * 10}:0:a", f"t:{group.game_id}:x:ok"]
        if other is not game and other.history:
            choices.append(other.history[-1].data)
        cards = [p.data for p in game.history if p.data.startswith("c:")]
        if cards:
            choices.append(cards[-1])
        return self.telegram.forged_press(user, group.chat_id, board.message_id, rng.choice(choices))


# ---------------------------------------------------------------- feeding


@dataclass
class Measured:
    elapsed: float = 0.0
    cpu: float = 0.0  # this process's CPU time over the same windows (the Redis server's is not in it)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.latencies.values())


async def feed(application: Application, updates: list[tuple[str, dict]], concurrency: int, into: Measured) -> None:
    """Feed `updates` with at most `concurrency` in flight; add their wall time and latencies."""
    pending = iter(updates)
    bot = application.bot

    async def worker() -> None:
        for kind, raw in pending:
            started = time.perf_counter()
            await application.process_update(Update.de_json(raw, bot))
            into.latencies[kind].append(time.perf_counter() - started)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    into.elapsed += time.perf_counter() - started
    into.cpu += time.process_time() - cpu


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(title: str, measured: Measured, kinds: tuple[str, ...]) -> float:
    rate = measured.count / measured.elapsed
    cpu = measured.cpu / measured.count
    print(f"{title}: {measured.count} updates in {measured.elapsed:.2f} s = {rate:.0f} updates/s")
    print(f"  CPU of this process per update: {cpu * 1e3:.3f} ms (at most {1 / cpu:.0f} updates/s on one core)")
    print(f"  {'update':<9} {'count':>6} {'share':>6} {'p50 ms':>8} {'p99 ms':>8}")
    everything = [v for values in measured.latencies.values() for v in values]
    rows = [(kind, measured.latencies[kind]) for kind in kinds if measured.latencies.get(kind)]
    for kind, values in [*rows, ("all", everything)]:
        print(
            f"  {kind:<9} {len(values):>6} {len(values) / len(everything):>6.1%} "
            f"{statistics.median(values) * 1e3:>8.2f} {percentile(values, 0.99) * 1e3:>8.2f}"
        )
    return rate


# ---------------------------------------------------------------- the two workers


async def run_game_worker(
    url: str, telegram: FakeTelegram, args, log_counter: LogCounter
) -> tuple[Measured, list[int], int]:
    rng = random.Random(args.seed)
    client = Redis.from_url(url, decode_responses=True)
    application = await start_offline_bot(telegram, client, rng.getrandbits(64))
    stream = Stream(telegram, application, rng)
    started = time.perf_counter()
    await stream.setup(args.games)
    print(
        f"setup: {args.games} games of 5-10 players in various phases in {time.perf_counter() - started:.1f} s "
        f"({stream.finished} played to the end on the way)"
    )

    measured, sizes = Measured(), []
    profiler = cProfile.Profile() if args.profile else None
    finished_before = stream.finished
    queries = []
    while measured.count < args.updates:
        updates = await stream.round_of_presses()
        queries += [raw["callback_query"]["id"] for _, raw in updates if "callback_query" in raw]
        sizes.append(len(updates))
        if profiler:
            profiler.enable()
        await feed(application, updates, args.concurrency, measured)
        if profiler:
            profiler.disable()
    unanswered = sum(1 for q in queries if q not in telegram.callback_answers)
    if unanswered:
        print(f"  warning: {unanswered} of {len(queries)} button presses were not answered")
    if log_counter.levels["ERROR"] or log_counter.levels["CRITICAL"]:
        print(f"  warning: the bot logged {log_counter.levels['ERROR']} errors, e.g. {log_counter.errors[:2]}")
    if profiler:
        print(f"\nprofile of the game worker's timed rounds, top {args.profile} by own time:")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
        print(f"top {args.profile} by cumulative time:")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
    await application.shutdown()
    await client.aclose()
    return measured, sizes, stream.finished - finished_before


async def run_bare_worker(url: str, telegram: FakeTelegram, sizes: list[int], concurrency: int) -> Measured:
    client = Redis.from_url(url, decode_responses=True)

    async def bare(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        key = f"bare:{update.effective_chat.id}"
        await client.get(key)
        await client.set(key, update.callback_query.data)
        await update.callback_query.answer()

    application = (
        ApplicationBuilder()
        .token(telegram.token)
        .request(telegram.request())
        .get_updates_request(telegram.request())
        .concurrent_updates(True)
        .build()
    )
    application.add_handler(CallbackQueryHandler(bare))
    await application.initialize()

    # Forty groups with a message carrying a button, pressed by their members.
    rng = random.Random(1)
    boards = []
    for n in range(40):
        chat_id = -5001 - n
        users = [5_000_000 + n * 100 + i for i in range(7)]
        telegram.add_group(chat_id, f"Bare {n}", admins=users[:1])
        for user in users:
            telegram.add_user(user, f"U{user}")
        keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("Press", callback_data=f"b:{n}")]])
        message = await application.bot.send_message(chat_id, "Press me", reply_markup=keyboard)
        boards.append((chat_id, message.message_id, f"b:{n}", users))

    measured = Measured()
    for size in sizes:
        updates = []
        for _ in range(size):
            chat_id, message_id, data, users = rng.choice(boards)
            updates.append(("press", telegram.press(rng.choice(users), chat_id, message_id, data)))
        await feed(application, updates, concurrency, measured)
    await application.shutdown()
    await client.aclose()
    return measured


async def main_async(args) -> None:
    # At INFO and formatted as `resistance-bot` logs, but written to /dev/null; errors are counted.
    log_counter = LogCounter()
    written = logging.FileHandler(os.devnull)
    written.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[log_counter, written], force=True)
    admin = Redis.from_url(args.redis_url, decode_responses=True)
    await admin.flushdb()
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average {load} before the run")
    try:
        telegram = FakeTelegram()
        game, sizes, finished = await run_game_worker(args.redis_url, telegram, args, log_counter)
        print(
            f"\nrounds of presses: {len(sizes)} (mean {statistics.mean(sizes):.0f} updates, "
            f"{args.concurrency} in flight); games played to the end during the stream: {finished}"
        )
        game_rate = report("game bot", game, KINDS)
        bare = await run_bare_worker(args.redis_url, telegram, sizes, args.concurrency)
        print()
        bare_rate = report("bare handler (GET + SET + answer)", bare, ("press",))
        print(f"\nratio game bot / bare handler: {game_rate / bare_rate:.2f} ({bare_rate / game_rate:.1f}x slower)")
        if args.profile:
            print("(the game bot ran under the profiler: its rate and latencies are not comparable)")
    finally:
        await admin.flushdb()
        await admin.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--updates", type=int, default=6000, help="game updates to feed (rounds are not cut)")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile the game rounds, print top N")
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
