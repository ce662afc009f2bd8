#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs fixq's main job on the embedded default model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec build/bin/fixq demo "$@"
