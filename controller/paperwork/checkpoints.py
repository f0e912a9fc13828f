"""Signed checkpoints: the chain heads anchored outside the database.

The keyed seal of each entry (``controller.core.ledger``) stops someone who can write to the
database but lacks the ledger key from editing history. It cannot stop them taking history
away: deleting the newest entries of a chain and setting the link row back, removing a paid
jackpot at the tail, or putting an earlier copy of the whole database back. Each leaves a
shorter chain that is whole. What catches it is a record of how far each chain had reached,
kept where the database's writer cannot reach and signed so that it cannot be made up:

* a checkpoint names a link's head (sequence number, seal, meter), the time it was signed,
  the previous checkpoint's sequence number of that link, and ``digest``: SHA-256 over the
  exact sealed bytes of every entry since then (``sealed_form(row)`` then the entry's seal),
  so an auditor holding an export and only the public key can check the entries' contents;
* it is signed with Ed25519 (asymmetric: an auditor verifies with the public key and cannot
  forge one), one JSON line per checkpoint in an append-only file, optionally copied to
  syslog and to an HTTP endpoint, both on other machines.

The record and the digest it carries are the ledger's (``controller.core.ledger``:
``Checkpoint``, ``digest_of``). This module holds the rest of the pure part (the record's
canonical bytes, signing, reading a file back); ``controller.runtime.anchoring`` writes them
while the controller runs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from controller.core.ledger import Checkpoint, SignedCheckpoint

VERSION = 1
_DOMAIN = b"progressive-checkpoint-v1\n"  # signatures over checkpoints mean nothing elsewhere


class CheckpointError(RuntimeError):
    """A checkpoint file, key or database that does not agree with the signed record."""


def _canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


# ----------------------------------------------------------------------------- keys


def make_key_pair(folder: Path, name: str = "checkpoint-signing") -> tuple[Path, Path]:
    """A new Ed25519 key pair: ``name.key`` (private, readable by its owner only) and
    ``name.pub`` (public, for auditors). Refuses to overwrite either."""
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / f"{name}.key", folder / f"{name}.pub"
    if private.exists() or public.exists():
        raise CheckpointError(f"{private} or {public} exists already; not overwriting a key")
    key = Ed25519PrivateKey.generate()
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"cannot read the checkpoint signing key {path}: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise CheckpointError(f"{path} is not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"cannot read the checkpoint public key {path}: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise CheckpointError(f"{path} is not an Ed25519 public key")
    return key


# ----------------------------------------------------------------------------- lines


def sign_line(key: Ed25519PrivateKey, cp: Checkpoint) -> str:
    """One line of the checkpoint file (no newline): the fields, the key id, the signature
    over the canonical JSON of everything but the signature."""
    body = {"v": VERSION, **cp.fields(), "key_id": key_id(key.public_key())}
    sig = key.sign(_DOMAIN + _canonical(body))
    return json.dumps({**body, "sig": base64.b64encode(sig).decode()}, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class CheckpointFile:
    checkpoints: list[SignedCheckpoint]
    problems: list[str]  # each names its line
    torn_tail: bool  # the last line has no newline: a write cut short (crash, full disk)
    public: Ed25519PublicKey | None = None  # the key the lines were checked with

    def last_per_link(self) -> dict[str, SignedCheckpoint]:
        out: dict[str, SignedCheckpoint] = {}
        for sc in self.checkpoints:
            prev = out.get(sc.checkpoint.link_id)
            if prev is None or sc.checkpoint.seq >= prev.checkpoint.seq:
                out[sc.checkpoint.link_id] = sc
        return out


def _parse(text: str, public: Ed25519PublicKey, expected_id: str) -> Checkpoint | str:
    try:
        obj = json.loads(text)
        sig = base64.b64decode(obj.pop("sig"), validate=True)
    except (ValueError, KeyError, TypeError, AttributeError):
        return "not a signed checkpoint (unreadable)"
    if obj.get("key_id") != expected_id:
        return (
            f"signed with another key (key id {obj.get('key_id')!r}, the public key given "
            f"is {expected_id})"
        )
    try:
        public.verify(sig, _DOMAIN + _canonical(obj))
    except InvalidSignature:
        return "the signature does not match the line's contents (edited or forged)"
    try:
        if obj.pop("v") != VERSION:
            return f"checkpoint format version {obj.get('v')!r} is not known"
        del obj["key_id"]
        cp = Checkpoint(**obj)
    except (KeyError, TypeError):
        return "signed, but not a checkpoint of a known shape"
    return cp


def parse_checkpoints(data: bytes, public: Ed25519PublicKey, name: str) -> CheckpointFile:
    """Every line checked against ``public``; ``name`` labels the problems."""
    expected = key_id(public)
    torn = bool(data) and not data.endswith(b"\n")
    good: list[SignedCheckpoint] = []
    problems: list[str] = []
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        got = _parse(text, public, expected)
        if isinstance(got, str):
            tail = " (the last line, cut short?)" if torn and n == len(lines) else ""
            problems.append(f"{name} line {n}: {got}{tail}")
        else:
            good.append(SignedCheckpoint(n, got))
    return CheckpointFile(good, problems, torn, public)


def read_checkpoints(path: Path, public: Ed25519PublicKey) -> CheckpointFile:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    return parse_checkpoints(data, public, str(path))


def append_lines(path: Path, lines: Sequence[str]) -> None:
    """Append and fsync (blocking: called off the event loop). A torn last line left by a
    crash is ended first, so a new checkpoint never runs into it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        size = os.fstat(fd).st_size
        lead = b""
        if size and os.pread(fd, 1, size - 1) != b"\n":
            lead = b"\n"
        os.write(fd, lead + "".join(line + "\n" for line in lines).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
