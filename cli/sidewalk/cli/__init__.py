"""The ``sidewalk`` command line and the wiring of the components (``sidewalk.system``)."""

from sidewalk.cli.main import app

__all__ = ["app"]
