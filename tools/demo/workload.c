// SPDX-License-Identifier: GPL-2.0
/*
 * The demo's workload: a little query engine with a few layers of calls,
 * built with -O2 -fomit-frame-pointer (and gas's SFrame) so that frame
 * pointer unwinding cannot see past the function a sample lands in.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE	__attribute__((noinline))
#define TABLE_SIZE	4096
#define BATCH		512
#define ROUNDS_DEFAULT	400

static unsigned long table[TABLE_SIZE];
static unsigned long sink;

NOINLINE static unsigned long hash_step(unsigned long h, unsigned long v)
{
	int i;

	for (i = 0; i < 64; i++)
		h = (h ^ (v >> (i & 7))) * 0x100000001b3UL;
	return h;
}

NOINLINE static unsigned long lookup(unsigned long key)
{
	unsigned long h = hash_step(0xcbf29ce484222325UL, key);

	return table[h % TABLE_SIZE];
}

NOINLINE static unsigned long query(unsigned long key)
{
	unsigned long v = lookup(key) + lookup(key ^ 0x5a5a);

	sink += v;
	return v;
}

NOINLINE static int less(unsigned long x, unsigned long y)
{
	return (x ^ 0x55) < (y ^ 0x55);
}

/* Shell sort, in the program: the C library has no SFrame to unwind. */
NOINLINE static void shell_sort(unsigned long *v, int n)
{
	int gap, i, j;

	for (gap = n / 2; gap > 0; gap /= 2)
		for (i = gap; i < n; i++) {
			unsigned long t = v[i];

			for (j = i; j >= gap && less(t, v[j - gap]); j -= gap)
				v[j] = v[j - gap];
			v[j] = t;
		}
}

NOINLINE static void sort_batch(unsigned long *batch)
{
	shell_sort(batch, BATCH);
	sink += batch[0];
}

NOINLINE static void run_round(unsigned long seed)
{
	unsigned long batch[BATCH];
	int i;

	for (i = 0; i < BATCH; i++)
		batch[i] = query(seed * BATCH + i);
	sort_batch(batch);
}

NOINLINE static void serve(int rounds)
{
	int r;

	for (r = 0; r < rounds; r++)
		run_round(r);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS_DEFAULT;
	int i;

	for (i = 0; i < TABLE_SIZE; i++)
		table[i] = i * 2654435761UL;
	serve(rounds);
	printf("%lu\n", sink);
	return 0;
}
