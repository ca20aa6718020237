# Sourced by local-cluster.sh and netem-cluster.sh: the flags every worker
# they start gets, given how the workers trust the hub and the hub's flags.
#   worker_trust_flags FLAG VALUE -- HUB_ARGS...
# sets the array `trust`: FLAG VALUE (how to trust the hub's TLS
# certificate), or --insecure when the hub runs with it; plus --allow-data
# DIR when the hub is given --dataset DIR, a directory the workers here may
# open.
worker_trust_flags() {
  trust=("$1" "$2")
  shift 3
  local a prev=""
  for a in "$@"; do
    if [ "$a" = --insecure ]; then trust=(--insecure); fi
  done
  for a in "$@"; do
    if [ "$prev" = --dataset ] && [ -d "$a" ]; then trust+=(--allow-data "$a"); fi
    prev=$a
  done
}
