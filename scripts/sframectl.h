/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sframectl's files share (scripts/sframectl*.c).
 */
#ifndef _SCRIPTS_SFRAMECTL_H
#define _SCRIPTS_SFRAMECTL_H

#include <stdbool.h>
#include <stddef.h>

#include "../include/sframe/env.h"
#include "../include/uapi/linux/sframe_unwind.h"

#define CTL_PATH_MAX		4096
#define CTL_LINE_MAX		(CTL_PATH_MAX + 256)

extern const char *ctl_prog;

/* A file, as /proc/PID/maps and the trace event name it. */
struct ctl_key {
	unsigned int major, minor;
	unsigned long long ino;
};

/* One executable file mapping, as /proc/PID/maps shows it. */
struct ctl_map {
	unsigned long start, end;
	struct ctl_key key;
	char path[CTL_PATH_MAX];
};

/* Files handled already: registered, refused, or with SFrame. */
struct ctl_seen {
	struct ctl_key *keys;
	size_t nr, cap;
};

enum ctl_result { CTL_ADDED, CTL_HAS_SFRAME, CTL_ALREADY, CTL_FAILED };

struct ctl_tally {
	unsigned int added, own, already, failed;
};

int ctl_open_dev(void);
enum ctl_result ctl_add_one(int dev, const char *path, const char *name,
			    u32 flags, bool quiet);
bool ctl_parse_map(const char *line, struct ctl_map *m);
bool ctl_seen_add(struct ctl_seen *s, const struct ctl_key *k);
void ctl_seen_free(struct ctl_seen *s);
void ctl_count(struct ctl_tally *t, enum ctl_result res);
int ctl_sync(int dev, struct ctl_seen *seen);
int ctl_daemon(void);

#endif /* _SCRIPTS_SFRAMECTL_H */
