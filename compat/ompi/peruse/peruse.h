/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * Debian's libopenmpi-dev ships ompi/peruse/peruse-internal.h (pulled in by the
 * PML base request headers) but not the public peruse.h it includes. The host
 * is built without PERUSE (OMPI_WANT_PERUSE 0), so the internal header only
 * needs the event handle type to exist.
 */
#ifndef OB1X_COMPAT_PERUSE_H
#define OB1X_COMPAT_PERUSE_H

typedef void *peruse_event_h;

#endif
