#!/bin/sh
# `ringwise simulate` against the seed article's program (article.py), wall and
# CPU time, in one session, idle and with two busy loops on the two cores.
#
# Usage: crates/sim/bench/vs-article.sh RUNS BINARY... > results.txt
# Prints one line per run: "<mode> <program> <wall> <user> <sys> <max RSS KB> <loadavg 1 min>",
# where mode is "idle" or "busy" (two `while :; do :; done` loops this script
# starts before the busy runs and stops by PID after them). Each run's output
# goes to /tmp/vs-article.<program>.out, so it can be diffed.
set -eu
runs=$1
shift
here=$(dirname "$0")
measure() {
    mode=$1
    shift
    for i in $(seq "$runs"); do
        for bin in "$@"; do
            name=$(echo "$bin" | tr / _)
            load=$(cut -d' ' -f1 /proc/loadavg)
            t=$( { /usr/bin/time -f "%e %U %S %M" "$bin" simulate > "/tmp/vs-article.$name.out"; } 2>&1 | tail -1)
            echo "$mode $bin $t $load"
        done
        load=$(cut -d' ' -f1 /proc/loadavg)
        t=$( { /usr/bin/time -f "%e %U %S %M" python3 "$here/article.py" > /tmp/vs-article.python.out; } 2>&1 | tail -1)
        echo "$mode article.py $t $load"
    done
}
measure idle "$@"
sh -c 'while :; do :; done' & busy1=$!
sh -c 'while :; do :; done' & busy2=$!
trap 'kill $busy1 $busy2 2>/dev/null' EXIT
measure busy "$@"
kill $busy1 $busy2
trap - EXIT
