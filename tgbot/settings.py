"""A group's settings: variants, hints, deadlines and pace, what a missing vote counts as, computer
players, language.

Stored per group; a lobby takes a copy when it opens (and follows changes until the game
starts, keeping the variants named with /newgame on top), so a running game never changes its rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace

from engine import Variants
from tgbot.i18n import LANGUAGES
from tgbot.zones import zone_named

# The values each setting steps through when its button is pressed.
CHOICES: dict[str, tuple] = {
    "targeting": (False, True),
    "blind_spies": (False, True),
    "plot_cards": (False, True),
    "hints": (True, False),
    "missing_vote_approves": (True, False),
    "proposal_seconds": (60, 120, 180, 300, 600),
    "vote_seconds": (60, 120, 180, 300),
    "mission_seconds": (60, 120, 180, 300),
    "lobby_seconds": (300, 600, 900, 1800, 3600),
    "pace": ("live", "slow"),  # `tgbot.moves.pace`
    "slow_hours": (12, 24, 48, 4, 8),
    "quiet_hours": ("", "22-08", "23-07", "00-08", "21-09", "23-09"),
    "computer_level": ("normal", "easy"),
    "computer_takeover": (False, True),
    "language": LANGUAGES,
}


@dataclass(frozen=True)
class GroupSettings:
    targeting: bool = False
    blind_spies: bool = False
    plot_cards: bool = False  # The Plot Thickens
    hints: bool = True
    missing_vote_approves: bool = True  # at the vote deadline, a missing vote counts as Approve
    proposal_seconds: int = 180
    vote_seconds: int = 120
    mission_seconds: int = 120
    lobby_seconds: int = 900
    # Live: the minutes above, on the wall clock. Slow: `slow_hours` per step, counted outside the
    # `quiet_hours` of the group's `timezone` (`tgbot.moves.pace`).
    pace: str = "live"
    slow_hours: int = 12
    quiet_hours: str = ""  # "22-08": from 22:00 to 08:00; "" for none
    timezone: str = "UTC"  # an IANA name or a fixed offset ("UTC+03:00"), set with /timezone
    computer_level: str = "normal"  # how well computer players play (`agents.DIFFICULTIES`)
    # A computer player takes the turns of a person who missed two deadlines in a row, until they act again.
    computer_takeover: bool = False
    language: str | None = None  # None until the group's first lobby sets it

    @property
    def variants(self) -> Variants:
        return Variants(targeting=self.targeting, blind_spies=self.blind_spies, plot_cards=self.plot_cards)

    def with_variants(self, variants: Variants) -> GroupSettings:
        """These settings with `variants` switched on too (the variants named with /newgame come on top)."""
        return replace(
            self,
            targeting=self.targeting or variants.targeting,
            blind_spies=self.blind_spies or variants.blind_spies,
            plot_cards=self.plot_cards or variants.plot_cards,
        )

    def position(self, name: str) -> int:
        """Where the setting's value stands: 1 + its index among the choices, 0 if it is none of
        them (a group whose language nobody set yet)."""
        choices = CHOICES[name]
        current = getattr(self, name)
        return choices.index(current) + 1 if current in choices else 0

    def stepped(self, name: str, shown: int | None = None) -> GroupSettings:
        """The settings with `name` moved to its next choice.

        `shown`: the `position` the pressed button showed. A press made on a keyboard that no longer
        shows the setting as it is (a second admin's press on the same keyboard, or the same press
        delivered again) changes nothing, rather than stepping past what the presser saw."""
        if name not in CHOICES:
            raise KeyError(name)
        position = self.position(name)
        if shown is not None and shown != position:
            return self
        choices = CHOICES[name]
        return replace(self, **{name: choices[position % len(choices)]})

    def taking(self, other: GroupSettings, names: frozenset[str]) -> GroupSettings:
        """These settings with the values of `names` taken from `other`."""
        return replace(self, **{name: getattr(other, name) for name in names})

    def to_json(self) -> str:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes | None) -> GroupSettings:
        if not text:
            return cls()
        data = json.loads(text)
        known = {f.name for f in fields(cls)}
        settings = cls(**{k: v for k, v in data.items() if k in known})
        # A value no longer offered (an old choice) falls back to the default.
        defaults = cls()
        for name, choices in CHOICES.items():
            if getattr(settings, name) not in choices and not (name == "language" and settings.language is None):
                settings = replace(settings, **{name: getattr(defaults, name)})
        if not isinstance(settings.timezone, str) or zone_named(settings.timezone) is None:
            settings = replace(settings, timezone=defaults.timezone)
        return settings
