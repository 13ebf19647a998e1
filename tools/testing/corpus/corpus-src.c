// SPDX-License-Identifier: GPL-2.0
/*
 * Corpus program for the decoder tests: a few call levels, a variable-size
 * frame, a leaf, a recursive function and a switch, so that the compiler
 * emits SP- and FP-based rows, pushes, pops and tail paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS	16

__attribute__((noinline)) static int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int dynamic_frame(int n)
{
	char *buf = __builtin_alloca(n + 1);

	memset(buf, n, n + 1);
	return buf[n / 2] + leaf(n);
}

__attribute__((noinline)) static int recurse(int depth)
{
	if (depth <= 0)
		return dynamic_frame(depth + 8);
	return recurse(depth - 1) + depth;
}

__attribute__((noinline)) static int dispatch(int op, int v)
{
	switch (op & 3) {
	case 0:
		return leaf(v);
	case 1:
		return recurse(v & 7);
	case 2:
		return dynamic_frame(v & 31);
	default:
		return op - v;
	}
}

int main(int argc, char **argv)
{
	int i, acc = 0;

	for (i = 0; i < ROUNDS; i++)
		acc += dispatch(i + argc, i);
	printf("%d\n", argc > 1 ? atoi(argv[1]) + acc : acc);
	return 0;
}
