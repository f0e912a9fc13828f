"""Settings, loaded once from the environment (prefix ``PROGRESSIVE_``) and overridable in tests."""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
from collections.abc import Iterable
from datetime import time
from functools import lru_cache
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from controller.core.money import MoneyError, check_cents, parse_cents
from controller.manifest import default_manifest
from controller.periods import FloorCalendar
from controller.rules.filing import NOTICE_OVERRIDE_REFUSED
from controller.rules.house import (
    FIXED_PAY_TECHNICIAN_FROM_CENTS,
    SECOND_SIGNATURE_FROM_CENTS,
    TAX_REPORTING_FROM_CENTS,
)
from controller.rules.integrity import INTEGRITY_RETENTION_YEARS
from controller.rules.jurisdictions import DEFAULT_JURISDICTION, Jurisdiction, jurisdiction
from controller.rules.meter_records import METER_RETENTION_YEARS
from controller.rules.odds import DEFAULT_JACKPOT_ODDS_BOUND, OddsBound
from controller.rules.software import MOST_SECONDS_BETWEEN_CHECKS, check_interval
from controller.rules.statement import Statement, statement
from controller.rules.violation import RuleViolation
from controller.storage.database import backend_of

# The shortest keys accepted: the ledger's seal (HMAC) and the token signature (HS256).
LEDGER_KEY_MIN_BYTES = 16
SECRET_KEY_MIN_BYTES = 32
# Names printed on every document: one line, and short enough for a letterhead.
NAME_MAX_CHARS = 200


def _setting(info: ValidationInfo) -> str:
    return f"PROGRESSIVE_{str(info.field_name).upper()}"


def hex_key(text: str, *, source: str, min_bytes: int) -> bytes:
    """A key written in hexadecimal, at least ``min_bytes`` long, or ``ValueError`` naming
    ``source`` (the setting or the file it came from)."""
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise ValueError(f"{source} must be hexadecimal") from None
    if len(key) < min_bytes:
        raise ValueError(
            f"{source} must be at least {min_bytes} bytes ({2 * min_bytes} hex digits), "
            f"not {len(key)}"
        )
    return key


def settings_refused(exc: ValidationError) -> str:
    """Every problem of the settings on one line, each naming its setting."""
    problems = []
    for error in exc.errors():
        setting = "PROGRESSIVE_" + "_".join(str(p) for p in error["loc"][:1]).upper()
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(message if message.startswith(setting) else f"{setting}: {message}")
    return "; ".join(problems) or "the settings are not valid"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PROGRESSIVE_", extra="ignore")

    database_url: str = "sqlite+aiosqlite:///progressive.db"
    # The jurisdiction whose law the installation runs under (controller.rules.jurisdictions):
    # every link plays under it, and every refusal cites its clauses.
    jurisdiction: str = DEFAULT_JURISDICTION
    # The key that seals the meter history. Kept outside the database on purpose: whoever can
    # write to the database but lacks the key cannot rewrite history undetected.
    ledger_key: SecretStr | None = None
    ledger_key_file: Path = Path("progressive-ledger.key")
    # The key that signs login tokens. Without a file name it lives next to the ledger key.
    secret_key: SecretStr | None = None
    secret_key_file: Path | None = None
    # Login tokens are short-lived: a lost token is useless within minutes.
    token_minutes: int = Field(default=15, ge=1, le=24 * 60)
    # Reverse proxies in front of the web ("10.0.0.5, 10.1.0.0/16"): only from these is a
    # forwarding header believed when naming who signs in. Empty: the socket's peer, always.
    trusted_proxies: Annotated[tuple[IPv4Network | IPv6Network, ...], NoDecode] = ()
    # The header those proxies write: X-Forwarded-For (appended to) or Forwarded (RFC 7239).
    # Only one: a proxy passes the other on as the client wrote it.
    proxy_header: Literal["x-forwarded-for", "forwarded"] = "x-forwarded-for"
    # Current amounts are on the floor for everyone to see; a casino may still want only its
    # own displays (a display device token) or signed-in people to read them.
    display_requires_token: bool = False
    # The display feed (/ws/links/...) is opened by pages of this server only: a browser
    # always sends the page's Origin, and one from another site is refused (1008, an HTTP
    # 403) so that no other site's page can hold displays' connections or read a feed with
    # a signed-in person's token. The server's own origin (the Host the client addressed) is
    # always allowed; list others here, comma-separated ("https://displays.casino.example"),
    # e.g. when a proxy in front changes the Host.
    allowed_origins: Annotated[tuple[str, ...], NoDecode] = ()
    # A client that sends no Origin is not a browser (a browser always sends one on a
    # WebSocket): a native display, a monitoring probe. Refusing those protects nothing,
    # since such a client could send any Origin it liked, so they are allowed unless this
    # says otherwise.
    ws_require_origin: bool = False
    # Display connections open at once from one address (the socket's peer: behind a proxy,
    # the proxy's address, so raise this to the number of displays behind it). Past it, a
    # new one is closed with 1013 "try again later"; those already open are unaffected.
    ws_max_per_address: int = Field(default=32, ge=1, le=100_000)
    # Refused whenever it is set (``_no_notice_override``): no setting lifts the notice periods
    # for a whole installation. 68 IAC 10-1-3(c)(1) waives nothing of a new game's 60 days,
    # and 10-1-4(1)'s "unless otherwise provided by the executive director" is the director's
    # written direction for one amendment, carried by that submission (its waiver).
    notice_override: str | None = None
    # Demonstration mode (controller.rules.statement): the demo, a test lab, a check that must
    # play a new link at once. Filings are accepted from now on, without their notice
    # periods (controller.rules.filing.check_notice), each saying so; every link opened under
    # it is marked in its history for good, and every page, display, document and export
    # says so. Never on by default; `progressive demo` turns it on, `progressive run` says it
    # loudly at start.
    demonstration: bool = False
    # The worst odds, x to 1, at which a paytable's jackpot line may be won: a bound adopted
    # from New Jersey as house policy (controller.rules.odds); submissions refuse a rarer one.
    jackpot_odds_bound: int = Field(default=DEFAULT_JACKPOT_ODDS_BOUND, ge=1)
    # How long records are kept. Never shorter than the regulations ask (checked here), and
    # once a period has been in force never shorter than it (checked against the database
    # when the service starts and each time the purge runs: controller.paperwork.retention).
    meter_retention_years: int = METER_RETENTION_YEARS
    integrity_retention_years: int = INTEGRITY_RETENTION_YEARS
    # The retention purge runs this long after the service starts, then at this interval.
    retention_first_run_s: float = Field(default=60.0, gt=0)
    retention_interval_s: float = Field(default=24 * 60 * 60.0, gt=0)
    # Closed gaming days' ordinary entries moved into blocks (controller.storage.blocks): the
    # first run this long after start, then every interval.
    compaction_first_run_s: float = Field(default=120.0, gt=0)
    compaction_interval_s: float = Field(default=15 * 60.0, gt=0)

    # Signed checkpoints of every chain head (controller.paperwork.checkpoints): the history
    # anchored outside the database. The private key signs (only the controller has it); the public
    # key (default: the key file with the suffix .pub) lets anyone verify. `progressive run`
    # refuses to start without a signing key unless ``checkpoints_off`` says so on purpose.
    checkpoint_key_file: Path | None = None
    checkpoint_public_key_file: Path | None = None
    checkpoint_file: Path = Path("progressive-checkpoints.jsonl")
    checkpoint_interval_s: float = Field(default=60.0, gt=0)
    # Copies of every checkpoint line kept on other machines, best effort: a syslog address
    # ("host:port" over UDP, or a socket path such as /dev/log) and a URL each line is POSTed to.
    checkpoint_syslog: str | None = None
    checkpoint_url: str | None = None
    checkpoints_off: bool = False
    # House policy (controller.rules.house): a fixed pay of at least this amount waits for a
    # technician and holds its table; a smaller one is paid by the dealer and waits for no
    # one. Written as an amount with its "$" ("$1,200.00"; a bare 1200 could be read as
    # dollars or as the cents it is held in, so it is refused), held in cents.
    fixed_pay_technician_from: Annotated[int, NoDecode] = FIXED_PAY_TECHNICIAN_FROM_CENTS
    # House policy (controller.rules.house): an award at or above this amount needs a second
    # person's signature before its table is reset.
    second_signature_from: Annotated[int, NoDecode] = SECOND_SIGNATURE_FROM_CENTS
    # The operator's tax-reporting amount: the jackpot slip of an award at or above it carries
    # the reference number of the tax form it was reported on.
    tax_reporting_from: Annotated[int, NoDecode] = TAX_REPORTING_FROM_CENTS
    # The manifest of the installed software (``controller.manifest``), which the controller
    # checks itself against at start, every ``self_check_interval_s`` and on demand. Made by
    # the operator who installs a release (`progressive self-check --make`), never by the
    # running service. None: next to the installed packages (``progressive-manifest.json``).
    manifest_file: Path | None = None
    # The most time between two checks of a running controller: 24 hours at most
    # (``controller.rules.software``).
    self_check_interval_s: float = MOST_SECONDS_BETWEEN_CHECKS
    # A hit that holds a table is escalated (shown as overdue, louder) after this long.
    escalate_after_minutes: int = Field(default=10, ge=1, le=24 * 60)

    # The property, as its documents and patron displays name it: the name and gaming licence
    # number printed on every slip, report and packet, the time zone their times are written
    # in, and the colours of the floor displays.
    property_name: str | None = None
    property_licence: str | None = None
    property_time_zone: str = "UTC"
    property_colour: str = "#0b5d3b"
    property_accent: str = "#e8c15a"
    # The gaming day starts at this local time; shifts start at these local times (the first
    # of them is normally the gaming day's start).
    gaming_day_starts: time = time(6, 0)
    shift_starts: Annotated[tuple[time, ...], NoDecode] = (time(6, 0), time(14, 0), time(22, 0))

    # Game protection (``controller.core.protection``): the false alarms an honest floor may
    # raise a month, all its tables, lines and windows together (one in ten months by
    # default); how often new history is read; where each alert raised or closed is also
    # posted as JSON (none by default).
    protection_false_alarms_per_month: float = Field(default=0.1, gt=0, le=100)
    protection_interval_s: float = Field(default=10.0, gt=0, le=3600)
    protection_webhook_url: str | None = None

    @field_validator(
        "fixed_pay_technician_from", "second_signature_from", "tax_reporting_from", mode="before"
    )
    @classmethod
    def _amount(cls, value: Any, info: ValidationInfo) -> Any:
        setting = f"PROGRESSIVE_{str(info.field_name).upper()}"
        if isinstance(value, str):
            try:
                value = parse_cents(value, unit_required=True)
            except MoneyError as exc:
                raise ValueError(f"{setting}: {exc}") from None
        if isinstance(value, int) and not isinstance(value, bool):
            check_cents(setting, value)
        return value

    @field_validator("self_check_interval_s")
    @classmethod
    def _self_check_interval(cls, value: float) -> float:
        return check_interval(value)

    @field_validator("ledger_key", "secret_key")
    @classmethod
    def _key(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        # Checked here, whole, before anything serves: a key found wanting only when the
        # first person signs in would be a server error for everyone.
        if value is not None:
            shortest = (
                LEDGER_KEY_MIN_BYTES if info.field_name == "ledger_key" else SECRET_KEY_MIN_BYTES
            )
            hex_key(value.get_secret_value(), source=_setting(info), min_bytes=shortest)
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        try:
            backend = backend_of(value)
        except ValueError:
            raise ValueError(
                "PROGRESSIVE_DATABASE_URL is not a database URL (write one like "
                "sqlite+aiosqlite:///progressive.db or postgresql+asyncpg://host/db)"
            ) from None
        if backend not in {"sqlite", "postgresql"}:
            raise ValueError(
                f"PROGRESSIVE_DATABASE_URL: the controller keeps its records in SQLite or "
                f"PostgreSQL, not {backend}"
            )
        return value

    @field_validator("jurisdiction")
    @classmethod
    def _jurisdiction(cls, value: str) -> str:
        try:
            return jurisdiction(value).key
        except KeyError as exc:
            raise ValueError(f"PROGRESSIVE_JURISDICTION: {exc.args[0]}") from None

    @property
    def law(self) -> Jurisdiction:
        """The installation's jurisdiction, as links are handed it."""
        return jurisdiction(self.jurisdiction)

    @property
    def odds_bound(self) -> OddsBound:
        """The bound on a jackpot's odds in force: the setting, within the jurisdiction's."""
        return self.law.odds_bound(self.jackpot_odds_bound)

    def statement(self, links: Iterable[str] = ()) -> Statement:
        """What a surface of this installation states: its jurisdiction, and demonstration
        mode when it is on or ``links`` (those shown that were opened in it) are named."""
        return statement(self.law, installation=self.demonstration, links=links)

    @field_validator("notice_override")
    @classmethod
    def _no_notice_override(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError(NOTICE_OVERRIDE_REFUSED)
        return value

    @field_validator("property_name", "property_licence")
    @classmethod
    def _one_line(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if len(value) > NAME_MAX_CHARS or any(c in value for c in "\r\n\t\x00"):
            raise ValueError(f"{_setting(info)}: one line of at most {NAME_MAX_CHARS} characters")
        return value

    @field_validator("checkpoint_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and _web_origin(value) is None:
            raise ValueError(f"PROGRESSIVE_CHECKPOINT_URL: not an http(s) URL: {value!r}")
        return value

    @field_validator("property_time_zone")
    @classmethod
    def _time_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"PROGRESSIVE_PROPERTY_TIME_ZONE: no time zone {value!r} "
                "(write one like America/Indiana/Indianapolis)"
            ) from None
        return value

    @field_validator("property_colour", "property_accent")
    @classmethod
    def _colour(cls, value: str, info: ValidationInfo) -> str:
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", value):
            setting = f"PROGRESSIVE_{str(info.field_name).upper()}"
            raise ValueError(f"{setting}: write a colour as #rrggbb, not {value!r}")
        return value.lower()

    @field_validator("shift_starts", mode="before")
    @classmethod
    def _times(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(t.strip() for t in value.split(",") if t.strip())
        return value

    @field_validator("shift_starts")
    @classmethod
    def _shifts(cls, value: tuple[time, ...]) -> tuple[time, ...]:
        if not value:
            raise ValueError("PROGRESSIVE_SHIFT_STARTS: name at least one shift's start")
        if len(set(value)) != len(value):
            raise ValueError("PROGRESSIVE_SHIFT_STARTS: two shifts start at the same time")
        return tuple(sorted(value))

    @property
    def calendar(self) -> FloorCalendar:
        """The property's gaming days and shifts, in its zone."""
        return FloorCalendar(self.gaming_day_starts, self.shift_starts, self.zone)

    @property
    def zone(self) -> ZoneInfo:
        """The property's time zone: every time on its documents is written in it."""
        return ZoneInfo(self.property_time_zone)

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(o.strip() for o in value.split(",") if o.strip())
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            if _web_origin(origin) is None:
                raise ValueError(
                    f"PROGRESSIVE_ALLOWED_ORIGINS: {origin!r} is no web origin "
                    "(write one like https://displays.casino.example)"
                )
        return value

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _networks(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        if isinstance(value, list | tuple):
            try:
                return tuple(ipaddress.ip_network(str(v), strict=False) for v in value)
            except ValueError as exc:
                raise ValueError(f"PROGRESSIVE_TRUSTED_PROXIES: {exc}") from None
        return value

    @model_validator(mode="after")
    def _within_the_law(self) -> Settings:
        """Figures the jurisdiction sets may be made stricter, never looser: the retention
        periods (longer) and the bound on a jackpot's odds (less rare)."""
        law = self.law
        law.check_retention_years(
            meter_years=self.meter_retention_years,
            integrity_years=self.integrity_retention_years,
        )
        try:
            law.odds_bound(self.jackpot_odds_bound)
        except RuleViolation as exc:
            raise ValueError(f"PROGRESSIVE_JACKPOT_ODDS_BOUND: {exc}") from None
        return self


def _web_origin(text: str) -> str | None:
    """The host of an http(s) URL, or None when ``text`` is not one."""
    try:
        parts = urlsplit(text.strip())
        parts.port  # noqa: B018 (a port out of range raises here)
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
        return None
    return parts.hostname


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


class LedgerKeyError(RuntimeError):
    pass


def load_ledger_key(settings: Settings, *, create: bool = False) -> bytes:
    """The ledger key from ``PROGRESSIVE_LEDGER_KEY`` (hex) or the key file.

    With ``create`` (first migration of a new installation) a missing key file is made with a
    fresh random key, readable by its owner only.
    """
    if settings.ledger_key is not None:
        return _key_or(
            LedgerKeyError,
            settings.ledger_key.get_secret_value(),
            "PROGRESSIVE_LEDGER_KEY",
            LEDGER_KEY_MIN_BYTES,
        )
    path = settings.ledger_key_file
    if path.exists():
        return _key_or(LedgerKeyError, path.read_text(), f"the key in {path}", LEDGER_KEY_MIN_BYTES)
    if not create:
        raise LedgerKeyError(
            f"no ledger key: set PROGRESSIVE_LEDGER_KEY (hex), or PROGRESSIVE_LEDGER_KEY_FILE "
            f"to the file that holds it (now {path}, which does not exist; it is created by "
            "the first `progressive db upgrade`)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32) + "\n")
    return bytes.fromhex(path.read_text().strip())


class SecretKeyError(RuntimeError):
    pass


SECRET_KEY_FILE = "progressive-secret.key"


def secret_key_path(settings: Settings) -> Path:
    if settings.secret_key_file is not None:
        return settings.secret_key_file
    return settings.ledger_key_file.with_name(SECRET_KEY_FILE)


def load_secret_key(settings: Settings, *, create: bool = True) -> bytes:
    """The token-signing key from ``PROGRESSIVE_SECRET_KEY`` (hex) or its key file.

    A missing key file is created with a fresh random key, readable by its owner only: losing
    it only signs everyone out.
    """
    if settings.secret_key is not None:
        return _key_or(
            SecretKeyError,
            settings.secret_key.get_secret_value(),
            "PROGRESSIVE_SECRET_KEY",
            SECRET_KEY_MIN_BYTES,
        )
    path = secret_key_path(settings)
    if not path.exists():
        if not create:
            raise SecretKeyError(f"no secret key: set PROGRESSIVE_SECRET_KEY or provide {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole under another name, then linked: a process starting at the same moment
        # never reads a half-written key, and the first one linked wins.
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return _key_or(SecretKeyError, path.read_text(), f"the key in {path}", SECRET_KEY_MIN_BYTES)


def _key_or(error: type[RuntimeError], text: str, source: str, min_bytes: int) -> bytes:
    try:
        return hex_key(text, source=source, min_bytes=min_bytes)
    except ValueError as exc:
        raise error(str(exc)) from None


def manifest_path(settings: Settings) -> Path:
    """Where the manifest of the installed software is: the setting, or next to the install."""
    if settings.manifest_file is not None:
        return settings.manifest_file
    return default_manifest()


def checkpoint_public_key_path(settings: Settings) -> Path | None:
    if settings.checkpoint_public_key_file is not None:
        return settings.checkpoint_public_key_file
    if settings.checkpoint_key_file is not None:
        return settings.checkpoint_key_file.with_suffix(".pub")
    return None
