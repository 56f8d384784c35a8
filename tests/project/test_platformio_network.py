"""`pio run` of a generated project that still wants the network: microbuild stops it at
PlatformIO's "Installing ..." line (this machine cannot reach PlatformIO's registry) and says what
was being fetched and what to do, instead of PlatformIO's minute of retries and bare
`HTTPClientError:`. That microbuild stopped it (rather than PlatformIO giving up) is shown by the
error's ``stopped`` flag and by pio's output ending at the "Installing" line, without the
HTTPClientError PlatformIO prints when it gives up."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from microbuild.project import build_project, generate_project
from microbuild.project.platformio_offline import offline_environment
from microbuild.project.platformio_run import (
    INSTALLING,
    PlatformIONeedsNetwork,
    registry_reachable,
    run_pio,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import TINY_FC

pytest.importorskip("platformio")
offline = pytest.mark.skipif(registry_reachable(), reason="this machine reaches PlatformIO's "
                             "registry: pio would download the package instead of failing")


@offline
def test_a_tool_not_in_the_core_stops_pio_with_what_it_fetched(tmp_path):
    """platformio_user.ini asks for a tool package the seeded core lacks: generate --build's
    `pio run` stops at PlatformIO's "Tool Manager: Installing" line."""
    project = tmp_path / "project"
    generate_project("host", [str(TINY_FC)], "platformio", project)
    with (project / "platformio_user.ini").open("a") as ini:
        ini.write("\n[env:host]\nplatform_packages = platformio/tool-cmake\n")
    with pytest.raises(PlatformIONeedsNetwork) as caught:
        build_project(project)
    err = caught.value
    assert (err.manager, err.stopped) == ("Tool", True)
    assert err.spec.startswith("platformio/tool-cmake")
    message = str(err)
    assert "`pio run -e host` wanted to download the tool package 'platformio/tool-cmake" in message
    assert '"Tool Manager: Installing platformio/tool-cmake' in message
    assert "registry.platformio.org" in message and "microbuild stopped pio at once" in message
    assert "platform_packages" in message and "platformio_user.ini" in message
    # pio's output ends at the line we stopped it at: it never reached its own HTTPClientError.
    assert INSTALLING.match(err.output.strip().splitlines()[-1])
    assert "HTTPClientError" not in err.output


@offline
def test_an_official_platform_stops_pio_and_points_at_microbuilds_platform(tmp_path):
    """The stm32f746 project's second environment is on PlatformIO's ststm32 platform, which the
    offline core does not hold."""
    project = tmp_path / "project"
    generate_project("stm32f746", [str(TINY_FC)], "platformio", project)
    from microbuild.project.platformio_offline import seed_offline_core

    env = offline_environment(seed_offline_core(tmp_path / "core"))
    with pytest.raises(PlatformIONeedsNetwork) as caught:
        run_pio([sys.executable, "-m", "platformio", "run", "-e", "disco_f746ng"], project, env,
                timeout=600)
    err = caught.value
    assert (err.manager, err.stopped) == ("Platform", True)
    assert "the PlatformIO platform 'ststm32'" in str(err)
    assert "microbuild's own platform" in str(err)
    assert f"PLATFORMIO_CORE_DIR={tmp_path / 'core'}" in str(err)
    assert "HTTPClientError" not in err.output


def test_a_bare_httpclienterror_is_explained_too(tmp_path):
    """When the registry answered the check but the download failed anyway, pio's bare error is
    replaced by the same explanation afterwards. The process here is a stand-in printing what
    pio prints in that case (the real one needs a registry that half works)."""
    script = ("print('Processing host (platform: native)'); "
              "print('Platform Manager: Installing native'); print('HTTPClientError: '); "
              "raise SystemExit(1)")
    with pytest.raises(PlatformIONeedsNetwork) as caught:
        run_pio([sys.executable, "-c", script], tmp_path, {}, reachable=lambda: True)
    err = caught.value
    assert (err.manager, err.spec, err.stopped) == ("Platform", "native", False)
    assert "pio ended with a bare HTTPClientError" in str(err)


def test_output_without_installing_passes_through(tmp_path):
    """A build that installs nothing never checks the registry and returns pio's own result."""
    checked = []
    proc = run_pio([sys.executable, "-c", "print('Building'); raise SystemExit(3)"], tmp_path,
                   {}, reachable=lambda: checked.append(1) or False)
    assert (proc.returncode, proc.stdout, checked) == (3, "Building\n", [])
    # Installing microbuild's own platform from the project folder is no download either.
    line = "Platform Manager: Installing symlink:///p/platformio/microbuild-platform"
    proc = run_pio([sys.executable, "-c", f"print({line!r})"], tmp_path, {},
                   reachable=lambda: checked.append(1) or False)
    assert (proc.returncode, checked) == (0, [])
