"""Sign-in under attack, against the live server: parallel guesses, forged forwarding headers,
a guesser elsewhere, oversized and weak passwords, and tokens outliving a password change.

Different client addresses are real: each client binds its own loopback address (127.0.0.x).
"""

from __future__ import annotations

import asyncio
from ipaddress import ip_network
from pathlib import Path

import httpx

from app.security.authentication import authority
from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import client_at, headers_for, new_user
from tests.app.floor import settings_in, web_floor

TOKEN = "/api/v1/auth/token"
CHANGE = "/api/v1/auth/password"
ME = "/api/v1/auth/me"
LINKS = {"stud": (Game.CARIBBEAN_STUD, 1)}


async def _sign_in(
    http: httpx.AsyncClient, username: str, password: str, **headers: str
) -> httpx.Response:
    return await http.post(
        TOKEN, data={"username": username, "password": password}, headers=headers
    )


def _bearer(answer: httpx.Response) -> dict[str, str]:
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['access_token']}"}


async def test_forty_parallel_wrong_passwords_are_mostly_refused_unheard(tmp_path: Path) -> None:
    async with web_floor(tmp_path, links=LINKS) as wf, client_at(wf, "127.0.0.1") as http:
        name, _ = await new_user(wf, Role.TECHNICIAN)
        answers = await asyncio.gather(
            *(_sign_in(http, name, f"wrong guess number {n}") for n in range(40))
        )
        codes = sorted(a.status_code for a in answers)
        # Each attempt is counted before its password is checked: the first is heard, the
        # other 39 wait their turn.
        assert codes == [401] + [429] * 39, codes
        assert all(int(a.headers["retry-after"]) >= 1 for a in answers if a.status_code == 429)
        assert authority(wf.service).throttle.failures("pair", name, "127.0.0.1") == 1


async def test_a_forged_forwarding_header_gives_no_relief(tmp_path: Path) -> None:
    async with web_floor(tmp_path, links=LINKS) as wf, client_at(wf, "127.0.0.1") as http:
        name, password = await new_user(wf, Role.TECHNICIAN)
        # Names sprayed from one address until everyone there waits.
        for n in range(6):
            await _sign_in(http, f"nobody-{n}", "a wrong guess")
        assert (await _sign_in(http, name, password)).status_code == 429
        for header, value in (
            ("X-Forwarded-For", "203.0.113.9"),
            ("X-Forwarded-For", "203.0.113.10, 127.0.0.1"),
            ("Forwarded", "for=203.0.113.11"),
            ("X-Real-IP", "203.0.113.12"),
        ):
            forged = await _sign_in(http, name, password, **{header: value})
            assert forged.status_code == 429, f"{header}: {value}: {forged.status_code}"


async def test_a_configured_proxy_names_the_client(tmp_path: Path) -> None:
    settings = settings_in(tmp_path).model_copy(
        update={"trusted_proxies": (ip_network("127.0.0.1"),)}
    )
    async with (
        web_floor(tmp_path, links=LINKS, settings=settings) as wf,
        client_at(wf, "127.0.0.1") as proxy,
        client_at(wf, "127.0.0.3") as direct,
    ):
        name, password = await new_user(wf, Role.TECHNICIAN)
        via = {"X-Forwarded-For": "198.51.100.7"}
        assert (await _sign_in(proxy, name, "a wrong guess", **via)).status_code == 401
        # The same client behind the proxy waits; another client behind it does not.
        assert (await _sign_in(proxy, name, password, **via)).status_code == 429
        other = {"X-Forwarded-For": "198.51.100.8"}
        assert (await _sign_in(proxy, name, password, **other)).status_code == 200
        # A client that forges the start of the chain is named by what the proxy appended.
        forged = {"X-Forwarded-For": "198.51.100.8, 198.51.100.7"}
        assert (await _sign_in(proxy, name, password, **forged)).status_code == 429
        # Not a proxy: its header is its own words, and its own address is what counts.
        assert (await _sign_in(direct, name, "another wrong guess", **other)).status_code == 401
        assert authority(wf.service).throttle.failures("pair", name, "127.0.0.3") == 1


async def test_a_guesser_elsewhere_does_not_keep_the_person_out(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=LINKS) as wf,
        client_at(wf, "127.0.0.1") as terminal,
        client_at(wf, "127.0.0.2") as guesser,
    ):
        name, password = await new_user(wf, Role.TECHNICIAN)
        assert (await _sign_in(guesser, name, "a wrong guess")).status_code == 401
        # One wrong attempt elsewhere does not stop the right password here.
        assert (await _sign_in(terminal, name, password)).status_code == 200
        # Guesses from many places, past the ten failures the name is allowed from new places
        # (the first one above included):
        for n in range(4, 14):
            async with client_at(wf, f"127.0.0.{n}") as elsewhere:
                assert (await _sign_in(elsewhere, name, "a wrong guess")).status_code == 401
        async with client_at(wf, "127.0.0.99") as new_place:
            assert (await _sign_in(new_place, name, password)).status_code == 429
        # ...the person still signs in at once where they signed in before.
        assert (await _sign_in(terminal, name, password)).status_code == 200


async def test_an_overlong_password_is_refused_before_hashing(tmp_path: Path) -> None:
    async with web_floor(tmp_path, links=LINKS) as wf, client_at(wf, "127.0.0.1") as http:
        name, password = await new_user(wf, Role.TECHNICIAN)
        for _ in range(3):
            long = await _sign_in(http, name, "x" * 1024)
            assert long.status_code == 422, long.text
            assert "at most 128 characters" in long.text
        # Refused unheard: counted as no guess, so the person is not slowed by it.
        assert authority(wf.service).throttle.failures("pair", name, "127.0.0.1") == 0
        assert (await _sign_in(http, name, password)).status_code == 200


async def test_weak_passwords_are_refused(tmp_path: Path) -> None:
    async with web_floor(tmp_path, links=LINKS) as wf, client_at(wf, "127.0.0.1") as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        name, password = await new_user(wf, Role.DEALER, "pat.tech")
        weak = {
            "aaaaaaaaaa": "repeat",
            "\x00" * 10: "control characters",
            "correct\nhorse battery": "control characters",
            " " * 12: "only spaces",
            "abababababab": "repeat",
            "abcdefghijkl": "consecutive",
            "password123": "common",
            "Qwertyuiop!": "common",
            "1234567890": "common",
            "pat.tech": "at least 10",
            "pat.tech2026": "username",
            "x" * 129: "at most 128",
        }
        for bad, why in weak.items():
            body = {"username": "pat.tech", "role": "dealer", "password": bad}
            made = await http.post("/api/v1/users", headers=admin, json=body)
            assert made.status_code == 422, f"{bad!r}: {made.status_code}"
            reset = await http.post(
                "/api/v1/users/pat.tech/password", headers=admin, json={"password": bad}
            )
            assert reset.status_code == 422, f"{bad!r}: {reset.status_code}"
            assert why in reset.text or why in made.text, f"{bad!r}: {reset.text}"
            own = await http.post(
                CHANGE, data={"username": name, "password": password, "new_password": bad}
            )
            assert own.status_code == 422, f"{bad!r}: {own.status_code}"
        # None of it was a guess: the person signs in at once.
        assert (await _sign_in(http, name, password)).status_code == 200


async def test_a_password_change_ends_every_earlier_token(tmp_path: Path) -> None:
    async with web_floor(tmp_path, links=LINKS) as wf, client_at(wf, "127.0.0.1") as http:
        admin = await headers_for(wf, Role.ADMIN, "root")
        name, password = await new_user(wf, Role.DEALER, "pat.tech")
        first = _bearer(await _sign_in(http, name, password))
        second = _bearer(await _sign_in(http, name, password))
        assert (await http.get(ME, headers=first)).status_code == 200

        # The person chooses a new password: every earlier token ends, a new one comes back.
        mine = "my very own passphrase"
        changed = await http.post(
            CHANGE, data={"username": name, "password": password, "new_password": mine}
        )
        fresh = _bearer(changed)
        for old in (first, second):
            gone = await http.get(ME, headers=old)
            assert gone.status_code == 401
            assert "revoked" in gone.json()["detail"]
        assert (await http.get(ME, headers=fresh)).status_code == 200
        async with client_at(wf, "127.0.0.2") as elsewhere:
            assert (await _sign_in(elsewhere, name, password)).status_code == 401
        assert (await _sign_in(http, name, mine)).status_code == 200

        # An admin sets it: the same.
        set_by_admin = await http.post(
            "/api/v1/users/pat.tech/password", headers=admin, json={"password": "set by root 42"}
        )
        assert set_by_admin.status_code == 200, set_by_admin.text
        assert (await http.get(ME, headers=fresh)).status_code == 401
