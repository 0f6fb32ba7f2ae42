"""How long ``sidewalk --help`` takes, beside the floor every Typer program pays.

Each is a fresh interpreter, timed wall-clock from spawn to exit, in the same run,
interleaved (so a busy machine slows all of them alike), ``--repeat`` times:

1. ``sidewalk --help`` (as ``python -m sidewalk.cli --help``, what the script runs);
2. ``sidewalk notices --help`` (a group whose commands use fpdf2, Jinja2, SQLAlchemy);
3. ``sidewalk act --help`` (a command whose work needs the clock engine), and
   ``sidewalk edge --help`` / ``sidewalk edge simulate --help`` (the pole's own
   commands and the scenario player: device, MQTT and settings code);
4. the floor: ``python -c "import typer, pydantic"`` (Typer converts parameters
   with pydantic, so no Typer command line starts faster);
5. a two-command Typer group's ``--help`` and nothing else (plain help, as
   ``sidewalk`` has; Typer's Rich help alone costs about a second): a group's --help
   builds a pydantic TypeAdapter for its ``--help`` flag, which loads most of
   pydantic (``import pydantic`` alone is lazy), so this is the floor for 2 and 3.

The children compile to bytecode once (a warm-up run each) into a private cache
(``PYTHONPYCACHEPREFIX``, a temporary folder), as an installed program runs: with
``PYTHONDONTWRITEBYTECODE`` set, as on the shared build machines, every start would
compile pydantic and the rest from source, which measures the compiler.

    uv run python -m bench.cli_startup [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BARE_GROUP = """
import typer
app, group = typer.Typer(rich_markup_mode=None), typer.Typer(rich_markup_mode=None)
group.command("a")(lambda: None)
group.command("b")(lambda: None)
app.add_typer(group, name="group")
app(["group", "--help"])
"""
RUNS: dict[str, list[str]] = {
    "sidewalk --help": ["-m", "sidewalk.cli", "--help"],
    "sidewalk notices --help": ["-m", "sidewalk.cli", "notices", "--help"],
    "sidewalk act --help": ["-m", "sidewalk.cli", "act", "--help"],
    "sidewalk edge --help": ["-m", "sidewalk.cli", "edge", "--help"],
    "sidewalk edge simulate --help": ["-m", "sidewalk.cli", "edge", "simulate", "--help"],
    "floor: import typer, pydantic": ["-c", "import typer, pydantic"],
    "floor: bare Typer group --help": ["-c", BARE_GROUP],
}


def once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds, and the child's CPU seconds (user + system: what load does not change)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory(prefix="cli-startup-pyc-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for args in RUNS.values():  # fill the bytecode cache and the file cache first
            once(args, env)
        times: dict[str, list[float]] = {name: [] for name in RUNS}
        cpu: dict[str, list[float]] = {name: [] for name in RUNS}
        for _ in range(repeat):
            for name, args in RUNS.items():
                wall, used = once(args, env)
                times[name].append(wall)
                cpu[name].append(used)
    floor = statistics.median(times["floor: import typer, pydantic"])
    print(
        f"{'':32} {'median':>8} {'min':>8} {'max':>8} {'- floor':>8} {'CPU med':>8}"
        f"  ({repeat} runs each)"
    )
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(
            f"{name:32} {median:7.3f}s {min(seconds):7.3f}s {max(seconds):7.3f}s"
            f" {median - floor:+7.3f}s {statistics.median(cpu[name]):7.3f}s"
        )


if __name__ == "__main__":
    main()
