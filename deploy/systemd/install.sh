#!/usr/bin/env bash
# Installs mthub and mtworker as systemd services, and mtmodel beside them
# (docs/operations.md):
#   deploy/systemd/install.sh [--build-dir DIR] [--prefix DIR] [--root DIR] [--dry-run]
#   --build-dir DIR  where they were built (default: build/ in the repository;
#                    a relative DIR is taken from the current directory)
#   --prefix DIR     binaries go to DIR/bin, and the units run them from
#                    there (default /usr/local)
#   --root DIR       install under DIR instead of / (a staging tree or an
#                    image); systemctl daemon-reload is then not run
#   --dry-run        print what would be done, change nothing
# Installs DIR/bin/{mthub,mtworker,mtmodel}, /etc/systemd/system/{mthub,mtworker,
# mtworker@}.service (replacing ours; local changes belong in drop-ins) and
# /etc/mt/{mthub,mtworker}.env (only where they do not exist yet), then runs
# systemctl daemon-reload if systemd is running. Needs root, except with
# --dry-run or a --root you may write. Exit codes: 0 done, 1 failed, 2 bad
# command line.
set -Eeuo pipefail
trap 'echo "install.sh: failed (line $LINENO): $BASH_COMMAND" >&2' ERR

args=("$@")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build"
prefix=/usr/local
root=
dry=0

usage_error() { echo "install.sh: $*" >&2; echo "usage: deploy/systemd/install.sh [--build-dir DIR] [--prefix DIR] [--root DIR] [--dry-run] (see --help)" >&2; exit 2; }
die() { echo "install.sh: $*" >&2; exit 1; }
need_value() { [ $# -ge 2 ] && [ -n "$2" ] && [ "${2#--}" = "$2" ] || usage_error "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) need_value "$@"; build=$2; shift 2 ;;
    --build-dir=*) build=${1#*=}; shift ;;
    --prefix) need_value "$@"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --root) need_value "$@"; root=$2; shift 2 ;;
    --root=*) root=${1#*=}; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) usage_error "unknown option $1" ;;
  esac
done

case "$prefix" in
  /*) ;;
  *) usage_error "--prefix must be an absolute path (the units run the binaries from it), got '$prefix'" ;;
esac
case "$prefix" in
  *[[:space:]%\$\\]*) usage_error "--prefix '$prefix' has a character systemd's ExecStart= would misread (space, %, \$ or \\)" ;;
esac
prefix=${prefix%/}
[ -n "$prefix" ] || prefix=/
case "$prefix" in
  /home|/home/*|/root|/root/*|/run/user|/run/user/*)
    usage_error "--prefix $prefix is hidden from the services (ProtectHome=yes); use /usr/local or /opt/..." ;;
esac
if [ -n "$root" ]; then
  root=$(realpath -m "$root")
  [ "$root" != / ] || root=
fi
bindir="${prefix%/}/bin"

# The binaries: present, and they run.
for b in hub/mthub worker/mtworker modeltool/mtmodel; do
  [ -f "$build/$b" ] && [ -x "$build/$b" ] ||
    die "$build/$b not found or not executable (build first: deploy/build.sh, or give --build-dir)"
  timeout 20 "$build/$b" --help >/dev/null 2>&1 ||
    die "$build/$b --help failed; is it built for this machine? (try: $build/$b --help)"
done
for f in mthub.service mtworker.service mtworker@.service mthub.env mtworker.env; do
  [ -f "$here/$f" ] || die "$here/$f is missing"
done

if [ $dry -eq 0 ] && [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then
  die "installing to the system needs root: sudo $0${args[*]:+ ${args[*]}} (or --dry-run to see what it would do)"
fi

# run CMD...: do it, or with --dry-run only say it.
run() {
  if [ $dry -eq 1 ]; then
    printf 'would run:'; printf ' %q' "$@"; printf '\n'
  else
    "$@" || die "failed: $*"
  fi
}

echo "install.sh: from $build to ${root:-/} (binaries in $bindir)"
[ $dry -eq 1 ] && echo "install.sh: dry run, nothing is changed"

run install -d -m 0755 "$root$bindir" "$root/etc/systemd/system" "$root/etc/mt"
# install(1) replaces the file (new inode), so running services keep their
# old binary until they restart.
run install -m 0755 "$build/hub/mthub" "$root$bindir/mthub"
run install -m 0755 "$build/worker/mtworker" "$root$bindir/mtworker"
run install -m 0755 "$build/modeltool/mtmodel" "$root$bindir/mtmodel"  # models: info, convert, eval

for u in mthub.service mtworker.service mtworker@.service; do
  dest="$root/etc/systemd/system/$u"
  if [ "$bindir" = /usr/local/bin ]; then
    run install -m 0644 "$here/$u" "$dest"
  elif [ $dry -eq 1 ]; then
    echo "would write $dest with /usr/local/bin replaced by $bindir"
  else
    tmp=$(mktemp "$root/etc/systemd/system/.$u.XXXXXX")
    sed "s|/usr/local/bin/|$bindir/|g" "$here/$u" >"$tmp"
    chmod 0644 "$tmp"
    mv -f "$tmp" "$dest"
  fi
done

# The env files are the operator's: an existing one is kept. 0600: they may
# hold the secret (MT_TOKEN).
for e in mthub.env mtworker.env; do
  dest="$root/etc/mt/$e"
  if [ -e "$dest" ]; then
    if cmp -s "$here/$e" "$dest"; then
      echo "kept $dest (same as the example)"
    else
      echo "kept $dest (yours; the current example is $here/$e)"
    fi
  else
    run install -m 0600 "$here/$e" "$dest"
  fi
done

# daemon-reload only where systemd is PID 1 (it creates /run/systemd/system,
# as sd_booted(3) checks), and for the real root.
reloaded=0
if [ -z "$root" ] && [ -d /run/systemd/system ]; then
  if command -v systemctl >/dev/null 2>&1; then
    run systemctl daemon-reload
    [ $dry -eq 1 ] || echo "ran systemctl daemon-reload"
    reloaded=1
  fi
fi
if [ $reloaded -eq 0 ]; then
  if [ -n "$root" ]; then
    echo "not running systemctl daemon-reload: installed under --root $root"
  else
    echo "not running systemctl daemon-reload: systemd is not running here (PID 1 is $(ps -p 1 -o comm= 2>/dev/null || echo unknown))"
  fi
fi

cat <<EOF

Next:
  edit /etc/mt/mthub.env (the run: --workers, --model, --dataset, --epochs ...)
  edit /etc/mt/mtworker.env (--hub HOST:PORT, --threads, --device ...)
  systemctl enable --now mthub                 # on the hub machine
  systemctl enable --now mtworker              # on each device; or several here:
  systemctl enable --now mtworker@cpu0 mtworker@cpu1
  journalctl -u mthub -f                       # logs; -u 'mtworker*' for workers
  systemd-analyze security mthub mtworker      # the sandbox, scored
EOF
