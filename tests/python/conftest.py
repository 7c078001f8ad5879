"""Shared fixtures of the libtune Python tests.

- A watchdog: a case that hangs (a deadlock between the GIL and libtune) prints every thread's
  stack and ends the process instead of holding CTest until its timeout.
- A file whose cases were all skipped exits 77, CTest's skip code, so a run without the
  hardware is reported as skipped, never as a pass.
- `vulkan_device`: lavapipe (or the Vulkan device VK_ICD_FILENAMES gives); skips with the
  reason when the build has no Vulkan backend or no device opens.
"""
import faulthandler
import os

import pytest

import libtune

WATCHDOG_S = 120


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    passed = len(reporter.stats.get("passed", []))
    skipped = len(reporter.stats.get("skipped", []))
    if passed == 0 and skipped > 0:
        session.exitstatus = 77


@pytest.fixture(scope="session")
def vulkan_device():
    if "vulkan" not in libtune.backends():
        pytest.skip("libtune was built without the Vulkan backend")
    try:
        return libtune.open_device("vulkan")
    except libtune.TuneError as e:
        if os.environ.get("CI") == "true":
            raise  # in CI lavapipe is installed: a missing device is a failure
        pytest.skip(f"no Vulkan device: {e}")
