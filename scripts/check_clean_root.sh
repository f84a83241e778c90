#!/usr/bin/env bash
# check_clean_root.sh - the README's two set-up commands, run as a new user
# would on a fresh Debian 12 machine: in a minimal root made by
#   debootstrap --variant=minbase --include=make,git,ca-certificates bookworm
# (no CUDA toolkit, no compiler, no jq), with a clone of the current commit
# and a copy of ../shared beside it, run `make demo` then `make test` exactly
# as README.md writes them, each on its first run, and report each one's
# exit status, time and the test summary line.
#
#   sudo scripts/check_clean_root.sh [options]
#     --background   run `make test` the way a script or CI runner without a
#                    terminal does: `make test &` from a non-interactive shell
#                    (SIGINT and SIGQUIT ignored), stdin from /dev/null, no
#                    controlling terminal
#     --deb          then build the Debian package (make deb), install it with
#                    apt-get, run `aorta analyze` from another folder, purge it
#     --install      then `make install PREFIX=/usr/local` and run the installed
#                    aorta from another folder; `make uninstall` removes it
#     --keep         keep the root afterwards (its path is printed)
#     --commit REV   the commit to clone (default HEAD; uncommitted changes are
#                    not part of the check)
#     --prepare      make the cached base root only, run nothing
#     --no-apt-cache download every package again (by default the .debs apt
#                    fetched are kept in the cache folder between runs; the root
#                    still starts with none installed)
#
# Needs root, debootstrap and network access to the machine's Debian mirror;
# takes 15 minutes or more (apt-get of the build and test packages, the whole
# build and suite), so it is not part of `make test`.  The base root is made
# once and kept as a tarball in $AORTA_CLEAN_ROOT_CACHE (default
# /var/cache/aorta-clean-root); each run unpacks it afresh into a temporary
# folder under /var/tmp.  proc, sys, dev, dev/pts and dev/shm are mounted into
# the root for the run and unmounted on every exit path.
# Exit 0 when every command run exited 0, 1 otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${AORTA_CLEAN_ROOT_CACHE:-/var/cache/aorta-clean-root}
INCLUDE=make,git,ca-certificates
SUITE=bookworm
background=0 deb=0 install=0 keep=0 aptcache=1 commit=HEAD prepare=0
while [ $# -gt 0 ]; do
	case "$1" in
	--background) background=1 ;;
	--deb) deb=1 ;;
	--install) install=1 ;;
	--keep) keep=1 ;;
	--prepare) prepare=1 ;;
	--no-apt-cache) aptcache=0 ;;
	--commit) commit=$2; shift ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "check_clean_root: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
if [ "$(id -u)" -ne 0 ]; then
	echo "check_clean_root: needs root (debootstrap, chroot, mount): run it with sudo" >&2
	exit 2
fi
if ! command -v debootstrap >/dev/null 2>&1; then
	echo "check_clean_root: debootstrap not found: apt-get install debootstrap" >&2
	exit 2
fi
sha=$(git -C "$REPO" rev-parse --verify "$commit^{commit}") || { echo "check_clean_root: no commit '$commit'" >&2; exit 2; }
SHARED=$(cd "$REPO/.." && pwd)/shared
[ -d "$SHARED/data" ] || { echo "check_clean_root: no $SHARED/data (the real traces the tests read)" >&2; exit 2; }
if [ -n "$(git -C "$REPO" status --porcelain --untracked-files=no)" ]; then
	echo "check_clean_root: note: uncommitted changes in $REPO are not checked (commit $sha is)" >&2
fi

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# ---- the base root, once ---------------------------------------------------
# The mirror: the first Debian archive the machine's apt sources name.
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1 | tr -d ' ')
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$CACHE"
tarball=$CACHE/$SUITE-minbase-$(echo "$INCLUDE" | tr ',' '_').tar
if [ ! -s "$tarball" ]; then
	log "making the base root: debootstrap --variant=minbase --include=$INCLUDE $SUITE ($mirror)"
	b=$(mktemp -d /var/tmp/aorta-debootstrap.XXXXXX)
	if ! debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$b/root" "$mirror" > "$CACHE/debootstrap.log" 2>&1; then
		echo "check_clean_root: debootstrap failed; last lines of $CACHE/debootstrap.log:" >&2
		tail -n 20 "$CACHE/debootstrap.log" >&2
		rm -rf "$b"
		exit 1
	fi
	rm -f "$b"/root/var/cache/apt/archives/*.deb
	tar -C "$b/root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
	rm -rf "$b"
fi
if [ "$prepare" = 1 ]; then
	log "base root: $tarball ($(du -h "$tarball" | cut -f1))"
	exit 0
fi

# ---- this run's root -------------------------------------------------------
W=$(mktemp -d /var/tmp/aorta-clean-root.XXXXXX)
R=$W/root
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null
	done
	mounted=()
	if [ "$keep" = 1 ]; then
		echo "check_clean_root: root kept in $R" >&2
	else
		# never remove through a mount that failed to go
		if ! grep -q " $W/" /proc/mounts; then rm -rf "$W"; else echo "check_clean_root: $W still has mounts; not removed" >&2; fi
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mnt() { # mount ARGS... TARGET
	mount "$@" || { echo "check_clean_root: mount $* failed" >&2; exit 1; }
	mounted+=("${!#}")
}

mkdir -p "$R"
tar -C "$R" -xf "$tarball"
# apt reaches the mirror as the machine's apt does (its sources and settings)
rm -f "$R"/etc/apt/sources.list
cp -a /etc/apt/sources.list "$R"/etc/apt/ 2>/dev/null
for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	# Debian's own archives only; a third-party source needs a key the root lacks
	grep -qE 'debian\.org|debian/?( |$)' "$f" && cp -a "$f" "$R"/etc/apt/sources.list.d/
done
[ -s "$R"/etc/apt/sources.list ] || ls "$R"/etc/apt/sources.list.d/* >/dev/null 2>&1 ||
	echo "deb $mirror $SUITE main" > "$R"/etc/apt/sources.list
for f in /etc/apt/apt.conf.d/*; do
	grep -qE '^Acquire::(http|https)::Proxy|Check-Valid-Until|Check-Date' "$f" 2>/dev/null && cp -a "$f" "$R"/etc/apt/apt.conf.d/
done
cp -L /etc/resolv.conf "$R"/etc/resolv.conf
cp /etc/hosts "$R"/etc/hosts

# the project: a clone of the commit, ../shared beside it
log "cloning $sha into the root (/src/aorta), ../shared beside it"
git clone -q --no-hardlinks "$REPO" "$R/src/aorta" && git -C "$R/src/aorta" checkout -q --detach "$sha" ||
	{ echo "check_clean_root: clone failed" >&2; exit 1; }
mkdir -p "$R/src/shared"
cp -a "$SHARED"/. "$R/src/shared"/

mnt -t proc proc "$R/proc"
mnt -t sysfs sysfs "$R/sys"
mnt --bind /dev "$R/dev"
mnt -t devpts devpts "$R/dev/pts" -o newinstance,ptmxmode=0666
mnt -t tmpfs tmpfs "$R/dev/shm" -o size=4g
if [ "$aptcache" = 1 ]; then
	mkdir -p "$CACHE/apt-archives/partial"
	mnt --bind "$CACHE/apt-archives" "$R/var/cache/apt/archives"
fi

# in the root: a login-like environment, nothing of this machine's
inroot() { # LOGFILE COMMAND
	local logf=$1; shift
	chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "$*" > "$logf" 2>&1 < /dev/null
}
have_toolkit=$(chroot "$R" /bin/sh -c 'command -v nvcc || ls -d /usr/local/cuda 2>/dev/null' || true)
log "root $R: Debian $(cat "$R/etc/debian_version"), CUDA toolkit: ${have_toolkit:-absent}"

status=0
summary=()
step() { # NAME COMMAND: runs it in the root's clone, records its exit status and time
	local name=$1 cmd=$2 t0 rc
	t0=$(date +%s)
	log "$name: $cmd"
	inroot "$W/$name.log" "cd /src/aorta && $cmd"
	rc=$?
	local dt=$(($(date +%s) - t0))
	summary+=("$(printf '%-14s exit %3d  %5d s' "$name" "$rc" "$dt")")
	log "$name: exit $rc after $dt s (log $W/$name.log)"
	[ "$rc" -eq 0 ] || { status=1; tail -n 30 "$W/$name.log" | sed 's/^/    | /'; }
	return "$rc"
}

# The README's two commands exactly as written: the code block of the
# "Set-up" section that holds `make demo`.
mapfile -t cmds < <(awk '/^## / { s = /^## Set-up/ } s && /^```/ { if (inb && has) exit; inb = !inb; n = 0; next }
	s && inb { b[n++] = $0; if ($0 ~ /^make demo/) has = 1 }
	END { if (has) for (i = 0; i < n; i++) print b[i] }' \
	"$R/src/aorta/README.md" | sed 's/[[:space:]]*#.*//; /^[[:space:]]*$/d')
if [ "${cmds[0]:-}" != "make demo" ] || [ "${cmds[1]:-}" != "make test" ]; then
	echo "check_clean_root: README.md's set-up block is not 'make demo', 'make test' (found: ${cmds[*]:-nothing}); checking them anyway" >&2
fi
demo_cmd=${cmds[0]:-make demo}
test_cmd=${cmds[1]:-make test}

step demo "$demo_cmd"
if [ "$background" = 1 ]; then
	# a script's background job: job control off, so the job starts with
	# SIGINT and SIGQUIT ignored; setsid: no controlling terminal
	step test-bg "setsid bash -c '$test_cmd & wait \$!'"
	testlog=$W/test-bg.log
else
	step test "$test_cmd"
	testlog=$W/test.log
fi
tests_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$testlog" | tail -n 1)
grep '^FAILED: ' "$testlog" | sed 's/^/    /'

# the installed aorta from another folder: analyze, report (the plot plug-in
# from lib/aorta), train's default configuration (share/aorta), the man
# pages and completion in place; then removed without a trace
run_installed='cd /tmp && aorta analyze /src/aorta/data/h200x4/fsdp2_bs8 | tail -n 3 &&
	aorta report --log-dir /src/aorta/data/h200x4/aorta_ddp/torch_profiler --label ddp --output /tmp/aorta_rep | tail -n 1 &&
	test -s /tmp/aorta_rep/ddp_timeline.png && rm -rf /tmp/aorta_rep &&
	aorta train --check-config | grep -o "\"source\": \"[^\"]*\"" && command -v aorta'
if [ "$install" = 1 ]; then
	step install "make install PREFIX=/usr/local && ($run_installed) &&
		test -f /usr/local/share/man/man1/aorta-analyze.1 && test -f /usr/local/share/bash-completion/completions/aorta &&
		make uninstall PREFIX=/usr/local && hash -r && ! command -v aorta && ! test -e /usr/local/lib/aorta"
fi
if [ "$deb" = 1 ]; then
	step deb "make deb && apt-get install -y -qq ./build/aorta_*.deb && dpkg -s aorta | grep -E '^(Status|Version|Depends|Recommends|Suggests):' &&
		($run_installed) && test -f /usr/share/man/man1/aorta-analyze.1.gz && test -f /usr/share/bash-completion/completions/aorta &&
		apt-get purge -y -qq aorta && hash -r && ! command -v aorta && ! dpkg -s aorta 2>/dev/null | grep -q '^Status: install' &&
		! test -e /usr/lib/aorta && ! test -e /usr/share/aorta && ! test -e /usr/share/doc/aorta"
fi

echo
echo "== clean-root check of $sha (Debian $(cat "$R/etc/debian_version") minbase, CUDA toolkit ${have_toolkit:-absent}$([ "$background" = 1 ] && echo ', make test as a background job'))"
printf '  %s\n' "${summary[@]}"
echo "  make test summary: ${tests_line:-none (see $testlog)}"
[ "$status" -eq 0 ] && [ -n "$tests_line" ] && [[ "$tests_line" =~ \ 0\ failed ]] || status=1
[ "$keep" = 1 ] || [ "$status" -eq 0 ] || { keep=1; echo "  (root and logs kept for inspection: $W)"; }
exit "$status"
