#!/usr/bin/env bash
# Self-containment check of the single executable (default dist/svc; or pass a path).
#
# Copies the executable to a fresh temp dir and runs it with `env -i`, a fresh
# HOME and a PATH holding only symlinks to a few shell tools: no node, no
# node_modules, no npm cache. Where the kernel allows (root, `unshare -m`), the
# repository itself is also hidden behind an empty tmpfs for the run, so a stray
# read from the source tree cannot make the check pass by accident.
# Each step prints PASS, FAIL or SKIP (a subcommand that does not exist yet);
# the script stops with exit 1 at the first FAIL. CHECK_EXE_STRICT=1 turns SKIPs
# into FAILs once every command exists.
# Uses no node and no jq: JSON output is matched with grep/sed.
set -euo pipefail

# The median `svc --version` must stay under 3 × the median start of the same Node
# (`node -e 0`, measured just before, outside the sandbox) and never needs to beat
# 200 ms: the check is there to catch eagerly loaded subcommand modules (0.5–2 s
# on an idle machine), and a machine that is slow or busy slows both alike.
VERSION_MIN_BUDGET_MS=200
VERSION_FLOOR_FACTOR=3
VERSION_RUNS=7
# Once `svc serve` logs `stopped` it has closed everything: it must exit within this (polled every ~10 ms).
STOP_EXIT_BUDGET_MS=200
now_us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
median_of() { printf '%s\n' "$@" | sort -n | sed -n "$(($# / 2 + 1))p"; }

if [[ "${1:-}" != --inside ]]; then
  # ---- Outer part: build the sandbox, then run this same script inside it.
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  exe=$(realpath "${1:-$root/dist/svc}")
  [[ -x $exe ]] || { echo "FAIL  $exe is missing: run npm run build"; exit 1; }
  version=$(sed -n 's/^  "version": *"\([^"]*\)".*/\1/p' "$root/package.json")
  node_floor_ms=0
  if [[ -x $root/node_modules/.bin/node ]]; then
    floor=()
    for ((i = 0; i < VERSION_RUNS; i++)); do
      t0=$(now_us)
      "$root/node_modules/.bin/node" -e 0
      floor+=($((($(now_us) - t0) / 1000)))
    done
    node_floor_ms=$(median_of "${floor[@]}")
  fi
  work=$(mktemp -d /tmp/svc-check.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/bin" "$work/home" "$work/run"
  cp "$exe" "$work/run/svc"
  cp "${BASH_SOURCE[0]}" "$work/check-exe.sh"
  for tool in base64 bash env cat grep sed sort sleep timeout; do
    ln -s "$(command -v "$tool")" "$work/bin/$tool"
  done
  # Step 3b runs svc as nobody (when this runs as root) with a temp dir of its own.
  if command -v setpriv >/dev/null; then ln -s "$(command -v setpriv)" "$work/bin/setpriv"; fi
  mkdir -m 1777 "$work/tmp"
  chmod 711 "$work" "$work/run"
  chmod 755 "$work/run/svc"
  inner=(env -i "HOME=$work/home" "PATH=$work/bin" "SVC_VERSION=$version" "NODE_FLOOR_MS=$node_floor_ms"
    "CHECK_EXE_STRICT=${CHECK_EXE_STRICT:-0}" bash "$work/check-exe.sh" --inside "$work")
  echo "check-exe: $(du -m "$exe" | cut -f1) MB executable, sandbox $work"
  if [[ $(id -u) == 0 && $work/ != "$root"/* ]] && unshare -m true 2>/dev/null; then
    echo "check-exe: repository $root hidden behind an empty tmpfs during the run"
    unshare -m bash -c 'mount -t tmpfs -o size=1m none "$1" && shift && exec "$@"' _ "$root" "${inner[@]}"
  else
    echo "check-exe: NOTE cannot hide the repository (needs root, unshare -m, a sandbox outside it)"
    "${inner[@]}"
  fi
  exit $?
fi

# ---- Inner part: only $PATH tools, a fresh $HOME, the copied executable.
work=$2
svc="$work/run/svc"
data="$HOME/data"
log="$work/serve.log"
strict=${CHECK_EXE_STRICT:-0}
server_pid=""
cd "$work/run"

pass() { echo "PASS  $*"; }
fail() {
  echo "FAIL  $*"
  [[ -s $log ]] && { echo "---- svc serve log (last 40 lines)"; tail_log; }
  exit 1
}
skip() { if [[ $strict == 1 ]]; then fail "$* (CHECK_EXE_STRICT=1)"; else echo "SKIP  $*"; fi; }
tail_log() {
  local lines=()
  mapfile -t lines <"$log"
  local from=$((${#lines[@]} > 40 ? ${#lines[@]} - 40 : 0))
  printf '%s\n' "${lines[@]:from}"
}
cleanup() { [[ -n $server_pid ]] && kill -KILL "$server_pid" 2>/dev/null; return 0; }
trap cleanup EXIT

# First string value of "key" in a JSON document (good enough for flat CLI output).
json_str() { { grep -o "\"$1\"[[:space:]]*:[[:space:]]*\"[^\"]*\"" || true; } | sed -n '1s/.*:[[:space:]]*"\(.*\)"$/\1/p'; }
# Status code of GET http://127.0.0.1:$1$2 through bash's /dev/tcp (no curl needed).
http_status() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
    IFS=' ' read -r -t 5 _ code _ <&3 && echo "$code"
  ) 2>/dev/null
}
# A port nothing listens on, below the kernel's ephemeral range: a port from that range can be
# taken between this check and svc's bind by the client end of any connection (our own /healthz polls).
free_port() {
  local p low=32768
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  ((low > 12000)) || low=32768
  for _ in {1..50}; do
    p=$((10000 + RANDOM % (low - 10000)))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  return 1
}
help_text=""
has_cmd() { grep -Eq "^  $1( |$)" <<<"$help_text"; }
run() { timeout 60 "$svc" "$@"; }

# 1. Nothing to fall back on.
if command -v node >/dev/null 2>&1; then fail "node is reachable on PATH: $(command -v node)"; fi
pass "no node on PATH ($PATH), HOME=$HOME, env: $(env | grep -c .) variables"

# 2. --version: right answer, and fast (subcommand modules must load lazily).
out=$(run --version) || fail "svc --version exited $?"
[[ $out == "$SVC_VERSION" ]] || fail "svc --version printed '$out', package.json says '$SVC_VERSION'"
times=()
for ((i = 0; i < VERSION_RUNS; i++)); do
  t0=$(now_us)
  run --version >/dev/null
  times+=($((($(now_us) - t0) / 1000)))
done
median=$(median_of "${times[@]}")
budget=$((NODE_FLOOR_MS * VERSION_FLOOR_FACTOR))
((budget > VERSION_MIN_BUDGET_MS)) || budget=$VERSION_MIN_BUDGET_MS
((median < budget)) ||
  fail "svc --version median ${median} ms >= ${budget} ms (max of ${VERSION_MIN_BUDGET_MS} and ${VERSION_FLOOR_FACTOR} × node -e 0 at ${NODE_FLOOR_MS} ms; runs: ${times[*]} ms)"
pass "svc --version = $out, median ${median} ms, budget ${budget} ms (node -e 0: ${NODE_FLOOR_MS} ms; runs: ${times[*]} ms)"

help_text=$(run --help) || fail "svc --help exited $?"
pass "svc --help"

# 3. init: creates the database (migrations read from inside the executable).
if ! has_cmd init; then
  skip "svc init (not in svc --help yet)"
else
  t0=$(now_us)
  out=$(run init --data-dir "$data" --email a@example.com --password 'pw-123456789' --json) ||
    fail "svc init exited $?: $out"
  project=$(json_str project_id <<<"$out")
  [[ -n $project ]] || fail "svc init --json has no project_id: $out"
  pass "svc init in $((($(now_us) - t0) / 1000)) ms, project $project"
fi

# 3b. A user with no writable home (a service account's HOME=/nonexistent): the SQLite addon is
# extracted under the temp dir instead of ~/.cache. Root may write anywhere: run as nobody then.
if has_cmd init; then
  as_user=()
  if ((EUID == 0)); then
    command -v setpriv >/dev/null || fail "no setpriv to run svc as an unprivileged user"
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  fi
  out=$("${as_user[@]}" env HOME=/nonexistent TMPDIR="$work/tmp" timeout 60 "$svc" init --data-dir "$work/tmp/no-home" \
    --email a@example.com --password 'pw-123456789' --json 2>&1) || fail "svc init with HOME=/nonexistent exited $?: $out"
  addon=("$work"/tmp/svc-*-native/pkg/*/*.node)
  [[ -f ${addon[0]} ]] || fail "svc init with HOME=/nonexistent extracted no addon under TMPDIR=$work/tmp"
  pass "svc init with HOME=/nonexistent$( ((EUID == 0)) && echo ' as nobody'): the SQLite addon in ${addon[0]#"$work"/}"
fi

# One SMTP reply from fd 3 (its last line, "NNN text"), within 10 s.
smtp_reply() {
  local line
  while IFS= read -r -t 10 line <&3; do
    line=${line%$'\r'}
    [[ $line =~ ^[0-9]{3}- ]] && continue
    printf '%s\n' "$line"
    return 0
  done
  printf 'no reply\n'
}

# A relay session on port $1 with key $2: AUTH PLAIN, one message; prints the reply to its final dot.
relay_send() {
  local auth r
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  auth=$(printf '\0apikey\0%s' "$2" | base64 -w0)
  smtp_reply >/dev/null
  for cmd in 'EHLO check.test' "AUTH PLAIN $auth" 'MAIL FROM:<a@example.com>' 'RCPT TO:<b@example.com>' 'DATA'; do
    printf '%s\r\n' "$cmd" >&3
    r=$(smtp_reply)
    [[ $r =~ ^(2|3) ]] || { printf '%s: %s\n' "$cmd" "$r"; exec 3>&-; return 0; }
  done
  printf 'From: a@example.com\r\nTo: b@example.com\r\nSubject: relay\r\n\r\nhello\r\n.\r\n' >&3
  smtp_reply
  printf 'QUIT\r\n' >&3
  exec 3>&-
}

# 4. serve: HTTP and the SMTP relay up, then admin and client commands against them.
if ! has_cmd serve || [[ -z ${project:-} ]]; then
  skip "svc serve (not in svc --help yet, or no project from init)"
else
  port=$(free_port) || fail "no free TCP port found"
  smtp_port=$(free_port) || fail "no free TCP port found"
  "$svc" serve --data-dir "$data" --http-port "$port" --smtp-port "$smtp_port" >"$log" 2>&1 &
  server_pid=$!
  t0=$(now_us)
  for ((i = 0; i < 300; i++)); do
    [[ $(http_status "$port" /healthz) == 200 ]] && break
    kill -0 "$server_pid" 2>/dev/null || { wait "$server_pid" && rc=0 || rc=$?; server_pid=""; fail "svc serve exited $rc before /healthz answered"; }
    sleep 0.1
  done
  [[ $(http_status "$port" /healthz) == 200 ]] || fail "GET /healthz on port $port did not answer 200 within 30 s"
  pass "svc serve: GET /healthz 200 after $((($(now_us) - t0) / 1000)) ms on port $port"

  if ! has_cmd keys; then
    skip "svc keys create (not in svc --help yet)"
  else
    out=$(run keys create --data-dir "$data" --project "$project" --name k2 --env TEST --json) ||
      fail "svc keys create exited $?: $out"
    key=$(json_str key <<<"$out")
    [[ $key == svc_test_* ]] || fail "svc keys create --json has no TEST key: $out"
    pass "svc keys create: ${key:0:13}..."
  fi

  if ! has_cmd send || [[ -z ${key:-} ]]; then
    skip "svc send (not in svc --help yet, or no key)"
  else
    out=$(run send --server "http://127.0.0.1:$port" --api-key "$key" --from a@example.com \
      --to b@example.com --subject hi --text hello --json) || fail "svc send exited $?: $out"
    [[ $(json_str status <<<"$out") == SIMULATED ]] || fail "svc send: status is not SIMULATED: $out"
    pass "svc send: status SIMULATED, id $(json_str id <<<"$out")"
    out=$(relay_send "$smtp_port" "$key") || fail "the SMTP relay on port $smtp_port did not answer"
    [[ $out =~ ^250\ 2\.6\.0\ Ok:\ queued\ as ]] || fail "the SMTP relay did not take a message: $out"
    pass "SMTP relay: $out"
  fi

  # svc top: a snapshot of the data dir, the same through the server with a READ_ONLY key,
  # and the Ink live view (yoga's wasm from inside the executable) in a pseudo-terminal.
  if ! has_cmd top || [[ -z ${key:-} ]]; then
    skip "svc top (not in svc --help yet, or no key)"
  else
    out=$(run top --data-dir "$data" --json) || fail "svc top --json exited $?: $out"
    [[ $out == *'"simulated": 2'* && $out == *'"nodes": 1'* ]] ||
      fail "svc top --json does not show the 2 simulated emails and the running server: $out"
    ro=$(run keys create --data-dir "$data" --project "$project" --name top --env TEST --permissions READ_ONLY --json) ||
      fail "svc keys create READ_ONLY exited $?: $ro"
    out=$(run top --server "http://127.0.0.1:$port" --api-key "$(json_str key <<<"$ro")") ||
      fail "svc top --server exited $?: $out"
    [[ $out == *"project $project"* ]] || fail "svc top --server does not show the key's project: $out"
    if [[ -x /usr/bin/script ]]; then
      screen=$( (sleep 3; printf q) | SVC_DATA_DIR="$data" timeout 20 /usr/bin/script -qfec "stty cols 80 rows 24; $svc top" /dev/null) ||
        fail "svc top in a terminal exited $?: ${screen: -300}"
      [[ $screen == *'latest emails'* && $screen == *'svc top — '* ]] || fail "svc top drew no live view: ${screen: -300}"
      pass "svc top: snapshot, --server with a READ_ONLY key, and the live view in a pseudo-terminal"
    else
      pass "svc top: snapshot and --server with a READ_ONLY key (no util-linux script for the live view)"
    fi
  fi

  # Everything is closed once it logs `stopped`: the process must be gone right after.
  kill -TERM "$server_pid"
  t0=$(now_us)
  stopped_at=""
  for ((i = 0; i < 1500; i++)); do
    [[ -z $stopped_at ]] && grep -q '"msg":"stopped"' "$log" && stopped_at=$(now_us)
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.01
  done
  exited_at=$(now_us)
  kill -0 "$server_pid" 2>/dev/null && fail "svc serve still running 15 s after SIGTERM"
  wait "$server_pid" && rc=0 || rc=$?
  server_pid=""
  ((rc == 0)) || fail "svc serve exited $rc after SIGTERM (want 0)"
  grep -q '"msg":"stopped"' "$log" || fail "svc serve exited without logging stopped"
  # Seen only after the exit: both fell within one poll.
  after_stopped=$(((exited_at - ${stopped_at:-$exited_at}) / 1000))
  ((after_stopped < STOP_EXIT_BUDGET_MS)) ||
    fail "svc serve exited ${after_stopped} ms after logging stopped (budget ${STOP_EXIT_BUDGET_MS} ms)"
  pass "svc serve stopped on SIGTERM with exit 0 in $(((exited_at - t0) / 1000)) ms, ${after_stopped} ms after logging stopped"
fi

echo "check-exe: all steps passed"
