#!/usr/bin/env bash
# Capture py-spy's own error output when the kernel refuses it ptrace (py-spy-eperm.stderr), here, for real: a
# sleeping interpreter, and py-spy under scripts/deny-ptrace (a seccomp filter that refuses ptrace). Run from the
# repository root with its .venv (py-spy is one of ntui's dependencies).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=tests/data/stacks
.venv/bin/python -c 'import time; time.sleep(60)' &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
sleep 0.5
scripts/deny-ptrace .venv/bin/py-spy dump --pid "$pid" >/dev/null 2>"$out/py-spy-eperm.stderr" || true
.venv/bin/py-spy --version >"$out/py-spy.version"
