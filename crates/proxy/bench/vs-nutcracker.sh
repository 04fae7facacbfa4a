#!/usr/bin/env bash
# ringwise-proxy side by side with twemproxy (nutcracker): same run, same
# pool of 4 memcached, same client load, on loopback, under every load
# generator.
#
#   crates/proxy/bench/vs-nutcracker.sh                 # the full matrix (~45 min)
#   GENERATORS=load CONNECTIONS=8 PIPELINES=1 MIXES=get VALUES=100 \
#       ROUNDS=1 RUN_SECONDS=2 IDLE=0 crates/proxy/bench/vs-nutcracker.sh
#
# Servers: 4 × `memcached -t 1 -m 256` (items up to 1 MB, its default), one
# nutcracker on a nutcracker.yml (ketama, fnv1a_64, auto_eject_hosts false,
# timeout 2000, server_connections 1; its default 16 KB mbufs, which chain
# for larger values) and one ringwise-proxy on the same file
# (`--nutcracker`), with PROXY_FLAGS: by default `--timeout 2000` and the
# proxy's own defaults (one worker thread), the configuration BENCHMARKS.md
# reports. Every process this script starts (servers through `setpriv
# --pdeathsig KILL --`, and each generator run) is killed by its PID on
# exit, failure included; any failure prints what failed.
#
# Generators (GENERATORS, each its own cells):
# - `load`: crates/proxy/examples/load.rs, redis-benchmark style: C
#   connections (one thread each), each sending P requests in one write
#   (pipelined) and reading their P answers before the next batch. Latency:
#   each batch's round trip, p99 over all batches (exact).
# - `memaslap`: libmemcached's memaslap (Debian names it `memcaslap`;
#   scripts/install-bench-deps installs it), C on libevent, one thread
#   (MEMASLAP_THREADS), concurrency C, one outstanding request per
#   connection: it has NO pipelining (strace: each connection's sendmsg
#   waits for its read; `--win_size` is the set of objects each connection
#   cycles through, not requests in flight). Its P > 1 is `--division P`:
#   multi-gets of P keys (gets only; sets stay single), and its throughput
#   counts keys. Latency: it prints min, max, mean, geometric mean, standard
#   deviation and a log2 histogram, no percentile; the p99 here is read off
#   that histogram (the bucket where 99 % of the requests are reached,
#   interpolated geometrically in it), so it has a factor-of-2 bucket's
#   resolution; the table also gives its mean. Its keys are its own
#   (16 bytes, its random characters), each connection cycling through a
#   window of objects (`--win_size`, KEYS / C of them rounded down to
#   thousands, at least 1k: it takes no less), set before got. With 100 KB
#   values that floor is 100 MB per connection, more than the pool holds
#   from 8 connections up: gets then miss (evicted objects), which the
#   table's "get misses" column shows.
#
# Cells: every GENERATORS × CONNECTIONS × PIPELINES × MIXES × VALUES. MIXES:
# `get` (90 % gets, 10 % sets) and `set` (90 % sets). VALUES in bytes; the
# key space is KEYS keys for values up to 10,000 bytes and KEYS_LARGE keys
# above (100 KB × 2,000 keys = 200 MB over the pool's 1 GB), warmed for
# `load` before each value's cells. Each cell: ROUNDS rounds of RUN_SECONDS
# against nutcracker and the proxy alternately (ABBA: odd rounds nutcracker
# first), medians over the rounds. CPU per request: the proxy's (or
# nutcracker's) own CPU time over the run (/proc/PID/stat utime + stime)
# divided by the requests answered.
#
# Memory per idle connection (IDLE connections, 0 skips it): a fresh
# nutcracker and a fresh proxy each get IDLE connections (never used; then,
# again fresh, used by one get each), VmRSS before and after, ÷ IDLE.
#
# Knobs (environment) and defaults:
#   GENERATORS="load memaslap" CONNECTIONS="1 8 32 128" PIPELINES="1 16"
#   MIXES="get set" VALUES="100 102400" ROUNDS=3 RUN_SECONDS=6 KEYS=100000
#   KEYS_LARGE=2000 IDLE=1000 PROXY_FLAGS="--timeout 2000"
#   MEMASLAP_THREADS=1 MEMASLAP=memcaslap (or memaslap) BASE_PORT=23300
#   NUTCRACKER=/usr/sbin/nutcracker OUT=<a new /tmp/vs-nutcracker.* dir>
#   NO_BUILD=1 (use target/release as it is)
#
# Prints a Markdown table, one row per generator × cell: medians of
# nutcracker and the proxy, the ratios proxy ÷ nutcracker of throughput,
# p99 and CPU per request, and a verdict: "ahead" when throughput ≥ 1× and
# p99 ≤ 1× (and no more error answers than nutcracker's), else what is
# behind. load.rs prints the first error answer of a run. Raw results in $OUT: runs.tsv (one line a
# run), cells.tsv (one line a cell, what the table shows; scripts/bench
# --summary reads it), memory.tsv, table.md, the servers' and generators'
# logs.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
GENERATORS=${GENERATORS:-"load memaslap"}
CONNECTIONS=${CONNECTIONS:-"1 8 32 128"}
PIPELINES=${PIPELINES:-"1 16"}
MIXES=${MIXES:-"get set"}
VALUES=${VALUES:-"100 102400"}
ROUNDS=${ROUNDS:-3}
RUN_SECONDS=${RUN_SECONDS:-6}
KEYS=${KEYS:-100000}
KEYS_LARGE=${KEYS_LARGE:-2000}
IDLE=${IDLE:-1000}
BASE_PORT=${BASE_PORT:-23300}
PROXY_FLAGS=${PROXY_FLAGS:-"--timeout 2000"}
MEMASLAP_THREADS=${MEMASLAP_THREADS:-1}
NUTCRACKER=${NUTCRACKER:-/usr/sbin/nutcracker}
OUT=${OUT:-$(mktemp -d /tmp/vs-nutcracker.XXXXXX)}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
mkdir -p "$OUT"

die() {
    echo "vs-nutcracker: $*" >&2
    exit 1
}
log() { echo "$*" >&2; }

# Any command that fails says so (errexit alone would end the script
# without a word); once, from the top-level shell.
on_error() { # $1 status, $2 line, $3 command
    [ "$BASH_SUBSHELL" -eq 0 ] || return 0
    echo "vs-nutcracker: line $2: exit $1 from: $3 (results so far: $OUT)" >&2
}
trap 'on_error "$?" "$LINENO" "$BASH_COMMAND"' ERR

# The processes started and not yet reaped: only these are killed on exit
# (a reaped PID may be another's by then).
PIDS=()
forget() { # $1 a reaped pid
    local keep=() pid
    for pid in "${PIDS[@]}"; do [ "$pid" = "$1" ] || keep+=("$pid"); done
    PIDS=("${keep[@]}")
}
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'echo "vs-nutcracker: interrupted (results so far: $OUT)" >&2; exit 130' INT
trap 'echo "vs-nutcracker: terminated (results so far: $OUT)" >&2; exit 143' TERM

# --- checks -----------------------------------------------------------------
for word in $GENERATORS; do
    case $word in
        load | memaslap) ;;
        *) die "GENERATORS: no generator '$word' (load, memaslap)" ;;
    esac
done
for word in $MIXES; do
    case $word in
        get | set) ;;
        *) die "MIXES: no mix '$word' (get: 90 % gets; set: 90 % sets)" ;;
    esac
done
for word in $CONNECTIONS $PIPELINES $VALUES $ROUNDS $RUN_SECONDS $KEYS $KEYS_LARGE $IDLE; do
    [[ $word =~ ^[0-9]+$ ]] || die "not a whole number: '$word' (CONNECTIONS, PIPELINES, VALUES, ROUNDS, RUN_SECONDS, KEYS, KEYS_LARGE, IDLE)"
done
for tool in memcached "$NUTCRACKER" setpriv jq getconf awk; do
    command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-test-deps)"
done
MEMASLAP_BIN=""
case " $GENERATORS " in
    *" memaslap "*)
        for tool in ${MEMASLAP:-memcaslap memaslap}; do
            if command -v "$tool" >/dev/null; then
                MEMASLAP_BIN=$(command -v "$tool")
                break
            fi
        done
        [ -n "$MEMASLAP_BIN" ] ||
            die "no memaslap (Debian's libmemcached-tools calls it memcaslap): run scripts/install-bench-deps, or leave it out of GENERATORS"
        ;;
esac
TICKS=$(getconf CLK_TCK)
NCPU=$(nproc)

# Descriptors: IDLE connections at once, or the largest CONNECTIONS (each
# also costs nutcracker and the proxy one), with room to spare.
max_conns=$IDLE
for c in $CONNECTIONS; do [ "$c" -le "$max_conns" ] || max_conns=$c; done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -gt $((2 * max_conns + 100)) ] ||
    die "ulimit -n $(ulimit -n) is too low for $max_conns connections (IDLE=$IDLE, CONNECTIONS=$CONNECTIONS)"

if [ "${NO_BUILD:-}" != 1 ]; then
    log "building (nice -n 10 cargo build --release -p ringwise-proxy --bins --examples)"
    (cd "$ROOT" && nice -n 10 cargo build --release -p ringwise-proxy --bins --examples) >&2
fi
PROXY=$TARGET_DIR/release/ringwise-proxy
LOAD=$TARGET_DIR/release/examples/load
[ -x "$PROXY" ] && [ -x "$LOAD" ] || die "no $PROXY or $LOAD (build them, or unset NO_BUILD)"

# --- processes ----------------------------------------------------------------
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { # $1 port, $2 pid that should listen there
    local i
    for i in $(seq 1 100); do
        port_free "$1" || return 0
        kill -0 "$2" 2>/dev/null || die "process $2 exited before listening on port $1 (logs in $OUT)"
        sleep 0.05
    done
    die "nothing listens on port $1 after 5 s"
}

NEXT_PORT=$BASE_PORT
take_port() {
    while ! port_free "$NEXT_PORT"; do NEXT_PORT=$((NEXT_PORT + 1)); done
    PORT=$NEXT_PORT
    NEXT_PORT=$((NEXT_PORT + 1))
}

# Each start_* sets PID (and PORT) of the started server.
start_memcached() {
    take_port
    setpriv --pdeathsig KILL -- memcached -u root -l 127.0.0.1 -p "$PORT" -U 0 -t 1 -m 256 \
        >"$OUT/memcached-$PORT.log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    wait_port "$PORT" "$PID"
}

MC_PORTS=()
MC_PIDS=()
for _ in 1 2 3 4; do
    start_memcached
    MC_PORTS+=("$PORT")
    MC_PIDS+=("$PID")
done

# One pool file; `listen:` is nutcracker's port (the proxy takes --listen).
write_yml() { # $1 listen port, $2 file
    {
        echo "bench:"
        echo "  listen: 127.0.0.1:$1"
        echo "  hash: fnv1a_64"
        echo "  distribution: ketama"
        echo "  auto_eject_hosts: false"
        echo "  timeout: 2000"
        echo "  server_connections: 1"
        echo "  servers:"
        local p
        for p in "${MC_PORTS[@]}"; do echo "    - 127.0.0.1:$p:1"; done
    } >"$2"
}

start_nutcracker() { # $1 name
    take_port
    local listen=$PORT
    write_yml "$listen" "$OUT/$1.yml"
    "$NUTCRACKER" -t -c "$OUT/$1.yml" >"$OUT/$1.check" 2>&1 || die "nutcracker -t: $(cat "$OUT/$1.check")"
    take_port
    local stats=$PORT
    setpriv --pdeathsig KILL -- "$NUTCRACKER" -c "$OUT/$1.yml" -o "$OUT/$1.log" \
        -p "$OUT/$1.pid" -s "$stats" -a 127.0.0.1 &
    PID=$!
    PIDS+=("$PID")
    PORT=$listen
    wait_port "$PORT" "$PID"
}

start_proxy() { # $1 name, $2 the yml
    take_port
    # shellcheck disable=SC2086 # PROXY_FLAGS is a list of words
    setpriv --pdeathsig KILL -- "$PROXY" --listen "127.0.0.1:$PORT" --nutcracker "$2" \
        $PROXY_FLAGS 2>"$OUT/$1.log" &
    PID=$!
    PIDS+=("$PID")
    local i
    for i in $(seq 1 100); do
        grep -q "listening on" "$OUT/$1.log" 2>/dev/null && return 0
        kill -0 "$PID" 2>/dev/null || die "ringwise-proxy exited: $(cat "$OUT/$1.log")"
        sleep 0.05
    done
    die "ringwise-proxy did not print 'listening on' in 5 s"
}

stop() { # $1 pid
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    forget "$1"
}

# Reads of our own processes only (never every /proc/*: a process that
# exits between the listing and the read would fail the read).
alive() { # $1 pid, $2 what
    [ -r "/proc/$1/stat" ] || die "$2 (pid $1) is gone (logs in $OUT)"
}
cpu_ticks() { # utime + stime of $1, all its threads (after the command's ")")
    local stat
    stat=$(<"/proc/$1/stat") || die "cannot read /proc/$1/stat"
    stat=${stat##*) }
    awk '{print $12 + $13}' <<<"$stat"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# All CPUs' busy ticks (user nice system irq softirq steal): read once,
# machine-wide.
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
now_s() { date +%s.%N; }
memcached_ticks() {
    local pid sum=0
    for pid in "${MC_PIDS[@]}"; do sum=$((sum + $(cpu_ticks "$pid"))); done
    echo "$sum"
}

# --- machine --------------------------------------------------------------
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "uncommitted in crates/proxy: $(git -C "$ROOT" status --short -- crates/proxy 2>/dev/null | wc -l) file(s)"
    echo "nproc: $NCPU"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "uptime before: $(uptime)"
    echo "nutcracker: $("$NUTCRACKER" -V 2>&1 | head -1)"
    echo "memcached: $(memcached -V)"
    [ -z "$MEMASLAP_BIN" ] || echo "memaslap: $MEMASLAP_BIN ($("$MEMASLAP_BIN" -V 2>&1 | head -1)), $MEMASLAP_THREADS thread(s)"
    echo "proxy flags: $PROXY_FLAGS"
    echo "cells: generators $GENERATORS; connections $CONNECTIONS; pipelines $PIPELINES; mixes $MIXES; values $VALUES B"
    echo "runs: $ROUNDS rounds of $RUN_SECONDS s per cell and server (ABBA); keys $KEYS ($KEYS_LARGE above 10,000 B)"
} | tee "$OUT/machine.txt" >&2

# --- memory per idle connection (fresh processes) ---------------------------
declare -A MEM
if [ "$IDLE" -gt 0 ]; then
    for mode in idle touch; do
        for target in nutcracker proxy; do
            if [ "$target" = nutcracker ]; then
                start_nutcracker "mem-$mode-nutcracker"
            else
                start_proxy "mem-$mode-proxy" "$OUT/mem-$mode-nutcracker.yml"
            fi
            server=$PID
            sleep 0.5
            before=$(rss_kb "$server")
            flags=(--target "127.0.0.1:$PORT" --idle "$IDLE" --seconds 600)
            [ "$mode" = touch ] && flags+=(--touch)
            "$LOAD" "${flags[@]}" >"$OUT/mem-$mode-$target.out" 2>&1 &
            holder=$!
            PIDS+=("$holder")
            for _ in $(seq 1 200); do
                grep -q opened "$OUT/mem-$mode-$target.out" && break
                kill -0 "$holder" 2>/dev/null || die "idle connections: $(cat "$OUT/mem-$mode-$target.out")"
                sleep 0.05
            done
            grep -q opened "$OUT/mem-$mode-$target.out" || die "idle connections not open after 10 s"
            sleep 1
            alive "$server" "$target"
            after=$(rss_kb "$server")
            stop "$holder"
            stop "$server"
            MEM[$mode-$target]=$(awk -v a="$after" -v b="$before" -v n="$IDLE" \
                'BEGIN {printf "%.0f", (a - b) * 1024 / n}')
            MEM[$mode-$target-rss]="$before -> $after"
            log "memory $mode $target: VmRSS $before -> $after kB over $IDLE connections: ${MEM[$mode-$target]} B each"
        done
    done
    printf 'mode\tnutcracker_bytes_per_conn\tproxy_bytes_per_conn\n' >"$OUT/memory.tsv"
    printf 'idle\t%s\t%s\ntouch\t%s\t%s\n' "${MEM[idle-nutcracker]}" "${MEM[idle-proxy]}" \
        "${MEM[touch-nutcracker]}" "${MEM[touch-proxy]}" >>"$OUT/memory.tsv"
fi

# --- the two proxies under load ---------------------------------------------
start_nutcracker nutcracker
NC_PORT=$PORT
NC_PID=$PID
start_proxy proxy "$OUT/nutcracker.yml"
PX_PORT=$PORT
PX_PID=$PID

keys_for() { # $1 value bytes
    if [ "$1" -gt 10000 ]; then echo "$KEYS_LARGE"; else echo "$KEYS"; fi
}
get_ratio() { # $1 mix
    if [ "$1" = get ]; then echo 0.9; else echo 0.1; fi
}

# Runs a generator in the background of this shell (never in a command
# substitution's subshell: its PID must be in this shell's PIDS, killed on
# exit like every other process) and waits for it; its stdout to $1,
# stderr to $1.err.
run_generator() { # $1 output file, then the command
    local out=$1 pid status=0
    shift
    "$@" >"$out" 2>"$out.err" &
    pid=$!
    PIDS+=("$pid")
    wait "$pid" || status=$?
    forget "$pid"
    [ "$status" -eq 0 ] || die "exit $status from: $* -- $(tail -c 600 "$out.err" "$out" 2>/dev/null)"
}

warm() { # $1 value bytes
    local keys
    keys=$(keys_for "$1")
    log "warming $keys keys of $1 B (through nutcracker: the same ring and servers)"
    run_generator "$OUT/warm-$1.json" "$LOAD" --target "127.0.0.1:$NC_PORT" --warm --seconds 0 \
        --keys "$keys" --value-bytes "$1"
    jq -e '.errors == 0' "$OUT/warm-$1.json" >/dev/null || die "warming failed: $(cat "$OUT/warm-$1.json")"
}

# memaslap's configuration: 16-byte keys, fixed values, the mix.
memaslap_cfg() { # $1 value bytes, $2 mix, $3 file
    local get
    get=$(get_ratio "$2")
    {
        echo "key"
        echo "16 16 1"
        echo "value"
        echo "$1 $1 1"
        echo "cmd"
        awk -v g="$get" 'BEGIN {printf "0 %.1f\n1 %.1f\n", 1 - g, g}'
    } >"$3"
}

# One run; writes "requests_per_s p99_us mean_us requests errors misses"
# to $8.result.
# load: errors are wrong or failed answers; misses, gets that found
# nothing. memaslap: errors are its verify failures (none: it does not
# verify here), misses its get_misses.
generate() { # $1 generator, $2 port, $3 conns, $4 pipeline, $5 mix, $6 value, $7 round, $8 out
    local keys
    keys=$(keys_for "$6")
    if [ "$1" = load ]; then
        run_generator "$8" "$LOAD" --target "127.0.0.1:$2" --connections "$3" --pipeline "$4" \
            --seconds "$RUN_SECONDS" --keys "$keys" --value-bytes "$6" \
            --get-ratio "$(get_ratio "$5")" --seed "$7"
        jq -r '[.requests_per_s, .p99_us, .p50_us, .requests, .errors, (.gets - .hits)] | @tsv' "$8" |
            tr '\t' ' ' >"$8.result"
        local first
        first=$(jq -r '.first_error // empty' "$8")
        [ -z "$first" ] || log "  errors on port $2; the first: $first"
        return
    fi
    local cfg=$OUT/memaslap-$6-$5.cfg window
    [ -s "$cfg" ] || memaslap_cfg "$6" "$5" "$cfg"
    # Its window takes thousands only ("1k" and up; "16" is refused).
    window=$((keys / $3 / 1000))
    [ "$window" -ge 1 ] || window=1
    local args=(-s "127.0.0.1:$2" -F "$cfg" -t "${RUN_SECONDS}s" -S "${RUN_SECONDS}s"
        -T "$MEMASLAP_THREADS" -c "$3" -w "${window}k")
    [ "$4" -le 1 ] || args+=(-d "$4")
    run_generator "$8" "$MEMASLAP_BIN" "${args[@]}"
    # The last "Total Statistics (N events)" block: its Avg and its Log2
    # Dist (row "K: a b c d" counts latencies in [2^(K-1), 2^K), [2^K,
    # 2^(K+1)), ... microseconds); the last line's TPS and Ops.
    awk '
        /^Run time:/ { for (i = 1; i <= NF; i++) { if ($i == "Ops:") ops = $(i + 1); if ($i == "TPS:") tps = $(i + 1) } }
        /^get_misses:/ { misses = $2 }
        /^verify_failed:/ { failed = $2 }
        /Total Statistics \(/ { total = 1; n = 0; split("", count); next }
        /Statistics \(/ { total = 0 }
        total && $1 == "Avg:" { avg = $2 }
        total && $1 ~ /^[0-9]+:$/ { k = $1 + 0; for (i = 2; i <= NF; i++) { count[k + i - 2] += $i; n += $i } }
        END {
            if (tps == "" || n == 0) { print "no statistics in the output" > "/dev/stderr"; exit 1 }
            want = 0.99 * n; sum = 0; p99 = 0
            for (k = 0; k <= 64; k++) {
                if (!(k in count) || count[k] == 0) continue
                if (sum + count[k] >= want) {
                    lo = (k == 0) ? 1 : 2 ^ (k - 1); f = (want - sum) / count[k]
                    p99 = lo * 2 ^ f; break
                }
                sum += count[k]
            }
            printf "%s %.1f %s %s %d %d\n", tps, p99, avg, ops, failed + 0, misses + 0
        }' "$8" >"$8.result"
}

printf 'generator\tconnections\tpipeline\tmix\tvalue_bytes\ttarget\tround\trequests_per_s\tp99_us\tp50_or_mean_us\trequests\terrors\tmisses\tcpu_us_per_req\tmemcached_cpu_us_per_req\tother_cpu_pct\tloadavg_before\tloadavg_after\n' \
    >"$OUT/runs.tsv"

run_one() { # $1 generator, $2 conns, $3 pipeline, $4 mix, $5 value, $6 target, $7 round
    local port pid
    if [ "$6" = nutcracker ]; then port=$NC_PORT pid=$NC_PID; else port=$PX_PORT pid=$PX_PID; fi
    alive "$pid" "$6"
    local la0 c0 m0 b0 t0 result c1 m1 b1 t1 la1
    local out=$OUT/run-$1-$2x$3-$4-$5-$6-$7.out
    la0=$(loadavg)
    c0=$(cpu_ticks "$pid")
    m0=$(memcached_ticks)
    b0=$(busy_ticks)
    t0=$(now_s)
    generate "$1" "$port" "$2" "$3" "$4" "$5" "$7" "$out"
    result=$(<"$out.result")
    alive "$pid" "$6"
    c1=$(cpu_ticks "$pid")
    m1=$(memcached_ticks)
    b1=$(busy_ticks)
    t1=$(now_s)
    la1=$(loadavg)
    local rps p99 p50 requests errors misses
    read -r rps p99 p50 requests errors misses <<<"$result"
    [ "${requests:-0}" -gt 0 ] 2>/dev/null || die "$1 answered no requests against $6: $(tail -c 600 "$out")"
    awk -v OFS='\t' -v g="$1" -v c="$2" -v p="$3" -v mix="$4" -v v="$5" -v t="$6" -v r="$7" \
        -v rps="$rps" -v p99="$p99" -v p50="$p50" -v n="$requests" -v e="$errors" -v m="$misses" \
        -v cpu=$((c1 - c0)) -v mc=$((m1 - m0)) -v busy=$((b1 - b0)) -v t0="$t0" -v t1="$t1" \
        -v hz="$TICKS" -v ncpu="$NCPU" -v la0="$la0" -v la1="$la1" 'BEGIN {
            wall = t1 - t0
            print g, c, p, mix, v, t, r, rps, p99, p50, n, e, m,
                sprintf("%.2f", cpu / hz * 1e6 / n), sprintf("%.2f", mc / hz * 1e6 / n),
                sprintf("%.1f", (busy - cpu - mc) / hz / wall / ncpu * 100), la0, la1 }' \
        >>"$OUT/runs.tsv"
    log "$(tail -1 "$OUT/runs.tsv")"
}

for value in $VALUES; do
    case " $GENERATORS " in *" load "*) warm "$value" ;; esac
    for generator in $GENERATORS; do
        for mix in $MIXES; do
            for pipeline in $PIPELINES; do
                for conns in $CONNECTIONS; do
                    for round in $(seq 1 "$ROUNDS"); do
                        if [ $((round % 2)) = 1 ]; then order="nutcracker proxy"; else order="proxy nutcracker"; fi
                        for target in $order; do
                            run_one "$generator" "$conns" "$pipeline" "$mix" "$value" "$target" "$round"
                        done
                    done
                done
            done
        done
    done
done

echo "uptime after: $(uptime)" | tee -a "$OUT/machine.txt" >&2

# --- the table --------------------------------------------------------------
# Per cell and server: the medians over the rounds; then proxy ÷ nutcracker.
awk -F'\t' -v OFS='\t' '
    function median(list,   n, v, i, j, t) {
        n = split(list, v, " ")
        for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
        return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    NR == 1 { next }
    {
        cell = $1 OFS $2 OFS $3 OFS $4 OFS $5
        if (!(cell in seen)) { seen[cell] = 1; order[++cells] = cell }
        k = cell SUBSEP $6
        rps[k] = rps[k] " " $8; p99[k] = p99[k] " " $9; p50[k] = p50[k] " " $10
        cpu[k] = cpu[k] " " $14; err[k] += $12; miss[k] += $13; req[k] += $11
    }
    END {
        print "generator", "connections", "pipeline", "mix", "value_bytes",
            "nutcracker_rps", "proxy_rps", "throughput_ratio", "nutcracker_p99_us", "proxy_p99_us",
            "p99_ratio", "nutcracker_cpu_us", "proxy_cpu_us", "cpu_ratio", "nutcracker_mean_us",
            "proxy_mean_us", "errors", "miss_pct", "verdict"
        for (i = 1; i <= cells; i++) {
            c = order[i]; n = c SUBSEP "nutcracker"; x = c SUBSEP "proxy"
            nr = median(rps[n]); xr = median(rps[x]); np = median(p99[n]); xp = median(p99[x])
            nc = median(cpu[n]); xc = median(cpu[x])
            tr = (nr > 0) ? xr / nr : 0; pr = (np > 0) ? xp / np : 0; cr = (nc > 0) ? xc / nc : 0
            # Error answers count as requests in the throughput: more of
            # them than nutcracker gave is behind, whatever the speed.
            behind = ""
            if (tr < 1) behind = "throughput"
            if (pr > 1) behind = behind (behind == "" ? "" : ", ") "p99"
            if (err[x] > err[n]) behind = behind (behind == "" ? "" : ", ") "errors"
            verdict = (behind == "") ? "ahead" : "behind: " behind
            mp = (req[n] + req[x] > 0) ? (miss[n] + miss[x]) * 100 / (req[n] + req[x]) : 0
            print c, sprintf("%.0f", nr), sprintf("%.0f", xr), sprintf("%.2f", tr), sprintf("%.1f", np),
                sprintf("%.1f", xp), sprintf("%.2f", pr), sprintf("%.2f", nc), sprintf("%.2f", xc),
                sprintf("%.2f", cr), sprintf("%.1f", median(p50[n])), sprintf("%.1f", median(p50[x])),
                err[n] " / " err[x], sprintf("%.1f", mp), verdict
        }
    }' "$OUT/runs.tsv" >"$OUT/cells.tsv"

{
    echo
    echo "ringwise-proxy ÷ nutcracker, medians of $ROUNDS rounds of $RUN_SECONDS s each (ABBA); $(cut -d' ' -f1-3 /proc/loadavg) load now; p99 of memaslap from its log2 histogram (± a factor-2 bucket), its middle latency column its mean (load: p50)."
    echo
    echo "| generator | conns | pipeline | mix | value | req/s nutcracker | req/s proxy | throughput × | p99 µs nutcracker | p99 µs proxy | p99 × | p50/mean µs nc / proxy | CPU µs/req nc / proxy (×) | errors nc / proxy | get misses | verdict |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' 'NR > 1 {
        pipe = ($3 == 1) ? "no" : (($1 == "memaslap") ? "multi-get " $3 : $3 " deep")
        mix = ($4 == "get") ? "90 % get" : "90 % set"
        value = ($5 >= 1024) ? sprintf("%g KB", $5 / 1024) : $5 " B"
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s (%s) | %s | %s %% | %s |\n",
            $1, $2, pipe, mix, value, $6, $7, $8, $9, $10, $11, $15, $16, $12, $13, $14, $17, $18, $19 }' \
        "$OUT/cells.tsv"
    if [ "$IDLE" -gt 0 ]; then
        echo
        echo "Memory per connection (fresh process, $IDLE connections, VmRSS after - before, / $IDLE):"
        echo
        echo "| connections | nutcracker | ringwise-proxy |"
        echo "|---|---|---|"
        echo "| idle (never used) | ${MEM[idle-nutcracker]} B (${MEM[idle-nutcracker-rss]} kB) | ${MEM[idle-proxy]} B (${MEM[idle-proxy-rss]} kB) |"
        echo "| idle after one get each | ${MEM[touch-nutcracker]} B (${MEM[touch-nutcracker-rss]} kB) | ${MEM[touch-proxy]} B (${MEM[touch-proxy-rss]} kB) |"
    fi
    echo
    echo "Raw results: $OUT"
} | tee "$OUT/table.md"
