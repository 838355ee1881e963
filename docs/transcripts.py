"""Run the commands of every transcript in README.md and docs/*.md, and check or rewrite
what they print, so that no transcript goes stale.

    python docs/transcripts.py --check    # exit 1, with a diff, if a transcript differs
    python docs/transcripts.py --update   # rewrite the transcripts from new runs

A transcript is a ```console block right after a line ``<!-- transcript -->``, which may
hold options: ``<!-- transcript: grep='Dropped:|simhash/' status=1 -->``.

- Each file runs in a sandbox of its own: a new directory holding a copy of
  ``example_project`` (without its index), as a fresh clone has it, and ``.venv`` (a link
  to the Python environment running this script). Its transcripts run in order, in
  ``example_project`` (``cwd=.`` for the sandbox's root); ``fresh`` starts a new sandbox.
- ``$ `` lines are commands, run with bash (stdout and stderr together, as a terminal
  shows them); the lines after one are its output. The parts of a command that install
  (``python3 -m venv .venv``, ``pip install``) are not run: the environment running
  this script is the one they would make.
- ``grep=REGEX`` keeps the output lines that match (and ``...`` where lines were left
  out); ``status=N`` is the exit status expected (0 unless said); ``setup='COMMAND'`` runs
  a command first without showing it; ``unordered``: the lines may come in another order
  (pages downloaded concurrently); ``volatile=REGEX``: what may differ between runs.
- The sandbox's path is written as ``/home/you/scrapy-simhash`` (in commands too). Times,
  dates and sizes in bytes may differ from one run to the next: ``--check`` compares them
  as placeholders; ``--update`` writes the new run's where something else changed.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHOWN_ROOT = "/home/you/scrapy-simhash"
MARKER = re.compile(r"^<!-- transcript(?::\s*(?P<options>.*?))?\s*-->$")
VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:\+00:00| UTC)?"), "<time>"),
    (re.compile(r"\d+(?:\.\d+)? bytes per page"), "<n> bytes per page"),
    (re.compile(r"\d[\d,]*(?: -> \d[\d,]*)? bytes"), "<n> bytes"),
]
INSTALL = re.compile(r"^(python3? -m venv |\S*pip install )")


@dataclass
class Block:
    path: Path
    start: int  #: index of the ```console line
    end: int  #: index of the closing ``` line
    options: dict[str, str]
    commands: list[tuple[str, list[str]]]  #: (command, expected output lines)


def find_blocks(path: Path, lines: list[str]) -> list[Block]:
    blocks = []
    for n, line in enumerate(lines):
        found = MARKER.match(line.strip())
        if not found:
            continue
        if n + 1 >= len(lines) or lines[n + 1].strip() != "```console":
            raise SystemExit(f"{path}:{n + 1}: a transcript marker must precede ```console")
        options = {}
        for token in shlex.split(found["options"] or ""):
            name, _, value = token.partition("=")
            options[name] = value
        end = lines.index("```", n + 2)
        commands: list[tuple[str, list[str]]] = []
        for body in lines[n + 2 : end]:
            if body.startswith("$ "):
                commands.append((body[2:], []))
            elif commands:
                commands[-1][1].append(body)
            else:
                raise SystemExit(f"{path}:{n + 3}: a transcript starts with a $ command")
        blocks.append(Block(path, n + 1, end, options, commands))
    return blocks


class Sandbox:
    """A fresh clone's view of the example: ``example_project`` and ``.venv``."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="transcripts-")).resolve()
        shutil.copytree(
            ROOT / "example_project",
            self.dir / "example_project",
            ignore=shutil.ignore_patterns(".scrapy", "__pycache__", "*.jl"),
        )
        (self.dir / ".venv").symlink_to(Path(sys.prefix))
        self.env = dict(os.environ)
        self.env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), self.env["PATH"]])
        self.env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
        )
        self.env["COLUMNS"] = "100"

    def run(self, command: str, cwd: str) -> tuple[int, list[str]]:
        command = command.replace(SHOWN_ROOT, str(self.dir))
        parts = [part for part in command.split(" && ") if not INSTALL.match(part.strip())]
        done = subprocess.run(
            ["bash", "-c", " && ".join(parts) or "true"],
            cwd=self.dir / cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        text = done.stdout.replace(str(self.dir), SHOWN_ROOT)
        return done.returncode, text.rstrip("\n").splitlines() if text.strip() else []

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def selected(lines: list[str], pattern: str | None) -> list[str]:
    """The lines matching *pattern*, with ``...`` where lines were left out."""
    if not pattern:
        return lines
    regex = re.compile(pattern)
    out: list[str] = []
    for line in lines:
        if regex.search(line):
            out.append(line)
        elif not out or out[-1] != "...":
            out.append("...")
    return out


def comparable(lines: list[str], options: dict[str, str]) -> list[str]:
    volatile = list(VOLATILE)
    if options.get("volatile"):
        volatile.append((re.compile(options["volatile"]), "<...>"))
    out = []
    for line in lines:
        if line.strip() == "...":
            continue
        for regex, placeholder in volatile:
            line = regex.sub(placeholder, line)
        out.append(line.rstrip())
    return sorted(out) if "unordered" in options else out


def run_file(path: Path, update: bool) -> list[str]:
    """Run the transcripts of *path*; rewrite it with *update*; return the differences."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks = find_blocks(path, lines)
    if not blocks:
        return []
    problems: list[str] = []
    sandbox = Sandbox()
    try:
        for block in blocks:
            if "fresh" in block.options:
                sandbox.close()
                sandbox = Sandbox()
            cwd = block.options.get("cwd", "example_project")
            if block.options.get("setup"):
                status, output = sandbox.run(block.options["setup"], cwd)
                if status:
                    problems.append(f"{path}:{block.start}: setup failed:\n" + "\n".join(output))
            new_body: list[str] = []
            for command, expected in block.commands:
                status, output = sandbox.run(command, cwd)
                wanted = int(block.options.get("status", 0))
                shown = selected(output, block.options.get("grep"))
                if status != wanted:
                    problems.append(
                        f"{path}:{block.start}: `{command}` exited with {status}, not {wanted}:\n"
                        + "\n".join(output[-20:])
                    )
                elif comparable(shown, block.options) != comparable(expected, block.options):
                    diff = difflib.unified_diff(
                        comparable(expected, block.options),
                        comparable(shown, block.options),
                        "documented",
                        "now",
                        lineterm="",
                    )
                    problems.append(f"{path}:{block.start}: `{command}`\n" + "\n".join(diff))
                else:
                    shown = expected  # the same but for times and sizes: left as written
                new_body += [f"$ {command}", *shown]
            lines[block.start + 1 : block.end] = new_body
            # Later blocks move with this one's new length.
            shift = len(new_body) - (block.end - block.start - 1)
            for later in blocks[blocks.index(block) + 1 :]:
                later.start += shift
                later.end += shift
    finally:
        sandbox.close()
    if update:
        path.write_text("\n".join(lines), encoding="utf-8")
    return problems


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare; exit 1 on a difference")
    mode.add_argument("--update", action="store_true", help="rewrite the transcripts")
    parser.add_argument("files", nargs="*", type=Path, help="only these (default: all)")
    args = parser.parse_args()
    problems = []
    for path in args.files or documents():
        problems += run_file(path.resolve(), update=args.update)
    if args.update:
        failed = [p for p in problems if "` exited with " in p or "setup failed" in p]
        for problem in failed:
            print(problem, end="\n\n")
        print(f"Rewrote the transcripts: {len(problems) - len(failed)} changed")
        return 1 if failed else 0
    for problem in problems:
        print(problem, end="\n\n")
    if problems:
        print(f"{len(problems)} transcripts differ: python docs/transcripts.py --update")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
