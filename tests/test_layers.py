"""The layers of pyproject.toml's import-linter contract hold (issue 53): no package imports one above it, and the
packages of one layer do not import each other, so there is no cycle between packages. The test command runs
`lint-imports` too; these tests show that it can fail, and for the reason it is there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(source_root: Path, cwd: Path) -> subprocess.CompletedProcess:
    """lint-imports with the project's contract over the package found at `source_root`."""
    return subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(source_root),
                                                                            "PATH": "/usr/bin:/bin"})


def copy_of_the_package(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "src" / "sslperf", tmp_path / "src" / "sslperf",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return tmp_path / "src"


def test_the_tree_keeps_its_layers(tmp_path):
    done = lint(ROOT / "src", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 1 kept, 0 broken." in done.stdout


def test_an_upward_import_breaks_the_contract_and_is_named(tmp_path):
    """Core (results) importing the report: the kind of import that made the six cycles the issue found."""
    src = copy_of_the_package(tmp_path)
    results = src / "sslperf" / "results.py"
    results.write_text(results.read_text() + "\n\ndef _planted():\n    from sslperf.report import terminal  # noqa\n")
    done = lint(src, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BROKEN" in done.stdout and "sslperf.results -> sslperf.report.terminal" in done.stdout, done.stdout


def test_siblings_of_a_layer_may_not_import_each_other(tmp_path):
    """compare and scale share a layer: one importing the other would make a cycle possible, so it is refused."""
    src = copy_of_the_package(tmp_path)
    compare = src / "sslperf" / "compare" / "__init__.py"
    compare.write_text(compare.read_text() + "\n\nfrom sslperf.scale import sweep  # noqa\n")
    done = lint(src, tmp_path)
    assert done.returncode == 1 and "sslperf.compare -> sslperf.scale.sweep" in done.stdout, done.stdout


def test_every_package_is_in_a_layer(tmp_path):
    """`exhaustive`: a new top-level package or module must be placed in a layer, so none escapes the check."""
    src = copy_of_the_package(tmp_path)
    (src / "sslperf" / "unplaced.py").write_text("from sslperf import results  # noqa\n")
    done = lint(src, tmp_path)
    assert done.returncode == 1 and "unplaced" in done.stdout, done.stdout
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    assert contract["exhaustive"] is True
    placed = {name.strip() for layer in contract["layers"] for name in layer.split("|")}
    present = {p.stem if p.is_file() else p.name for p in (ROOT / "src" / "sslperf").iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.stem not in ("__init__", "__main__")}
    assert present == placed, present ^ placed


def drawn_layers() -> str:
    """The contract's layers as docs/architecture.md draws them: top to bottom, one line each, siblings side by side."""
    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    rows = [" | ".join(name.strip() for name in layer.split("|")) for layer in contract["layers"]]
    return "\n".join(["```text", *(f"{row}\n  ▲" if i < len(rows) - 1 else row for i, row in enumerate(rows)),
                      "```"])


def test_the_architecture_page_draws_the_contract():
    page = (ROOT / "docs" / "architecture.md").read_text()
    assert drawn_layers() in page, "docs/architecture.md's layers differ from pyproject.toml's:\n" + drawn_layers()
