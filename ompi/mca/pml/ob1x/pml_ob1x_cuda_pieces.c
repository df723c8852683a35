/*
 * Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE.
 *
 * pml_ob1x_cuda_pieces.c - a staged device buffer's copy made in pieces
 * that overlap the transfer (docs/cuda.md, "Staging"):
 *
 * - sender: every device-to-host piece is started when the send starts
 *   (the library's one stream runs them in order, at the copy engine's
 *   speed); the send begins once the first bytes are there, and each FRAG
 *   leaves once the pieces under it are done, so FRAGs follow the copy;
 * - receiver: a host-to-device piece starts as soon as every byte of it
 *   has arrived, in whatever order the fragments came (a strided buffer:
 *   once the datatype's unpacking, which is in order, has passed it); at
 *   completion only the pieces still missing (data that came by RDMA, a
 *   truncated tail) are copied, after which every copy has landed.
 *
 * Pieces are pml_ob1x_cuda_stage_piece bytes (1 MiB), larger when a
 * message would need more than MAX_PIECES, so that a 1 GiB message costs 64
 * copies and events, not 1024. Below two pieces the copy is made whole.
 */
#include "ompi_config.h"

#include <stdlib.h>

#include "pml_ob1x.h"
#include "pml_ob1x_cuda_pieces.h"

#if OB1X_PML_CUDA
#include "common_ob1x_cuda.h"

#define MAX_PIECES 64

typedef struct {
    size_t got; /* receiver: bytes of it that have arrived */
    int ticket; /* the copy's, once started */
    bool started;
    bool done;
} piece_t;

struct ob1x_cuda_pieces {
    char *dst;
    const char *src;
    size_t len;
    size_t size; /* bytes per piece; the last may be shorter */
    int n;
    int done; /* leading pieces known copied */
    piece_t p[];
};

static size_t piece_size = 1u << 20;

void ob1x_cuda_pieces_register_params(void)
{
    (void) mca_base_component_var_register(
        &mca_pml_ob1x_component.pmlm_version, "cuda_stage_piece",
        "Bytes per piece when ob1x copies a staged device (GPU) buffer piece by piece, so that "
        "the copy overlaps the transfer (messages of at least two pieces, contiguous or strided "
        "at a positive extent; larger pieces for messages of more than 64); 0: every copy "
        "whole, before the send or after the receive (docs/cuda.md)",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL,
        &piece_size);
}

static size_t piece_len(const ob1x_cuda_pieces_t *ps, int i)
{
    size_t off = (size_t) i * ps->size;
    return ps->len - off < ps->size ? ps->len - off : ps->size;
}

bool ob1x_cuda_pieces_fit(size_t len)
{
    return 0 != piece_size && len >= 2 * piece_size;
}

ob1x_cuda_pieces_t *ob1x_cuda_pieces_new(void *dst, const void *src, size_t len)
{
    ob1x_cuda_pieces_t *ps;
    size_t size = piece_size;
    int n;

    if (!ob1x_cuda_pieces_fit(len)) {
        return NULL;
    }
    if (len / size >= MAX_PIECES) {
        size = (len + MAX_PIECES - 1) / MAX_PIECES;
    }
    n = (int) ((len + size - 1) / size);
    ps = calloc(1, sizeof(*ps) + (size_t) n * sizeof(piece_t));
    if (NULL == ps) {
        return NULL; /* the copy is made whole */
    }
    ps->dst = dst;
    ps->src = src;
    ps->len = len;
    ps->size = size;
    ps->n = n;
    return ps;
}

void ob1x_cuda_pieces_reset(ob1x_cuda_pieces_t *ps)
{
    ps->done = 0;
    for (int i = 0; i < ps->n; ++i) {
        ps->p[i] = (piece_t){.got = 0, .ticket = -1, .started = false, .done = false};
    }
}

/* Start the copy of piece i's first len bytes. */
static int start_len(ob1x_cuda_pieces_t *ps, int i, size_t len)
{
    size_t off = (size_t) i * ps->size;

    if (OPAL_SUCCESS != ob1x_cuda_copy_start(ps->dst + off, ps->src + off, len, &ps->p[i].ticket)) {
        return OMPI_ERROR;
    }
    ps->p[i].started = true;
    (void) ob1x_counter_add(&ob1x_counters.events[OB1X_EV_CUDA_STAGED], len);
    return OMPI_SUCCESS;
}

static int start(ob1x_cuda_pieces_t *ps, int i)
{
    return start_len(ps, i, piece_len(ps, i));
}

int ob1x_cuda_pieces_start_all(ob1x_cuda_pieces_t *ps)
{
    for (int i = 0; i < ps->n; ++i) {
        if (OMPI_SUCCESS != start(ps, i)) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

/* Poll piece i once. */
static int test(ob1x_cuda_pieces_t *ps, int i)
{
    int rc;

    if (ps->p[i].done || !ps->p[i].started) {
        return OMPI_SUCCESS;
    }
    rc = ob1x_cuda_copy_test(ps->p[i].ticket);
    if (OPAL_SUCCESS == rc) {
        ps->p[i].done = true;
        return OMPI_SUCCESS;
    }
    return OPAL_ERR_RESOURCE_BUSY == rc ? OMPI_SUCCESS : OMPI_ERROR;
}

int ob1x_cuda_pieces_ready(ob1x_cuda_pieces_t *ps, size_t upto, bool *ready)
{
    while (ps->done < ps->n && (size_t) ps->done * ps->size < upto) {
        if (OMPI_SUCCESS != test(ps, ps->done)) {
            return OMPI_ERROR;
        }
        if (!ps->p[ps->done].done) {
            break;
        }
        ps->done++;
    }
    *ready = ps->done == ps->n || (size_t) ps->done * ps->size >= upto;
    return OMPI_SUCCESS;
}

int ob1x_cuda_pieces_landed(ob1x_cuda_pieces_t *ps, size_t offset, size_t len)
{
    size_t end = offset + len < ps->len ? offset + len : ps->len;

    while (offset < end) {
        int i = (int) (offset / ps->size);
        size_t piece_end = (size_t) i * ps->size + piece_len(ps, i);
        size_t take = (end < piece_end ? end : piece_end) - offset;

        ps->p[i].got += take;
        offset += take;
        if (ps->p[i].got == piece_len(ps, i) && !ps->p[i].started && OMPI_SUCCESS != start(ps, i)) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

int ob1x_cuda_pieces_final_upto(ob1x_cuda_pieces_t *ps, size_t upto)
{
    for (int i = 0; i < ps->n && (size_t) i * ps->size + piece_len(ps, i) <= upto; ++i) {
        if (!ps->p[i].started && OMPI_SUCCESS != start(ps, i)) {
            return OMPI_ERROR;
        }
    }
    return OMPI_SUCCESS;
}

/* Wait for every started piece. */
static int wait_started(ob1x_cuda_pieces_t *ps)
{
    int rc = OMPI_SUCCESS;

    for (int i = 0; i < ps->n; ++i) {
        while (ps->p[i].started && !ps->p[i].done) {
            if (OMPI_SUCCESS != test(ps, i)) {
                ps->p[i].done = true; /* the library freed its ticket */
                rc = OMPI_ERROR;
            }
        }
    }
    return rc;
}

int ob1x_cuda_pieces_finish(ob1x_cuda_pieces_t *ps, size_t upto, int *early)
{
    int rc = OMPI_SUCCESS;

    *early = 0;
    for (int i = 0; i < ps->n; ++i) {
        *early += ps->p[i].started;
    }
    for (int i = 0; i < ps->n && OMPI_SUCCESS == rc; ++i) {
        size_t off = (size_t) i * ps->size, len = piece_len(ps, i);
        if (ps->p[i].started || off >= upto) {
            continue;
        }
        rc = start_len(ps, i, off + len > upto ? upto - off : len); /* only what arrived */
    }
    return OMPI_SUCCESS == wait_started(ps) ? rc : OMPI_ERROR;
}

void ob1x_cuda_pieces_free(ob1x_cuda_pieces_t *ps)
{
    if (NULL != ps) {
        (void) wait_started(ps);
        free(ps);
    }
}

#endif /* OB1X_PML_CUDA */
