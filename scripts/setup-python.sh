#!/usr/bin/env bash
# Creates .venv at the repository root and installs the hympi_lab package
# (python/) into it in editable mode, with its test extras.
#
# Idempotent: the pip step runs only when the package is not installed yet or
# python/pyproject.toml changed since the last install (a stamp file in .venv
# records that), so a rerun costs well under a second.
#
# Usage: scripts/setup-python.sh        (PYTHON=python3.12 to pick another interpreter)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$root/.venv"
pyproject="$root/python/pyproject.toml"
stamp="$venv/.hympi-lab-installed"
python=${PYTHON:-python3}

if ! command -v "$python" >/dev/null 2>&1; then
    echo "setup-python.sh: error: $python not found; install Python 3.9 or newer" >&2
    exit 1
fi

if [ ! -x "$venv/bin/python" ]; then
    # A half-created .venv (an interrupted earlier run) would confuse venv.
    rm -rf "$venv"
    if ! venv_log=$("$python" -m venv "$venv" 2>&1); then
        rm -rf "$venv"
        # Debian and Ubuntu ship venv (with ensurepip) separately, as python3-venv.
        apt_line="DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv"
        if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "setup-python.sh: '$python -m venv' failed; installing python3-venv" >&2
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv
            "$python" -m venv "$venv"
        else
            echo "setup-python.sh: error: '$python -m venv' failed: ${venv_log##*$'\n'}" >&2
            echo "setup-python.sh: on Debian/Ubuntu install it as root with: $apt_line" >&2
            exit 1
        fi
    fi
    rm -f "$stamp"
fi

if [ ! -f "$stamp" ] || [ "$pyproject" -nt "$stamp" ] || [ ! -x "$venv/bin/hympi-lab" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root/python[test]"
    touch "$stamp"
fi

echo "setup-python.sh: $venv ready ($("$venv/bin/python" --version 2>&1), hympi-lab at $venv/bin/hympi-lab)"
