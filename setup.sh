#!/usr/bin/env bash
# Sets up everything microbuild needs on Debian 12 and creates .venv with microbuild installed for
# development (plus the test tools). Safe to run again: it skips what is already there.
#
#   ./setup.sh            install Debian packages (if missing) and the venv
#   ./setup.sh --no-apt   only the venv (when you installed the toolchains yourself)
set -euo pipefail
cd "$(dirname "$0")"

# Toolchains, emulators and flash tools the built-in boards use, and what the tests need.
DEBIAN_PACKAGES=(
  build-essential python3-venv python3-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi picolibc-arm-none-eabi
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
  qemu-system-arm qemu-system-misc
  clang lld libclang-rt-14-dev
  openocd stlink-tools dfu-util gdb-multiarch
  gcc-avr avr-libc simavr
  chromium
)

want_apt=1
for arg in "$@"; do
  case "$arg" in
    --no-apt) want_apt=0 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

if [ "$want_apt" = 1 ]; then
  missing=()
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
      echo "setup.sh: these Debian packages are missing and there is no apt-get: ${missing[*]}" >&2
      echo "          install the equivalents with your package manager, then run ./setup.sh --no-apt" >&2
      exit 1
    fi
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    step "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    step "Debian packages already installed"
  fi
fi

# The venv is rebuilt only when pyproject.toml changed since the last successful set-up.
stamp=.venv/.microbuild-setup
fingerprint=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
  step "Python environment .venv is up to date"
else
  step "creating .venv and installing microbuild with its test tools"
  python3 -m venv .venv
  log=.venv/pip-install.log
  if ! { .venv/bin/python -m pip install --upgrade pip && .venv/bin/python -m pip install -e '.[test]'; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "setup.sh: pip install failed; the whole log is in $log" >&2
    exit 1
  fi
  echo "$fingerprint" > "$stamp"
fi
step "ready: .venv/bin/microbuild --help"
