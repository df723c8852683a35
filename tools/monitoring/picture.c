/* Copyright (c) 2026 The ob1x developers. BSD-3-Clause, see LICENSE. */
/*
 * Heatmaps of matrices, SVG and PNG, from one layout: the matrix (row i =
 * rank i, top to bottom; column j = rank j, left to right), rank labels on
 * both axes, a title above, a colour scale with its units on the right.
 *
 * Readable from 2 to 1024 ranks: cells are 48 px for tiny matrices and 1 px
 * at 768 ranks and above; rank labels every 1, 2, 5, 10, 20, 50... ranks so
 * that they never overlap. Above MON_PNG_MAX_CELLS (PNG) or
 * MON_SVG_MAX_CELLS (SVG: one element per non-zero cell) ranks, cells
 * become buckets of consecutive ranks holding the sum, and the title says
 * how many ranks a cell holds.
 */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mon_tool.h"

#define MON_PNG_MAX_CELLS 1024
#define MON_SVG_MAX_CELLS 256
#define MON_TARGET_SIDE 768 /* pixels the matrix aims at */
#define MON_MAX_CELL_PX 48
#define CHAR_W 6 /* 5x7 glyph + 1 column of space */
#define CHAR_H 8

typedef struct layout {
    int n;       /* ranks */
    int b;       /* ranks per cell */
    int nb;      /* cells per side */
    int cs;      /* pixels per cell */
    int side;    /* nb * cs */
    int x0, y0;  /* top left corner of the matrix */
    int step;    /* ranks between labels */
    int bar_x;   /* colour bar */
    int w, h;    /* whole picture */
    double vmax; /* largest cell */
    mon_matrix_t cells;
} layout_t;

const char *mon_units_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strstr(base, "_msg_")) {
        return "messages";
    }
    if (strstr(base, "_avg_")) {
        return "bytes/message";
    }
    return "bytes";
}

static int digits_of(int v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* Sum of each b x b block of ranks. */
static int bucket(const mon_matrix_t *m, int b, mon_matrix_t *out)
{
    int nb = (m->n + b - 1) / b;
    if (0 != mon_matrix_alloc(out, nb)) {
        return mon_error("out of memory");
    }
    for (int i = 0; i < m->n; i++) {
        for (int j = 0; j < m->n; j++) {
            *mon_at(out, i / b, j / b) += m->v[(size_t) i * m->n + j];
        }
    }
    return 0;
}

static int choose_step(const layout_t *l)
{
    static const int mult[3] = {1, 2, 5};
    int need = CHAR_W * digits_of(l->n - 1) + CHAR_W;
    for (int scale = 1;; scale *= 10) {
        for (int k = 0; k < 3; k++) {
            int step = mult[k] * scale;
            if ((double) step * l->cs / l->b >= need || step >= l->n) {
                return step;
            }
        }
    }
}

static int make_layout(const mon_matrix_t *m, int max_cells, const char *title, layout_t *l)
{
    memset(l, 0, sizeof(*l));
    l->n = m->n;
    l->b = (m->n + max_cells - 1) / max_cells;
    if (0 != bucket(m, l->b, &l->cells)) {
        return 1;
    }
    l->nb = l->cells.n;
    l->cs = MON_TARGET_SIDE / l->nb;
    l->cs = l->cs < 1 ? 1 : l->cs > MON_MAX_CELL_PX ? MON_MAX_CELL_PX : l->cs;
    l->side = l->nb * l->cs;
    l->step = choose_step(l);
    l->x0 = CHAR_W * (digits_of(l->n - 1) + 6);
    l->y0 = 3 * CHAR_H + 12;
    l->bar_x = l->x0 + l->side + 24;
    l->w = l->bar_x + 16 + 8 + CHAR_W * 14;
    int tw = l->x0 + 2 * CHAR_W * (int) strlen(title) + 16;
    l->w = l->w < tw ? tw : l->w;
    int bar_h = l->side < 120 ? 120 : l->side;
    l->h = l->y0 + bar_h + 3 * CHAR_H + 16;
    for (size_t k = 0; k < (size_t) l->nb * l->nb; k++) {
        l->vmax = l->cells.v[k] > l->vmax ? l->cells.v[k] : l->vmax;
    }
    return 0;
}

/* Position of a value on the scale, in [0, 1]. */
static double scale_pos(const layout_t *l, const mon_picture_opts_t *o, double v)
{
    if (l->vmax <= 0) {
        return 0;
    }
    return o->log_scale ? log1p(v) / log1p(l->vmax) : v / l->vmax;
}

static double scale_value(const layout_t *l, const mon_picture_opts_t *o, double t)
{
    return o->log_scale ? expm1(t * log1p(l->vmax)) : t * l->vmax;
}

/* Dark blue through teal and green to yellow: ordered in lightness, so a
 * grey printout still reads, and distinct from the white of zero cells. */
static void colour(double t, unsigned char rgb[3])
{
    static const double stop[5][3] = {{0.26, 0.04, 0.40},
                                      {0.22, 0.33, 0.56},
                                      {0.13, 0.56, 0.55},
                                      {0.40, 0.78, 0.36},
                                      {0.98, 0.90, 0.15}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    int k = t >= 1 ? 3 : (int) (t * 4);
    double f = t * 4 - k;
    for (int c = 0; c < 3; c++) {
        double v = stop[k][c] + f * (stop[k + 1][c] - stop[k][c]);
        rgb[c] = (unsigned char) lrint(v * 255);
    }
}

static void format_value(double v, const char *units, char *buf, size_t len)
{
    static const char *const bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    static const char *const dec[] = {"", "k", "M", "G", "T", "P"};
    int bytes = 0 == strcmp(units, "bytes") || 0 == strcmp(units, "bytes/message");
    double base = bytes ? 1024 : 1000;
    int k = 0;
    while (v >= base && k < 5) {
        v /= base;
        k++;
    }
    snprintf(buf, len, "%.3g%s%s", v, bytes ? " " : "", bytes ? bin[k] : dec[k]);
}

/* ---- SVG ---------------------------------------------------------------- */

static void svg_text(FILE *f, int x, int y, const char *anchor, int size, const char *s)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor, size);
    for (; *s; s++) {
        switch (*s) {
            case '<':
                fputs("&lt;", f);
                break;
            case '>':
                fputs("&gt;", f);
                break;
            case '&':
                fputs("&amp;", f);
                break;
            case '"':
                fputs("&quot;", f);
                break;
            default:
                fputc(*s, f);
        }
    }
    fputs("</text>\n", f);
}

static void svg_cells(FILE *f, const layout_t *l, const mon_picture_opts_t *o)
{
    unsigned char c[3];
    for (int i = 0; i < l->nb; i++) {
        for (int j = 0; j < l->nb; j++) {
            double v = l->cells.v[(size_t) i * l->nb + j];
            if (v <= 0) {
                continue; /* zero: the white background */
            }
            colour(scale_pos(l, o, v), c);
            fprintf(f,
                    "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                    "fill=\"#%02x%02x%02x\"><title>%d,%d: %.0f</title></rect>\n",
                    l->x0 + j * l->cs, l->y0 + i * l->cs, l->cs, l->cs, c[0], c[1], c[2], i * l->b,
                    j * l->b, v);
        }
    }
}

static void svg_axes(FILE *f, const layout_t *l)
{
    char s[32];
    for (int r = 0; r < l->n; r += l->step) {
        int at = (r / l->b) * l->cs + l->cs / 2;
        snprintf(s, sizeof(s), "%d", r);
        svg_text(f, l->x0 - 4, l->y0 + at + 4, "end", 10, s);
        svg_text(f, l->x0 + at, l->y0 + l->side + 12, "middle", 10, s);
    }
    svg_text(f, l->x0 + l->side / 2, l->y0 + l->side + 28, "middle", 11, "rank");
    svg_text(f, 4, l->y0 - 6, "start", 11, "rank");
}

static void svg_scale(FILE *f, const layout_t *l, const mon_picture_opts_t *o)
{
    unsigned char c[3];
    int bar_h = l->side < 120 ? 120 : l->side;
    fputs("<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", f);
    for (int k = 0; k <= 16; k++) {
        colour(k / 16.0, c);
        fprintf(f, "<stop offset=\"%.4f\" stop-color=\"#%02x%02x%02x\"/>\n", k / 16.0, c[0], c[1],
                c[2]);
    }
    fputs("</linearGradient></defs>\n", f);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%d\" fill=\"url(#scale)\"/>\n",
            l->bar_x, l->y0, bar_h);
    for (int k = 0; k <= 4; k++) {
        char s[64];
        format_value(scale_value(l, o, k / 4.0), o->units, s, sizeof(s));
        svg_text(f, l->bar_x + 20, l->y0 + bar_h - k * bar_h / 4 + 4, "start", 10, s);
    }
    svg_text(f, l->bar_x, l->y0 - 6, "start", 11, o->units);
}

int mon_picture_svg(const char *path, const mon_matrix_t *m, const mon_picture_opts_t *o)
{
    layout_t l;
    char title[1024];
    if (0 != make_layout(m, MON_SVG_MAX_CELLS, o->title, &l)) {
        return 1;
    }
    FILE *f = fopen(path, "w");
    if (NULL == f) {
        mon_matrix_free(&l.cells);
        return mon_error("cannot write %s: %s", path, strerror(errno));
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            l.w, l.h, l.w, l.h);
    if (l.b > 1) {
        snprintf(title, sizeof(title), "%s (%d ranks per cell)", o->title, l.b);
    } else {
        snprintf(title, sizeof(title), "%s", o->title);
    }
    svg_text(f, l.x0, 18, "start", 14, title);
    fprintf(f,
            "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
            "fill=\"#ffffff\" stroke=\"#999999\"/>\n",
            l.x0, l.y0, l.side, l.side);
    svg_cells(f, &l, o);
    svg_axes(f, &l);
    svg_scale(f, &l, o);
    fputs("</svg>\n", f);
    mon_matrix_free(&l.cells);
    return 0 == fclose(f) ? 0 : mon_error("cannot write %s: %s", path, strerror(errno));
}

/* ---- PNG ---------------------------------------------------------------- */

typedef struct canvas {
    int w, h;
    unsigned char *px; /* RGB */
} canvas_t;

static void fill(canvas_t *c, int x, int y, int w, int h, const unsigned char rgb[3])
{
    for (int yy = y < 0 ? 0 : y; yy < y + h && yy < c->h; yy++) {
        for (int xx = x < 0 ? 0 : x; xx < x + w && xx < c->w; xx++) {
            memcpy(&c->px[3 * ((size_t) yy * c->w + xx)], rgb, 3);
        }
    }
}

/* Text in the 5x7 font, scaled by s, x = left edge (align 0), centre (1) or
 * right edge (2). */
static void text(canvas_t *c, int x, int y, int align, int s, const char *str)
{
    static const unsigned char black[3] = {0, 0, 0};
    int w = (int) strlen(str) * CHAR_W * s;
    x -= align * w / 2;
    for (; *str; str++, x += CHAR_W * s) {
        for (int r = 0; r < 7; r++) {
            unsigned bits = mon_font_row((unsigned char) *str, r);
            for (int k = 0; k < 5; k++) {
                if (bits & (0x10u >> k)) {
                    fill(c, x + k * s, y + r * s, s, s, black);
                }
            }
        }
    }
}

static void png_draw(canvas_t *c, const layout_t *l, const mon_picture_opts_t *o, const char *title)
{
    static const unsigned char grey[3] = {0x99, 0x99, 0x99}, white[3] = {255, 255, 255};
    unsigned char rgb[3];
    char s[64];
    fill(c, 0, 0, c->w, c->h, white);
    text(c, l->x0, 6, 0, 2, title);
    fill(c, l->x0 - 1, l->y0 - 1, l->side + 2, l->side + 2, grey);
    fill(c, l->x0, l->y0, l->side, l->side, white);
    for (int i = 0; i < l->nb; i++) {
        for (int j = 0; j < l->nb; j++) {
            double v = l->cells.v[(size_t) i * l->nb + j];
            if (v > 0) {
                colour(scale_pos(l, o, v), rgb);
                fill(c, l->x0 + j * l->cs, l->y0 + i * l->cs, l->cs, l->cs, rgb);
            }
        }
    }
    for (int r = 0; r < l->n; r += l->step) {
        int at = (r / l->b) * l->cs + l->cs / 2;
        snprintf(s, sizeof(s), "%d", r);
        text(c, l->x0 - 4, l->y0 + at - 3, 2, 1, s);
        text(c, l->x0 + at, l->y0 + l->side + 4, 1, 1, s);
    }
    text(c, l->x0 + l->side / 2, l->y0 + l->side + 4 + 2 * CHAR_H, 1, 1, "RANK");
    text(c, 4, l->y0 - CHAR_H - 2, 0, 1, "RANK");
    int bar_h = l->side < 120 ? 120 : l->side;
    for (int y = 0; y < bar_h; y++) {
        colour(1.0 - (double) y / (bar_h - 1), rgb);
        fill(c, l->bar_x, l->y0 + y, 16, 1, rgb);
    }
    for (int k = 0; k <= 4; k++) {
        format_value(scale_value(l, o, k / 4.0), o->units, s, sizeof(s));
        text(c, l->bar_x + 20, l->y0 + bar_h - k * (bar_h - 1) / 4 - 3, 0, 1, s);
    }
    text(c, l->bar_x, l->y0 - 2 * CHAR_H - 2, 0, 1, o->units);
}

static int png_save(const char *path, const canvas_t *c)
{
    FILE *f = fopen(path, "wb");
    if (NULL == f) {
        return mon_error("cannot write %s: %s", path, strerror(errno));
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (NULL == info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return mon_error("cannot write %s: libpng failed", path);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, c->w, c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < c->h; y++) {
        png_write_row(png, &c->px[3 * (size_t) y * c->w]);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0 == fclose(f) ? 0 : mon_error("cannot write %s: %s", path, strerror(errno));
}

int mon_picture_png(const char *path, const mon_matrix_t *m, const mon_picture_opts_t *o)
{
    layout_t l;
    char title[1024];
    if (0 != make_layout(m, MON_PNG_MAX_CELLS, o->title, &l)) {
        return 1;
    }
    if (l.b > 1) {
        snprintf(title, sizeof(title), "%s (%d ranks per cell)", o->title, l.b);
    } else {
        snprintf(title, sizeof(title), "%s", o->title);
    }
    int tw = l.x0 + 2 * CHAR_W * (int) strlen(title) + 16;
    canvas_t c = {l.w < tw ? tw : l.w, l.h, NULL};
    c.px = malloc(3 * (size_t) c.w * c.h);
    int rc = NULL == c.px ? mon_error("out of memory") : 0;
    if (0 == rc) {
        png_draw(&c, &l, o, title);
        rc = png_save(path, &c);
    }
    free(c.px);
    mon_matrix_free(&l.cells);
    return rc;
}

/* ---- heatmap command -------------------------------------------------------- */

static void heatmap_usage(FILE *f)
{
    fputs("Usage: ob1x-monitoring heatmap [options] FILE.mat ...\n"
          "\n"
          "Draws each matrix as FILE.svg and FILE.png (beside it, or OUT.svg/OUT.png).\n"
          "\n"
          "Options:\n"
          "  --svg / --png     only that format (default: both)\n"
          "  -o, --output OUT  name without extension (one matrix only)\n"
          "  --title TEXT      title (default: the file name)\n"
          "  --units TEXT      units of the colour scale (default from the name:\n"
          "                    _size_ bytes, _msg_ messages, _avg_ bytes/message)\n"
          "  --log             logarithmic colour scale\n",
          f);
}

static int heatmap_one(const char *path, const char *out, int svg, int png, mon_picture_opts_t o)
{
    mon_matrix_t m;
    char name[4096];
    if (0 != mon_matrix_read(path, &m)) {
        return 1;
    }
    size_t len = strlen(path);
    int ext = len > 4 && 0 == strcmp(path + len - 4, ".mat") ? 4 : 0;
    if (NULL == out) {
        snprintf(name, sizeof(name), "%.*s", (int) (len - ext), path);
        out = name;
    }
    const char *base = strrchr(path, '/');
    o.title = o.title ? o.title : base ? base + 1 : path;
    o.units = o.units ? o.units : mon_units_from_name(path);
    char file[4200];
    int rc = 0;
    if (svg) {
        snprintf(file, sizeof(file), "%s.svg", out);
        rc = mon_picture_svg(file, &m, &o);
    }
    if (0 == rc && png) {
        snprintf(file, sizeof(file), "%s.png", out);
        rc = mon_picture_png(file, &m, &o);
    }
    mon_matrix_free(&m);
    return rc;
}

int mon_cmd_heatmap(int argc, char **argv)
{
    mon_picture_opts_t o = {0};
    const char *out = NULL;
    int svg = 0, png = 0, npos = 0;
    char **pos = calloc((size_t) argc, sizeof(char *));
    if (NULL == pos) {
        return mon_error("out of memory");
    }
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        if ('-' != a[0]) {
            pos[npos++] = argv[k];
        } else if ((0 == strcmp(a, "-o") || 0 == strcmp(a, "--output")) && k + 1 < argc) {
            out = argv[++k];
        } else if (0 == strcmp(a, "--title") && k + 1 < argc) {
            o.title = argv[++k];
        } else if (0 == strcmp(a, "--units") && k + 1 < argc) {
            o.units = argv[++k];
        } else if (0 == strcmp(a, "--svg")) {
            svg = 1;
        } else if (0 == strcmp(a, "--png")) {
            png = 1;
        } else if (0 == strcmp(a, "--log")) {
            o.log_scale = 1;
        } else if (0 == strcmp(a, "-h") || 0 == strcmp(a, "--help")) {
            heatmap_usage(stdout);
            free(pos);
            return 0;
        } else {
            mon_error("heatmap: unknown option '%s'", a);
            npos = -1;
            break;
        }
    }
    int rc = 0;
    if (npos <= 0 || (out && npos != 1)) {
        heatmap_usage(stderr);
        rc = 2;
    }
    if (!svg && !png) {
        svg = png = 1;
    }
    for (int k = 0; 0 == rc && k < npos; k++) {
        rc = heatmap_one(pos[k], out, svg, png, o);
    }
    free(pos);
    return rc;
}
