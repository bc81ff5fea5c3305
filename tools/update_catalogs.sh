#!/usr/bin/env bash
# Re-extract the bot's messages and merge them into every language's catalog.
# New or changed messages come out untranslated (or fuzzy); translate them, then run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
pybabel extract -F babel.cfg --no-default-keywords -k t:2 -k tn:2,3 -k N_ -k Nn_:1,2 -k refuse:2 \
    --no-location --omit-header --sort-output -o tgbot/locales/messages.pot .
for lang in es ru bg eo; do
    if [ -f "tgbot/locales/$lang/LC_MESSAGES/messages.po" ]; then
        pybabel update -i tgbot/locales/messages.pot -d tgbot/locales -l "$lang" --no-wrap
    else
        pybabel init -i tgbot/locales/messages.pot -d tgbot/locales -l "$lang" --no-wrap
    fi
done
