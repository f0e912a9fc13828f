"""What text the controller takes in: one rule for each kind of field, checked where text
enters (the API, the command line, the floor configuration), never on what is stored.

Every record here is read by people (pages, PDFs, spreadsheets) and some by regulators.
Characters that change how text *shows* without showing themselves could make a record say
one thing on screen and another in the database: control characters (a carriage return that
starts a new row in a spreadsheet, an escape that rewrites a terminal), bidirectional
overrides and isolates ("U+202E" turns ``fdp.exe`` into what reads as ``exe.pdf``), and other
invisible formatting characters (zero-width spaces and joiners, a soft hyphen, Hangul
fillers) that make two names look the same. They are refused, never silently removed, so
what is recorded is exactly what was typed.

* ids (links, tables) and references (hits, records, requests) are a safe ASCII charset;
  usernames keep their own rule (``USERNAME``);
* one-line text (names, telephone numbers, serial numbers, file names, short reasons typed
  into one-line inputs) has no line break or tab;
* multi-line text (reasons, notes, descriptions: the pages offer a text area for them) may
  hold line feeds and tabs; a CR LF pair (what a browser sends from a form) is kept as a line
  feed, and a carriage return alone is refused: spreadsheets and terminals take it for a
  line break that the record does not show.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from controller.refusal import Invalid

# Shown by name in refusals: what a reader has to know of these is that they reorder text.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Not format characters in Unicode's sense, yet blank: they pass for letters or nothing.
INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u2800\u3164\uffa0")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
MULTILINE_ALLOWED = frozenset("\n\t")


class TextRefused(Invalid):
    """Text that is not taken in; the message says which rule and where in the text."""


def _is_refused(ch: str) -> bool:
    return unicodedata.category(ch) in _REFUSED_CATEGORIES or ch in INVISIBLE_LETTERS


def _ranges(planes: tuple[int, ...]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in (cp for plane in planes for cp in range(plane << 16, (plane + 1) << 16)):
        if _is_refused(chr(cp)):
            if out and out[-1][1] == cp - 1:
                out[-1] = (out[-1][0], cp)
            else:
                out.append((cp, cp))
    return out


def _escape(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _char_class(ranges: list[tuple[int, int]], allowed: frozenset[str]) -> str:
    parts: list[str] = []
    for first, last in ranges:
        # Cut the allowed characters (tab, line feed) out of the control range they sit in.
        cps = [cp for cp in range(first, last + 1) if chr(cp) not in allowed]
        while cps:
            run_end = 0
            while run_end + 1 < len(cps) and cps[run_end + 1] == cps[run_end] + 1:
                run_end += 1
            a, b = cps[0], cps[run_end]
            parts.append(_escape(a) if a == b else f"{_escape(a)}-{_escape(b)}")
            cps = cps[run_end + 1 :]
    return "".join(parts)


# Planes 2-13 hold ideographs or nothing yet, 15-16 private use: no refused character there.
_BMP_RANGES = _ranges((0,))
_ALL_RANGES = _BMP_RANGES + _ranges((1, 14))
_REFUSED_ONE_LINE = re.compile(f"[{_char_class(_ALL_RANGES, frozenset())}]")
_REFUSED_MULTILINE = re.compile(f"[{_char_class(_ALL_RANGES, MULTILINE_ALLOWED)}]")


def describe(ch: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: a character a reader cannot see, named."""
    name = unicodedata.name(ch, "") or {
        "\t": "TAB",
        "\n": "LINE FEED",
        "\r": "CARRIAGE RETURN",
        "\x00": "NUL",
        "\x1b": "ESCAPE",
        "\x7f": "DELETE",
    }.get(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def _why(ch: str) -> str:
    if ch in BIDI_CONTROLS:
        return "a bidirectional control (it reorders how the text reads)"
    category = unicodedata.category(ch)
    if category == "Cc":
        return "a control character"
    if category in ("Zl", "Zp"):
        return "a line or paragraph separator"
    if category == "Cs":
        return "half of a surrogate pair, not a character"
    return "an invisible formatting character (it can make different texts look the same)"


@dataclass(frozen=True, slots=True)
class TextRule:
    """One kind of field: what it may hold, and how long it may be."""

    name: str  # the field's kind: "id", "one-line text"
    kind: str  # as a refusal says it: "an id", "one-line text"
    max_length: int
    multiline: bool = False
    # Ids: the whole value matches this, and ``help`` says what it allows.
    charset: str | None = None
    help: str = ""

    def sized(self, max_length: int) -> TextRule:
        return replace(self, max_length=max_length)

    @property
    def pattern(self) -> str:
        """The rule as a regular expression for an OpenAPI schema (Python and ECMAScript
        alike; characters beyond the Basic Multilingual Plane are checked, not listed)."""
        if self.charset is not None:
            return f"^{self.charset}$"
        allowed = MULTILINE_ALLOWED if self.multiline else frozenset()
        refused = _char_class(_BMP_RANGES, allowed)
        if self.multiline:
            return f"^(?:[^{refused}]|\\r\\n)*$"
        return f"^[^{refused}]*$"

    def check(self, value: str, *, required: bool = False) -> str:
        """The value as it is kept (multi-line text: CR LF as LF), or ``TextRefused``."""
        if len(value) > self.max_length:
            raise TextRefused(
                f"{self.kind} has at most {self.max_length} characters, not {len(value)}"
            )
        if self.multiline:
            value = value.replace("\r\n", "\n")
        refused = (_REFUSED_MULTILINE if self.multiline else _REFUSED_ONE_LINE).search(value)
        if refused is not None:
            ch = refused.group()
            why = _why(ch)
            if self.multiline and ch == "\r":
                why = "a carriage return without a line feed (write line breaks as LF or CR LF)"
            raise TextRefused(
                f"{self.kind} may not contain {describe(ch)} (character {refused.start() + 1}): "
                f"it is {why}"
            )
        if self.charset is not None and not re.fullmatch(self.charset, value):
            raise TextRefused(f"{value!r} is not a valid {self.name}: {self.help}")
        if required and not value.strip():
            raise TextRefused(f"{self.kind} may not be blank")
        return value


# Links and tables: short, ASCII, safe in an address, a file name, a log line and a
# spreadsheet cell. A table's hits are named "<table>#<epoch>.<n>", so "#" is not in a table's
# id, and 32 characters leave room for the rest within the 64 a hit id may have
# (controller/storage/models.py).
ID = TextRule(
    name="id",
    kind="an id",
    max_length=32,
    charset=r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}",
    help="1 to 32 letters, digits, '.', '_' or '-', starting with a letter or digit",
)
# What names a record the controller made (hits "stud-1#12", anomalies, requests, tokens).
REFERENCE = TextRule(
    name="reference",
    kind="a reference",
    max_length=128,
    charset=r"[A-Za-z0-9][A-Za-z0-9._:@#-]{0,127}",
    help="1 to 128 letters, digits, '.', '_', ':', '@', '#' or '-', starting with a letter "
    "or digit",
)
# A hit: a reference, or the envy pay of one ("stud-1#3/envy", "stud-1#3/envy5", named by
# controller/core/reducer/level_hits.py), whose "/" goes in an address as it is.
HIT_REFERENCE = TextRule(
    name="hit reference",
    kind="a hit reference",
    max_length=128,
    charset=r"[A-Za-z0-9][A-Za-z0-9._:@#-]{0,119}(?:/envy[0-9]{0,3})?",
    help="a hit's id: 1 to 120 letters, digits, '.', '_', ':', '@', '#' or '-', starting "
    "with a letter or digit, then, for an envy pay, '/envy' and its seat",
)
USERNAME = TextRule(
    name="username",
    kind="a username",
    max_length=64,
    charset=r"[a-z][a-z0-9._-]{1,63}",
    help="2 to 64 characters: lowercase letters, digits, '.', '_' or '-', starting with a letter",
)
ONE_LINE = TextRule(name="one-line text", kind="one-line text", max_length=200)
MULTILINE = TextRule(
    name="multi-line text", kind="multi-line text", max_length=2000, multiline=True
)
FILE_NAME = ONE_LINE.sized(255)
