#!/usr/bin/env bash
# ringwise-proxy side by side with twemproxy (nutcracker), same run, same
# pool, same client load, on loopback.
#
#   crates/proxy/bench/vs-nutcracker.sh            # the full run (~9 min)
#   ROUNDS=1 RUN_SECONDS=2 LOADS="8x16" crates/proxy/bench/vs-nutcracker.sh
#
# Starts 4 memcached, one nutcracker on a nutcracker.yml (ketama, fnv1a_64,
# auto_eject_hosts false, timeout 2000, server_connections 1) and one
# ringwise-proxy on the same file (--nutcracker); every server runs through
# `setpriv --pdeathsig KILL --` and is killed by its PID on exit, failure
# included. Then, for each load CONNECTIONSxPIPELINE, runs the load
# generator (crates/proxy/examples/load.rs) against nutcracker and the
# proxy alternately (ABBA order across rounds), ROUNDS rounds of
# RUN_SECONDS each, and reads each proxy's CPU time (/proc/PID/stat utime +
# stime, CLK_TCK ticks) and VmRSS around every run. Memory per idle
# connection: a fresh nutcracker and a fresh proxy each get IDLE
# connections (never used; then, again fresh, used by one get each), VmRSS
# before and after, divided by IDLE.
#
# Knobs (environment): LOADS, ROUNDS, RUN_SECONDS, KEYS, VALUE_BYTES,
# GET_RATIO, IDLE, BASE_PORT, PROXY_FLAGS, NUTCRACKER, OUT (results dir).
# Prints a Markdown table; raw results in $OUT (runs.tsv, runs.jsonl, logs).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
LOADS=${LOADS:-"1x1 8x1 32x1 1x16 8x16 32x16"}
ROUNDS=${ROUNDS:-3}
RUN_SECONDS=${RUN_SECONDS:-10}
KEYS=${KEYS:-100000}
VALUE_BYTES=${VALUE_BYTES:-100}
GET_RATIO=${GET_RATIO:-0.9}
IDLE=${IDLE:-1000}
BASE_PORT=${BASE_PORT:-23300}
PROXY_FLAGS=${PROXY_FLAGS:-"--threads 2 --server-connections 2 --timeout 2000"}
NUTCRACKER=${NUTCRACKER:-/usr/sbin/nutcracker}
OUT=${OUT:-$(mktemp -d /tmp/vs-nutcracker.XXXXXX)}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
mkdir -p "$OUT"

PIDS=()
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

die() { echo "vs-nutcracker: $*" >&2; exit 1; }
log() { echo "$*" >&2; }

for tool in memcached "$NUTCRACKER" setpriv jq getconf; do
    command -v "$tool" >/dev/null || die "$tool is not installed"
done
TICKS=$(getconf CLK_TCK)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -gt $((IDLE + 100)) ] || die "ulimit -n $(ulimit -n) is too low for IDLE=$IDLE"

log "building (cargo build --release -p ringwise-proxy --bins --examples)"
(cd "$ROOT" && cargo build --release -p ringwise-proxy --bins --examples) >&2
PROXY=$TARGET_DIR/release/ringwise-proxy
LOAD=$TARGET_DIR/release/examples/load
[ -x "$PROXY" ] && [ -x "$LOAD" ] || die "no $PROXY or $LOAD after the build"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
    local i
    for i in $(seq 1 100); do
        port_free "$1" || return 0
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
    wait_port "$PORT"
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
    wait_port "$PORT"
}

start_proxy() { # $1 name, $2 the yml
    take_port
    # shellcheck disable=SC2086
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
}

cpu_ticks() { # utime + stime of $1 (comm has no spaces here)
    awk '{print $14 + $15}' "/proc/$1/stat"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# All CPUs' busy ticks (user nice system irq softirq steal) and now, in s.
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
now_s() { date +%s.%N; }
# "pid comm ticks" of every process (utime + stime, all its threads).
proc_ticks() {
    cat /proc/[0-9]*/stat 2>/dev/null | awk '{
        p = index($0, "("); q = match($0, /\) [A-Z] /)
        n = split(substr($0, q + 2), f, " ")
        if (q > 0 && n >= 13) print $1, substr($0, p + 1, q - p - 1), f[12] + f[13] }'
}
# The processes other than this benchmark's that used CPU between two
# proc_ticks snapshots: "ticks pid comm", most first (processes that
# started and ended in between are not seen).
foreign() { # $1 before, $2 after
    awk -v ours=" ${PIDS[*]} " 'NR == FNR {t[$1] = $3; next}
        index(ours, " " $1 " ") == 0 && $2 != "load" && $2 != "vs-nutcracker.s" {
            d = $3 - (($1 in t) ? t[$1] : 0); if (d > 0) print d, $1, $2 }' "$1" "$2" | sort -rn
}

# --- machine --------------------------------------------------------------
{
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "uncommitted in crates/proxy/src: $(git -C "$ROOT" status --short -- crates/proxy/src 2>/dev/null | wc -l) file(s)"
    echo "nproc: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "uptime before: $(uptime)"
    echo "nutcracker: $("$NUTCRACKER" -V 2>&1 | head -1)"
    echo "memcached: $(memcached -V)"
    echo "proxy flags: $PROXY_FLAGS"
    echo "load: keys $KEYS, value $VALUE_BYTES B, get ratio $GET_RATIO, $RUN_SECONDS s x $ROUNDS rounds"
} | tee "$OUT/machine.txt" >&2

# --- memory per idle connection (fresh processes) ---------------------------
declare -A MEM
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
        after=$(rss_kb "$server")
        stop "$holder"
        stop "$server"
        MEM[$mode-$target]=$(awk -v a="$after" -v b="$before" -v n="$IDLE" \
            'BEGIN {printf "%.0f", (a - b) * 1024 / n}')
        MEM[$mode-$target-rss]="$before -> $after"
        log "memory $mode $target: VmRSS $before -> $after kB over $IDLE connections: ${MEM[$mode-$target]} B each"
    done
done

# --- the two proxies under load ---------------------------------------------
start_nutcracker nutcracker
NC_PORT=$PORT
NC_PID=$PID
start_proxy proxy "$OUT/nutcracker.yml"
PX_PORT=$PORT
PX_PID=$PID

log "warming $KEYS keys"
"$LOAD" --target "127.0.0.1:$NC_PORT" --warm --seconds 0 --keys "$KEYS" \
    --value-bytes "$VALUE_BYTES" >>"$OUT/warm.jsonl"
jq -e '.errors == 0' "$OUT/warm.jsonl" >/dev/null || die "warming failed: $(cat "$OUT/warm.jsonl")"

printf 'load\ttarget\tround\trequests_per_s\tp50_us\tp99_us\tp999_us\terrors\tcpu_us_per_req\trss_kb\tmemcached_cpu_us_per_req\tloadavg_before\tloadavg_after\tclient_cpu_us_per_req\tother_cpu_pct\tforeign_cpu_pct\n' \
    >"$OUT/runs.tsv"

memcached_ticks() {
    local pid sum=0
    for pid in "${MC_PIDS[@]}"; do sum=$((sum + $(cpu_ticks "$pid"))); done
    echo "$sum"
}

run_one() { # $1 load, $2 target, $3 round
    local conns=${1%x*} depth=${1#*x} port pid
    if [ "$2" = nutcracker ]; then port=$NC_PORT pid=$NC_PID; else port=$PX_PORT pid=$PX_PID; fi
    local la0 c0 m0 b0 t0 line c1 m1 b1 t1 la1 rss
    la0=$(loadavg)
    c0=$(cpu_ticks "$pid")
    m0=$(memcached_ticks)
    proc_ticks >"$OUT/ps.before"
    b0=$(busy_ticks)
    t0=$(now_s)
    line=$("$LOAD" --target "127.0.0.1:$port" --connections "$conns" --pipeline "$depth" \
        --seconds "$RUN_SECONDS" --keys "$KEYS" --value-bytes "$VALUE_BYTES" \
        --get-ratio "$GET_RATIO" --seed "$3")
    c1=$(cpu_ticks "$pid")
    m1=$(memcached_ticks)
    b1=$(busy_ticks)
    t1=$(now_s)
    proc_ticks >"$OUT/ps.after"
    local others
    others=$(foreign "$OUT/ps.before" "$OUT/ps.after")
    { echo "== $1 $2 round $3"; echo "$others" | head -5; } >>"$OUT/foreign.txt"
    local foreign_ticks
    foreign_ticks=$(echo "$others" | awk '{s += $1} END {print s + 0}')
    la1=$(loadavg)
    rss=$(rss_kb "$pid")
    echo "$line" | jq -c --arg name "$2" --arg load "$1" --argjson round "$3" \
        '. + {name: $name, load: $load, round: $round}' >>"$OUT/runs.jsonl"
    echo "$line" | jq -r --arg load "$1" --arg name "$2" --argjson round "$3" \
        --argjson cpu "$((c1 - c0))" --argjson mc "$((m1 - m0))" --argjson ticks "$TICKS" \
        --argjson rss "$rss" --arg la0 "$la0" --arg la1 "$la1" \
        --argjson busy "$((b1 - b0))" --argjson wall "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
        --argjson ncpu "$(nproc)" --argjson foreign "$foreign_ticks" \
        '[$load, $name, $round, .requests_per_s, .p50_us, .p99_us, .p999_us, .errors,
          ($cpu / $ticks * 1e6 / .requests * 100 | round / 100),
          $rss, ($mc / $ticks * 1e6 / .requests * 100 | round / 100), $la0, $la1,
          (.client_cpu_ticks / $ticks * 1e6 / .requests * 100 | round / 100),
          (($busy - $cpu - $mc - .client_cpu_ticks) / $ticks / $wall / $ncpu * 1000 | round / 10),
          ($foreign / $ticks / $wall / $ncpu * 1000 | round / 10)]
         | @tsv' \
        >>"$OUT/runs.tsv"
    log "$(tail -1 "$OUT/runs.tsv")"
}

for load in $LOADS; do
    for round in $(seq 1 "$ROUNDS"); do
        if [ $((round % 2)) = 1 ]; then order="nutcracker proxy"; else order="proxy nutcracker"; fi
        for target in $order; do run_one "$load" "$target" "$round"; done
    done
done

echo "uptime after: $(uptime)" | tee -a "$OUT/machine.txt" >&2
[ -s "$OUT/nutcracker.log" ] && cp "$OUT/nutcracker.log" "$OUT/nutcracker-final.log"

# --- the table --------------------------------------------------------------
# Per load and target: the median over rounds, and [min-max] for req/s and
# p99; the ratio rows are proxy / nutcracker of the medians.
stats() { # column number, load, target -> "median min max"
    awk -F'\t' -v c="$1" -v l="$2" -v t="$3" 'NR > 1 && $1 == l && $2 == t {print $c}' "$OUT/runs.tsv" |
        sort -g | awk '{v[NR] = $1} END {
            if (NR == 0) { print "0 0 0"; exit }
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            print m, v[1], v[NR] }'
}
{
    echo
    echo "| load (conns x pipeline) | target | req/s median [min-max] | p50 us | p99 us median [min-max] | p999 us | errors | proxy CPU us/req | memcached CPU us/req | load-gen CPU us/req | RSS kB | other CPU % max | foreign CPU % max |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for load in $LOADS; do
        declare -A MED=()
        for target in nutcracker proxy; do
            read -r rps rmin rmax < <(stats 4 "$load" "$target")
            read -r p50 _ _ < <(stats 5 "$load" "$target")
            read -r p99 qmin qmax < <(stats 6 "$load" "$target")
            read -r p999 _ _ < <(stats 7 "$load" "$target")
            read -r _ _ errs < <(stats 8 "$load" "$target")
            read -r cpu _ _ < <(stats 9 "$load" "$target")
            read -r mc _ _ < <(stats 11 "$load" "$target")
            read -r _ _ rss < <(stats 10 "$load" "$target")
            read -r lg _ _ < <(stats 14 "$load" "$target")
            read -r _ _ other < <(stats 15 "$load" "$target")
            read -r _ _ alien < <(stats 16 "$load" "$target")
            MED[$target-rps]=$rps MED[$target-p99]=$p99 MED[$target-cpu]=$cpu
            printf '| %s | %s | %.0f [%.0f-%.0f] | %.1f | %.1f [%.1f-%.1f] | %.1f | %s | %.2f | %.2f | %.2f | %s | %.1f | %.1f |\n' \
                "$load" "$target" "$rps" "$rmin" "$rmax" "$p50" "$p99" "$qmin" "$qmax" "$p999" \
                "$errs" "$cpu" "$mc" "$lg" "$rss" "$other" "$alien"
        done
        awk -v l="$load" -v a="${MED[proxy-rps]}" -v b="${MED[nutcracker-rps]}" \
            -v c="${MED[proxy-p99]}" -v d="${MED[nutcracker-p99]}" \
            -v e="${MED[proxy-cpu]}" -v f="${MED[nutcracker-cpu]}" \
            'BEGIN {printf "| %s | proxy / nutcracker | %.2fx | | %.2fx | | | %.2fx | | | | | |\n",
                    l, a / b, c / d, e / f}'
        unset MED
    done
    echo
    echo "Memory per connection (fresh process, $IDLE connections, VmRSS after - before, / $IDLE):"
    echo
    echo "| connections | nutcracker | ringwise-proxy |"
    echo "|---|---|---|"
    echo "| idle (never used) | ${MEM[idle-nutcracker]} B (${MEM[idle-nutcracker-rss]} kB) | ${MEM[idle-proxy]} B (${MEM[idle-proxy-rss]} kB) |"
    echo "| idle after one get each | ${MEM[touch-nutcracker]} B (${MEM[touch-nutcracker-rss]} kB) | ${MEM[touch-proxy]} B (${MEM[touch-proxy-rss]} kB) |"
    echo
    echo "Raw results: $OUT"
} | tee "$OUT/table.md"
