"""The pure core: the rules that decide money.

Money, hands, games and paytables, the meter reducer, the chained history and the state seals.
Nothing here does I/O, reads a clock or draws randomness (``tests/test_layers.py`` checks), so
each module can be read, tested and certified alone.
"""
