"""The floor configuration: the documented example parses; mistakes are named precisely."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config import ConfigError, load_floor_config, parse_floor_config
from controller.games import Game

EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "floor.example.toml"


def minimal(**link: object) -> dict[str, object]:
    table = {"id": "T1", "bus": "b", "unit": 1}
    base = {
        "id": "L",
        "game": "caribbean_stud",
        "rate": "80%",
        "reset": "$10,000",
        "table": [table],
    }
    base.update(link)
    return {"bus": [{"name": "b", "kind": "tcp", "host": "127.0.0.1"}], "link": [base]}


def test_the_documented_example_parses() -> None:
    floor = load_floor_config(EXAMPLE)
    assert [link.link_id for link in floor.links] == ["stud", "draw", "lir"]
    assert {b.kind for b in floor.buses.values()} == {"tcp", "rtu_over_tcp", "rtu"}
    stud = floor.links[0]
    assert (
        stud.rate_bp == 8250 and stud.reset_cents == 10_000_00 and stud.game is Game.CARIBBEAN_STUD
    )
    assert stud.tables[0].poll_interval_ms == 250
    lir = floor.links[2]
    assert lir.tables[0].config.min_round_us == 30_000_000
    assert {
        floor.buses[t.bus].kind for link in floor.links for t in link.tables if link is not stud
    } <= {"tcp", "rtu_over_tcp"}
    serial = [t for t in stud.tables if floor.buses[t.bus].kind == "rtu"]
    assert [t.poll_interval_ms for t in serial] == [0, 0]  # a serial line: as fast as it allows
    assert len(floor.tables) == 8


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rate": "59.99%"}, "68 IAC 10-1-1.1(c)"),
        ({"rate": "101%"}, "68 IAC 10-1-1.1(c)"),
        ({"reset": "$10.005"}, "fraction of a cent"),
        ({"game": "blackjack"}, "'game' must be one of"),
        ({"table": []}, "at least one [[link.table]]"),
        ({"table": [{"id": "T1", "bus": "nope", "unit": 1}]}, "no bus named 'nope'"),
        ({"table": [{"id": "T1", "bus": "b", "unit": 0}]}, "unit id 1-247"),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1}, {"id": "T2", "bus": "b", "unit": 1}]},
            "already another table",
        ),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1}, {"id": "T1", "bus": "b", "unit": 2}]},
            "used twice",
        ),
        ({"table": [{"id": "T1", "bus": "b", "unit": 1, "seats": 9}]}, "seats must be 1 to 7"),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1, "colour": "red"}]},
            "unknown setting(s) ['colour']",
        ),
        (
            {
                "game": "let_it_ride_bonus",
                "table": [{"id": "T1", "bus": "b", "unit": 1, "denomination": "$5"}],
            },
            "68 IAC 10-7-5(b)",
        ),
        ({"id": "stud\u202e"}, "'id': an id may not contain U+202E RIGHT-TO-LEFT OVERRIDE"),
        ({"id": "main stud"}, "'main stud' is not a valid id"),
        ({"name": "Stud\u200bbank"}, "'name': one-line text may not contain U+200B"),
        ({"table": [{"id": "T#1", "bus": "b", "unit": 1}]}, "'T#1' is not a valid id"),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1, "location": "pit\r1"}]},
            "'location': one-line text may not contain U+000D",
        ),
    ],
)
def test_mistakes_are_refused_naming_the_place(change: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_floor_config(minimal(**change), source="floor.toml")
    assert message in str(info.value)
    assert "floor.toml" in str(info.value)


def test_bus_mistakes(tmp_path: Path) -> None:
    data = minimal()
    data["bus"] = [{"name": "b", "kind": "rtu"}]
    with pytest.raises(ConfigError, match="needs 'device'"):
        parse_floor_config(data)
    bad = tmp_path / "floor.toml"
    bad.write_text("[[link]\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_floor_config(bad)
    with pytest.raises(ConfigError, match="no such file"):
        load_floor_config(tmp_path / "missing.toml")
