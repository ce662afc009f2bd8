#!/usr/bin/env bash
# Runs the README's two commands as a new user would: on a fresh, minimal Debian 12 machine,
# from a clean clone of the current commit. Catches what a development machine hides (a
# package installed by hand, a file that is not committed, a Recommends that
# --no-install-recommends leaves out).
#   sudo bash scripts/fresh_check.sh [--refresh] [--keep] [--ci]
#     --refresh  debootstrap the base root again (default: reuse build-fresh/base once made)
#     --keep     leave the used root in build-fresh/root for inspection (default: remove it)
#     --ci       after command 2, the rest of .ci/run (`scripts/test.sh --sanitize`) in the
#                same root, and the two timed together: CI's time on a clean clone
#
# In build-fresh/ (ignored by git, like every build-*/):
#   1. base/: `debootstrap --variant=minbase bookworm` from deb.debian.org, made once;
#   2. root/: a copy of base/ with a `git clone` of HEAD in /root/fixq (and nothing beside
#      it: the golden vectors are in tests/vectors/), and /proc, /sys and /dev mounted; everything below runs there as root through chroot, with apt reaching
#      deb.debian.org only (the project's scripts add the npm registry where they need it);
#   3. in root/, phase "runtime": `scripts/setup.sh --runtime` (only the runtime packages),
#      then the library, CLI and Python package are used without any test or peer package:
#      `fixq info`, `fixq bench gru` timing fixq alone, `cmake --install`, and `pip install`
#      into a venv, then `import fixq`;
#   4. then the README's commands, `bash scripts/demo.sh` (which must install only the
#      runtime packages and python3-torch, and finish within 10 minutes) and
#      `bash scripts/test.sh`, each timed, and `pip install --break-system-packages` into
#      Debian's python3 (README, Install).
# Logs: build-fresh/logs/<phase>.log. The mounts are undone on any exit. Needs root (chroot,
# mount) and debootstrap (installed here if missing, from Debian).
set -euo pipefail
# The whole script is one compound command, read before it starts: it runs for an hour or more,
# and bash would otherwise read an edited file (e.g. a checkout that moved on) mid-run.
{
cd "$(dirname "$0")/.."
repo=$PWD

refresh=0 keep=0 ci=0
for arg in "$@"; do
  case $arg in
    --refresh) refresh=1 ;;
    --keep) keep=1 ;;
    --ci) ci=1 ;;
    *) echo "fresh_check: unknown option '$arg' (expected --refresh, --keep or --ci)" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "fresh_check: needs root (debootstrap, mount, chroot)" >&2; exit 1; }

source scripts/install_missing.sh
install_missing fresh_check debootstrap git

work=$repo/build-fresh
base=$work/base
root=$work/root
logs=$work/logs
mirror=http://deb.debian.org/debian
commit=$(git rev-parse HEAD)
[[ -z $(git status --porcelain --untracked-files=no) ]] ||
  echo "fresh_check: note: uncommitted changes are not checked; this checks commit ${commit:0:12}" >&2

mounted() { grep -q " $1 " /proc/mounts; }
# Undoes the mounts (deepest first); nothing is removed while anything is still mounted.
unmount_all() {
  local m
  for m in dev sys proc; do
    if mounted "$root/$m"; then umount -R "$root/$m" 2>/dev/null || umount -R -l "$root/$m"; fi
  done
}
remove_root() {
  unmount_all
  if grep -q " $root/" /proc/mounts; then
    echo "fresh_check: something is still mounted under $root; not removing it" >&2
    return 1
  fi
  rm -rf "$root"
}
cleanup() {
  local status=$?
  unmount_all
  if ((keep == 0)); then remove_root || true; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work" "$logs"
remove_root

declare -A took
results=()
# run_timed NAME COMMAND...: runs, logs to $logs/NAME.log (and shows it), records the time.
run_timed() {
  local name=$1 start status=0
  shift
  start=$(date +%s)
  echo "fresh_check: --- $name ---"
  # bash's time (the commands are shell functions): user and system CPU of every process.
  local TIMEFORMAT='%U %S'
  { time { "$@" 2>&1 | tee "$logs/$name.log"; }; } 2>"$logs/$name.cpu" || status=$?
  took[$name]=$(($(date +%s) - start))
  # The machine's load at the end (1, 5, 15 minute averages): on a shared machine, times
  # taken under load are not the machine's.
  # And the CPU time the phase used (user + system, every process of it): on an idle machine
  # of N cores the phase takes at least that / N.
  local load cpu
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  cpu=$(awk '{ printf "%d", $1 + $2 }' "$logs/$name.cpu" 2>/dev/null || echo "?")
  if ((status == 0)); then
    results+=("$name: pass in ${took[$name]} s (load $load; CPU ${cpu} s)")
  else
    results+=("$name: FAIL (exit $status) after ${took[$name]} s (load $load; CPU ${cpu} s); log $logs/$name.log")
  fi
  return $status
}
summary() {
  echo "fresh_check: Debian 12 (minbase, $mirror), commit ${commit:0:12}:"
  printf '  %s\n' "${results[@]}"
}

# 1. The base system, once.
if ((refresh == 1)) || [[ ! -x $base/usr/bin/apt-get ]]; then
  rm -rf "$base"
  run_timed debootstrap debootstrap --variant=minbase bookworm "$base" "$mirror" || { summary; exit 1; }
fi

# 2. A fresh root from it, the clone, the mounts. apt reaches Debian's registry only: the
#    release, its updates and its security archive, all on deb.debian.org.
cp -a "$base" "$root"
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone --quiet --no-hardlinks "$repo" "$root/root/fixq"
git -C "$root/root/fixq" checkout --quiet --detach "$commit"
# Nothing is copied beside the clone: the golden vectors the tests read are in the
# repository (tests/vectors/), so the suite must pass from the clone alone.
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"

# The host's certificate authorities for node (npm), and only for it: where this machine's
# network intercepts TLS (a workplace egress proxy with its own CA, as the development VM
# has), the fresh root must trust what the host trusts to reach the npm registry at all. On
# a plain machine the file is Debian's own bundle and changes nothing.
host_ca=/etc/ssl/certs/ca-certificates.crt
node_ca=()
if [[ -r $host_ca ]]; then
  cp "$host_ca" "$root/etc/fixq-host-ca.crt"
  node_ca=(NODE_EXTRA_CA_CERTS=/etc/fixq-host-ca.crt)
fi

# in_root SCRIPT: bash -c SCRIPT in the clone, as root, with a clean environment.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb "${node_ca[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -euo pipefail -c "cd /root/fixq && $1"
}

# 3. Runtime dependencies only: build and use everything but the tests and benchmarks.
runtime_check='
FIXQ_BUILD_DIR=build-runtime bash scripts/setup.sh --runtime
for p in libgtest-dev libbenchmark-dev libdnnl-dev libopenblas-dev python3-torch; do
  if [[ $(dpkg-query -W -f="\${Status}" "$p" 2>/dev/null) == "install ok installed" ]]; then
    echo "runtime: $p is installed, so this is not a runtime-only machine" >&2; exit 1
  fi
done
build-runtime/bin/fixq info
build-runtime/bin/fixq bench gru --quick --hidden 64 --batch 1 --steps 10 >/tmp/gru.csv
grep -q "^64,1,fixq_int8," /tmp/gru.csv && ! grep -q onednn_ /tmp/gru.csv
cmake --install build-runtime --prefix /tmp/prefix >/dev/null
/tmp/prefix/bin/fixq formats list >/dev/null
python3 -m venv --system-site-packages /tmp/venv
FIXQ_CMAKE_BUILD_DIR=build-runtime /tmp/venv/bin/pip install -q --no-build-isolation --no-index .
(cd /tmp && /tmp/venv/bin/python -c "import fixq, numpy as np; q = fixq.formats; print(\"runtime: fixq\", fixq.__version__, \"imports\")")
rm -rf /tmp/venv /tmp/prefix /tmp/gru.csv
'
status=0
run_timed runtime in_root "$runtime_check" || status=1

# 4. The README's two commands, then the Python package into Debian's own interpreter.
# What only the tests need must not be installed by the demo.
demo_check='
bash scripts/demo.sh
for p in libgtest-dev libbenchmark-dev chromium qemu-user gcc-arm-none-eabi gcc-arm-linux-gnueabihf libsimde-dev \
  libdnnl-dev libopenblas-dev nodejs python3-pytest python3-onnx; do
  if [[ $(dpkg-query -W -f="\${Status}" "$p" 2>/dev/null) == "install ok installed" ]]; then
    echo "demo.sh: installed $p, which only the tests need" >&2; exit 1
  fi
done
'
# Over 10 minutes is a failure, but the test phase still runs (and is timed): it reuses
# the demo's build and packages.
too_slow=0
if ((status == 0)); then
  run_timed demo.sh in_root "$demo_check" || status=1
  if ((status == 0 && ${took[demo.sh]} > 600)); then
    results+=("demo.sh: took ${took[demo.sh]} s, more than the 10 minutes README command 1 may take (load average now: $(cut -d' ' -f1-3 /proc/loadavg))")
    too_slow=1
  fi
fi
if ((status == 0)); then
  run_timed test.sh in_root "bash scripts/test.sh" || status=1
fi
# .ci/run is scripts/test.sh, then scripts/test.sh --sanitize: the second half here, on the
# same clean clone, so that the two phases add up to CI's run (its setup finds everything
# installed, as CI's second call does). Before pip-system: as in CI, no fixq is installed
# into the system's Python yet (the sanitizer build's demo test expects the PyTorch rows
# left out, for want of a package).
if ((status == 0 && ci == 1)); then
  run_timed ci-sanitize in_root "bash scripts/test.sh --sanitize" || status=1
  ((status != 0)) ||
    results+=(".ci/run (test.sh + ci-sanitize): $((${took[test.sh]} + ${took[ci-sanitize]})) s, against CI's 90-minute limit and the 30-minute target")
fi
if ((status == 0)); then
  run_timed pip-system in_root 'FIXQ_CMAKE_BUILD_DIR=build python3 -m pip install -q --break-system-packages \
    --no-build-isolation --no-index . && cd /tmp && python3 -c "import fixq.torch; print(\"pip-system:\", fixq.torch.QuantGRU)"' ||
    status=1
fi
((too_slow == 0)) || status=1
summary
exit $status
}
