"""What every router needs from the running application."""

from __future__ import annotations

from fastapi import Request, WebSocket

from controller.runtime.service import FloorService


def get_service(request: Request) -> FloorService:
    service: FloorService = request.app.state.service
    return service


def ws_service(websocket: WebSocket) -> FloorService:
    service: FloorService = websocket.app.state.service
    return service
