"""What several tests fake alike: a library as the measuring code sees one, and a bench script loaded as a
module (bench/ is not a package)."""

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).parent.parent / "bench"


@dataclass
class FakeLib:
    name: str
    flavor: str = "openssl"
    version: str = "3.0"
    variant_label: str = "default"
    kind: str = "built"


def bench_module(name: str):
    """bench/NAME.py, imported as the module NAME."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
