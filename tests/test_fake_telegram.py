"""The fake Telegram must answer like Telegram, or end-to-end tests prove nothing about the real bot.

Everything goes through a real `telegram.Bot` (and once a real `Application`), so PTB's own request
building, JSON parsing and error mapping are exercised against the fake's replies.
"""

import asyncio
import datetime as dtm
import io

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, ReplyParameters, Update
from telegram.error import BadRequest, ChatMigrated, EndPointNotFound, Forbidden, NetworkError, RetryAfter, TimedOut
from telegram.ext import ApplicationBuilder, CommandHandler

from tgbot.offline.fake_telegram import FakeTelegram

GROUP = -100123
ALICE, BOB = 1, 2


def keyboard(*pairs: tuple[str, str]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, callback_data=data) for label, data in pairs]])


@pytest.fixture
def fake() -> FakeTelegram:
    world = FakeTelegram()
    world.add_user(ALICE, "Alice", username="alice")
    world.add_user(BOB, "Bob", language_code="ru")
    world.add_group(GROUP, "Resistance table", admins=[ALICE, BOB])
    return world


@pytest.fixture
async def bot(fake: FakeTelegram):
    bot = Bot(fake.token, request=fake.request(), get_updates_request=fake.request())
    await bot.initialize()
    yield bot
    await bot.shutdown()


async def test_get_me_describes_the_bot(bot: Bot, fake: FakeTelegram):
    assert bot.username == "resistance_test_bot"
    assert bot.id == 1000
    assert bot.can_join_groups is True
    assert fake.calls[0] == ("getMe", {})


async def test_send_edit_and_not_modified(bot: Bot, fake: FakeTelegram):
    sent = await bot.send_message(GROUP, "Vote!", reply_markup=keyboard(("Yes", "v:1"), ("No", "v:0")))
    assert sent.chat.title == "Resistance table"
    assert sent.from_user.is_bot and sent.reply_markup.inline_keyboard[0][1].callback_data == "v:0"
    assert [b["callback_data"] for b in fake.message(GROUP, sent.message_id).buttons()] == ["v:1", "v:0"]

    edited = await bot.edit_message_text("Vote! (1/5)", GROUP, sent.message_id, reply_markup=keyboard(("Yes", "v:1")))
    assert edited.edit_date is not None
    with pytest.raises(BadRequest, match="(?i)not modified"):
        await bot.edit_message_text("Vote! (1/5)", GROUP, sent.message_id, reply_markup=keyboard(("Yes", "v:1")))
    with pytest.raises(BadRequest, match="(?i)not modified"):
        await bot.edit_message_reply_markup(GROUP, sent.message_id, reply_markup=keyboard(("Yes", "v:1")))

    await bot.edit_message_text("Vote closed", GROUP, sent.message_id)  # no markup: keyboard disappears
    stored = fake.message(GROUP, sent.message_id)
    assert (stored.text, stored.reply_markup, stored.edits) == ("Vote closed", None, 2)

    with pytest.raises(BadRequest, match="(?i)message to edit not found"):
        await bot.edit_message_text("x", GROUP, 999)
    assert await bot.delete_message(GROUP, sent.message_id) is True
    assert fake.messages(GROUP) == []
    with pytest.raises(LookupError):
        fake.message(GROUP, sent.message_id)


@pytest.mark.parametrize(
    "text", ["a < b", "Tom & Jerry", "<b>bold", "<b><i>x</b></i>", "</b>", "<blink>x</blink>", "&nbsp;"]
)
async def test_html_that_telegram_cannot_parse_is_refused(bot: Bot, fake: FakeTelegram, text: str):
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        await bot.send_message(GROUP, text, parse_mode="HTML")
    sent = await bot.send_message(GROUP, "fine")
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        await bot.edit_message_text(text, GROUP, sent.message_id, parse_mode="HTML")
    # Without a parse mode, the same text is only text.
    assert (await bot.send_message(GROUP, text)).text == text


async def test_html_that_telegram_parses_is_taken(bot: Bot, fake: FakeTelegram):
    text = '<b>A &lt; B</b> &amp; <a href="tg://user?id=1">x &gt; y</a> <i>&#8212; &quot;q&quot;</i>'
    sent = await bot.send_message(GROUP, text, parse_mode="HTML")
    assert fake.message(GROUP, sent.message_id).text == text


async def test_a_reply_to_a_deleted_message_needs_leave_to_go_without_it(bot: Bot, fake: FakeTelegram):
    command = fake.command(ALICE, GROUP, "/status")["message"]["message_id"]
    assert (await bot.send_message(GROUP, "Board", reply_parameters=ReplyParameters(command))).text == "Board"
    fake.delete(GROUP, command)  # a bot that tidies commands away
    with pytest.raises(BadRequest, match="(?i)message to be replied not found"):
        await bot.send_message(GROUP, "Board", reply_parameters=ReplyParameters(command))
    alone = ReplyParameters(command, allow_sending_without_reply=True)
    assert (await bot.send_message(GROUP, "Board", reply_parameters=alone)).text == "Board"


async def test_private_chat_needs_the_user_to_start_it(bot: Bot, fake: FakeTelegram):
    with pytest.raises(Forbidden, match="(?i)can't initiate conversation"):
        await bot.send_message(ALICE, "Your role: spy")
    assert not fake.private_chat_open(ALICE)

    update = Update.de_json(fake.open_link(ALICE, "https://t.me/resistance_test_bot?start=join-abc_1"), bot)
    assert fake.private_chat_open(ALICE)
    assert update.effective_chat.type == "private" and update.effective_chat.id == ALICE
    assert update.effective_user.username == "alice"
    assert update.message.text == "/start join-abc_1"
    assert update.message.entities[0].type == "bot_command" and update.message.entities[0].length == len("/start")

    await bot.send_message(ALICE, "Your role: spy")
    assert [m.text for m in fake.messages(ALICE) if m.from_bot] == ["Your role: spy"]


@pytest.mark.parametrize(
    "url",
    [
        "https://t.me/other_bot?start=x",
        "https://example.com/resistance_test_bot?start=x",
        "https://t.me/resistance_test_bot?start=a b",
    ],
)
def test_open_link_rejects_links_that_telegram_would_not_deliver(fake: FakeTelegram, url: str):
    with pytest.raises(ValueError):
        fake.open_link(ALICE, url)


async def test_blocked_user_and_unknown_chat(bot: Bot, fake: FakeTelegram):
    fake.command(BOB, BOB, "/start")
    fake.block(BOB)
    with pytest.raises(Forbidden, match="(?i)bot was blocked by the user"):
        await bot.send_message(BOB, "hello")
    fake.unblock(BOB)
    await bot.send_message(BOB, "hello")
    with pytest.raises(BadRequest, match="(?i)chat not found"):
        await bot.send_message(-42, "anyone?")


async def test_limits(bot: Bot, fake: FakeTelegram):
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.send_message(GROUP, "x" * 4097)
    await bot.send_message(GROUP, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")  # tags don't count
    with pytest.raises(BadRequest, match="(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(GROUP, "x", reply_markup=keyboard(("Too long", "d" * 65)))
    assert len(fake.messages(GROUP)) == 1


async def test_limits_count_utf16_code_units(bot: Bot, fake: FakeTelegram):
    """Telegram counts text in UTF-16 code units: an emoji, or a letter outside the basic plane, takes two."""
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.send_message(GROUP, "🙂" * 2049)
    sent = await bot.send_message(GROUP, "&lt;" + "🙂" * 2047 + "x", parse_mode="HTML")  # an entity is one
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.edit_message_text("𝔄" * 2049, GROUP, sent.message_id)
    sent = await bot.send_message(GROUP, "Team?", reply_markup=keyboard(("Approve", "a")))
    query = Update.de_json(fake.press(BOB, GROUP, sent.message_id, "a"), bot).callback_query
    with pytest.raises(BadRequest, match="(?i)MESSAGE_TOO_LONG"):
        await query.answer("🙂" * 101)
    assert await query.answer("🙂" * 100) is True


async def test_press_only_existing_buttons(bot: Bot, fake: FakeTelegram):
    sent = await bot.send_message(GROUP, "Team?", reply_markup=keyboard(("Approve", "a"), ("Reject", "r")))
    by_data = Update.de_json(fake.press(BOB, GROUP, sent.message_id, "r"), bot)
    by_label = Update.de_json(fake.press(ALICE, GROUP, sent.message_id, text="Approve"), bot)
    assert by_data.callback_query.data == "r" and by_data.effective_user.id == BOB
    assert by_label.callback_query.data == "a" and by_label.effective_chat.id == GROUP
    assert by_label.callback_query.message.message_id == sent.message_id
    assert by_label.callback_query.message.reply_markup == sent.reply_markup
    assert by_data.callback_query.id != by_label.callback_query.id

    with pytest.raises(LookupError, match="'Approve' -> 'a'"):
        fake.press(BOB, GROUP, sent.message_id, "hack")
    with pytest.raises(LookupError):
        fake.press(BOB, GROUP, sent.message_id, text="Maybe")
    forged = Update.de_json(fake.forged_press(BOB, GROUP, sent.message_id, "hack"), bot)
    assert forged.callback_query.data == "hack"

    assert await by_data.callback_query.answer("Counted", show_alert=True) is True
    assert fake.callback_answers[by_data.callback_query.id] == {"text": "Counted", "show_alert": True}
    with pytest.raises(BadRequest, match="(?i)query is too old"):
        await by_data.callback_query.answer()  # twice
    fake.expire_callback_queries()
    with pytest.raises(BadRequest, match="(?i)query is too old"):
        await by_label.callback_query.answer()


async def test_group_command_update(bot: Bot, fake: FakeTelegram):
    update = Update.de_json(fake.command(ALICE, GROUP, "/newgame@resistance_test_bot 5"), bot)
    assert update.effective_chat.type == "supergroup" and update.effective_chat.title == "Resistance table"
    assert update.effective_user.first_name == "Alice"
    entity = update.message.entities[0]
    assert update.message.parse_entity(entity) == "/newgame@resistance_test_bot"
    assert not Update.de_json(fake.text(BOB, GROUP, "hi"), bot).message.entities
    assert not fake.private_chat_open(ALICE)


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # int vs timedelta retry_after
async def test_injected_failures(bot: Bot, fake: FakeTelegram):
    fake.fail_next("sendMessage", status=429, description="Too Many Requests: retry after 7", retry_after=7)
    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(GROUP, "flood")
    assert caught.value.retry_after in (7, dtm.timedelta(seconds=7))

    fake.fail_next("sendMessage", status=502, description="Bad Gateway", times=2)
    fake.fail_next("sendMessage", status=0, description="timed out")
    for expected in (NetworkError, NetworkError, TimedOut):
        with pytest.raises(expected):
            await bot.send_message(GROUP, "retry")
    await bot.send_message(GROUP, "finally")
    assert [m.text for m in fake.messages(GROUP)] == ["finally"]
    assert [method for method, _ in fake.calls].count("sendMessage") == 5


async def test_send_document_keeps_the_bytes(bot: Bot, fake: FakeTelegram):
    sent = await bot.send_document(GROUP, io.BytesIO(b'{"game": 1}'), filename="game.json", caption="Record")
    assert sent.document.file_name == "game.json" and sent.caption == "Record"
    stored = fake.message(GROUP, sent.message_id)
    assert (stored.document.filename, stored.document.data, stored.text) == ("game.json", b'{"game": 1}', "Record")
    again = await bot.send_document(GROUP, sent.document.file_id)  # resending by file_id
    assert fake.message(GROUP, again.message_id).document.data == b'{"game": 1}'
    with pytest.raises(Forbidden):
        await bot.send_document(ALICE, b"secret", filename="roles.txt")


async def test_commands_members_and_unknown_methods(bot: Bot, fake: FakeTelegram):
    await bot.set_my_commands([("newgame", "Start a game")])
    await bot.set_my_commands([("newgame", "Начать игру")], language_code="ru")
    assert fake.commands[None] == [{"command": "newgame", "description": "Start a game"}]
    assert fake.commands["ru"][0]["description"] == "Начать игру"
    with pytest.raises(BadRequest, match="(?i)BOT_COMMAND_INVALID"):
        await bot.set_my_commands([("NewGame", "camel case is refused")])

    statuses = [(await bot.get_chat_member(GROUP, user)).status for user in (ALICE, BOB, fake.bot_id)]
    assert statuses == ["creator", "administrator", "member"]
    fake.add_user(3, "Mallory")
    assert (await bot.get_chat_member(GROUP, 3)).status == "member"
    fake.leave_group(GROUP, 3)  # or was never in it
    assert (await bot.get_chat_member(GROUP, 3)).status == "left"
    with pytest.raises(ValueError, match="not a member"):
        fake.command(3, GROUP, "/join")
    assert (await bot.get_chat(GROUP)).title == "Resistance table"
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("sendTelepathy")


async def test_two_bots_share_one_world(fake: FakeTelegram):
    first, second = (Bot(fake.token, request=fake.request(), get_updates_request=fake.request()) for _ in range(2))
    async with first, second:
        one = await first.send_message(GROUP, "from worker 1")
        two = await second.send_message(GROUP, "from worker 2")
        await second.edit_message_text("edited by worker 2", GROUP, one.message_id)
    assert two.message_id == one.message_id + 1
    assert [m.text for m in fake.messages(GROUP)] == ["edited by worker 2", "from worker 2"]


async def test_a_group_upgraded_to_a_supergroup_moves_to_a_new_id(bot: Bot, fake: FakeTelegram):
    old = await bot.send_message(GROUP, "Vote!", reply_markup=keyboard(("Yes", "v:1")))
    to_update, from_update = fake.upgrade_group(GROUP, -1009999)

    to_message = Update.de_json(to_update, bot).message
    from_message = Update.de_json(from_update, bot).message
    assert (to_message.chat.id, to_message.chat.type, to_message.migrate_to_chat_id) == (GROUP, "group", -1009999)
    assert (from_message.chat.id, from_message.chat.type) == (-1009999, "supergroup")
    assert from_message.migrate_from_chat_id == GROUP
    # Every call naming the old id is refused with the new one, as Telegram does.
    for call in (
        bot.send_message(GROUP, "late"),
        bot.edit_message_text("Vote! (1/5)", GROUP, old.message_id),
        bot.get_chat_member(GROUP, ALICE),
    ):
        with pytest.raises(ChatMigrated) as refused:
            await call
        assert refused.value.new_chat_id == -1009999
    new = await bot.send_message(-1009999, "here now")
    assert new.chat.title == "Resistance table" and new.chat.type == "supergroup"
    assert (await bot.get_chat_member(-1009999, ALICE)).status == "creator"
    # The old messages stay, their buttons still pressable; nobody writes in the old group any more.
    assert fake.press(BOB, GROUP, old.message_id, "v:1")["callback_query"]["message"]["chat"]["id"] == GROUP
    with pytest.raises(ValueError):
        fake.command(ALICE, GROUP, "/status")
    with pytest.raises(LookupError):
        fake.upgrade_group(GROUP, -1008888)


async def test_real_application_runs_against_the_fake(fake: FakeTelegram):
    async def newgame(update, context):
        await update.effective_chat.send_message("Lobby open", reply_markup=keyboard(("Join", "join")))

    app = ApplicationBuilder().token(fake.token).request(fake.request()).get_updates_request(fake.request()).build()
    app.add_handler(CommandHandler("newgame", newgame))
    async with app:
        await app.process_update(Update.de_json(fake.command(ALICE, GROUP, "/newgame@resistance_test_bot"), app.bot))
        await app.updater.start_polling()  # getUpdates must not starve the event loop
        await asyncio.sleep(0.2)
        await app.updater.stop()
    lobby = [m for m in fake.messages(GROUP) if m.from_bot]
    assert [(m.text, m.buttons()[0]["text"]) for m in lobby] == [("Lobby open", "Join")]
