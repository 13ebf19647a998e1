// SPDX-License-Identifier: GPL-2.0
/*
 * The module's trace events (kernel/trace.h), defined once here for every
 * file that emits them.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
