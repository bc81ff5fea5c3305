"""Every language's catalog has every message of the code, translated, with the same placeholders."""

from __future__ import annotations

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
