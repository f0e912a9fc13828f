"""What makes a password acceptable, and the one-time codes that replace a reset password.

A password is chosen by its person, never by an admin, for every role whose people check each
other (``controller.access.duties``). It must be hard to guess: long enough, not too long to hash
cheaply (a sign-in with a longer one is refused before any hashing), free of control
characters, not one short pattern repeated or a run of keys, not a common password, and not
the user's name.

A reset code is the one secret an admin hands over: two halves, each made and shown to a
different admin when two must agree (``controller.access.duties``), so that no admin alone
ever holds a usable secret of such an account. Only a digest of each half is kept: each half
carries 80 random bits, so a plain SHA-256 suffices where a chosen password needs argon2.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import secrets
import unicodedata

from controller.refusal import Invalid

MIN_PASSWORD = 10
# Argon2 hashes whatever it is given; a bound keeps a guess as cheap to refuse as to make.
MAX_PASSWORD = 128
PASSWORD_HELP = (
    f"{MIN_PASSWORD} to {MAX_PASSWORD} characters, no control characters, not a common or "
    "trivial password, not the username"
)

# Passwords (and stems that a few digits or symbols after them do not rescue) found at the top
# of every published list of leaked passwords, and the words of this trade.
COMMON = frozenset(
    """
    password passw0rd p@ssword p@ssw0rd password1 qwerty qwertyuiop qwertyuiop[] qwertz
    asdfghjkl asdfghjkl; zxcvbnm zxcvbnm,./ 1q2w3e4r 1q2w3e4r5t 1q2w3e4r5t6y q1w2e3r4t5
    q1w2e3r4t5y6 1qaz2wsx 1qaz2wsx3edc qazwsx qazwsxedc zaq12wsx 123qwe 123qweasd abc123
    abcd1234 letmein welcome iloveyou monkey dragon football baseball basketball soccer
    hockey sunshine princess trustno1 master superman batman starwars shadow michael
    jennifer jordan hunter ranger buster thomas charlie freedom whatever mustang access
    secret changeme default administrator admin root login guest test user supervisor
    technician dealer auditor commission casino jackpot progressive poker caribbean stud
    letitride blackjack roulette 1234512345 1122334455 1212121212 0102030405 5555555555
    1234567890 0987654321 12345678910 1234567890a 987654321 123123123 147258369 159357
    7777777 696969 11223344 12341234 qwerty123 qweasdzxc iloveyou1 password123 welcome1
    letmein1 admin123 test1234 abcdefg123
    """.split()  # noqa: SIM905 (a word list reads better as words)
)
_DECORATION = "0123456789!@#$%^&*?.,;:-_+=~ "

# Crockford's base 32: no I, L, O or U, so a code read aloud or copied by hand survives.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
HALF_LENGTH = 16  # 80 bits


class PasswordRefused(Invalid):
    """A password that the rule refuses, with the reason in words."""


def _stem(text: str) -> str:
    return text.casefold().rstrip(_DECORATION)


def _repeats(text: str) -> str | None:
    """The short unit that ``text`` merely repeats (at most three characters), if any."""
    for period in (1, 2, 3):
        unit = text[:period]
        if len(text) > period and (unit * (len(text) // period + 1))[: len(text)] == text:
            return unit
    return None


def _is_run(text: str) -> bool:
    """Consecutive characters up or down: ``abcdefghij``, ``9876543210``."""
    steps = {ord(b) - ord(a) for a, b in itertools.pairwise(text)}
    return steps in ({1}, {-1})


def check_password(password: str, *, username: str | None = None) -> str:
    """``password`` when the rule accepts it; otherwise ``PasswordRefused`` saying why."""
    if len(password) < MIN_PASSWORD:
        raise PasswordRefused(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise PasswordRefused(f"a password has at most {MAX_PASSWORD} characters")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in password):
        raise PasswordRefused("a password may not contain control characters")
    if password.isspace():
        raise PasswordRefused("a password may not be only spaces")
    unit = _repeats(password.casefold())
    if unit is not None:
        raise PasswordRefused(f"a password may not repeat {unit!r} over and over")
    if _is_run(password.casefold()):
        raise PasswordRefused("a password may not be a run of consecutive characters")
    stem = _stem(password)
    if password.casefold() in COMMON or stem in COMMON or (len(stem) > 2 and _is_run(stem)):
        raise PasswordRefused("that password is among the most common ones; choose another")
    if username and _stem(username) and stem == _stem(username):
        raise PasswordRefused("a password may not be the username")
    return password


# ----------------------------------------------------------------------------- reset codes


def new_half() -> str:
    """One half of a reset code, as shown: four groups of four characters."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(HALF_LENGTH))
    return "-".join(raw[i : i + 4] for i in range(0, HALF_LENGTH, 4))


def _plain(text: str) -> str:
    return "".join(text.split()).replace("-", "").upper()


def half_digest(half: str) -> str:
    return hashlib.sha256(_plain(half).encode()).hexdigest()


def code_digest(first_digest: str, second_half: str) -> str:
    """The digest kept of a whole code: made from the first half's digest, so the admin who
    confirms never needs (nor sees) the first half."""
    return hashlib.sha256((first_digest + _plain(second_half)).encode()).hexdigest()


def code_matches(stored: str | None, presented: str) -> bool:
    """Does ``presented`` (both halves, in order, dashes and spaces optional) match?"""
    plain = _plain(presented)
    if stored is None or len(plain) != 2 * HALF_LENGTH:
        return False
    first, second = plain[:HALF_LENGTH], plain[HALF_LENGTH:]
    return hmac.compare_digest(stored, code_digest(half_digest(first), second))
