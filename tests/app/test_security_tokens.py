"""Tokens that must not sign anyone in: expired, forged, altered, of a disabled user, or a
display's token used for anything but reading amounts. Each against the live server."""

from __future__ import annotations

import base64
import json
import time
import warnings
from pathlib import Path
from typing import Any

import httpx
import jwt

from app.security.authentication import ALGORITHM, ISSUER
from controller.access import device_tokens
from controller.core.games import Game
from controller.roles import Role
from controller.settings import load_secret_key
from tests.app.auth import headers_for
from tests.app.floor import web_floor

ME = "/api/v1/auth/me"
ONE_LINK = {"stud": (Game.CARIBBEAN_STUD, 1)}


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_tokens_that_must_not_sign_anyone_in(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links=ONE_LINK) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        signed_in = await headers_for(wf, Role.TECHNICIAN, "tina.tech")
        token = signed_in["Authorization"].removeprefix("Bearer ")
        key = load_secret_key(wf.service.settings, create=False)

        # A sign-in token lives 15 minutes (the setting's default).
        claims = jwt.decode(token, key, algorithms=[ALGORITHM], issuer=ISSUER)
        assert claims["exp"] - claims["iat"] == 15 * 60
        assert (await http.get(ME, headers=signed_in)).status_code == 200

        now = int(time.time())
        good = {"iss": ISSUER, "sub": "tina.tech", "role": "technician", "iat": now}

        def signed(claims: dict[str, Any], with_key: bytes = key, alg: str = ALGORITHM) -> str:
            with warnings.catch_warnings():  # our 32-byte key is short for HS512, as it should be
                warnings.simplefilter("ignore", jwt.warnings.InsecureKeyLengthWarning)
                return jwt.encode(claims, with_key, algorithm=alg)

        head, payload, signature = token.split(".")
        altered = {**json.loads(base64.urlsafe_b64decode(payload + "==")), "role": "admin"}
        refused: dict[str, str] = {
            # Issued 15 minutes and a second ago, as the app issues them: expired.
            "expired": signed({**good, "iat": now - 901, "exp": now - 1}),
            "signed with another key": signed({**good, "exp": now + 900}, b"k" * 32),
            "alg none": f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64({**good, 'exp': now + 900})}.",
            "another algorithm": signed({**good, "exp": now + 900}, key, "HS512"),
            "role changed, signature kept": f"{head}.{_b64(altered)}.{signature}",
            "role claimed, signed by us": signed({**good, "role": "admin", "exp": now + 900}),
            "no expiry": signed(good),
            "another issuer": signed({**good, "iss": "elsewhere", "exp": now + 900}),
            "nobody": signed({**good, "sub": "ghost", "exp": now + 900}),
            "not a token": "pdt_not-a-device-token",
        }
        for why, bad in refused.items():
            for url in (ME, "/api/v1/tables"):
                answer = await http.get(url, headers=_bearer(bad))
                assert answer.status_code == 401, f"{why} on {url}: {answer.status_code}"
                assert answer.headers["www-authenticate"] == "Bearer", why
        expired = await http.get(ME, headers=_bearer(refused["expired"]))
        assert expired.json()["detail"] == "the token has expired; sign in again"
        # A token on the address is for displays reading amounts, never a sign-in.
        assert (await http.get("/api/v1/tables", params={"token": token})).status_code == 401

        # A disabled user's token stops at once.
        admin = await headers_for(wf, Role.ADMIN, "root")
        assert (await http.post("/api/v1/users/tina.tech/disable", headers=admin)).is_success
        gone = await http.get(ME, headers=signed_in)
        assert gone.status_code == 401
        assert gone.json()["detail"] == "the account 'tina.tech' is disabled or no longer exists"

        # A display's token reads amounts and nothing else; revoked, not even that.
        device, device_token = await device_tokens.create_device_token(
            wf.service.engine, name="pit 1", actor="root", at_us=wf.service.clock.now_us()
        )
        display = _bearer(device_token)
        assert (await http.get("/api/v1/links/stud", headers=display)).status_code == 200
        for url in ("/api/v1/tables", "/api/v1/hits", "/api/v1/users", "/api/v1/audit-log"):
            answer = await http.get(url, headers=display)
            assert answer.status_code == 403, f"{url}: {answer.status_code}"
        answer = await http.post("/api/v1/ledger/verify", headers=display)
        assert answer.status_code == 403
        revoke = f"/api/v1/device-tokens/{device.token_id}/revoke"
        assert (await http.post(revoke, headers=admin)).is_success
        assert (await http.get(ME, headers=display)).status_code == 401
