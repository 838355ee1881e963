"""Every transcript in README.md and docs/ is what its commands print today
(``python docs/transcripts.py --check``, run here file by file), and the README's test
command is the one CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pipelines import subprocess_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "transcripts.py"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
WITH_TRANSCRIPTS = [p for p in DOCUMENTS if "<!-- transcript" in p.read_text(encoding="utf-8")]


def test_the_readme_and_the_command_reference_have_transcripts():
    assert {p.name for p in WITH_TRANSCRIPTS} >= {"README.md", "cli.md"}


@pytest.mark.parametrize("document", WITH_TRANSCRIPTS, ids=lambda p: p.name)
def test_transcripts_match_their_commands(document):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", str(document)],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    command = ci[ci.index("# The README's test command, word for word:") + 1]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert command in [line for block in blocks for line in block.splitlines()]
