"""The server and pole config loaders on mutations of the deploy/ examples:
their own error type (ConfigError / EdgeConfigError) naming the field, never a
raw ValueError, UnicodeDecodeError or TypeError."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

from sidewalk.core.config import ConfigError, load_settings
from sidewalk.edge.config import EdgeConfigError, load_edge_settings
from tests.fuzz.toml_mutations import (
    Mutation,
    deletions,
    noise,
    syntax_errors,
    unknown_keys,
    wrong_types,
)

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SERVER = (DEPLOY / "sidewalk.example.toml").read_text("utf-8")
POLE = (DEPLOY / "pole.example.toml").read_text("utf-8")
POLE_REQUIRED = frozenset(
    {"device", "url", "kind", "id", "ground_distance_mm", "source", "length_mm"}
    | {"walk_width_mm", "image_points", "ground_points_mm"}
)
ARRAYS = {"sensors", "camera.frontages"}

Loader = Callable[[Path], Any]
LOADERS: dict[str, tuple[Loader, type[ValueError]]] = {
    "server": (load_settings, ConfigError),
    "pole": (load_edge_settings, EdgeConfigError),
}
FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def _no_environment() -> Iterator[None]:
    """Environment overrides win over the file; none may leak into these checks."""
    import os

    with pytest.MonkeyPatch.context() as mp:
        for name in os.environ:
            if name.startswith("SIDEWALK_"):
                mp.delenv(name)
        yield


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("configs")


def _error(which: str, text: str | bytes, workdir: Path) -> str | None:
    """Load ``text`` as the given config: None when it loads, else the message."""
    loader, error = LOADERS[which]
    path = workdir / f"{which}.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    try:
        loader(path)
    except error as exc:
        message = str(exc)
        assert message.startswith(str(path)), message
        return message
    return None


def _names(message: str | None, m: Mutation) -> None:
    assert message is not None, m
    if m.table in ARRAYS:  # errors say sensors.<index>.<kind>.<key>
        assert m.table in message, (m, message)
        assert m.key in message, (m, message)
    else:
        field = f"{m.table}.{m.key}" if m.table else m.key
        assert field in message, (m, message)


def test_the_examples_load(workdir: Path) -> None:
    assert _error("server", SERVER, workdir) is None
    assert _error("pole", POLE, workdir) is None


@FAST
@given(case=wrong_types(SERVER))
def test_server_wrong_type(workdir: Path, case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_error("server", text, workdir), m)


@FAST
@given(case=wrong_types(POLE))
def test_pole_wrong_type(workdir: Path, case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_error("pole", text, workdir), m)


@FAST
@given(case=deletions(POLE, POLE_REQUIRED))
def test_pole_missing_required_key(workdir: Path, case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_error("pole", text, workdir), m)


@FAST
@given(case=unknown_keys(SERVER))
# Regression: keys starting "_" reached pydantic-settings' own options
# (_env_prefix = 5 raised TypeError; _case_sensitive was taken silently).
@example(case=("_env_prefix = 5\n" + SERVER, Mutation("unknown_key", "", "_env_prefix", 1)))
@example(case=('_case_sensitive = "x"\n' + SERVER,
               Mutation("unknown_key", "", "_case_sensitive", 1)))  # fmt: skip
def test_server_unknown_key(workdir: Path, case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_error("server", text, workdir), m)


@FAST
@given(case=unknown_keys(POLE))
def test_pole_unknown_key(workdir: Path, case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_error("pole", text, workdir), m)


@pytest.mark.parametrize("which", ["server", "pole"])
def test_syntax_errors_name_a_line(workdir: Path, which: str) -> None:
    text = SERVER if which == "server" else POLE

    @FAST
    @given(case=syntax_errors(text))
    @example(case=(text[:-30] + '\nx = "cut', Mutation("syntax", "", "", 0)))
    def check(case: tuple[str, Mutation]) -> None:
        message = _error(which, case[0], workdir)
        assert message is not None
        assert "not valid TOML" in message
        assert re.search(r"line \d+", message), message

    check()


@pytest.mark.parametrize("which", ["server", "pole"])
def test_noise_is_loaded_or_refused_with_the_loaders_error(workdir: Path, which: str) -> None:
    text = SERVER if which == "server" else POLE

    @FAST
    @given(case=noise(text))
    def check(case: tuple[str, Mutation]) -> None:
        _error(which, case[0], workdir)  # any other exception fails the test

    check()


@pytest.mark.parametrize(
    ("which", "old", "new", "field"),
    [
        # Regressions: a bad port loaded and raised ValueError when first used.
        ("pole", ":8883", ":99999", "mqtt.url"),
        ("pole", ":8883", ":http", "mqtt.url"),
        ("server", ":1883", ":99999", "mqtt.url"),
        ("server", ":1883", ":http", "mqtt.url"),
        ("server", "@127.0.0.1/", "@127.0.0.1:99999999/", "cases.database_url"),
    ],
)
def test_bad_ports_are_refused_at_load(
    workdir: Path, which: str, old: str, new: str, field: str
) -> None:
    text = SERVER if which == "server" else POLE
    assert old in text
    message = _error(which, text.replace(old, new), workdir)
    assert message is not None
    assert field in message, message
    assert "Port" in message, message


@pytest.mark.parametrize("which", ["server", "pole"])
def test_unreadable_files_are_the_loaders_error(workdir: Path, which: str) -> None:
    # Regression: non-UTF-8 raised UnicodeDecodeError, a directory IsADirectoryError.
    assert _error(which, b"\xff\xfe\x00 not utf-8", workdir) is not None
    loader, error = LOADERS[which]
    with pytest.raises(error, match="cannot read"):
        loader(workdir)
