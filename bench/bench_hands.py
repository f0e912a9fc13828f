"""Benchmark controller.core.hands.evaluate against a plain reference evaluator.

Run from the project root: ``python bench/bench_hands.py``. Deals 300,000 five-card and
100,000 seven-card hands up front with a fixed seed, times ``evaluate`` over them (best of
three passes for five cards; the first, cold-memo pass and a warm pass for seven), times the
plain sort-and-count reference over the same hands in the same run, checks that both agree on
every category, and prints PASS/FAIL against the targets the simulator needs:
200,000 five-card and 50,000 seven-card evaluations per second, and import under 0.5 s.
Exits 1 on any FAIL.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.controller.core.reference_hands import reference  # noqa: E402

_import_started = time.perf_counter()
from controller.core.hands import evaluate  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - _import_started

SEED = 20240601
FIVE_CARD_HANDS = 300_000
SEVEN_CARD_HANDS = 100_000
FIVE_CARD_TARGET = 200_000
SEVEN_CARD_TARGET = 50_000
IMPORT_TARGET_SECONDS = 0.5


def deal(rng: random.Random, size: int, count: int) -> list[tuple[int, ...]]:
    deck = range(52)
    return [tuple(rng.sample(deck, size)) for _ in range(count)]


def timed(function: Callable[[tuple[int, ...]], object], hands: list[tuple[int, ...]]) -> float:
    """Hands per second of ``function`` over ``hands``, loop overhead included."""
    started = time.perf_counter()
    for hand in hands:
        function(hand)
    return len(hands) / (time.perf_counter() - started)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> int:
    rng = random.Random(SEED)
    fives = deal(rng, 5, FIVE_CARD_HANDS)
    sevens = deal(rng, 7, SEVEN_CARD_HANDS)
    print(f"python {sys.version.split()[0]}; dealt {len(fives):,} five-card and "
          f"{len(sevens):,} seven-card hands (seed {SEED})")  # fmt: skip
    print(f"import controller.core.hands (tables built): {IMPORT_SECONDS * 1000:.1f} ms")

    # The seven-card memo starts empty here, so this first pass is the cold figure.
    seven_cold = timed(evaluate, sevens)
    seven_warm = timed(evaluate, sevens)
    five_rate = max(timed(evaluate, fives) for _ in range(3))
    five_ref = timed(reference, fives)
    seven_ref = timed(reference, sevens)

    mismatches = sum(
        evaluate(hand).category != reference(hand)[0] for hand in fives[:50_000] + sevens[:20_000]
    )

    print()
    print(f"{'':28}{'evaluate':>14}{'reference':>14}{'speed-up':>10}")
    rows = (
        ("5 cards (best of 3)", five_rate, five_ref),
        ("7 cards (cold memo)", seven_cold, seven_ref),
        ("7 cards (warm memo)", seven_warm, seven_ref),
    )
    for name, rate, ref_rate in rows:
        print(f"{name:28}{rate:>12,.0f}/s{ref_rate:>12,.0f}/s{rate / ref_rate:>9.1f}x")
    print()

    checks = (
        (f"5-card rate >= {FIVE_CARD_TARGET:,}/s", five_rate >= FIVE_CARD_TARGET),
        (f"7-card rate >= {SEVEN_CARD_TARGET:,}/s (cold)", seven_cold >= SEVEN_CARD_TARGET),
        (f"import < {IMPORT_TARGET_SECONDS} s", IMPORT_SECONDS < IMPORT_TARGET_SECONDS),
        ("categories agree with reference on 70,000 hands", mismatches == 0),
    )
    for name, ok in checks:
        print(f"{verdict(ok)}  {name}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
