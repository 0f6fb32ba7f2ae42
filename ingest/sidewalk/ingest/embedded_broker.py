"""An embedded MQTT broker (amqtt) for the one-command demo and a laptop trial.

Production uses Mosquitto (``deploy/mosquitto.conf``). amqtt speaks MQTT
3.1.1 only, which ``core.mqtt`` negotiates down to by itself.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class EmbeddedBroker:
    """amqtt on its own event-loop thread, listening on loopback."""

    def __init__(self, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.host = host
        self.port = port or free_port(host)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="amqtt", daemon=True)
        self._broker: Any = None

    def start(self) -> None:
        """Start listening; returns once the broker accepts connections."""
        # Deferred: amqtt is slow to import, and the wiring imports this module for
        # every command while only the demo starts a broker of its own.
        from amqtt.broker import Broker

        # amqtt logs every packet at INFO; a demo wants its own output.
        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.WARNING)
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
            },
        }
        self._thread.start()

        async def boot() -> Any:
            broker = Broker(config)
            await broker.start()
            return broker

        self._broker = asyncio.run_coroutine_threadsafe(boot(), self._loop).result(timeout=15)

    def stop(self) -> None:
        if self._broker is not None:
            asyncio.run_coroutine_threadsafe(self._broker.shutdown(), self._loop).result(timeout=15)
            self._broker = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
