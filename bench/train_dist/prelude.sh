# bench/train_dist/prelude.sh - sourced by the device scripts of bench/ that
# train (`. "$(dirname "$0")/../train_dist/prelude.sh"`): B = the build folder
# (the script's first argument, default build), O = $OUT (default
# /tmp/device_out, created), the repository root as the working folder,
# bench/train_dist/common.sh's one_run and environment, A = the aorta binary.
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
. bench/train_dist/common.sh
A=./$B/aorta
