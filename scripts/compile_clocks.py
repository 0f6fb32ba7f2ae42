"""Compile the clock engine's hot modules with mypyc (run by ``scripts/bootstrap``).

A whole winter's replay runs every reading through ``engine``, ``cessation`` and
``enforcement``; compiled, they take about a fifth less CPU (docs/scaling.md).
The build goes into ``analytics/sidewalk/analytics/clocks/_mypyc/`` with a stamp
of the sources it was built from; the package uses it only while that stamp
matches (``sidewalk.analytics.clocks.native``), so editing a module never runs
a stale build. Nothing to do when the build is current. Without a C compiler
or Python's headers the engine stays plain Python: slower, the same decisions.

    .venv/bin/python scripts/compile_clocks.py [--force]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The compiled modules' shared part, inside the package (found on its path).
GROUP = "sidewalk.analytics.clocks.compiled"


def _missing_toolchain() -> str | None:
    if shutil.which(os.environ.get("CC", "cc")) is None:
        return "no C compiler (Debian: apt-get install gcc)"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return f"no Python headers for {sys.executable} (Debian: apt-get install python3-dev)"
    return None


def _build(native: Path, files: list[str], stamp_text: str) -> None:
    from mypyc.build import mypycify  # build-time only: never imported by the engine
    from setuptools import Distribution

    with tempfile.TemporaryDirectory(prefix="compile-clocks-") as tmp:
        # mypy reads the repository's settings (strict, the namespace layout).
        extensions = mypycify(
            ["--config-file", str(ROOT / "pyproject.toml"), *files],
            target_dir=str(Path(tmp) / "c"),
            group_name=GROUP,
        )
        # A bare Distribution: ``setup()`` would read the workspace's pyproject.toml.
        dist = Distribution({"name": "sidewalk-clocks-compiled", "ext_modules": extensions})
        build = dist.get_command_obj("build_ext")
        build.build_lib = str(Path(tmp) / "lib")
        build.build_temp = str(Path(tmp) / "obj")
        build.parallel = os.cpu_count() or 1
        dist.run_command("build_ext")
        built = sorted((Path(tmp) / "lib" / "sidewalk" / "analytics" / "clocks").glob("*.so"))
        # Staged beside it under a name of its own (two bootstraps at once do not mix).
        staged = Path(tempfile.mkdtemp(prefix=f"{native.name}.new-", dir=native.parent))
        staged.chmod(0o755)  # readable by the service's own user, as the sources are
        for so in built:
            shutil.copy2(so, staged / so.name)
        (staged / "STAMP").write_text(stamp_text)
        shutil.rmtree(native, ignore_errors=True)
        staged.rename(native)  # the stamp and its modules appear together


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="compile even if current")
    args = parser.parse_args()
    os.chdir(ROOT)  # mypy's paths in pyproject.toml are relative to the repository
    try:
        from sidewalk.analytics.clocks import native
    except ImportError:  # an install without the server (a pole): nothing to compile
        return 0
    try:
        import mypy.version
    except ImportError:
        print("compile-clocks: the clock engine stays plain Python: mypy is not installed")
        return 0
    compiler = f"mypyc {mypy.version.__version__}"
    stamp = native.source_stamp(compiler)
    if not args.force and native.built_for() == (compiler, stamp):
        return 0
    missing = _missing_toolchain()
    if missing is not None:
        print(f"compile-clocks: the clock engine stays plain Python: {missing}", file=sys.stderr)
        return 0
    files = [str((native.NATIVE_DIR.parent / f"{m}.py").relative_to(ROOT)) for m in native.COMPILED]
    print("compile-clocks: compiling the clock engine with mypyc (a minute or two) ...")
    t0 = time.perf_counter()
    _build(native.NATIVE_DIR, files, f"{compiler}\n{stamp}\n")
    print(f"compile-clocks: done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
