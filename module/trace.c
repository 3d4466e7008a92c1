// SPDX-License-Identifier: GPL-2.0
/*
 * DST tracepoints: the one place they are instantiated.  trace.h
 * declares them; client.c and export.c fire them.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
