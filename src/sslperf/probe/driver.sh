#!/bin/sh
# sslperf's probe: the scheduler's plan (plan.sh, written by `sslperf probe build`) run where only a POSIX shell
# is installed. Usage, in the unpacked probe:  sh run.sh [RESULTS_DIR]
#
# The same plan as `sslperf speed` runs (measure/scheduler.py, measure/modes/in_memory.py): passes of fresh
# worker processes (one statically linked harness per library, pinned with taskset where there is one); per case
# in each pass: prepared and checked on every library, calibrated in the first pass, one warm-up round thrown away,
# then its rounds with the libraries alternating A B, B A from the pass's order (reversed on odd passes); a sample
# that waited for its CPU taken again, as sslperf does. Every reply of every harness is kept, line by line, with
# the pass, the round, the library, the worker's pid and when the round began; `sslperf import` turns the results
# archive into a run. Nothing here computes a figure.
set -u
LC_ALL=C
export LC_ALL
probe=$(cd "$(dirname "$0")" && pwd)
. "$probe/plan.sh"
out=${1:-"$probe/results"}
umask 077
mkdir -p "$out" || exit 2
# The work directory holds the TLS cases' keys (made here, mode 0700); one a killed driver left is removed here.
for stale in "${TMPDIR:-/tmp}"/sslperf-probe.*; do
    [ -d "$stale" ] && ! kill -0 "${stale##*.}" 2>/dev/null && rm -rf "$stale"
done
work="${TMPDIR:-/tmp}/sslperf-probe.$$"
rm -rf "$work" && mkdir "$work" || exit 2
log="$out/log.txt"
: > "$log"
samples="$out/samples.tsv"
: > "$samples"
pids=""

say() { printf '%s\n' "$*" >&2; printf '%s\n' "$*" >> "$log"; }
watchdog=""
cleanup() {
    [ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
    for p in $pids; do kill "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the machine, before anything runs ---------------------------------------------------------------------
fact() { printf '%s\t%s\n' "$1" "$2" >> "$out/machine.tsv"; }
first_line() { [ -r "$1" ] && head -n 1 "$1" 2>/dev/null; }
cpuinfo() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo 2>/dev/null | head -n 1; }
: > "$out/machine.tsv"
fact host "$(uname -n 2>/dev/null)"
fact machine "$(uname -m 2>/dev/null)"
fact kernel "$(uname -r 2>/dev/null)"
fact system "$(uname -s 2>/dev/null)"
model=$(cpuinfo 'model name'); [ -n "$model" ] || model=$(cpuinfo 'Model')
fact cpu_model "$model"
flags=$(cpuinfo flags); [ -n "$flags" ] || flags=$(cpuinfo Features)
fact cpu_flags "$flags"
fact cpus "$(getconf _NPROCESSORS_ONLN 2>/dev/null || grep -c '^processor' /proc/cpuinfo)"
fact governor "$(first_line /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)"
fact loadavg_before "$(first_line /proc/loadavg)"
fact started "$(date -u '+%Y-%m-%dT%H:%M:%S+00:00')"

# SSLPERF_PROBE_EMULATOR: the program that runs the harnesses where they are another machine's code (qemu-user's
# qemu-aarch64, to check an ARM probe on an x86 machine): its timings are the emulator's, and the import says so.
emulator=${SSLPERF_PROBE_EMULATOR:-}
fact emulator "$emulator"

# The CPU the workers are pinned to: the last one this shell may run on, as sslperf chooses (pinning.choose).
# The thread sweeps' threads go one per CPU of that set (the harness pins them: SSLPERF_THREAD_CPUS).
allowed=""
command -v taskset > /dev/null 2>&1 && allowed=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//')
[ -n "$allowed" ] || allowed=$(first_line /sys/devices/system/cpu/online)
thread_cpus=""
for part in $(echo "$allowed" | tr ',' ' '); do
    lo=${part%-*} hi=${part#*-}
    while [ "$lo" -le "$hi" ]; do thread_cpus="$thread_cpus,$lo"; lo=$((lo + 1)); done
done
thread_cpus=${thread_cpus#,}
fact thread_cpus "$thread_cpus"
cpu=""
command -v taskset > /dev/null 2>&1 && cpu=${thread_cpus##*,}
if [ -n "$cpu" ]; then fact pinned_cpu "$cpu"; else fact pinned_cpu "none: taskset is not installed"; fi

# The harnesses as found here (the manifest names the digests they were built with).
for i in $LIB_INDEXES; do
    eval "bin=\$probe/\$LIB_${i}_BIN"
    digest=""
    command -v sha256sum > /dev/null 2>&1 && digest=$(sha256sum "$bin" | cut -d ' ' -f 1)
    fact "digest_$i" "${digest:-none: sha256sum is not installed}"
done

# ---- workers -----------------------------------------------------------------------------------------------
# One FIFO carries every worker's replies (one worker is spoken to at a time); each worker reads its own FIFO,
# held open on file descriptor 3 + its index (POSIX sh addresses descriptors up to 9: at most six libraries).
# Each worker runs in a subshell that says, on the replies FIFO, when its harness exited and how: a worker that
# dies answers the question it was asked with that, and the plan goes on without it.
mkfifo "$work/replies" || exit 2
exec 9<>"$work/replies"

start_workers() {   # start_workers LIB_INDEX... : fresh processes, in that order
    for i in "$@"; do
        eval "bin=\$probe/\$LIB_${i}_BIN"
        rm -f "$work/in$i"
        mkfifo "$work/in$i"
        eval "exec $((3 + i))<>\"\$work/in$i\""
        ( if [ -n "$cpu" ]; then set -- taskset -c "$cpu" $emulator "$bin" serve; else set -- $emulator "$bin" serve; fi
          "$@" < "$work/in$i" >&9 2>> "$log" &
          printf '%s\n' "$!" > "$work/pid$i"
          wait "$!"
          printf '{"type":"exited","lib":%s,"status":%s}\n' "$i" "$?" >&9 ) &
        eval "pid_$i=$! gone_$i="
        pids="$pids $!"
    done
}

stop_workers() {
    for i in $LIB_INDEXES; do
        eval "p=\${pid_$i:-} gone=\${gone_$i:-}"
        [ -n "$p" ] || continue
        [ -n "$gone" ] || ask "$i" quit        # its answer: that it exited
        wait "$p" 2>/dev/null
        eval "exec $((3 + i))>&-"
        eval "pid_$i="
    done
    pids=""
}

# A harness that answers nothing for ANSWER_SECONDS is stopped (as sslperf stops a worker): `asking` holds the
# process being asked and the question's number, and the watchdog kills one that keeps the same question that long.
seq=0
: > "$work/asking"
( last="" waited=0
  while sleep 5; do
      kill -0 $$ 2>/dev/null || exit 0
      now=$(cat "$work/asking" 2>/dev/null)
      if [ -n "$now" ] && [ "$now" = "$last" ] && [ "${now%% *}" != "-" ]; then
          waited=$((waited + 5))
          if [ "$waited" -ge "$ANSWER_SECONDS" ]; then
              kill -9 "${now%% *}" 2>/dev/null && printf '%s\n' "${now%% *}" >> "$work/stopped"
              waited=0
          fi
      else
          waited=0
      fi
      last=$now
  done ) > /dev/null 2>&1 &        # holding no one's output open: a caller waiting for it is not kept waiting
watchdog=$!
asking() { seq=$((seq + 1)); printf '%s %s\n' "$1" "$seq" > "$work/asking"; }
answered() { printf -- '- %s\n' "$seq" > "$work/asking"; }

reply=""
ask() {     # ask LIB_INDEX COMMAND... : the worker's one-line reply in $reply
    i=$1; shift
    eval "gone=\${gone_$i:-}"
    if [ -n "$gone" ]; then reply="{\"type\":\"error\",\"reason\":\"$gone\"}"; return; fi
    harness=""
    [ -r "$work/pid$i" ] && read -r harness < "$work/pid$i"
    asking "${harness:--}"
    printf '%s\n' "$*" >&"$((3 + i))"
    while :; do
        IFS= read -r reply <&9 || { answered; reply='{"type":"error","reason":"no reply"}'; return; }
        case "$reply" in
            '{"type":"exited",'*)
                who=$(field lib); status=$(field status)
                why="the harness process exited (status $status)"
                [ "$status" -gt 128 ] && why="the harness process died (signal $((status - 128)))"
                [ "$status" = 137 ] && [ -s "$work/stopped" ] && \
                    why="the harness gave no answer for $ANSWER_SECONDS s and was stopped"
                eval "gone_$who=\"\$why\""
                [ "$who" = "$i" ] || continue
                answered
                [ "$*" = quit ] && return
                reply="{\"type\":\"error\",\"reason\":\"$why\"}"; return ;;
        esac
        answered
        return
    done
}
field() {   # field NAME : a number from $reply ("iters":N or "wall_ns":[N)
    v=${reply#*\"$1\":}
    [ "$v" = "$reply" ] && { echo 0; return; }
    v=${v#\[}
    echo "${v%%[!0-9]*}"
}
kind() { v=${reply#*\"type\":\"}; echo "${v%%\"*}"; }
keep() {    # keep KIND PASS ROUND LIB CASE BEGUN RETAKEN : $reply as one line of samples.tsv
    eval "p=\$pid_$4"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$p" "$6" "$7" "$reply" >> "$samples"
}
now() { ask "$1" clock; field monotonic_ns; }

# ---- the plan ----------------------------------------------------------------------------------------------
order() {   # the libraries in the order pass $1 starts them: as given on even passes, reversed on odd ones
    if [ $(($1 % 2)) -eq 0 ]; then echo $LIB_INDEXES; else
        r=""; for i in $LIB_INDEXES; do r="$i $r"; done; echo $r
    fi
}
reverse() { r=""; for i in "$@"; do r="$i $r"; done; echo $r; }
ordered() { # ordered PASS READY... : the ready libraries in the order of pass PASS
    pass_=$1; shift
    r=""; for i in $(order "$pass_"); do case " $* " in *" $i "*) r="$r $i" ;; esac; done; echo $r
}

if [ "$CERTS" = 1 ]; then     # the TLS cases' certificates, made here by the first harness (never shipped)
    mkdir -p "$work/certs"
    SSLPERF_CERT_DIR="$work/certs" SSLPERF_TLS_PEM_DIR="$work/certs"
    export SSLPERF_CERT_DIR SSLPERF_TLS_PEM_DIR
    first=${LIB_INDEXES%% *}
    eval "bin=\$probe/\$LIB_${first}_BIN"
    $emulator "$bin" mkcerts "$work/certs" "$CA_CERTIFICATES" >> "$log" 2>&1 || { say "making the certificates failed"; exit 1; }
    if [ "$PEM" = 1 ]; then $emulator "$bin" pem-certs "$work/certs" >> "$log" 2>&1; fi
fi
start_workers $LIB_INDEXES
for i in $LIB_INDEXES; do ask "$i" info; keep info 0 0 "$i" - 0 0; done
stop_workers
t0=$(date +%s)

take() {    # take PASS ROUND LIB CASE_INDEX CASE BEGUN : one sample, taken again while it waited for its CPU
    eval "iters=\$iters_${4}_$3"
    retaken=0
    ask "$3" sample "$5" "$iters" 1
    while [ "$(kind)" = samples ] && [ $(($(field wait_ns) * 100)) -gt "$(field wall_ns)" ] \
            && [ $retaken -lt "$RETAKES" ] && [ "$(eval "echo \$futile_$4")" -lt "$FUTILE_RETAKES" ]; do
        ask "$3" sample "$5" "$iters" 1
        retaken=$((retaken + 1))
        if [ "$(kind)" = samples ] && [ $(($(field wait_ns) * 100)) -gt "$(field wall_ns)" ]; then
            eval "futile_$4=\$((futile_$4 + 1))"
        else
            eval "futile_$4=0"
        fi
    done
    keep sample "$1" "$2" "$3" "$5" "$6" "$retaken"
    [ "$(kind)" = samples ] || eval "ready_$4=\$(echo \" \$ready_$4 \" | sed 's/ $3 / /')"
}

warm_up() { # warm_up PASS CASE_INDEX CASE LIB... : the warm-up round, thrown away; its wall time in $round_ns
    pass=$1 ci=$2 id=$3; shift 3
    round_ns=0
    for i in "$@"; do
        eval "iters=\$iters_${ci}_$i"
        ask "$i" sample "$id" "$iters" 1
        keep warmup "$pass" -1 "$i" "$id" 0 0
        [ "$(kind)" = samples ] && round_ns=$((round_ns + $(field wall_ns)))
    done
}

prepare() { # prepare PASS CASE_INDEX CASE FIRST LIB... : the case made ready in this pass's workers
    pass=$1 ci=$2 id=$3 calibrate=$4; shift 4
    ready=""
    for i in "$@"; do
        ask "$i" prepare "$id"
        keep prepared "$pass" -1 "$i" "$id" 0 0
        [ "$(kind)" = prepared ] || continue
        if [ "$calibrate" = 1 ]; then
            ask "$i" calibrate "$id" "$TARGET_NS"
            keep calibrated "$pass" -1 "$i" "$id" 0 0
            [ "$(kind)" = calibrated ] || continue
            eval "iters_${ci}_$i=$(field iters)"
        fi
        ready="$ready $i"
    done
    eval "ready_$ci=\"$ready\""
    warm_up "$pass" "$ci" "$id" $ready
}

uptime_ns() { v=$(cut -d ' ' -f 1 /proc/uptime 2>/dev/null); echo "$(( ${v%.*} * 1000000000 + ${v#*.} * 10000000 ))"; }

sweep() {   # sweep PASS CASE_INDEX CASE : this pass's rounds of a thread count (measure/modes/threads.py): each a
            # run of `harness threads CASE N MS MODE`, every thread for THREAD_MS, the libraries alternating
    pass=$1 ci=$2 id=$3
    rest=${id#threads/}; mode=${rest%%/*}; rest=${rest#*/}; n=$(echo "${rest%%/*}" | sed 's/^0*//'); inner=${rest#*/}
    rounds=$((PASSES * (n == 1 ? ONE_THREAD_ROUNDS : 1)))
    eval "taken=\${taken_$ci:-0}"
    spread=$PASSES; [ "$rounds" -lt "$spread" ] && spread=$rounds
    this=$(((rounds + spread - 1) / spread)); left=$((rounds - taken)); [ "$left" -lt "$this" ] && this=$left
    index=0
    while [ $index -lt "$this" ]; do
        if [ $((index % 2)) -eq 0 ]; then turn=$(order "$pass"); else turn=$(reverse $(order "$pass")); fi
        for i in $turn; do
            eval "bin=\$probe/\$LIB_${i}_BIN gone=\${swept_${ci}_$i:-}"
            [ -z "$gone" ] || continue
            begun=$(uptime_ns)
            if [ "$THREAD_PIN" = 1 ]; then
                SSLPERF_THREAD_CPUS="$thread_cpus" $emulator "$bin" threads "$inner" "$n" "$THREAD_MS" "$mode" \
                    > "$work/threads.out" 2>> "$log" &
            else
                $emulator "$bin" threads "$inner" "$n" "$THREAD_MS" "$mode" > "$work/threads.out" 2>> "$log" &
            fi
            asking "$!"
            wait "$!"
            answered
            reply=$(tail -n 1 "$work/threads.out")
            [ -n "$reply" ] || reply='{"type":"error","reason":"the harness printed nothing"}'
            eval "pid_$i=0"
            keep sample "$pass" "$taken" "$i" "$id" "$begun" 0
            [ "$(kind)" = threads ] || eval "swept_${ci}_$i=1"
        done
        taken=$((taken + 1)); eval "taken_$ci=$taken"
        index=$((index + 1))
    done
}

pass=0
while [ $pass -lt "$PASSES" ]; do
    say "pass $((pass + 1)) of $PASSES"
    fact "loadavg_pass_$pass" "$(first_line /proc/loadavg)"
    start_workers $(order $pass)
    ci=0
    for id in $CASES; do
        case "$id" in threads/*) sweep "$pass" "$ci" "$id"; ci=$((ci + 1)); continue ;; esac
        eval "futile_$ci=0"
        if [ $pass -eq 0 ]; then
            prepare 0 "$ci" "$id" 1 $(order 0)
            eval "ready=\$ready_$ci"
            rounds=$SAMPLES
            if [ "$round_ns" -gt 0 ]; then       # a slow case gets fewer rounds (in_memory.MAX_CASE_SECONDS)
                budget=$((MAX_CASE_NS * $(echo $ready | wc -w) / round_ns))
                [ "$budget" -lt "$rounds" ] && rounds=$budget
                [ "$rounds" -lt "$MIN_SAMPLES" ] && rounds=$MIN_SAMPLES
            fi
            eval "rounds_$ci=$rounds taken_$ci=0"
        else
            eval "ready=\$ready_$ci taken=\$taken_$ci rounds=\$rounds_$ci"
            if [ -z "$ready" ] || [ "$taken" -ge "$rounds" ]; then ci=$((ci + 1)); continue; fi
            prepare "$pass" "$ci" "$id" 0 $(ordered "$pass" $ready)
        fi
        eval "ready=\$ready_$ci taken=\$taken_$ci rounds=\$rounds_$ci"
        # this pass's rounds: the case's rounds spread evenly over the passes
        spread=$PASSES; [ "$rounds" -lt "$spread" ] && spread=$rounds; [ "$spread" -lt 1 ] && spread=1
        this=$(((rounds + spread - 1) / spread)); left=$((rounds - taken)); [ "$left" -lt "$this" ] && this=$left
        first=$(ordered "$pass" $ready)
        index=0
        while [ $index -lt "$this" ]; do
            if [ $((index % 2)) -eq 0 ]; then turn=$first; else turn=$(reverse $first); fi
            for i in $turn; do
                case " $(eval "echo \$ready_$ci") " in *" $i "*) ;; *) continue ;; esac
                begun=$(now "$i")
                take "$pass" "$taken" "$i" "$ci" "$id" "$begun"
            done
            taken=$((taken + 1)); eval "taken_$ci=$taken"
            index=$((index + 1))
        done
        eval "ready=\$ready_$ci"
        for i in $ready; do ask "$i" release "$id"; done
        ci=$((ci + 1))
    done
    stop_workers
    pass=$((pass + 1))
done

# Why the sweep scales as it does, where the target has perf (measure/contention.py's CPU shares): each library's
# run at the largest count with a CPU per thread and at 1 thread under `perf record` (the software clock), its
# samples written out by `perf script` here, where the harness's symbols are. A static harness cannot load the
# lock interposer, so lock waits are not measured by a probe.
if [ "$EXPLAIN" = 1 ] && command -v perf > /dev/null 2>&1 && [ -z "$emulator" ] && \
        perf record -q -e cpu-clock -o "$work/check.data" -- true > /dev/null 2>&1; then
    fact perf "$(perf --version 2>/dev/null)"
    cpus=$(echo "$thread_cpus" | tr ',' ' ' | wc -w)
    # the largest count with a CPU per thread, for each case and mode swept
    largest=$(for id in $CASES; do echo "$id"; done | awk -F/ -v cpus="$cpus" '
        $1 == "threads" { n = $3 + 0; key = $2; for (i = 4; i <= NF; i++) key = key "/" $i
                          if (n >= 2 && n <= cpus && n > best[key]) best[key] = n }
        END { for (key in best) print best[key], key }')
    : > "$out/profiles.tsv"
    echo "$largest" | while read -r n key; do
        [ -n "$key" ] || continue
        mode=${key%%/*} inner=${key#*/}
        for i in $LIB_INDEXES; do
            eval "bin=\$probe/\$LIB_${i}_BIN"
            for count in "$n" 1; do
                file="perf-$i-$count-$(echo "$inner" | tr '/' '_')-$mode.txt"
                say "profiling $inner [$mode] at $count thread(s) on library $i"
                SSLPERF_THREAD_CPUS="$thread_cpus" perf record -q -e cpu-clock -F 499 --call-graph dwarf \
                    -o "$work/perf.data" -- "$bin" threads "$inner" "$count" "$THREAD_MS" "$mode" > /dev/null 2>> "$log" \
                    && perf script -i "$work/perf.data" -F tid,ip,sym > "$out/$file" 2>> "$log" \
                    && printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$inner" "$mode" "$count" "$file" >> "$out/profiles.tsv"
                rm -f "$work/perf.data"
            done
        done
    done
else
    fact perf "none: perf is not installed, may not record here, or the harness is emulated"
fi

fact loadavg_after "$(first_line /proc/loadavg)"
fact seconds "$(($(date +%s) - t0))"
fact finished "$(date -u '+%Y-%m-%dT%H:%M:%S+00:00')"
cp "$probe/manifest.json" "$out/manifest.json"
if command -v tar > /dev/null 2>&1 && command -v gzip > /dev/null 2>&1; then
    (cd "$(dirname "$out")" && tar -cf - "$(basename "$out")" | gzip -c > "$(basename "$out").tar.gz") \
        && say "results: $out.tar.gz (sslperf import it where sslperf is installed)"
else
    say "results: $out (no tar or gzip here: copy the directory and sslperf import it)"
fi
