"""The floor configuration: the documented example parses; mistakes are named precisely."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.core.games import Game
from controller.runtime.config import load_floor_config, parse_floor_config
from controller.runtime.config_sections import ConfigError
from link_adapters.modbus_params import SerialParams

EXAMPLE = Path(__file__).resolve().parents[3] / "deploy" / "floor.example.toml"


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
        ({"game": "blackjack"}, "link #1 'L', game: must be one of"),
        ({"table": []}, "at least one [[link.table]]"),
        (
            {"table": [{"id": "T1", "bus": "nope", "unit": 1}]},
            "table #1 'T1', bus: no bus is named 'nope'",
        ),
        ({"table": [{"id": "T1", "bus": "b", "unit": 0}]}, "unit: must be 1 to 247, got 0"),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1}, {"id": "T2", "bus": "b", "unit": 1}]},
            "table #2 'T2', unit: unit 1 on bus 'b' is already link #1 'L', table #1",
        ),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1}, {"id": "T1", "bus": "b", "unit": 2}]},
            "table #2 'T1', id: 'T1' is already the id of link #1 'L', table #1",
        ),
        ({"table": [{"id": "T1", "bus": "b", "unit": 1, "seats": 9}]}, "seats: must be 1 to 7"),
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
        ({"id": "stud\u202e"}, "id: an id may not contain U+202E RIGHT-TO-LEFT OVERRIDE"),
        ({"id": "main stud"}, "'main stud' is not a valid id"),
        ({"name": "Stud\u200bbank"}, "name: one-line text may not contain U+200B"),
        ({"table": [{"id": "T#1", "bus": "b", "unit": 1}]}, "'T#1' is not a valid id"),
        (
            {"table": [{"id": "T1", "bus": "b", "unit": 1, "location": "pit\r1"}]},
            "location: one-line text may not contain U+000D",
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
    with pytest.raises(ConfigError, match="bus #1 'b', device: is required"):
        parse_floor_config(data)
    bad = tmp_path / "floor.toml"
    bad.write_text("[[link]\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_floor_config(bad)
    with pytest.raises(ConfigError, match="no such file"):
        load_floor_config(tmp_path / "missing.toml")


def table(**settings: object) -> dict[str, object]:
    return {"id": "T1", "bus": "b", "unit": 1, **settings}


def bus(**settings: object) -> dict[str, object]:
    return {"name": "b", "kind": "tcp", "host": "127.0.0.1", **settings}


def with_bus(**settings: object) -> dict[str, object]:
    data = minimal()
    data["bus"] = [bus(**settings)]
    return data


# Each mistake, and what the refusal must say: the place (link, table or bus, and the key)
# and the rule. None of these may get as far as a write.
REFUSED: dict[str, tuple[dict[str, object], str]] = {
    "unknown profile": (
        minimal(table=[table(profile="no-such-table")]),
        "link #1 'L', table #1 'T1', profile: no bundled profile is named 'no-such-table'",
    ),
    "port 70000": (with_bus(port=70000), "bus #1 'b', port: must be 1 to 65535, got 70000"),
    "negative timeout": (
        with_bus(timeout_ms=-5),
        "bus #1 'b', timeout_ms: must be 1 to 60000, got -5",
    ),
    "negative retries": (with_bus(retries=-1), "bus #1 'b', retries: must be 0 to 10, got -1"),
    "baudrate 0": (
        {
            **minimal(),
            "bus": [{"name": "b", "kind": "rtu", "device": "/dev/ttyUSB0", "baudrate": 0}],
        },
        "bus #1 'b', baudrate: must be 50 to 4000000, got 0",
    ),
    "stop bits 3": (
        {
            **minimal(),
            "bus": [{"name": "b", "kind": "rtu", "device": "/dev/ttyUSB0", "stopbits": 3}],
        },
        "bus #1 'b', stopbits: must be 1 or 2, got 3",
    ),
    "stop bits as text": (
        {
            **minimal(),
            "bus": [{"name": "b", "kind": "rtu", "device": "/dev/ttyUSB0", "stopbits": "2"}],
        },
        "bus #1 'b', stopbits: must be a whole number, got '2'",
    ),
    "poll interval -5": (
        minimal(table=[table(poll_interval_ms=-5)]),
        "table #1 'T1', poll_interval_ms: must be 0 to 60000, got -5",
    ),
    "empty link id": (minimal(id=""), "link #1, id: '' is not a valid id: 1 to 32 letters"),
    "link id with a NUL": (minimal(id="L\x00"), "link #1, id: an id may not contain U+0000 NUL"),
    "table id with a bidi override": (
        minimal(table=[table(id="T\u202e1")]),
        "link #1 'L', table #1, id: an id may not contain U+202E",
    ),
    "id too long": (minimal(id="L" * 33), "link #1, id: an id has at most 32 characters"),
    "name with a control character": (
        minimal(name="Stud\x1b[2J"),
        "link #1 'L', name: one-line text may not contain U+001B ESCAPE",
    ),
    "huge reset": (
        minimal(reset="$100,000,000,000,000,000"),
        "link #1 'L', reset: must be $0.00 to $42,949,672.95, got '$100,000,000,000,000,000'",
    ),
    "huge denomination": (
        minimal(table=[table(denomination="$92,233,720,368,547,758.08")]),
        "table #1 'T1', denomination: must be $0.01 to $100.00",
    ),
    "credits per seat": (
        minimal(table=[table(max_credits_per_seat=10**9)]),
        "table #1 'T1', max_credits_per_seat: must be 1 to 1000",
    ),
    "round time": (
        minimal(table=[table(min_round_ms=0)]),
        "table #1 'T1', min_round_ms: must be 1 to 3600000, got 0",
    ),
    "wrong type": (minimal(table=[table(unit="1")]), "unit: must be a whole number, got '1'"),
    "tables not a list": (minimal(table="T1"), "link #1 'L', table: must be a list of tables"),
    "offline after": (
        {**minimal(), "controller": {"offline_after_failures": 0}},
        "controller, offline_after_failures: must be 1 to 1000, got 0",
    ),
    "unknown top-level key": (
        {**minimal(), "links": []},
        "top level: unknown setting(s) ['links']",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_each_mistake_names_its_place_and_rule(case: str) -> None:
    data, message = REFUSED[case]
    with pytest.raises(ConfigError) as info:
        parse_floor_config(data, source="floor.toml")
    assert str(info.value).startswith("floor.toml: ")
    assert any(message in p for p in info.value.problems), info.value.problems


def test_a_serial_line_takes_one_or_two_stop_bits_from_the_file(tmp_path: Path) -> None:
    # 8N2: no parity and two stop bits, as the Modbus serial line specification asks.
    floor = tmp_path / "floor.toml"
    floor.write_text(
        """
[[bus]]
name = "rs485"
kind = "rtu"
device = "/dev/ttyUSB0"
baudrate = 9600
parity = "N"
stopbits = 2

[[link]]
id = "L"
game = "caribbean_stud"
rate = "80%"
reset = "$10,000"

  [[link.table]]
  id = "T1"
  bus = "rs485"
  unit = 1
"""
    )
    params = load_floor_config(floor).buses["rs485"].params
    assert isinstance(params, SerialParams)
    assert (params.baudrate, params.parity, params.stopbits) == (9600, "N", 2)
    # Two stop bits make a character 11 bits: the RTU gap of 3.5 of them follows.
    assert params.frame_gap_s == pytest.approx(3.5 * 11 / 9600)
    data = minimal()
    data["bus"] = [{"name": "b", "kind": "rtu", "device": "/dev/ttyUSB0"}]
    default = parse_floor_config(data).buses["b"].params
    assert isinstance(default, SerialParams) and default.stopbits == 1


def test_a_duplicate_link_id_is_refused_with_the_place_of_the_first() -> None:
    first = minimal()
    second = minimal(table=[table(id="T2", unit=2)])
    data = {"bus": first["bus"], "link": [*first["link"], *second["link"]]}  # type: ignore[misc]
    with pytest.raises(ConfigError) as info:
        parse_floor_config(data, source="floor.toml")
    assert info.value.problems == ("link #2 'L', id: 'L' is already the id of link #1 'L'",)


def test_every_problem_of_a_file_is_named_at_once() -> None:
    data = minimal(id="", reset="-$5", table=[table(unit=0, profile="nope", colour="red")])
    data["bus"] = [bus(port=0, retries=99)]
    with pytest.raises(ConfigError) as info:
        parse_floor_config(data, source="floor.toml")
    problems = info.value.problems
    expected = [
        "bus #1 'b', retries: must be 0 to 10",
        "bus #1 'b', port: must be 1 to 65535",
        "link #1, id: '' is not a valid id",
        "link #1, reset: '-$5' is negative",
        "link #1, table #1 'T1': unknown setting(s) ['colour']",
        "link #1, table #1 'T1', unit: must be 1 to 247",
        "link #1, table #1 'T1', profile: no bundled profile is named 'nope'",
    ]
    for part in expected:
        assert any(part in p for p in problems), (part, problems)
    assert len(problems) == len(expected)
    assert str(info.value).startswith(f"floor.toml: {len(expected)} problems:\n  ")


def test_a_file_that_is_not_toml_is_refused_naming_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "floor.toml"
    bad.write_text('[[bus]]\nname = "b"\nport = 502\nport = 503\n')
    with pytest.raises(ConfigError) as info:
        load_floor_config(bad)
    assert str(info.value).startswith(f"{bad}: not valid TOML")
    assert "line 4" in str(info.value)
    bad.write_bytes(b'[[link]]\nid = "\xff"\n')
    with pytest.raises(ConfigError, match="cannot be read"):
        load_floor_config(bad)


POOL_LEVELS = [
    {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "10%"},
    {"name": "Major", "reset": "$1,000", "share": "15%", "hidden": "5%", "limit": "$1,000.50",
     "above_limit": "next_level"},
    {"name": "Minor", "reset": "$100", "share": "8%", "limit": "$100.20"},
    {"name": "Mini", "reset": "$10", "share": "2%", "mystery_floor": "$10.01",
     "mystery_ceiling": "$20"},
]  # fmt: skip


def test_a_link_of_levels_with_tables_of_two_games_is_read_from_the_file() -> None:
    import tomllib

    text = """
[[bus]]
name = "b"
kind = "tcp"
host = "127.0.0.1"

[[link]]
id = "pool"
game = "caribbean_stud"

  [[link.level]]
  name = "Grand"
  reset = "$10,000"
  share = "60%"
  hidden = "10%"

  [[link.level]]
  name = "Mini"
  reset = "$10"
  share = "10%"
  mystery_floor = "$10.01"
  mystery_ceiling = "$20"

  [[link.paytable]]
  hand = "ROYAL_FLUSH"
  pays = "100%"
  level = 1

  [[link.paytable]]
  hand = "FLUSH"
  pays = "$50"
  envy = "$5"

  [[link.paytable]]
  game = "caribbean_draw"
  hand = "ROYAL_FLUSH"
  pays = "50%"

  [[link.table]]
  id = "T1"
  bus = "b"
  unit = 1

  [[link.table]]
  id = "D1"
  bus = "b"
  unit = 2
  game = "caribbean_draw"
  denomination = "$5"
"""
    floor = parse_floor_config(tomllib.loads(text))
    [link] = floor.links
    assert link.levels is not None and [lv.name for lv in link.levels] == ["Grand", "Mini"]
    assert link.rate_bp == 8_000 and link.reset_cents == 10_000_00  # the shares, level 1's reset
    assert link.levels[1].mystery is not None
    assert link.paytable is not None and link.paytable.lines[1].envy_cents == 5_00
    assert set(link.paytables) == {Game.CARIBBEAN_DRAW}
    assert link.tables[1].config.game is Game.CARIBBEAN_DRAW and link.tables[0].config.game is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"level": [*POOL_LEVELS[:3], {**POOL_LEVELS[3], "share": "2"}]},
            "link #1 'L', level: level 4 (Mini): share '2' needs its unit: write a share like 2.5%",
        ),
        (
            {"level": [{**POOL_LEVELS[0], "share": "70%"}, *POOL_LEVELS[1:]]},
            "68 IAC 10-1-1.1(c)",
        ),
        (
            {"paytable": [{"hand": "FLUSH", "pays": "50"}]},
            "paytable: Caribbean Stud Poker paytable line 1 (flush): pays '50' needs its unit",
        ),
        ({"fixed_pay": True}, "a fixed-pay link has no meter"),
        ({"fixed_pay": "yes"}, "fixed_pay: must be true or false"),
    ],
)
def test_levels_and_lines_in_the_file_are_refused_naming_their_place(
    change: dict[str, object], message: str
) -> None:
    data = minimal(**change)
    if "level" in change:
        link = data["link"][0]  # type: ignore[index]
        del link["rate"], link["reset"]
    with pytest.raises(ConfigError) as caught:
        parse_floor_config(data)
    assert message in str(caught.value)


def test_a_let_it_ride_link_is_fixed_pay_with_or_without_the_rate_files_gave_it() -> None:
    table = {"id": "T1", "bus": "b", "unit": 1}
    for terms in ({}, {"rate": "70%", "reset": "$1,000"}):
        data = minimal(game="let_it_ride_bonus", table=[table])
        link = data["link"][0]  # type: ignore[index]
        del link["rate"], link["reset"]
        link.update(terms)
        [entry] = parse_floor_config(data).links
        assert entry.fixed_pay and entry.levels == ()
