#!/usr/bin/env bash
# Installs fixq bench model's onnxruntime peer: npm's onnxruntime-node (its linux-x64 CPU
# library ships in the package) into bench/peers/ort/node_modules, which git ignores.
# --ignore-scripts: its install script attempts a download (of a GPU build) that fails
# offline and is not needed for the CPU. Only the npm registry is used.
#   usage: scripts/install_ort_peer.sh [VERSION]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/bench/peers/ort
command -v npm >/dev/null || { echo "install_ort_peer.sh: npm is not installed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
[[ -f package.json ]] || echo '{"name": "fixq-ort-peer", "private": true}' >package.json
npm install --ignore-scripts --no-audit --no-fund "onnxruntime-node${1:+@$1}"
node -e 'const o = require("onnxruntime-node"); console.log("onnxruntime-node", require("onnxruntime-node/package.json").version)'
