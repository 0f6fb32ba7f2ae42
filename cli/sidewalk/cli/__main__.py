"""``python -m sidewalk.cli``: the same as the ``sidewalk`` command."""

from sidewalk.cli.main import app

app()
