"""The end-of-game picture: a finished game on one PNG, posted to the group after its result.

It shows who won and why, the five missions (played or not, with their Fail cards and team sizes),
and every proposal as a column of a grid whose rows are the players: each player's vote, the leader,
the team, whether the team was approved, and the mission's result under its last proposal. The
players' roles are shown too, so the picture is made only from a finished game's summary
(`memory.summary.GameSummary`, which needs the record's outcome), and `layout` checks that the
record really ended as its outcome says.

Two steps: `layout` works out every text and shape with its position (pure: tests read what is
drawn), `draw` paints them. The picture is 1280 px wide, the most Telegram shows of a photo, and its
cells are as large as the longest game (25 proposals) lets them be, so that it reads on a phone. The
texts drawn are also kept in the PNG's `Description` text chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont
from PIL.PngImagePlugin import PngInfo

from engine import rules
from memory.summary import GameSummary
from tgbot.i18n import N_, t

FONT_DIR = Path(__file__).resolve().parent.parent / "fonts"
REGULAR, BOLD = "DejaVuSans.ttf", "DejaVuSans-Bold.ttf"

WIDTH = 1280
MARGIN = 32
NAME_WIDTH = 300  # the players' names, left of the grid
ROW = 44  # a player's row
GROUP_GAP = 10  # between the proposals of two missions
MAX_COLUMN = 60  # a proposal's column, in a short game
ELLIPSIS = "…"

# Colours
INK, MUTED, PAPER = "#1f2328", "#6e7781", "#ffffff"
RESISTANCE, RESISTANCE_TINT = "#1d5fbf", "#dbe7f7"
SPY, SPY_TINT = "#c23b32", "#f7dcd9"
SUCCESS, FAILURE, UNPLAYED = "#2e9a4e", "#c8423b", "#e4e6e9"
APPROVE, REJECT = "#2e9a4e", "#c8423b"
CELL, TEAM_CELL, LEADER = "#f1f2f4", "#ffe49a", "#b8650a"

REASONS = {
    "three_successful_missions": N_("three missions succeeded"),
    "three_failed_missions": N_("three missions failed"),
    "five_rejections": N_("five teams in a row were rejected"),
}


# ---------------------------------------------------------------- what is drawn


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    size: int
    fill: str = INK
    bold: bool = False
    anchor: str = "lm"  # Pillow's text anchor: the point (x, y) is the text's left middle by default


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float
    fill: str | None = None
    outline: str | None = None
    width: int = 0
    radius: int = 0


@dataclass(frozen=True)
class Dot:
    x: float  # the centre
    y: float
    r: float
    fill: str | None = None
    outline: str | None = None
    width: int = 0


@dataclass(frozen=True)
class Line:
    points: tuple[tuple[float, float], ...]
    fill: str
    width: int


Shape = Text | Box | Dot | Line


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    shapes: tuple[Shape, ...]

    @property
    def texts(self) -> tuple[str, ...]:
        """Every text drawn, top to bottom as laid out."""
        return tuple(s.text for s in self.shapes if isinstance(s, Text))


# ---------------------------------------------------------------- the picture


def game_picture(summary: GameSummary, lang: str) -> bytes:
    """The finished game of `summary` as a PNG, its texts in `lang`."""
    return draw(layout(summary, lang))


def draw(picture: Layout) -> bytes:
    image = Image.new("RGB", (picture.width, picture.height), PAPER)
    pen = ImageDraw.Draw(image)
    for shape in picture.shapes:
        if isinstance(shape, Box):
            box = (shape.x0, shape.y0, shape.x1, shape.y1)
            if shape.radius:
                pen.rounded_rectangle(box, shape.radius, shape.fill, shape.outline, shape.width)
            else:
                pen.rectangle(box, shape.fill, shape.outline, shape.width)
        elif isinstance(shape, Dot):
            box = (shape.x - shape.r, shape.y - shape.r, shape.x + shape.r, shape.y + shape.r)
            pen.ellipse(box, shape.fill, shape.outline, shape.width)
        elif isinstance(shape, Line):
            pen.line(shape.points, shape.fill, shape.width, joint="curve")
        else:
            pen.text((shape.x, shape.y), shape.text, shape.fill, font(shape.size, shape.bold), shape.anchor)
    info = PngInfo()
    info.add_text("Title", "The Resistance")
    info.add_text("Description", "\n".join(picture.texts))
    out = BytesIO()
    image.save(out, "PNG", pnginfo=info)
    return out.getvalue()


def description(png: bytes) -> str:
    """The texts a picture shows, as its `Description` chunk keeps them."""
    with Image.open(BytesIO(png)) as image:
        return image.text.get("Description", "")


@cache
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_DIR / (BOLD if bold else REGULAR)), size)


def text_width(text: str, size: int, bold: bool = False) -> float:
    return font(size, bold).getlength(text)


def cut(text: str, size: int, width: float, bold: bool = False) -> str:
    """The text, cut short with an ellipsis where it would be wider than `width`."""
    if text_width(text, size, bold) <= width:
        return text
    while text and text_width(text + ELLIPSIS, size, bold) > width:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS


def fitting_size(text: str, size: int, width: float, bold: bool = False, smallest: int = 14) -> int:
    """The largest font size up to `size` at which the text fits in `width` (cut below `smallest`)."""
    while size > smallest and text_width(text, size, bold) > width:
        size -= 1
    return size


# ---------------------------------------------------------------- the layout


def check_finished(record: dict[str, Any]) -> None:
    """Raise ValueError unless the record is of a game that ended as its outcome says: the roles it
    shows are secret until then."""
    outcome = record.get("outcome")
    if not outcome:
        raise ValueError("only a finished game can be drawn: its record has no outcome")
    rounds = record["missions"]
    played = [m for m in rounds if m.get("fails") is not None]
    failed = sum(1 for m in played if m["fails"] >= m["fails_required"])
    ended = {
        "three_successful_missions": len(played) - failed == 3,
        "three_failed_missions": failed == 3,
        "five_rejections": bool(rounds) and rounds[-1].get("fails") is None and len(rounds[-1]["proposals"]) == 5,
    }
    if not ended.get(outcome.get("reason"), False):
        raise ValueError("only a finished game can be drawn: its record did not end as its outcome says")
    if len(outcome.get("spies", ())) != record["spies"]:
        raise ValueError("only a finished game can be drawn: its outcome does not name every spy")


def layout(summary: GameSummary, lang: str) -> Layout:
    """Everything the picture of the finished game shows, where it shows it."""
    record = summary.record
    check_finished(record)
    shapes: list[Shape] = []
    y = _title(shapes, summary, lang, MARGIN)
    y = _missions(shapes, summary, lang, y + 20)
    y = _grid(shapes, summary, lang, y + 28)
    y = _legend(shapes, summary, lang, y + 24)
    return Layout(WIDTH, int(y + MARGIN), tuple(shapes))


def _title(shapes: list[Shape], summary: GameSummary, lang: str, y: float) -> float:
    if summary.resistance_won:
        title, colour = t(lang, "The Resistance: the Resistance won"), RESISTANCE
    else:
        title, colour = t(lang, "The Resistance: the spies won"), SPY
    size = fitting_size(title, 44, WIDTH - 2 * MARGIN, bold=True)
    shapes.append(Text(MARGIN, y + 26, cut(title, size, WIDTH - 2 * MARGIN, True), size, colour, True))
    if summary.reason == "five_rejections" and "targeting" not in summary.variants:
        reason = t(lang, "five teams in a row were rejected for one mission")
    else:
        reason = t(lang, REASONS[summary.reason])
    reason = reason[:1].upper() + reason[1:]
    shapes.append(Text(MARGIN, y + 76, cut(reason, 30, WIDTH - 2 * MARGIN), 30, MUTED))
    return y + 96


def _missions(shapes: list[Shape], summary: GameSummary, lang: str, y: float) -> float:
    """The board's five missions: each played one's result and Fail cards, the others as not played."""
    players = summary.players
    played = {m["mission"]: m for m in summary.record["missions"] if m.get("fails") is not None}
    gap = 16
    width = (WIDTH - 2 * MARGIN - 4 * gap) / 5
    height = 184
    for number in range(1, 6):
        x0 = MARGIN + (number - 1) * (width + gap)
        needed = rules.fails_required(players, number)
        size = rules.team_size(players, number)
        mission = played.get(number)
        if mission is None:
            fill, ink = UNPLAYED, MUTED
            result = t(lang, "Not played")
            fails = ""
        else:
            succeeded = mission["fails"] < mission["fails_required"]
            fill, ink = (SUCCESS, PAPER) if succeeded else (FAILURE, PAPER)
            result = t(lang, "Succeeded") if succeeded else t(lang, "Failed")
            fails = t(lang, "Fail cards: %(fails)s", fails=mission["fails"])
        shapes.append(Box(x0, y, x0 + width, y + height, fill, radius=14))
        inner = width - 24
        label = t(lang, "Mission %(mission)s", mission=number)
        shapes.append(Text(x0 + 12, y + 24, cut(label, 26, inner, True), 26, ink, True))
        team = t(lang, "Team of %(size)s", size=size)
        shapes.append(Text(x0 + 12, y + 58, cut(team, 22, inner), 22, ink))
        if needed > 1:
            two = t(lang, "Fail cards needed: %(needed)s", needed=needed)
            small = fitting_size(two, 20, inner, smallest=15)
            shapes.append(Text(x0 + 12, y + 88, cut(two, small, inner), small, ink))
        if mission is not None:
            _mark(shapes, x0 + 24, y + 124, 12, succeeded, PAPER, 4)
            shapes.append(Text(x0 + 44, y + 124, cut(result, 24, inner - 32, True), 24, ink, True))
            small = fitting_size(fails, 20, inner, smallest=15)
            shapes.append(Text(x0 + 12, y + 160, cut(fails, small, inner), small, ink))
        else:
            shapes.append(Text(x0 + 12, y + 124, cut(result, 24, inner, True), 24, ink, True))
    return y + height


def _grid(shapes: list[Shape], summary: GameSummary, lang: str, y: float) -> float:
    """A column per proposal, in order and grouped by mission; a row per player, then each team's
    vote and each mission's result."""
    rounds = summary.record["missions"]
    columns = sum(len(r["proposals"]) for r in rounds)
    left = MARGIN + NAME_WIDTH + 12
    room = WIDTH - MARGIN - left - GROUP_GAP * (len(rounds) - 1)
    column = min(MAX_COLUMN, int(room // columns))
    cell = min(column - 4, ROW - 6)
    small = max(14, min(20, column - 14))

    # Each round's columns: as wide as its label needs, where the picture has the room (a short game).
    labels = [t(lang, "Mission %(mission)s", mission=r["mission"]) for r in rounds]
    spans = [
        max(len(r["proposals"]) * column, text_width(label, small, True) + 12)
        for r, label in zip(rounds, labels, strict=True)
    ]
    if sum(spans) > room:
        spans = [len(r["proposals"]) * column for r in rounds]
    starts, widths, x = [], [], left
    for r, span in zip(rounds, spans, strict=True):
        starts.append(x)
        widths.append(span / len(r["proposals"]))
        x += span + GROUP_GAP

    header = y
    for r, x0, span, label in zip(rounds, starts, spans, labels, strict=True):
        if text_width(label, small, True) > span - 4:
            label = str(r["mission"])
        shapes.append(Line(((x0 + 2, header + 30), (x0 + span - 2, header + 30)), MUTED, 2))
        shapes.append(Text(x0 + span / 2, header + 14, label, small, INK, True, "mm"))
        step = span / len(r["proposals"])
        for i in range(len(r["proposals"])):
            shapes.append(Text(x0 + i * step + step / 2, header + 46, str(i + 1), small - 2, MUTED, anchor="mm"))
    shapes.append(Text(MARGIN, header + 46, cut(t(lang, "Proposal"), 20, NAME_WIDTH), 20, MUTED))

    top = header + 62
    letters = _role_letters(lang)
    for seat, person in enumerate(summary.seats):
        row_y = top + seat * ROW
        mid = row_y + ROW / 2
        spy = summary.is_spy(seat)
        colour, tint = (SPY, SPY_TINT) if spy else (RESISTANCE, RESISTANCE_TINT)
        shapes.append(Box(MARGIN, row_y + 3, MARGIN + NAME_WIDTH, row_y + ROW - 3, tint, radius=8))
        shapes.append(Dot(MARGIN + 20, mid, 15, colour))
        shapes.append(Text(MARGIN + 20, mid, letters[spy], 17, PAPER, True, "mm"))
        shapes.append(Text(MARGIN + 44, mid, cut(person.name, 24, NAME_WIDTH - 52), 24, INK))
        for r, x0, step in zip(rounds, starts, widths, strict=True):
            for i, proposal in enumerate(r["proposals"]):
                cx = x0 + i * step + step / 2
                _cell(shapes, cx, mid, cell, proposal, seat)

    bottom = top + summary.players * ROW
    team_y, mission_y = bottom + ROW / 2 + 4, bottom + ROW * 3 / 2 + 4
    shapes.append(Text(MARGIN, team_y, cut(t(lang, "Team vote"), 22, NAME_WIDTH), 22, INK, True))
    shapes.append(Text(MARGIN, mission_y, cut(t(lang, "Mission result"), 22, NAME_WIDTH), 22, INK, True))
    for r, x0, step in zip(rounds, starts, widths, strict=True):
        last = len(r["proposals"]) - 1
        for i in range(len(r["proposals"])):
            cx = x0 + i * step + step / 2
            approved = i == last and r.get("fails") is not None
            half = cell / 2 - 2
            colour = APPROVE if approved else REJECT
            shapes.append(Box(cx - half, team_y - half, cx + half, team_y + half, colour, radius=6))
            _mark(shapes, cx, team_y, half * 0.55, approved, PAPER, 3)
        if r.get("fails") is not None:
            cx = x0 + last * step + step / 2
            succeeded = r["fails"] < r["fails_required"]
            radius = cell / 2
            shapes.append(Dot(cx, mission_y, radius, SUCCESS if succeeded else FAILURE))
            if r["fails"]:
                shapes.append(Text(cx, mission_y, str(r["fails"]), int(radius * 1.2), PAPER, True, "mm"))
            else:
                _mark(shapes, cx, mission_y, radius * 0.5, True, PAPER, 3)
    return bottom + ROW * 2 + 8


def _cell(shapes: list[Shape], cx: float, cy: float, cell: float, proposal: dict, seat: int) -> None:
    """One player's vote on one proposal: a green dot to approve, a red cross to reject, on a yellow
    cell if they were on the team, framed if they led."""
    half = cell / 2
    on_team = seat in proposal["team"]
    leader = seat == proposal["leader"]
    frame = (LEADER, 4) if leader else (None, 0)
    shapes.append(Box(cx - half, cy - half, cx + half, cy + half, TEAM_CELL if on_team else CELL, *frame, radius=6))
    _vote(shapes, cx, cy, half * 0.5, proposal["votes"][seat])


def _vote(shapes: list[Shape], cx: float, cy: float, r: float, approve: bool) -> None:
    if approve:
        shapes.append(Dot(cx, cy, r, APPROVE))
    else:
        w = max(3, int(r / 2.5))
        shapes.append(Line(((cx - r, cy - r), (cx + r, cy + r)), REJECT, w))
        shapes.append(Line(((cx - r, cy + r), (cx + r, cy - r)), REJECT, w))


def _mark(shapes: list[Shape], cx: float, cy: float, r: float, good: bool, fill: str, width: int) -> None:
    """A tick (good) or a cross, `r` from its centre."""
    if good:
        shapes.append(Line(((cx - r, cy), (cx - r / 3, cy + r * 0.7), (cx + r, cy - r * 0.7)), fill, width))
    else:
        shapes.append(Line(((cx - r, cy - r), (cx + r, cy + r)), fill, width))
        shapes.append(Line(((cx - r, cy + r), (cx + r, cy - r)), fill, width))


def _role_letters(lang: str) -> dict[bool, str]:
    """The letter on each player's role dot: the first of its translated name (two if they clash)."""
    resistance, spy = _role_word(lang, False), _role_word(lang, True)
    if resistance[:1].upper() != spy[:1].upper():
        return {False: resistance[:1].upper(), True: spy[:1].upper()}
    return {False: resistance[:2].capitalize(), True: spy[:2].capitalize()}


def _role_word(lang: str, spy: bool) -> str:
    return t(lang, "spy") if spy else t(lang, "Resistance")


def _legend(shapes: list[Shape], summary: GameSummary, lang: str, y: float) -> float:
    """What each colour and shape means, in rows as wide as the picture."""
    letters = _role_letters(lang)
    size, icon, line = 21, 28, 40
    entries = [
        ("role", False, _role_word(lang, False)),
        ("role", True, _role_word(lang, True)),
        ("vote", True, t(lang, "approved the team")),
        ("vote", False, t(lang, "rejected the team")),
        ("leader", None, t(lang, "leader")),
        ("team", None, t(lang, "on the team")),
        ("result", True, t(lang, "team approved")),
        ("result", False, t(lang, "team rejected")),
        ("mission", True, t(lang, "mission succeeded")),
        ("mission", False, t(lang, "mission failed: its Fail cards")),
    ]
    x, row_y = MARGIN, y
    for kind, which, label in entries:
        label = cut(label, size, WIDTH - 2 * MARGIN - icon - 10)
        width = icon + 10 + text_width(label, size) + 28
        if x > MARGIN and x + width > WIDTH - MARGIN:
            x, row_y = MARGIN, row_y + line
        cx, cy, half = x + icon / 2, row_y + icon / 2, icon / 2
        if kind == "role":
            shapes.append(Dot(cx, cy, half, SPY if which else RESISTANCE))
            shapes.append(Text(cx, cy, letters[which], 15, PAPER, True, "mm"))
        elif kind == "vote":
            shapes.append(Box(cx - half, cy - half, cx + half, cy + half, CELL, radius=5))
            _vote(shapes, cx, cy, half * 0.5, which)
        elif kind == "leader":
            shapes.append(Box(cx - half, cy - half, cx + half, cy + half, CELL, LEADER, 4, radius=5))
        elif kind == "team":
            shapes.append(Box(cx - half, cy - half, cx + half, cy + half, TEAM_CELL, radius=5))
        elif kind == "result":
            shapes.append(Box(cx - half, cy - half, cx + half, cy + half, APPROVE if which else REJECT, radius=5))
            _mark(shapes, cx, cy, half * 0.55, which, PAPER, 3)
        elif which:
            shapes.append(Dot(cx, cy, half, SUCCESS))
            _mark(shapes, cx, cy, half * 0.5, True, PAPER, 3)
        else:
            shapes.append(Dot(cx, cy, half, FAILURE))
            shapes.append(Text(cx, cy, "1", 17, PAPER, True, "mm"))
        shapes.append(Text(x + icon + 10, cy, label, size, INK))
        x += width
    return row_y + icon
