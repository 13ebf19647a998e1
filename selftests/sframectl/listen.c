// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_listen MS: take the module's lease on the wait at first mapping for
 * MS milliseconds (SFRAME_UNWIND_IOC_LISTEN), as sframectl daemon does,
 * and never answer: a daemon whose workers are all stuck, as the module
 * sees it.  firstmap_waits.sh runs it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>

int main(int argc, char **argv)
{
	struct sframe_unwind_listen a = { .size = sizeof(a) };
	int dev;

	if (argc != 2) {
		fprintf(stderr, "usage: sfu_listen MS\n");
		return 2;
	}
	a.lease_ms = atoi(argv[1]);
	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0 || ioctl(dev, SFRAME_UNWIND_IOC_LISTEN, &a)) {
		perror("sfu_listen");
		return 1;
	}
	close(dev);
	return 0;
}
