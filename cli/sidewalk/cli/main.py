"""``sidewalk``: the command line of the Sidewalk Watch server.

\b
``demo``       the whole system on embedded defaults, replaying a storm through MQTT
``replay``     play a scenario (or a real winter) straight into the clock engine
``ingest``     consume readings into the time-series store
``analytics``  run the ordinance clocks live and record violations and notices
``act``        record what a person did in a snow-and-ice case
``review``     clearing deadlines waiting for a person (evidence missing, unverified); decide one
``check``      ready to go live? one line per problem with what fixes it
the groups below: see each one's --help
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from sidewalk.cli import act, check, demo, replay, review, services
from sidewalk.cli.common import command_group
from sidewalk.cli.dashboard import dashboard_app

if TYPE_CHECKING:
    from typer import _click  # the Click that Typer carries

# Each group is imported and built when it is used, not when ``sidewalk --help`` lists
# it: building every command's parameters costs a few tenths of a second. Each command
# (the pole's own ``sidewalk-edge`` ones too) imports what it uses when it runs.
GROUPS = {
    "notices": (
        "sidewalk.cli.notices:notices_app",
        "The paperwork: register, print batches, delivery, bills, payments, tax roll.",
    ),
    "cold": (
        "sidewalk.cli.cold:cold_app",
        "Cold weather: record pours and street-opening permits; show their clocks.",
    ),
    "street": (
        "sidewalk.cli.street:street_app",
        "Obstructions, street privilege permits, street sweeping; show their clocks.",
    ),
    "inspect": (
        "sidewalk.cli.inspect:inspect_app",
        "Measure a frontage's sidewalk against § 370-5 from photos, depth maps, laser.",
    ),
    "profile": (
        "sidewalk.cli.profile:profile_app",
        "Confirm the ordinance values the code text leaves open.",
    ),
    "registry": (
        "sidewalk.cli.registry:registry_app",
        "The village's frontages, parcels, owners of record, occupants and poles.",
    ),
    "edge": (
        "sidewalk.cli.edge:edge_app",
        "Run a pole (run), simulate one (simulate), or send one a command (command).",
    ),
}


class _Mounted(TyperGroup):
    """A group that stands in for ``target`` (``module:attribute``) until it is used."""

    def __init__(self, name: str, target: str, short_help: str) -> None:
        super().__init__(
            name=name, short_help=short_help, no_args_is_help=True, rich_markup_mode=None
        )
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

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._loaded().format_help(ctx, formatter)


class _Root(TyperGroup):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name, (target, short_help) in GROUPS.items():
            self.add_command(_Mounted(name, target, short_help))


app = command_group(__doc__, cls=_Root)
app.command()(demo.demo)
app.command()(replay.replay)
app.command()(services.ingest)
app.command()(services.analytics)
app.command()(act.act)
app.command()(check.check)
app.add_typer(review.review_app, name="review")
app.add_typer(dashboard_app, name="dashboard")  # its callback serves: not a stand-in
