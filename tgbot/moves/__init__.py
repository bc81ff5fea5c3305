"""What a command, a button press or the clock does to a table: pure functions, no Telegram, no Redis.

Each takes the stored table and who acted, checks the press against it (this game, this
decision, this player), asks the engine to apply the action, and returns a `Change`: the
new table with the messages the engine's events cause (`announcements`). A refusal raises
`Refused` with the short answer for the person who pressed; the table is then not stored.

- `lobby`: opening, joining, leaving, starting, cancelling;
- `play`: votes, cards, the leader's choice, "waiting for", /status, what a player still needs;
- `announcements`: engine events in, group and private messages out;
- `clock`: deadlines and reminders;
- `computers`: computer players seated in the lobby, and their turns on the clock;
- `absence`: missed deadlines, a computer player taking over a seat, Plot chances let lapse;
- `plot`, `plot_announcements`: Plot card presses, and the Plot keyboards and what a card showed;
- `prompts`: the private keyboards of the decisions the game waits for.
"""
