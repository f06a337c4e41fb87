"""`sslperf fleet` on an install without the `fleet` extra (the README's
default): Dask's distributed cannot be imported, and each verb that needs it
says which extra to install (exit 2) instead of a ModuleNotFoundError. The
missing package is simulated in a real `sslperf` process by an import hook
that finds neither `distributed` nor `dask`, as a Python without them."""

import subprocess
import sys

import pytest

WITHOUT_DASK = """
import sys

class NoDask:
    # First on the meta path: an import of distributed or dask fails as if neither were installed.
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("distributed", "dask"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoDask())
from sslperf.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("verb", [["machines"], ["worker", "--tag", "lab-a"], ["build", "openssl-3.0"]])
def test_fleet_without_its_extra_names_the_extra(sslperf_dirs, verb):
    result = subprocess.run([sys.executable, "-c", WITHOUT_DASK, "fleet", *verb, "--scheduler", "tcp://127.0.0.1:9"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    assert "No module named 'distributed'" in result.stderr and "pip install 'sslperf[fleet]'" in result.stderr
    assert "worker for machine type" not in result.stderr        # refused before the worker is announced


def test_fleet_help_needs_no_extra(sslperf_dirs):
    result = subprocess.run([sys.executable, "-c", WITHOUT_DASK, "fleet", "machines", "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "--scheduler" in result.stdout, result.stderr
