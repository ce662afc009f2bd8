#!/usr/bin/env bash
# The README's first command: installs what the demo needs and nothing more (the runtime
# packages, and python3-torch for the demo's PyTorch rows: scripts/setup.sh --demo), builds
# the library, the CLI and the Python package into build/, and runs fixq's main job on the
# embedded model. Arguments go to `fixq demo`. scripts/test.sh later reuses the same build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo
exec build/bin/fixq demo "$@"
