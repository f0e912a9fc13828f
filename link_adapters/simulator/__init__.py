"""A stand-in for a table controller: real shuffles, real hands of every game (the five-card
games, Super Sevens blackjack, Pai Gow Poker), the reference register map (v1, or v2 for a
table whose ``SimTableConfig.register_map`` is 2; Super Sevens and Pai Gow Poker speak v2).

Dependency rule (shared/DESIGN.md): this package may import the pure core ``controller.core.hands``
and ``controller.core.games``, and nothing else of ``controller``.
"""
