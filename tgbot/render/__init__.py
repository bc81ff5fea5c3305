"""Texts and keyboards, by audience: the group (`board`), one player (`private`), the
group's menus and help (`menus`), a player's hints (`hints`).

Group texts are rendered from `engine.public_view` and the players' names only; a player's
private texts from `engine.seat_view` of that player's own seat. Nothing here decides a rule.
"""
