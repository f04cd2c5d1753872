// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_check: the Open MPI workload of issue 18, with every byte checked. Two ranks (any
 * transport MPI picks; the VM test pins UCX to one RDMA device per rank):
 *   1. MPI_Allreduce (sum) of ALLREDUCE_N doubles, ITERS times, rank-specific inputs whose
 *      sum is known; every element of every result compared;
 *   2. a 1 MiB ping-pong, ITERS round trips: rank 0 sends a buffer filled from (seed, iter),
 *      rank 1 checks it and sends back its bytes inverted, rank 0 checks those.
 * Prints the wall time of each part and "mpi_check: ok"; exits 1 at the first wrong value.
 * Each rank then prints when it started and ended (CLOCK_REALTIME, seconds) and how long its
 * MPI_Init and MPI_Finalize took: the phases a transport's connection set-up and teardown cost.
 * Usage: mpirun -np 2 mpi_check [ITERS]   (default 100)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ALLREDUCE_N 4096
#define PINGPONG_BYTES (1 << 20)

static void fail(int rank, const char *what, long iter, long at)
{
	fprintf(stderr, "mpi_check: rank %d: %s wrong at iteration %ld, element %ld\n", rank,
		what, iter, at);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* the byte at offset i of round trip iter's message: a cheap, position- and round-dependent
 * pattern, so a stale, shifted or misplaced buffer cannot pass */
static uint8_t pattern(long iter, long i)
{
	uint32_t x = (uint32_t)(iter * 2654435761u) ^ (uint32_t)(i * 40503u);

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

static double allreduce(int rank, int size, long iters)
{
	double *in = malloc(ALLREDUCE_N * sizeof(*in));
	double *out = malloc(ALLREDUCE_N * sizeof(*out));
	double t0;
	long it, i;

	if (!in || !out)
		fail(rank, "allocation", 0, 0);
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		for (i = 0; i < ALLREDUCE_N; i++)
			in[i] = (double)(rank + 1) * (double)(i + it);
		MPI_Allreduce(in, out, ALLREDUCE_N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		/* sum over ranks r of (r + 1) * (i + it): exact in doubles at these sizes */
		for (i = 0; i < ALLREDUCE_N; i++)
			if (out[i] != (double)size * (size + 1) / 2 * (double)(i + it))
				fail(rank, "allreduce sum", it, i);
	}
	t0 = MPI_Wtime() - t0;
	free(in);
	free(out);
	return t0;
}

static double pingpong(int rank, long iters)
{
	uint8_t *buf = malloc(PINGPONG_BYTES);
	double t0;
	long it, i;

	if (!buf)
		fail(rank, "allocation", 0, 0);
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		if (rank == 0) {
			for (i = 0; i < PINGPONG_BYTES; i++)
				buf[i] = pattern(it, i);
			MPI_Send(buf, PINGPONG_BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			memset(buf, 0, PINGPONG_BYTES);
			MPI_Recv(buf, PINGPONG_BYTES, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (i = 0; i < PINGPONG_BYTES; i++) {
				uint8_t want = pattern(it, i) ^ 0xff;

				if (buf[i] != want)
					fail(rank, "ping-pong reply", it, i);
			}
		} else if (rank == 1) {
			MPI_Recv(buf, PINGPONG_BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (i = 0; i < PINGPONG_BYTES; i++) {
				if (buf[i] != pattern(it, i))
					fail(rank, "ping-pong message", it, i);
				buf[i] ^= 0xff;
			}
			MPI_Send(buf, PINGPONG_BYTES, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
		}
	}
	t0 = MPI_Wtime() - t0;
	free(buf);
	return t0;
}

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 100;
	double t_start = now(CLOCK_REALTIME), t_all, t_pp, t_init, t_fin;
	int rank, size;

	t_init = now(CLOCK_MONOTONIC);
	MPI_Init(&argc, &argv);
	t_init = now(CLOCK_MONOTONIC) - t_init;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi_check [ITERS >= 1]\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t_all = allreduce(rank, size, iters);
	MPI_Barrier(MPI_COMM_WORLD);
	t_pp = pingpong(rank, iters);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		printf("mpi_check: allreduce %d doubles x %ld: %.3f s\n", ALLREDUCE_N, iters, t_all);
		printf("mpi_check: ping-pong 1 MiB x %ld: %.3f s (%.1f MB/s each way)\n", iters,
		       t_pp, 2.0 * iters * PINGPONG_BYTES / t_pp / 1e6);
		printf("mpi_check: total %.3f s\n", t_all + t_pp);
		printf("mpi_check: ok\n");
		fflush(stdout);
	}
	t_fin = now(CLOCK_MONOTONIC);
	MPI_Finalize();
	t_fin = now(CLOCK_MONOTONIC) - t_fin;
	printf("mpi_check: rank %d: started %.3f, MPI_Init %.3f s, MPI_Finalize %.3f s, ended %.3f\n",
	       rank, t_start, t_init, t_fin, now(CLOCK_REALTIME));
	return 0;
}
