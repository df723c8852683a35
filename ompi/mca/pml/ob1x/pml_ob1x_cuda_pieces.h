/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * The copy between a device buffer and its host copy made piece by piece
 * (pml_ob1x_cuda_pieces.c), so that it overlaps the transfer. Only built
 * with CUDA support.
 */
#ifndef PML_OB1X_CUDA_PIECES_H
#define PML_OB1X_CUDA_PIECES_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct ob1x_cuda_pieces ob1x_cuda_pieces_t;

/* Registers pml_ob1x_cuda_stage_piece. */
void ob1x_cuda_pieces_register_params(void);
/* Whether a copy of len bytes is made in pieces (at least two of them,
 * pieces on). */
bool ob1x_cuda_pieces_fit(size_t len);
/* The pieces of a copy of len bytes from src to dst, none started; NULL
 * when len is below two pieces or piecewise copies are off. */
ob1x_cuda_pieces_t *ob1x_cuda_pieces_new(void *dst, const void *src, size_t len);
/* Forget what was started and counted (a persistent receive restarts);
 * the caller has waited for the copies. */
void ob1x_cuda_pieces_reset(ob1x_cuda_pieces_t *ps);
/* Start every piece, in order (the library's stream runs them in order). */
int ob1x_cuda_pieces_start_all(ob1x_cuda_pieces_t *ps);
/* Whether [0, upto) is copied: polls the started pieces in order, never
 * waits. OMPI_SUCCESS with *ready, or OMPI_ERROR (a copy failed). */
int ob1x_cuda_pieces_ready(ob1x_cuda_pieces_t *ps, size_t upto, bool *ready);
/* [offset, offset + len) of the source is final: count it, and start the
 * pieces it completes. */
int ob1x_cuda_pieces_landed(ob1x_cuda_pieces_t *ps, size_t offset, size_t len);
/* [0, upto) of the source is final: start the pieces wholly within it
 * not started yet. */
int ob1x_cuda_pieces_final_upto(ob1x_cuda_pieces_t *ps, size_t upto);
/* Wait for every started piece, then copy those never started, within
 * [0, upto), in one go each (the receiver's completion). OMPI_SUCCESS or
 * OMPI_ERROR; *early: pieces that were copied before this call. */
int ob1x_cuda_pieces_finish(ob1x_cuda_pieces_t *ps, size_t upto, int *early);
/* Wait for what is in flight and free. */
void ob1x_cuda_pieces_free(ob1x_cuda_pieces_t *ps);

#endif /* PML_OB1X_CUDA_PIECES_H */
