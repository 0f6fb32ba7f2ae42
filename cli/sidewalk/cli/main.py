"""``sidewalk``: the command line of the Sidewalk Watch server.

\b
``demo``       the whole system on embedded defaults, replaying a storm through MQTT
``replay``     play a scenario (or a real winter) straight into the clock engine
``ingest``     consume readings into the time-series store
``analytics``  run the ordinance clocks live and record violations and notices
``act``        record what a person did in a snow-and-ice case
``notices``, ``cold``, ``street``, ``inspect``, ``dashboard``, ``edge``: see each one's --help
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from sidewalk.cli import act, demo, replay, services
from sidewalk.cli.cold import cold_app
from sidewalk.cli.common import command_group
from sidewalk.cli.dashboard import dashboard_app
from sidewalk.cli.inspect import inspect_app
from sidewalk.cli.notices import notices_app
from sidewalk.cli.street import street_app

if TYPE_CHECKING:
    from typer import _click  # the Click that Typer carries


class _Mounted(TyperGroup):
    """A group loaded when it is used, not when ``sidewalk --help`` lists it: the pole's
    ``sidewalk-edge`` commands import their modules at the top, about a second."""

    def __init__(self, name: str, target: str, help: str) -> None:
        super().__init__(name=name, help=help, no_args_is_help=True, rich_markup_mode=None)
        self._target = target
        self._group: TyperGroup | None = None

    def _loaded(self) -> TyperGroup:
        if self._group is None:
            module, attribute = self._target.split(":")
            self._group = typer.main.get_group(getattr(importlib.import_module(module), attribute))
        return self._group

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return self._loaded().list_commands(ctx)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        return self._loaded().get_command(ctx, cmd_name)


class _Root(TyperGroup):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_command(
            _Mounted(
                "edge",
                "sidewalk.cli.edge:edge_app",
                "Run a pole (run), simulate one (simulate), or send one a command (command).",
            )
        )


app = command_group(__doc__, cls=_Root)
app.command()(demo.demo)
app.command()(replay.replay)
app.command()(services.ingest)
app.command()(services.analytics)
app.command()(act.act)
app.add_typer(notices_app, name="notices")
app.add_typer(cold_app, name="cold")
app.add_typer(street_app, name="street")
app.add_typer(inspect_app, name="inspect")
app.add_typer(dashboard_app, name="dashboard")
