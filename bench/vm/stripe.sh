# bench: striping efficiency. One device pair over 8 emulated (emu) rails, each capped at
# BENCH_STRIPE_RATE bit/s; ib_write_bw 64 KiB (BENCH_STRIPE_MSGS x N messages) over N = 1, 2, 4,
# 8 of them (the others cut), same boot. Lines: BENCH,stripe,tbrdma,ib_write_bw,N,MB/s
# vm-timeout: 900
# vm-tcg-thread: multi
. "$TBR_TOP/tests/vm/lib/guest.sh"
. "$TBR_TOP/tests/vm/lib/pair.sh"
. "$TBR_TOP/bench/vm/bench.lib"
RATE=${BENCH_STRIPE_RATE:-2M}
MSGS=${BENCH_STRIPE_MSGS:-16}	# per rail: about 4 s at 2 Mbit/s
NS=${BENCH_STRIPE_N:-1 2 4 8}
# shallow rings: a capped rail's queue must not outlast the retransmit timeout
verbs_slim
pair_up 8 16
for r in 0 1 2 3 4 5 6 7; do "$CTL" rail-set tbrdma0 1 "$r" --rate "$RATE"; done
for n in $NS; do
	step "$n rails of 8 up, each capped at $RATE bit/s"
	for ((r = 1; r < 8; r++)); do
		if [ "$r" -lt "$n" ]; then
			"$CTL" rail-set tbrdma0 1 "$r" --restore
		else
			"$CTL" rail-set tbrdma0 1 "$r" --cut
		fi
	done
	wait_for 10 bash -c "'$CTL' links tbrdma0 | grep -q 'rails_up=$n '"
	PORT=$((18700 + 10 * n))
	BW_BYTES=$((MSGS * n * 65536)) SRV_NS=h1 SRV_DEV=tbrdma1 SRV_GID=$GID1 CLI_DEV=tbrdma0 CLI_GID=$GID0 \
		SRV_ADDR=10.88.0.2 local_perf stripe tbrdma ib_write_bw 65536 | sed "s/,65536,/,$n,/"
done
"$CTL" links tbrdma0 | grep 'rail dev=tbrdma0' | sed 's/ drop_ppm.*tx_frames=/ tx_frames=/; s/ rx_frames.*//'
echo "ok"
