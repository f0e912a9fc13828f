"""The HTTP and WebSocket routers: thin, each turning a request into a call on the service."""
