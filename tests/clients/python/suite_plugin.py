"""A pytest plugin for running a client library's own bloom suite (its published sdist's
tests/test_bloom.py and tests/test_asyncio/test_bloom.py) against redbloom; loaded by
tests/it/clients.rs with `-p suite_plugin`.

- valkey-py 6.1.1 marks its bloom modules `pytestmark = pytest.mark.skip` (its CI has no
  bloom module); only that unconditional, module-level skip is lifted, every other skip
  condition of theirs stays.
- At the end one line, `suite <package> <version>: passed=… failed=… skipped=… errors=…`,
  which the Rust test reads, so a suite that silently collected less cannot pass.
"""

import importlib

import pytest

_PACKAGE = None


def pytest_addoption(parser):
    parser.addoption("--suite-package", action="store", default="redis")


def pytest_configure(config):
    global _PACKAGE
    _PACKAGE = config.getoption("--suite-package")


def pytest_collection_modifyitems(items):
    for item in items:
        module = item.getparent(pytest.Module)
        module.own_markers = [
            m
            for m in module.own_markers
            if not (m.name == "skip" and not m.args and not m.kwargs)
        ]


def pytest_terminal_summary(terminalreporter):
    package = importlib.import_module(_PACKAGE)
    counts = {
        name: len(terminalreporter.stats.get(name, []))
        for name in ("passed", "failed", "skipped", "error")
    }
    terminalreporter.write_line(
        f"suite {_PACKAGE} {package.__version__} from {package.__file__}: "
        + " ".join(f"{name}={count}" for name, count in counts.items())
    )
