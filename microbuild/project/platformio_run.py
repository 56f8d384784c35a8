"""`pio run` that stops, with a message that says why, when PlatformIO wants the network.

PlatformIO installs whatever a project needs and its core folder lacks (a platform such as
ststm32, a tool named in platform_packages, a library in lib_deps, its own tool-scons), announcing
each with a line such as ``Tool Manager: Installing platformio/tool-cmake``. When its registry
cannot be reached it retries for about a minute and ends with a bare ``HTTPClientError:`` that
names nothing (../shared/notes/platformio-offline.md). So ``run_pio`` watches pio's output: at an
"Installing" line it checks whether the registry can be reached at all (a TCP connection, a few
seconds at most); when it cannot, it stops pio at once and raises PlatformIONeedsNetwork, whose
message names what was being fetched and what to do. If pio fails with HTTPClientError anyway
(the registry answered the check but not the download), the same error is raised afterwards.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

from microbuild.errors import ToolchainError

# "Platform Manager: Installing ststm32", "Tool Manager: Installing platformio/tool-cmake @ ~3.21",
# "Library Manager: Installing bblanchon/ArduinoJson"
INSTALLING = re.compile(r"^(?P<manager>Platform|Tool|Library|Package) Manager: "
                        r"Installing (?P<spec>.+?)\s*$")
# An install from this machine (microbuild's own platform is `symlink://`): no network involved.
LOCAL_SPEC = re.compile(r"^(symlink|file)://|^[/~.]")
# How long the registry check may take per host before it counts as unreachable.
PROBE_SECONDS = 4.0


class PlatformIONeedsNetwork(ToolchainError):
    """`pio run` wanted to download ``spec`` (a ``manager`` package) and could not."""

    def __init__(self, message: str, *, manager: str, spec: str, stopped: bool, output: str):
        super().__init__(message)
        self.manager, self.spec, self.stopped, self.output = manager, spec, stopped, output


def registry_hosts() -> list[str]:
    """The hosts PlatformIO downloads packages from (its registry and mirrors)."""
    try:
        from platformio import __registry_mirror_hosts__
        return list(__registry_mirror_hosts__)
    except ImportError:
        return ["registry.platformio.org"]


def registry_reachable(timeout: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to any of PlatformIO's registry hosts (port 443) opens."""
    for host in registry_hosts():
        try:
            with socket.create_connection((host, 443), timeout=timeout):
                return True
        except OSError:
            continue
    return False


def run_pio(command: Sequence[str], cwd: str | Path, env: dict[str, str],
            timeout: float = 1800.0,
            reachable: Callable[[], bool] = registry_reachable) -> subprocess.CompletedProcess:
    """Run ``command`` (a `pio run`) like subprocess.run(capture_output=True, text=True), stdout
    and stderr merged; raise PlatformIONeedsNetwork as the module's docstring says, and
    subprocess.TimeoutExpired after ``timeout`` seconds."""
    proc = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace",
                            start_new_session=True)  # its own group: stopping pio stops SCons too
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    output: list[str] = []
    installing: re.Match | None = None
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise subprocess.TimeoutExpired(list(command), timeout, "".join(output)) from None
            if line is None:
                break
            output.append(line)
            found = INSTALLING.match(line.strip())
            if found and not LOCAL_SPEC.match(found.group("spec")):
                installing = found
                if not reachable():
                    _stop(proc)
                    raise needs_network(command, env, found, stopped=True,
                                        output="".join(output))
        proc.wait()
    finally:
        if proc.poll() is None:
            _stop(proc)
    text = "".join(output)
    if proc.returncode != 0 and installing and "HTTPClientError" in text:
        raise needs_network(command, env, installing, stopped=False, output=text)
    return subprocess.CompletedProcess(list(command), proc.returncode, text, "")


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def needs_network(command: Sequence[str], env: dict[str, str], found: re.Match, *,
                  stopped: bool, output: str) -> PlatformIONeedsNetwork:
    manager, spec = found.group("manager"), found.group("spec")
    name = spec.split("@")[0].strip().split("/")[-1]
    what = {"Platform": "the PlatformIO platform", "Tool": "the tool package",
            "Library": "the library", "Package": "the package"}[manager]
    core = env.get("PLATFORMIO_CORE_DIR") or "~/.platformio"
    shown = " ".join(str(c) for c in command)
    shown = shown[shown.find(" -m platformio ") + len(" -m platformio "):] \
        if " -m platformio " in shown else shown
    how = ("microbuild stopped pio at once rather than let it retry for about a minute and end "
           "with a bare HTTPClientError" if stopped else
           "pio ended with a bare HTTPClientError")
    if name == "tool-scons":
        advice = ("seed a core folder that holds it: eval \"$(microbuild platformio-core)\" "
                  "(microbuild's own platform then needs nothing else)")
    elif manager == "Platform":
        advice = ("build the environment on microbuild's own platform (the project's first "
                  "environment, `pio run -e <board>`), which needs nothing from the network; or "
                  f"run this once where the registry is reachable with PLATFORMIO_CORE_DIR={core}, "
                  "so the platform is in that core folder afterwards")
    else:
        advice = ("it is named by platform_packages or lib_deps in platformio.ini or "
                  "platformio_user.ini: remove it, point it at a folder on this machine "
                  f"({name} @ symlink:///path/to/{name}), or install it once where the registry is "
                  f"reachable with PLATFORMIO_CORE_DIR={core}")
    message = (f"`pio {shown}` wanted to download {what} '{spec}' (\"{manager} Manager: "
               f"Installing {spec}\") from PlatformIO's registry ({', '.join(registry_hosts())}), "
               f"which this machine cannot reach; {how}. What to do: {advice}.")
    return PlatformIONeedsNetwork(message, manager=manager, spec=spec, stopped=stopped,
                                  output=output)
