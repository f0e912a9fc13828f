"""One table controller: a unit on a link, read and written through its register-map profile.

A poll is one block read (``profile.read_start``/``read_count``) decoded by the profile; the
writes carry only what changed plus the heartbeat, in as few requests as the profile's layout
allows, because on an RS-485 bus every request costs every other table on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from link_adapters.errors import AdapterError
from link_adapters.modbus import ModbusLink, ReadWrite
from link_adapters.profile_decoding import decode_words, encode_u32
from link_adapters.profile_map import Profile
from link_adapters.reading import METER_MAX_CENTS, TableCommand, TableRegisters
from link_adapters.register_map import acknowledgement_words, command_word

__all__ = ["TableHandle"]

_U16_MAX: Final = 0xFFFF
_U32_MAX: Final = (1 << 32) - 1


def _check_int(name: str, value: object, high: int) -> int:
    if type(value) is int and 0 <= value <= high:  # the common case, checked first
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if not 0 <= value <= high:
        raise ValueError(f"{name} must be between 0 and {high}, got {value}")
    return value


class TableHandle:
    """One table controller: a unit id on a link, read with a profile.

    Every poll writes the command bits, the meter and the heartbeat. The hit acknowledgement
    is written only by ``acknowledge``, on its own: a table pops its head hit whenever the
    number written equals the head's, and numbers come round again (a first hit numbered 0,
    a table that restarts its numbering), so repeating an old acknowledgement at every poll
    could pop a hit nobody read.
    """

    def __init__(self, link: ModbusLink, unit: int, profile: Profile, *, name: str) -> None:
        if not isinstance(link, ModbusLink):
            raise ValueError(f"link must be a ModbusLink, got {link!r}")
        if not isinstance(profile, Profile):
            raise ValueError(f"profile must be a Profile, got {profile!r}")
        _check_int("unit", unit, 255)
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self._link = link
        self._unit = unit
        self._profile = profile
        self._name = name
        # What this handle last asked the table to hold, used to fill a one-request write of
        # the whole write span. Remembered when sent, not when confirmed: after a failed write
        # the fill must repeat what the controller wants, never revert to an older value.
        # Until the controller says otherwise the table is told to take no progressive bets.
        self._command_bits = command_word(TableCommand())
        self._meter_cents = 0
        # With a write span: its registers as last asked (heartbeat aside), and the prepared
        # one-request poll when the profile has it.
        self._span_words: list[int] | None = None
        self._read_write: ReadWrite | None = None
        # The last block read and what it decoded to: a table's registers mostly read the same
        # from one poll to the next, and the same words decode to the same registers.
        self._last_block: Sequence[int] | None = None
        self._last_registers: TableRegisters | None = None
        span = profile.write_span
        if span is not None:
            start, count = span
            self._span_start = start
            self._span_words = [0] * count
            self._heartbeat_at = profile.heartbeat_address - start
            self._fill_span()
            if profile.read_write:
                self._read_write = link.prepare_read_write(
                    unit,
                    read_address=profile.read_start,
                    read_count=profile.read_count,
                    write_address=start,
                    write_count=count,
                )

    def __repr__(self) -> str:
        return f"TableHandle({self._name!r}, unit {self._unit} on {self._link.name})"

    @property
    def link(self) -> ModbusLink:
        return self._link

    @property
    def unit(self) -> int:
        return self._unit

    @property
    def profile(self) -> Profile:
        return self._profile

    @property
    def name(self) -> str:
        return self._name

    async def read(self) -> TableRegisters:
        """One block read, decoded. Raises the link's errors, or ProfileMismatch/DeviceError
        from decoding, each naming this table."""
        profile = self._profile
        try:
            block = await self._link.read_holding(
                self._unit, profile.read_start, profile.read_count
            )
        except AdapterError as exc:
            _name_table(exc, self._name)
            raise
        return self._decoded(block)

    async def exchange(
        self,
        *,
        command: TableCommand | None = None,
        meter_cents: int | None = None,
        heartbeat: int,
    ) -> TableRegisters:
        """One poll in one request, for profiles with ``read_write``: the whole write span
        (fields not given repeat this handle's last values) is written, then the block read.

        The unit writes before it reads, so the block already reflects the command.
        """
        request, span_words = self._read_write, self._span_words
        if request is None or span_words is None:
            raise ValueError(f"profile {self._profile.name} does not read and write in one request")
        heartbeat = _check_int("heartbeat", heartbeat, _U16_MAX)
        self._remember(_command_word(command), meter_cents)
        values = span_words.copy()
        values[self._heartbeat_at] = heartbeat
        try:
            block = await self._link.read_write_prepared(request, values)
        except AdapterError as exc:
            _name_table(exc, self._name)
            raise
        return self._decoded(block)

    async def write(
        self,
        *,
        command: TableCommand | None = None,
        meter_cents: int | None = None,
        heartbeat: int,
    ) -> None:
        """Write what is given, plus the heartbeat, in as few requests as possible.

        Only a heartbeat: one single-register write. Otherwise, when the profile's write
        registers form one run (reference v1: 102-105), one write of the whole run with the
        fields not given filled from this handle's last values; else one write per run of
        adjacent given fields, in address order.
        """
        given = _given(_command_word(command), meter_cents)
        _check_int("heartbeat", heartbeat, _U16_MAX)
        try:
            await self._write(given, heartbeat)
        except AdapterError as exc:
            _name_table(exc, self._name)
            raise

    async def acknowledge(self, seq: int) -> None:
        """Write the hit acknowledgement (both registers in one request): the table pops its
        head hit if ``seq`` is the head's number. Call it only right after a read showed that
        very hit at the head and it is recorded."""
        seq = _check_int("ack_seq", seq, _U32_MAX)
        profile = self._profile
        try:
            await self._link.write_registers(
                self._unit, profile.ack_address, acknowledgement_words(seq, profile.word_order)
            )
        except AdapterError as exc:
            _name_table(exc, self._name)
            raise

    def _decoded(self, block: Sequence[int]) -> TableRegisters:
        """``block`` decoded with the profile; the registers of the last block when it reads
        the same (compared word for word before anything is decoded)."""
        if block == self._last_block and self._last_registers is not None:
            return self._last_registers
        registers = decode_words(self._profile, block, table=self._name)
        self._last_block, self._last_registers = block, registers
        return registers

    def _remember(self, command_bits: int | None, meter_cents: int | None) -> None:
        """Take the fields given (not None) as what the table should hold from now on; all
        are checked before any is taken."""
        wanted = (
            self._command_bits
            if command_bits is None
            else _check_int("command_bits", command_bits, _U16_MAX),
            self._meter_cents
            if meter_cents is None
            else _check_int("meter_cents", meter_cents, METER_MAX_CENTS),
        )
        if wanted == (self._command_bits, self._meter_cents):
            return
        self._command_bits, self._meter_cents = wanted
        self._fill_span()

    def _fill_span(self) -> None:
        span_words = self._span_words
        if span_words is not None:
            start = self._span_start
            for address, words in self._fields().values():
                span_words[address - start : address - start + len(words)] = words

    def _fields(self) -> dict[str, tuple[int, list[int]]]:
        """Every routine write field but the heartbeat: (address, registers) as last asked."""
        profile = self._profile
        return {
            "command": (profile.command_address, [self._command_bits]),
            "meter": (profile.meter_address, encode_u32(profile, self._meter_cents)),
        }

    async def _write(self, given: dict[str, int], heartbeat: int) -> None:
        profile, link, unit = self._profile, self._link, self._unit
        self._remember(given.get("command"), given.get("meter"))
        if not given:
            await link.write_register(unit, profile.heartbeat_address, heartbeat)
            return
        span, span_words = profile.write_span, self._span_words
        if span is not None and span_words is not None:
            values = span_words.copy()
            values[self._heartbeat_at] = heartbeat
            await link.write_registers(unit, span[0], values)
            return
        fields = self._fields()
        chosen = sorted(
            [fields[field] for field in given] + [(profile.heartbeat_address, [heartbeat])]
        )
        runs: list[tuple[int, list[int]]] = []
        for address, field_words in chosen:
            if runs and runs[-1][0] + len(runs[-1][1]) == address:
                runs[-1][1].extend(field_words)
            else:
                runs.append((address, list(field_words)))
        for address, run in runs:
            if len(run) == 1:
                await link.write_register(unit, address, run[0])
            else:
                await link.write_registers(unit, address, run)


def _given(command_bits: int | None, meter_cents: int | None) -> dict[str, int]:
    given: dict[str, int] = {}
    if command_bits is not None:
        given["command"] = _check_int("command_bits", command_bits, _U16_MAX)
    if meter_cents is not None:
        given["meter"] = _check_int("meter_cents", meter_cents, METER_MAX_CENTS)
    return given


def _command_word(command: TableCommand | None) -> int | None:
    if command is None:
        return None
    if not isinstance(command, TableCommand):
        raise ValueError(f"command must be a TableCommand, got {command!r}")
    return command_word(command)


def _name_table(error: AdapterError, table: str) -> None:
    # The same exception, reworded: callers still branch on its type.
    error.args = (f"table {table}: {error}",)
