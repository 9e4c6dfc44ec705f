#!/usr/bin/env bash
# Before/after of one change to the engine: shootout-old and shootout (new) interleaved against one nginx, with
# wrk and h2load as references. Generator on the first half of the CPUs, nginx on the second.
K=$(cd "$(dirname "$0")" && pwd)
LDR="$K/lib/ld-linux-x86-64.so.2 --library-path $K/lib"
RES=$(mktemp -d); FINAL=${OUT:-/tmp/devout}; mkdir -p "$FINAL"; OUT=$RES
SECS=${SECS:-4}; REPS=${REPS:-3}
N=$(nproc); H=$((N/2)); GEN=0-$((H-1)); SRV=$H-$((N-1)); GT=$H
{ echo "nproc $N gen $GEN srv $SRV"; uname -a; grep -m1 'model name' /proc/cpuinfo; } > "$OUT/machine.txt"
D=$(mktemp -d); mkdir -p $D/t
cat > $D/nginx.conf <<NG
worker_processes $H; worker_rlimit_nofile 100000; pid $D/nginx.pid; error_log $D/error.log warn; daemon on;
events { worker_connections 30000; }
http { access_log off; keepalive_requests 100000000; keepalive_timeout 75s; http2_max_concurrent_streams 256;
  client_body_temp_path $D/t; proxy_temp_path $D/t; fastcgi_temp_path $D/t; uwsgi_temp_path $D/t; scgi_temp_path $D/t;
  server { listen 127.0.0.1:18080 backlog=8192 reuseport; listen 127.0.0.1:18081 http2 backlog=8192 reuseport;
    location = /hello { return 200 "Hello World\n"; } } }
NG
ulimit -n 200000 2>/dev/null || ulimit -n 65536
$LDR $K/bin/taskset -c $SRV $LDR $K/bin/nginx -c $D/nginx.conf -p $D -e $D/error.log || { echo "nginx failed"; cat $D/error.log; exit 1; }
sleep 0.5
H1=http://127.0.0.1:18080/hello; H2=http://127.0.0.1:18081/hello
one() { local name=$1; shift; local TIMEFORMAT='%3U %3S'
  { time $LDR $K/bin/taskset -c $GEN $LDR "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"; } 2> "$OUT/$name.cpu"; echo "done $name $(cat $OUT/$name.cpu)"; }
for r in $(seq $REPS); do
  for v in old new; do
    B=$K/bin/shootout; [ $v = old ] && B=$K/bin/shootout-old
    S="$B load --json -q -d ${SECS}s"
    one "h1-t$GT-c256-shootout$v-r$r" $S --threads $GT -c 256 $H1
    one "h2-t$GT-c64m10-shootout$v-r$r" $S --threads $GT -c 64 --http2 --streams 10 $H2
    one "h2-t1-c10m10-shootout$v-r$r" $S --threads 1 -c 10 --http2 --streams 10 $H2
    one "pipe-t$GT-c256-shootout$v-r$r" $S --threads $GT -c 256 --pipeline 16 $H1
  done
  one "h1-t$GT-c256-wrk-r$r" $K/bin/wrk -t$GT -c256 -d${SECS}s $H1
  one "h2-t$GT-c64m10-h2load-r$r" $K/bin/h2load -t$GT -c64 -m10 -D$SECS $H2
done
kill $(cat $D/nginx.pid) 2>/dev/null
echo finished
tar czf "$FINAL/all.tgz" -C "$RES" . && echo "results: all.tgz ($(ls "$RES" | wc -l) files)"
