/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The version of sframe-unwind: the module's (modinfo) and the tools'
 * (--version), from this one place.
 */
#ifndef _SFRAME_VERSION_H
#define _SFRAME_VERSION_H

#define SFU_VERSION	"0.2"

#endif /* _SFRAME_VERSION_H */
