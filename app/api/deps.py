"""What every router needs from the running application."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, WebSocket

from controller.runtime.service import FloorService


def get_service(request: Request) -> FloorService:
    service: FloorService = request.app.state.service
    return service


# A route's parameter of this type is given the running service.
ServiceDep = Annotated[FloorService, Depends(get_service)]


def ws_service(websocket: WebSocket) -> FloorService:
    service: FloorService = websocket.app.state.service
    return service
