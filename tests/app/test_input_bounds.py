"""Every input has a bound the schema states: each string and array of every request body and
every query parameter, and each query integer, so that no request can make the server read,
hold or compute without limit, and a number out of range is a 422 naming it, not a 500."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from app.security.headers import MAX_DATA_BYTES
from app.web import create_app
from controller.core.games import Game
from controller.roles import Role
from controller.runtime.service import FloorService
from controller.settings import Settings
from tests.app.auth import headers_for
from tests.app.floor import web_floor

Schema = dict[str, Any]


def _unbounded(spec: Schema) -> list[str]:
    """Where a string, array or query integer of a request has no stated bound."""
    components: dict[str, Schema] = spec["components"]["schemas"]
    found: list[str] = []

    def walk(node: Schema, where: str, bounded: set[str], seen: frozenset[str]) -> None:
        ref = node.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                walk(components[name], f"{where}->{name}", bounded, seen | {name})
            return
        # A bound stated beside anyOf/oneOf (an optional field) holds for each choice.
        here = bounded | {k for k in ("maxLength", "maxItems", "maximum") if k in node}
        for key in ("anyOf", "oneOf", "allOf"):
            for choice in node.get(key, []):
                walk(choice, where, here, seen)
        kind = node.get("type")
        if kind == "string" and not ({"enum", "const"} & node.keys()) and "maxLength" not in here:
            found.append(f"{where}: a string without maxLength")
        if kind == "array":
            if "maxItems" not in here:
                found.append(f"{where}: an array without maxItems")
            walk(node.get("items", {}), f"{where}[]", set(), seen)
        if kind == "integer" and not ({"maximum", "exclusiveMaximum"} & here):
            found.append(f"{where}: an integer without maximum")
        for name, child in node.get("properties", {}).items():
            walk(child, f"{where}.{name}", set(), seen)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            found.append(f"{where}: an object of any keys")

    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            at = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    walk(parameter["schema"], f"{at} ?{parameter['name']}", set(), frozenset())
            for content in operation.get("requestBody", {}).get("content", {}).values():
                walk(content["schema"], f"{at} body", set(), frozenset())
    return found


def test_every_request_string_array_and_query_integer_is_bounded() -> None:
    app = create_app(FloorService(Settings(database_url="sqlite+aiosqlite://")))
    assert _unbounded(app.openapi()) == []


def test_the_walk_finds_what_is_unbounded() -> None:
    spec = {
        "components": {
            "schemas": {
                "Body": {
                    "properties": {
                        "lines": {"type": "array", "items": {"$ref": "#/components/schemas/L"}},
                        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                        "ok": {"anyOf": [{"type": "string"}, {"type": "null"}], "maxLength": 9},
                    }
                },
                "L": {"properties": {"hand": {"type": "string"}}},
            }
        },
        "paths": {
            "/x": {
                "get": {
                    "parameters": [{"in": "query", "name": "n", "schema": {"type": "integer"}}]
                },
                "post": {
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Body"}}
                        }
                    }
                },
            }
        },
    }
    assert _unbounded(spec) == [
        "GET /x ?n: an integer without maximum",
        "POST /x body->Body.lines: an array without maxItems",
        "POST /x body->Body.lines[]->L.hand: a string without maxLength",
        "POST /x body->Body.note: a string without maxLength",
    ]


TOO_BIG = str(2**63)  # one past the largest database integer


async def test_positions_past_any_record_are_422_not_500(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 1)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        auditor = await headers_for(wf, Role.AUDITOR)
        supervisor = await headers_for(wf, Role.SUPERVISOR)
        asked = {
            "/api/v1/hits/paid-without-technician": ("offset", auditor),
            "/api/v1/links/stud/history": ("after_seq", auditor),
        }
        for path, (name, headers) in asked.items():
            largest = await http.get(path, params={name: str(2**63 - 1)}, headers=headers)
            assert largest.status_code == 200, (path, largest.text)
            answer = await http.get(path, params={name: TOO_BIG}, headers=headers)
            assert answer.status_code == 422, (path, answer.text)
            assert name in answer.text
        # A paytable longer than one line per hand is refused before anything reads it.
        line = {"hand": "ROYAL_FLUSH", "percent_bp": 10000}
        body = {"kind": "paytable_change", "link_id": "stud", "paytable": [line] * 18}
        checked = await http.post("/api/v1/submissions/check", json=body, headers=supervisor)
        assert checked.status_code == 200 and checked.json()["problems"] == [
            {
                "field": "paytable",
                "rule": None,
                "message": "at most 17 items (one per hand), not 18",
            }
        ]
        filed = await http.post("/api/v1/submissions", json=body, headers=supervisor)
        assert filed.status_code == 422, filed.text


async def test_a_data_body_past_its_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # Only an upload may be large: a JSON body of a 10 MB paytable is refused from its
    # headers, not read whole and parsed on the loop that serves the tables' polling.
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 1)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=30) as http,
    ):
        supervisor = await headers_for(wf, Role.SUPERVISOR)
        host, port = wf.base_url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            head = (
                f"POST /api/v1/submissions/check HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: {supervisor['Authorization']}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {10 * 1024 * 1024}\r\n\r\n"
            )
            writer.write(head.encode())
            await writer.drain()
            async with asyncio.timeout(10):
                answer = await reader.read(65536)
        finally:
            writer.close()
            await writer.wait_closed()
        assert answer.startswith(b"HTTP/1.1 413 "), answer
        assert f"larger than {MAX_DATA_BYTES} bytes".encode() in answer

        # Streamed without a length: counted as it arrives, refused all the same.
        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"kind": "paytable_change", "link_id": "stud", "paytable": ['
            for _ in range(MAX_DATA_BYTES // 1024):  # about four times the bound
                yield b'{"hand": "FLUSH", "percent_bp": 100},' * 100
            yield b"{}]}"

        headers = {**supervisor, "Content-Type": "application/json"}
        with contextlib.suppress(httpx.TransportError):  # closed while still sending
            streamed = await http.post(
                "/api/v1/submissions/check", content=chunks(), headers=headers
            )
            assert streamed.status_code == 413, streamed.text
        # The largest paytable there can be still goes through, and quickly.
        lines = [{"hand": "FLUSH", "percent_bp": 100}] * 17
        body = {"kind": "paytable_change", "link_id": "stud", "paytable": lines}
        checked = await http.post("/api/v1/submissions/check", json=body, headers=supervisor)
        assert checked.status_code == 200, checked.text
