/* The host arithmetic of a matmul launch, in C99 with no dependency but <stdint.h>: the grid,
 * the kernel's scalar arguments and the global workspace of a persistent matmul kernel for a
 * problem (M, N, K) on a device of `sm_count` SMs. One source for the templates (which compile it
 * as C++) and for an exported kernel pack's launcher (which compiles it as C, without MLIR or
 * the tool): what is fixed when a kernel is compiled is an mgpu_lm_matmul, what a call brings
 * is M, N, K and the SM count.
 *
 * Contract: every function is pure; sizes are positive (1 <= M, N, K <= 2^31 - 1, sm_count >= 1)
 * and the consts are a valid config's (tiles > 0). The kernels' TileWalk (tile_walk.h) walks the
 * work this grid launches; the workspace is laid out as matmul_sm90/config.h says: one u32
 * arrival counter per (output tile, consumer warpgroup), 256-byte aligned, which must be zero
 * when a launch starts and which every launch leaves at zero, then the f32 partial tiles. */
#ifndef MGPU_KERNELS_MATMUL_LAUNCH_MATH_H
#define MGPU_KERNELS_MATMUL_LAUNCH_MATH_H

#include <stdint.h>

enum { MGPU_LM_DATA_PARALLEL = 0, MGPU_LM_SPLIT_K = 1, MGPU_LM_STREAM_K = 2 };

typedef struct mgpu_lm_matmul {
  int32_t cta_tile_m, cta_tile_n; /* one CTA's output tile */
  int32_t cluster_m, cluster_n;   /* CTA tiles in a cluster tile (split-K and stream-K: 1 x 1) */
  int32_t tile_k;                 /* K of one k-step */
  int32_t schedule;               /* MGPU_LM_* */
  int32_t split_k;                /* the config's K ranges per tile (split-K schedule) */
  int32_t minor_is_n;             /* the tile walk's minor dimension is N (a run-time argument) */
  int32_t grid_tile_width;        /* the tile walk's band width (a run-time argument) */
  int32_t counters_per_tile;      /* u32 arrival counters per output tile (the consumer warpgroups) */
  int64_t max_workspace_bytes;    /* the most workspace a launch may take (split-K and stream-K) */
} mgpu_lm_matmul;

typedef struct mgpu_lm_workspace {
  int64_t tiles;         /* output tiles */
  int64_t counter_bytes; /* the arrival counters, rounded up to 256 bytes */
  int64_t slots;         /* f32 partial tiles, each cta_tile_m x cta_tile_n */
  int64_t partial_bytes;
} mgpu_lm_workspace;

static inline int64_t mgpu_lm_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t mgpu_lm_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t mgpu_lm_max(int64_t a, int64_t b) { return a > b ? a : b; }

static inline int64_t mgpu_lm_k_steps(const mgpu_lm_matmul* c, int64_t k) { return mgpu_lm_cdiv(k, c->tile_k); }

/* Output tiles of one CTA tile each. */
static inline int64_t mgpu_lm_tiles(const mgpu_lm_matmul* c, int64_t m, int64_t n) {
  return mgpu_lm_cdiv(m, c->cta_tile_m) * mgpu_lm_cdiv(n, c->cta_tile_n);
}

/* The workspace with `slots_per_tile` partials per output tile and `fixed_slots` more; none for
 * a data-parallel kernel. */
static inline mgpu_lm_workspace mgpu_lm_workspace_for(const mgpu_lm_matmul* c, int64_t m, int64_t n,
                                                      int64_t slots_per_tile, int64_t fixed_slots) {
  mgpu_lm_workspace w = {0, 0, 0, 0};
  if (c->schedule == MGPU_LM_DATA_PARALLEL) return w;
  w.tiles = mgpu_lm_tiles(c, m, n);
  w.counter_bytes = mgpu_lm_cdiv(w.tiles * c->counters_per_tile * 4, 256) * 256;
  w.slots = w.tiles * slots_per_tile + fixed_slots;
  w.partial_bytes = w.slots * (int64_t)c->cta_tile_m * c->cta_tile_n * 4;
  return w;
}

/* The K ranges a split-K launch really uses: the config's count, held to the k-steps (no range
 * is empty) and to the workspace bound; 1 for the other schedules. The launcher passes it, so a
 * config tuned at one shape runs correctly at any other. */
static inline int32_t mgpu_lm_effective_split_k(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k) {
  int64_t s, slots_that_fit;
  if (c->schedule != MGPU_LM_SPLIT_K) return 1;
  s = mgpu_lm_min(mgpu_lm_max(1, c->split_k), mgpu_lm_k_steps(c, k));
  /* Divided, not multiplied: 2^31-wide problems have 2^50 tiles, whose partials pass 2^63 bytes. */
  slots_that_fit = (c->max_workspace_bytes - mgpu_lm_workspace_for(c, m, n, 0, 0).counter_bytes) /
                   ((int64_t)c->cta_tile_m * c->cta_tile_n * 4);
  s = mgpu_lm_min(s, slots_that_fit < 0 ? 0 : slots_that_fit / mgpu_lm_tiles(c, m, n));
  return (int32_t)mgpu_lm_max(s, 1);
}

/* Stream-K: one CTA per SM, no more than the tiles' k-steps, and no more than the workspace
 * bound holds partial slots for (two per CTA). */
static inline uint32_t mgpu_lm_stream_k_grid(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count) {
  const int64_t iters = mgpu_lm_tiles(c, m, n) * mgpu_lm_k_steps(c, k);
  const mgpu_lm_workspace counters = mgpu_lm_workspace_for(c, m, n, 0, 0);
  const int64_t room = (c->max_workspace_bytes - counters.counter_bytes) / (2 * (int64_t)c->cta_tile_m * c->cta_tile_n * 4);
  return (uint32_t)mgpu_lm_max(1, mgpu_lm_min(mgpu_lm_min(mgpu_lm_max(1, sm_count), iters), room));
}

/* A persistent grid: as many whole clusters as fit on `sm_count` SMs, no more than there are
 * work units (cluster tiles x `units_per_tile`), at least one cluster. */
static inline uint32_t mgpu_lm_persistent_grid(int64_t m, int64_t n, int64_t cluster_tile_m, int64_t cluster_tile_n,
                                               int64_t cluster_size, int64_t units_per_tile, int sm_count) {
  const int64_t tiles = mgpu_lm_cdiv(m, cluster_tile_m) * mgpu_lm_cdiv(n, cluster_tile_n);
  const int64_t clusters = mgpu_lm_min(sm_count / cluster_size, tiles * mgpu_lm_max(1, units_per_tile));
  return (uint32_t)(mgpu_lm_max(clusters, 1) * cluster_size);
}

/* The launch's grid (blocks along x). */
static inline uint32_t mgpu_lm_grid(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count) {
  if (c->schedule == MGPU_LM_STREAM_K) return mgpu_lm_stream_k_grid(c, m, n, k, sm_count);
  return mgpu_lm_persistent_grid(m, n, (int64_t)c->cta_tile_m * c->cluster_m, (int64_t)c->cta_tile_n * c->cluster_n,
                                 (int64_t)c->cluster_m * c->cluster_n, mgpu_lm_effective_split_k(c, m, n, k), sm_count);
}

/* The launch's workspace: split-K keeps effective_split_k partials per tile (none when that is
 * 1: a tile's only unit stores its output itself, as a config tuned at a longer K meets a
 * shorter one), stream-K two per CTA of its grid. */
static inline mgpu_lm_workspace mgpu_lm_workspace_of(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k,
                                                     int sm_count) {
  int32_t splits;
  if (c->schedule == MGPU_LM_STREAM_K)
    return mgpu_lm_workspace_for(c, m, n, 0, 2 * (int64_t)mgpu_lm_stream_k_grid(c, m, n, k, sm_count));
  splits = mgpu_lm_effective_split_k(c, m, n, k);
  return mgpu_lm_workspace_for(c, m, n, splits > 1 ? splits : 0, 0);
}

static inline int64_t mgpu_lm_workspace_bytes(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k, int sm_count) {
  const mgpu_lm_workspace w = mgpu_lm_workspace_of(c, m, n, k, sm_count);
  return w.counter_bytes + w.partial_bytes;
}

/* The kernel's i32 arguments after its descriptors (and workspace pointer): M, N, K,
 * minor_is_n, grid_tile_width, then the split count for a split-K kernel. Returns how many
 * (at most MGPU_LM_MAX_SCALARS) were written to `out`. */
#define MGPU_LM_MAX_SCALARS 6
static inline int mgpu_lm_scalar_args(const mgpu_lm_matmul* c, int64_t m, int64_t n, int64_t k,
                                      int32_t out[MGPU_LM_MAX_SCALARS]) {
  int count = 0;
  out[count++] = (int32_t)m;
  out[count++] = (int32_t)n;
  out[count++] = (int32_t)k;
  out[count++] = c->minor_is_n;
  out[count++] = c->grid_tile_width;
  if (c->schedule == MGPU_LM_SPLIT_K) out[count++] = mgpu_lm_effective_split_k(c, m, n, k);
  return count;
}

#endif /* MGPU_KERNELS_MATMUL_LAUNCH_MATH_H */
