#!/bin/bash
# bench/run.sh: `make bench`. Measures, then regenerates docs/bench.md, docs/bench/*.csv and
# docs/bench/*.png (bench/report.sh). Steps (each one's output is a CSV in docs/bench/):
#   1. core.csv      transport core vs single-core memcpy, host, native: rails 1..8 x 64 B..4 MiB
#      core1.csv     the same with one thread driving both ends (core_bench -1): per CPU-second
#   2. cpu.csv       instructions per message and per byte: callgrind on core_bench -1 -n MSGS
#      flame_*.svg   (step "flame") flame graphs of the core's hot paths: perf record of
#                    core_bench -1 at 64 B (chained) and 4 KiB, 1 rail, drawn by bench/flamegraph.py
#      flame_vm_lat_*.svg  (step "latflame", not in the default steps) a 64 B ib_write_lat round
#                    trip in QEMU, tbrdma vs rxe over one veth pair: perf in the guest
#                    (bench/vm/latprof.sh), only perftest's samples; latprof.csv its figures
#   3. vm.csv        tbrdma vs rdma_rxe in QEMU: veth pair in one VM (bench/vm/veth.sh); two VMs
#                    over 1, 2, 4 rails (bench/vm/rails.sh, one boot); two VMs over one Thunderbolt
#                    cable through the stand-in, tbrdma's tb rails vs rxe over thunderbolt-net
#                    (bench/vm/tb.sh); BENCH_VM_RUNS (3) runs of
#                    every cell, one row each (the report takes medians)
#      stripe.csv    N = 1, 2, 4, 8 rate-capped emu rails vs one (bench/vm/stripe.sh)
#   4. hops.csv      ib_write_bw 64 KiB and ib_write_lat 64 B at 1, 2 and 3 hops, one boot
#                    (bench/vm/hops.sh: a chain of four emulated hosts with routes; issue 15),
#                    BENCH_HOPS_RUNS rounds; its own metadata in hops.env (meta.env describes
#                    steps 1-3 and is rewritten only when one of them runs)
# The VM scripts are not tests: tests/vm/run boots them from bench/vm (TBR_VM_TESTS), so
# `make check` never runs them.
# Environment: BENCH_QUICK=1 (a short smoke run, minutes), BENCH_STEPS="core cpu flame vm hops" (a subset,
# or "collect": only re-read the VM logs in build/bench/vm;
# the others' CSVs are kept from the last run), BENCH_VM="veth rails tb stripe" (step 3; step 4
# boots bench/vm/hops.sh).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
OUT=$TOP/docs/bench
B=$TOP/build/bench
QUICK=${BENCH_QUICK:-}
STEPS=${BENCH_STEPS:-core cpu flame vm hops}
VMS=${BENCH_VM:-veth rails tb stripe}
mkdir -p "$OUT" "$B"
T0=$(date +%s)
log() { echo "bench: [$(($(date +%s) - T0)) s] $*" >&2; }
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
# publish TMP NAME: TMP becomes docs/bench/NAME; the CSV it replaces is kept as docs/bench/prev/NAME
# (once per run), so the report can set the previous run's figures beside the new ones
publish() {
	mkdir -p "$OUT/prev"
	if [ -f "$OUT/$2" ] && [ ! -f "$B/prev.$2" ]; then
		cp "$OUT/$2" "$OUT/prev/$2"
		: > "$B/prev.$2"
	fi
	mv "$1" "$OUT/$2"
}
rm -f "$B"/prev.*

if [ -n "$QUICK" ]; then
	RAILS=1,2,4,8 SIZES=64,4K,64K,1M SECS=0.2 SIZES1=64K,1M
	CG_SIZES="64 4096 65536" CG_RAILS="1"
	VM_BW_SIZES="4096 65536" VM_LAT_SIZES="64" VM_BW_BYTES=1048576 VM_LAT_ITERS=50
	VM_RAILS_BW_SIZES="65536" VM_RAILS_LAT_SIZES="64" VM_RAILS_N="1 2"
	STRIPE_MSGS=8 VM_RUNS=1
	HOPS_RUNS=1 HOPS_BW_BYTES=4194304 HOPS_LAT_ITERS=50
else
	RAILS=1,2,3,4,5,6,7,8 SIZES=64,256,1K,4K,16K,64K,256K,1M,4M SECS=0.4 SIZES1=4K,64K,256K,1M,4M
	CG_SIZES="64 1024 4096 65536 1048576" CG_RAILS="1 4"
	VM_BW_SIZES="64 4096 65536 1048576" VM_LAT_SIZES="64 4096" VM_BW_BYTES=4194304 VM_LAT_ITERS=200
	VM_RAILS_BW_SIZES="4096 65536" VM_RAILS_LAT_SIZES="64" VM_RAILS_N="1 2 4"
	STRIPE_MSGS=16 VM_RUNS=${BENCH_VM_RUNS:-3}
	HOPS_RUNS=3 HOPS_BW_BYTES=16777216 HOPS_LAT_ITERS=200
fi
# steps 1-3 (meta.env describes them: a hops-only run leaves it alone)
main_steps() { has core || has cpu || has vm; }
meta() {
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "quick=${QUICK:-0}"
	echo "nproc=$(nproc)"
	echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "kernel=$(uname -srm)"
	echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)"
}
! main_steps || meta > "$B/meta.env"

make -s -C "$HERE" || exit 1

if has core; then
	log "1. transport core vs memcpy: rails $RAILS, sizes $SIZES, $SECS s per point"
	# RTO 1 s: the in-memory wire loses nothing, and on a loaded host a starved end would let the
	# core's 67 ms timer fire, exhaust the retries and fail the point (the CSV counts timeouts)
	CORE_BENCH_RTO_MS=${CORE_BENCH_RTO_MS:-1000} \
		"$B/core_bench" -r "$RAILS" -s "$SIZES" -t "$SECS" > "$B/core.csv.tmp"
	[ -s "$B/core.csv.tmp" ] &&
		publish "$B/core.csv.tmp" core.csv || log "core_bench FAILED"
	# the same core with one thread driving both ends: CPU time is work only (no idle polling,
	# no frame crossing between cores), the measure of what a byte costs
	log "1b. one thread, both ends: 1 rail, sizes $SIZES1"
	CORE_BENCH_RTO_MS=${CORE_BENCH_RTO_MS:-1000} \
		"$B/core_bench" -1 -r 1 -s "$SIZES1" -t "$SECS" > "$B/core1.csv.tmp"
	[ -s "$B/core1.csv.tmp" ] &&
		publish "$B/core1.csv.tmp" core1.csv || log "core_bench -1 FAILED"
fi

# msgs MSGSIZE: a fixed workload of about 64 MiB (at least 16 messages, at most 20000)
cg_msgs() { local n=$((64 * 1048576 / $1)); ((n > 20000)) && n=20000; ((n < 16)) && n=16; echo "$n"; }
if has cpu; then
	log "2. instructions (callgrind, single-threaded core_bench, fixed workload)"
	echo "rails,size,msgs,instr_total,instr_memcpy,instr_per_msg,instr_per_byte,core_instr_per_msg,core_instr_per_byte,transport_instr_per_msg,transport_instr_per_byte" \
		> "$B/cpu.csv.tmp"
	for r in $CG_RAILS; do
		for s in $CG_SIZES; do
			n=$(cg_msgs "$s")
			f=$B/callgrind.$r.$s.out
			valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect=run_point \
				"$B/core_bench" -1 -n "$n" -r "$r" -s "$s" > "$B/cg.log" 2>&1 ||
				{ log "callgrind rails $r size $s FAILED"; tail "$B/cg.log" >&2; continue; }
			# --auto=no: the annotated sources' "=> memcpy" call lines are no self cost
			callgrind_annotate --inclusive=no --threshold=100 --auto=no "$f" > "$f.txt" 2> /dev/null
			# totals; the self cost of the memcpy/memmove variants (the two payload copies)
			tot=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f" | head -1)
			mc=$(awk '/mem(cpy|move)/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$f.txt")
			# the transport core alone: the self cost of code from kernel/core/ (its own headers
			# and the system headers inlined into its tbr_* functions, e.g. byteswap.h), without
			# the bench's rings and callbacks, which stand for a backend's, and without the copies
			tc=$(awk '$0 ~ /^ *[0-9,]+ .* ([^ ]*\/)?kernel\/core\/[^ ]*:/ ||
				$0 ~ /^ *[0-9,]+ .* \/usr\/include\/[^ ]*:tbr_/ { gsub(",", "", $1); s += $1 }
				END { print s + 0 }' "$f.txt")
			awk -v r="$r" -v s="$s" -v n="$n" -v t="$tot" -v m="$mc" -v c="$tc" 'BEGIN {
				printf "%d,%d,%d,%d,%d,%.0f,%.3f,%.0f,%.4f,%.0f,%.4f\n", r, s, n, t, m,
					t / n, t / (n * s), (t - m) / n, (t - m) / (n * s), c / n, c / (n * s) }' >> "$B/cpu.csv.tmp"
		done
	done
	publish "$B/cpu.csv.tmp" cpu.csv
fi

# flame graphs: where the core's instructions go on the two paths issue 19 counts (64 B chained,
# 4 KiB), sampled natively (perf's software clock, DWARF call chains), only stacks under run_point
if has flame; then
	log "2b. flame graphs (perf record, core_bench -1, 1 rail)"
	if ! command -v perf > /dev/null; then
		log "flame: no perf (linux-perf, make deps): step skipped"
	else
		for s in 64 4096; do
			f=$B/flame.$s
			n=$((s > 1024 ? 1000000 : 4000000))
			if perf record -q -F 4999 --call-graph dwarf,16384 -e cpu-clock -o "$f.data" -- \
				"$B/core_bench" -1 -n "$n" -r 1 -s "$s" > /dev/null 2> "$f.log" &&
				perf script -i "$f.data" 2> /dev/null | "$HERE/flamegraph.py" --root run_point \
					--title "core_bench -1 -r 1 -s $s: both ends, one thread" > "$f.svg"; then
				mv "$f.svg" "$OUT/flame_core_$s.svg"
			else
				log "flame graph $s B FAILED"; tail -3 "$f.log" >&2
			fi
		done
	fi
fi

vm_conf() {
	cat > "$B/vm.conf" <<CONF
BENCH_BW_SIZES="$VM_BW_SIZES"
BENCH_LAT_SIZES="$VM_LAT_SIZES"
BENCH_BW_BYTES=$VM_BW_BYTES
BENCH_LAT_ITERS=$VM_LAT_ITERS
BENCH_RAILS_BW_SIZES="$VM_RAILS_BW_SIZES"
BENCH_RAILS_LAT_SIZES="$VM_RAILS_LAT_SIZES"
BENCH_RAILS_N="$VM_RAILS_N"
BENCH_STRIPE_MSGS=$STRIPE_MSGS
BENCH_HOPS_RUNS=$HOPS_RUNS
BENCH_VM_RUNS=$VM_RUNS
BENCH_HOPS_BW_BYTES=$HOPS_BW_BYTES
BENCH_HOPS_LAT_ITERS=$HOPS_LAT_ITERS
CONF
}
if has vm; then
	log "3. VMs (QEMU): $VMS"
	vm_conf
	# the two-VM rails lossless, as Thunderbolt's are: the default dgram sockets drop bursts
	# (docs/bench-speed.md section 5); VM_RAIL_NET=dgram measures that lossy link instead
	export VM_RAIL_NET=${VM_RAIL_NET:-stream}
	# shellcheck disable=SC2086
	TBR_VM_TESTS=$HERE/vm TBR_VM_RESULTS=$B/vm "$TOP/tests/vm/run" -j 1 $VMS | tee "$B/vm-run.log" >&2
fi
# the VM figures out of the guests' logs (also alone: BENCH_STEPS=collect, e.g. after a cut run)
if has vm || has collect; then
	echo "config,stack,tool,size,value" > "$B/vm.csv.tmp"
	echo "rails,mbps" > "$B/stripe.csv.tmp"
	for v in $VMS; do
		for f in "$B/vm/$v"/a/script.log; do
			[ -f "$f" ] || continue
			grep -a '^BENCH,' "$f" | tr -d '\r' | cut -d, -f2- | while IFS=, read -r cfg stack tool size val; do
				if [ "$cfg" = stripe ]; then
					echo "$size,$val" >> "$B/stripe.csv.tmp"
				else
					echo "$cfg,$stack,$tool,$size,$val" >> "$B/vm.csv.tmp"
				fi
			done
		done
	done
	case " $VMS " in *" stripe "*) publish "$B/stripe.csv.tmp" stripe.csv ;; esac
	case "$VMS" in *veth*|*rails*|*tb*) publish "$B/vm.csv.tmp" vm.csv ;; esac
fi
if has latflame; then
	log "latency profile (QEMU): ib_write_lat 64 B, tbrdma vs rxe, perf in the guest"
	TBR_VM_TESTS=$HERE/vm TBR_VM_RESULTS=$B/vm "$TOP/tests/vm/run" -j 1 latprof | tee "$B/latprof-run.log" >&2
	f=$B/vm/latprof/a/script.log
	if [ -f "$f" ] && grep -aq '^BENCH,latprof,' "$f"; then
		{ echo "stack,usec"; grep -a '^BENCH,latprof,' "$f" | tr -d '\r' | cut -d, -f3,6; } \
			> "$OUT/latprof.csv"
		for st in tbrdma rxe; do
			grep -a "^FOLD,$st," "$f" | tr -d '\r' | cut -d, -f3- > "$B/latprof.$st.folded"
			"$HERE/flamegraph.py" --from-folded --title "ib_write_lat 64 B over veth, $st: perftest's samples (QEMU TCG guest)" \
				< "$B/latprof.$st.folded" > "$B/latprof.$st.svg" &&
				mv "$B/latprof.$st.svg" "$OUT/flame_vm_lat_$st.svg" || log "latflame: no $st graph"
		done
	else
		log "latflame: no figures in $f"
	fi
fi
if has hops; then
	log "4. hops (QEMU): 1, 2, 3 hops, $HOPS_RUNS round(s)"
	vm_conf
	H0=$(date +%s)
	meta > "$B/hops.env"
	TBR_VM_TESTS=$HERE/vm TBR_VM_RESULTS=$B/vm "$TOP/tests/vm/run" -j 1 hops | tee "$B/hops-run.log" >&2
	echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$B/hops.env"
	echo "wall_s=$(($(date +%s) - H0))" >> "$B/hops.env"
fi
# hops.csv: one row per run (HOPS,TOOL,SIZE,VALUE) out of the guest's log (also on collect)
if { has hops || has collect; } && [ -f "$B/vm/hops/a/script.log" ]; then
	echo "hops,tool,size,value" > "$B/hops.csv.tmp"
	grep -a '^BENCH,hops,' "$B/vm/hops/a/script.log" | tr -d '\r' | cut -d, -f3- >> "$B/hops.csv.tmp"
	if [ "$(wc -l < "$B/hops.csv.tmp")" -gt 1 ]; then
		publish "$B/hops.csv.tmp" hops.csv
		[ ! -f "$B/hops.env" ] || { cp "$B/hops.env" "$B/hops.env.new"; publish "$B/hops.env.new" hops.env; }
	else
		log "hops: no figures in $B/vm/hops/a/script.log"
	fi
fi
if main_steps; then
	echo "steps=$STEPS" >> "$B/meta.env"
	echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$B/meta.env"
	echo "wall_s=$(($(date +%s) - T0))" >> "$B/meta.env"
fi
if main_steps || has collect; then
	[ ! -f "$B/meta.env" ] || { cp "$B/meta.env" "$B/meta.env.new"; publish "$B/meta.env.new" meta.env; }
fi
if main_steps || has collect; then
	log "5. report: docs/bench.md, docs/bench/*.png"
	"$HERE/report.sh" || exit 1
else	# (docs/bench.md holds hand-written notes too: a hops-only run rewrites only its section)
	log "5. report: section 5 of docs/bench.md"
	"$HERE/report.sh" --only hops || exit 1
fi
log "done in $(($(date +%s) - T0)) s"
