#!/usr/bin/env bash
# Installs the Debian 12 packages stepmap builds, tests and demos with.
# Idempotent: installs only what is missing.
#   contrib/install-deps.sh [--clang] [PACKAGE...]
#     --clang: also clang-14 with libFuzzer and the sanitizer runtimes
#              (fuzz.sh, sanitize.sh)
#     PACKAGE: also these (the builds of Slurm, Open MPI 5 and the .deb name
#              what they need beyond stepmap's own)
set -euo pipefail
pkgs=(
  build-essential pkg-config meson ninja-build
  libslurm-dev slurmctld slurmd slurm-client munge
  libpmix-dev libhwloc-dev hwloc libuv1-dev libyaml-cpp-dev
  googletest libgtest-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev python3-mpi4py libmpich-dev
  libssl-dev
  util-linux procps iproute2
  groff-base
  librsvg2-bin  # rsvg-convert: tests/cli/plan_svg_test.py renders the plan picture
)
if [ "${1:-}" = --clang ]; then
  pkgs+=(clang-14 libclang-rt-14-dev llvm-14)
  shift
fi
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps.sh: installing ${#missing[@]} packages (apt-get): ${missing[*]}..." >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# The packaged daemons must not start themselves: the test cluster runs its own.
printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
$SUDO chmod +x /usr/sbin/policy-rc.d
trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
