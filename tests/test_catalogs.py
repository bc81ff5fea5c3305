"""Every language's catalog has every message of the code, translated, with the same placeholders."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from tgbot.i18n import LANGUAGES, catalog_path

ROOT = Path(__file__).resolve().parents[1]
KEYWORDS = {"t": (2,), "tn": (2, 3), "N_": None, "Nn_": (1, 2), "refuse": (2,)}  # as tools/update_catalogs.sh
PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sd]|%%")
TAG = re.compile(r"</?[a-z]+[^>]*>")


def messages_in_code() -> set[str | tuple[str, str]]:
    found = set()
    for _, _, message, _, _ in extract_from_dir(
        str(ROOT / "tgbot"), method_map=[("**.py", "python")], keywords=KEYWORDS
    ):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def placeholders(text: str) -> list[str]:
    return sorted(PLACEHOLDER.findall(text))


@pytest.fixture(scope="module")
def code_messages():
    messages = messages_in_code()
    assert len(messages) > 150, "message extraction found too little: check the keywords"
    return messages


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
def test_catalog_is_complete_and_consistent(language, code_messages):
    with catalog_path(language).open("rb") as po:
        catalog = read_po(po, locale=language)
    problems = []
    for message in code_messages:
        key = message if isinstance(message, str) else message[0]
        entry = catalog.get(key)
        if entry is None:
            problems.append(f"missing: {key!r}")
            continue
        if entry.fuzzy:
            problems.append(f"fuzzy: {key!r}")
        english = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        translated = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if any(not text for text in translated):
            problems.append(f"untranslated: {key!r}")
            continue
        for text in translated:
            # A plural form may leave out %(n)d as the English singular may ("one more player").
            if placeholders(text) not in (placeholders(english[-1]), placeholders(english[0])):
                problems.append(f"placeholders differ: {key!r} -> {text!r}")
            if sorted(TAG.findall(text)) != sorted(TAG.findall(english[-1])):
                problems.append(f"HTML tags differ: {key!r} -> {text!r}")
    assert not problems, "\n".join(problems)


def test_the_template_matches_the_code(code_messages):
    """tools/update_catalogs.sh was run after the messages last changed."""
    with (ROOT / "tgbot" / "locales" / "messages.pot").open("rb") as pot:
        template = {m.id if isinstance(m.id, str) else tuple(m.id) for m in read_po(pot) if m.id}
    assert template == code_messages


# ---------------------------------------------------------------- the same words everywhere

TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]
# Names of the game's things, each a message of its own: wherever an English message names one,
# its translation names it with the words of that message's translation (quotes aside), so a
# player reads one name for a card or a variant on its button, on the board and in /rules.
GAME_NAMES = (
    "Strong Leader",
    "No Confidence",
    "Keeping a Close Eye on You",
    "In the Spotlight",
    "Opinion Maker",
    "Take Responsibility",
    "Overheard Conversation",
    "Open Up",
    "Establish Confidence",
    "Targeting",
    "Blind Spies",
)
# Button labels. A message that shows one with its emoji ("Missing vote: 👍 Approve") or tells
# to press one ("Press Join", "whoever pressed Play again") must show the button's own words.
BUTTONS = (
    "Join",
    "🔁 Play again",
    "👍 Approve",
    "👎 Reject",
    "✅ Success",
    "❌ Fail",
    "⚡ Take the lead",
    "✋ No Confidence",
    "🔎 Hints",
    "🤖 Add a computer player",
    "⏳ Waiting for…",
)
QUOTES = "«»„“”\"'"
EMOJI = re.compile(r"^[^\w«„\"']+\s")


def catalog(language: str):
    with catalog_path(language).open("rb") as po:
        return read_po(po, locale=language)


def pairs(messages):
    """(English, translation) for every form of every translated message."""
    for message in messages:
        if not message.id:
            continue
        english = message.id if isinstance(message.id, tuple) else (message.id,)
        translated = message.string if isinstance(message.string, tuple) else (message.string,)
        for index, text in enumerate(translated):
            yield english[min(index, len(english) - 1)], text


def name_in(translation: str, name: str) -> bool:
    """The translated name is in the text, in any case, with endings added (Esperanto's -n, Russian's -ом)."""
    bare = name.strip(QUOTES).strip()
    return bare.lower() in translation.lower()


@pytest.mark.parametrize("language", TRANSLATED)
def test_game_names_are_translated_alike_everywhere(language):
    messages = catalog(language)
    problems = []
    for name in GAME_NAMES:
        translated_name = messages.get(name).string
        mention = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
        for english, text in pairs(messages):
            if english != name and mention.search(english) and not name_in(text, translated_name):
                problems.append(f"{name!r} is {translated_name!r}, but {english!r} -> {text!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("language", TRANSLATED)
def test_messages_name_buttons_as_the_buttons_read(language):
    messages = catalog(language)
    problems = []
    for label in BUTTONS:
        translated_label = messages.get(label).string
        words, translated_words = EMOJI.sub("", label), EMOJI.sub("", translated_label)
        pressed = re.compile(rf"\b[Pp]ress(?:ed)? {re.escape(words)}\b")
        for english, text in pairs(messages):
            if english == label:
                continue
            if label != words and label in english:  # shown with its emoji
                wanted = translated_label
            elif pressed.search(english):
                wanted = translated_words
            else:
                continue
            if not name_in(text, wanted):
                problems.append(f"button {label!r} reads {translated_label!r}, but {english!r} -> {text!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("language", TRANSLATED)
def test_quoted_names_keep_their_quotes(language):
    """«%(group)s» in English stays «%(group)s»: one way of setting a group's name apart."""
    problems = []
    for english, text in pairs(catalog(language)):
        for quoted in re.findall(r"«%\([a-z_]+\)s»", english):
            if quoted not in text:
                problems.append(f"{quoted} in {english!r} -> {text!r}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- counted nouns

# The noun counted by %(n)d in each plural form ("1 голос", "2 голоса", "5 голосов"). For each
# language: noun -> the forms it may take after a number of each plural form, in msgstr order.
# Russian: after 1 (21, 31…) the nominative or, governed, the accusative or genitive singular;
# after 2-4 the genitive singular or, governed (из, меньше, an animate object), the genitive
# plural; after 5-20 the genitive plural. Bulgarian: the singular, then the plural or count form.
# Esperanto and Spanish are checked by their endings. The first known noun (or Esperanto's first
# -o word) within three words of the number is the one checked; a preposition ends the search.
COUNTED = {
    "ru": {
        "игрок": ({"игрок", "игрока"}, {"игрока", "игроков"}, {"игроков"}),
        "голос": ({"голос", "голоса"}, {"голоса", "голосов"}, {"голосов"}),
        "шпион": ({"шпион", "шпиона"}, {"шпиона", "шпионов"}, {"шпионов"}),
        "карта": ({"карта", "карту", "карты"}, {"карты", "карт"}, {"карт"}),
        "команда": ({"команда", "команду", "команды"}, {"команды", "команд"}, {"команд"}),
        "вариант": ({"вариант", "варианта"}, {"варианта", "вариантов"}, {"вариантов"}),
        "человек": ({"человек", "человека"}, {"человека", "человек"}, {"человек"}),
    },
    "bg": {
        "играч": ({"играч"}, {"играчи"}),
        "екип": ({"екип"}, {"екипа"}),
        "глас": ({"глас"}, {"гласа"}),
        "карта": ({"карта"}, {"карти"}),
        "шпионин": ({"шпионин"}, {"шпиони"}),
        "човек": ({"човек"}, {"души", "човека"}),
        "разпределение": ({"разпределение"}, {"разпределения"}),
    },
}
WORDS_AFTER_NUMBER = re.compile(r"%\(n\)d((?:\s+[^\s%]+){1,3})")


def plural_slot(messages):
    """The catalog's Plural-Forms rule as a function: a number -> the index of its msgstr form."""
    return gettext.c2py(messages.plural_expr)


def counted_words(text: str) -> list[list[str]]:
    """The (up to three) words after each %(n)d, lower case, without punctuation."""
    return [
        [word.strip(".,:;()«»„“").lower() for word in match.group(1).split()]
        for match in WORDS_AFTER_NUMBER.finditer(text)
    ]


def agreement_problems(language: str) -> list[str]:
    messages = catalog(language)
    slot_of = plural_slot(messages)
    # A number of each plural form: 1 is "one" everywhere; then 2..25 gives the others.
    sample = {}
    for n in range(1, 26):
        sample.setdefault(slot_of(n), n)
    problems = []
    for message in messages:
        if not message.id or not isinstance(message.id, tuple):
            continue
        for slot, text in enumerate(message.string):
            if slot not in sample:
                continue  # a form no game number reaches (Spanish millions)
            n = sample[slot]
            for words in counted_words(text):
                if language in COUNTED:
                    problems += _noun_problems(language, words, slot, n, text)
                elif language == "eo":
                    problems += _esperanto_problems(words, n, text)
                elif language == "es":
                    problems += _spanish_problems(words, n, text)
    return problems


PREPOSITIONS = {"из", "от", "у", "для", "за", "в", "на", "с"}  # "хотя бы 1 из игроков": the number counts no noun


def _noun_problems(language, words, slot, n, text):
    for word in words:
        if word in PREPOSITIONS:
            return []
        for forms in COUNTED[language].values():
            if any(word in allowed for allowed in forms):
                allowed = forms[min(slot, len(forms) - 1)]
                return [] if word in allowed else [f"{n} {word}: {text!r}"]
    return []


def _esperanto_problems(words, n, text):
    """Adjectives and the noun after a number: -a/-o after 1, -aj/-oj after more (accusative -n aside)."""
    for word in words:
        ending = re.fullmatch(r"\w+?([ao])(j?)n?", word)
        if ending is None:
            return []
        if bool(ending.group(2)) != (n != 1):
            return [f"{n} {word}: {text!r}"]
        if ending.group(1) == "o":
            return []  # the noun: what follows is not counted
    return []


def _spanish_problems(words, n, text):
    """The noun after a number: no -s after 1, -s after more ("de entre" and the like aside)."""
    word = words[0]
    if word in {"de", "del", "a", "en", "y", "o"} or not word.isalpha():
        return []
    if word.endswith("s") != (n != 1):
        return [f"{n} {word}: {text!r}"]
    return []


@pytest.mark.parametrize("language", TRANSLATED)
def test_counted_nouns_agree_with_their_number(language):
    problems = agreement_problems(language)
    assert not problems, "\n".join(problems)
