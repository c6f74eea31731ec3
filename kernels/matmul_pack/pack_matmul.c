/* mgpu_pack.h's matmul: the problem checked, an entry chosen for the current device, the launch
 * computed by launch_math.h, its descriptors written into the caller's workspace. */
#include "pack_matmul.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  int64_t m, n, k;
  mgpu_dtype in, out;
  mgpu_b_layout layout;
} problem;

static int dtype_bytes(mgpu_dtype t) { return t == MGPU_F32 ? 4 : 2; }
static const char* dtype_name(int32_t t) { return t == MGPU_BF16 ? "bf16" : t == MGPU_F16 ? "f16" : "f32"; }

/* The checks no device is needed for. */
static mgpu_status check_problem(const problem* p) {
  if (p->m < 1 || p->n < 1 || p->k < 1 || p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX)
    return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "M, N and K must be in [1, 2^31 - 1], not %lld, %lld, %lld",
                        (long long)p->m, (long long)p->n, (long long)p->k);
  if (p->in != MGPU_BF16 && p->in != MGPU_F16)
    return mgpu_pk_fail(MGPU_ERR_UNSUPPORTED_DTYPE, "the inputs are bf16 or f16, not dtype %d", (int)p->in);
  if (p->out != MGPU_BF16 && p->out != MGPU_F16 && p->out != MGPU_F32)
    return mgpu_pk_fail(MGPU_ERR_UNSUPPORTED_DTYPE, "the output is bf16, f16 or f32, not dtype %d", (int)p->out);
  if (p->layout != MGPU_B_KN && p->layout != MGPU_B_NK)
    return mgpu_pk_fail(MGPU_ERR_UNSUPPORTED_LAYOUT, "B is kn (K x N) or nk (N x K), not layout %d", (int)p->layout);
  /* TMA reads and writes rows of a multiple of 16 bytes. */
  const int64_t in_bytes = dtype_bytes(p->in);
  if (p->k * in_bytes % 16 != 0)
    return mgpu_pk_fail(MGPU_ERR_MISALIGNED, "a row of A (K = %lld %s) is not a multiple of 16 bytes", (long long)p->k,
                        dtype_name(p->in));
  if (p->layout == MGPU_B_KN && p->n * in_bytes % 16 != 0)
    return mgpu_pk_fail(MGPU_ERR_MISALIGNED, "a row of B (N = %lld %s) is not a multiple of 16 bytes", (long long)p->n,
                        dtype_name(p->in));
  if (p->n * dtype_bytes(p->out) % 16 != 0)
    return mgpu_pk_fail(MGPU_ERR_MISALIGNED, "a row of C (N = %lld %s) is not a multiple of 16 bytes", (long long)p->n,
                        dtype_name(p->out));
  return MGPU_OK;
}

static const mgpu_pk_kernel* kernel_of(const mgpu_pk_matmul_entry* e) { return &mgpu_pk_common()->kernels[e->kernel]; }

static int entry_fits(const mgpu_pk_matmul_entry* e, const problem* p, const char* arch) {
  return strcmp(kernel_of(e)->arch, arch) == 0 && e->in == (int32_t)p->in && e->out == (int32_t)p->out &&
         e->layout == (int32_t)p->layout;
}

/* Whether the entry's kernel can run the problem. A split-K kernel always reduces through its
 * workspace (a range is never its tile's only one), so at an effective split of 1 -- K of one
 * k-step, or more tiles than the workspace bound holds two partials each -- it would store
 * partials into slots the launch has none of: mgpu-tune's validity rules refuse the config there,
 * and so does the pack (battery round 18, F13: it wrote past the caller's workspace). */
static int entry_runs(const mgpu_pk_matmul_entry* e, const problem* p) {
  return e->consts.schedule != MGPU_LM_SPLIT_K || mgpu_lm_effective_split_k(&e->consts, p->m, p->n, p->k) >= 2;
}

static double ratio(int64_t a, int64_t b) { return a > b ? (double)a / (double)b : (double)b / (double)a; }

static mgpu_status select_entry(const problem* p, const mgpu_pk_device* d, int* entry, const char** how) {
  const char* arch = mgpu_pk_arch_of(d->cc_major, d->cc_minor);
  const mgpu_pk_matmul_table* t = mgpu_pk_matmul();
  int any_of_arch = 0, nearest = -1, fallback = -1, cannot_run = 0;
  double best = 0;
  for (int i = 0; arch && i < t->count; ++i) {
    const mgpu_pk_matmul_entry* e = &t->entries[i];
    any_of_arch = any_of_arch || strcmp(kernel_of(e)->arch, arch) == 0;
    if (!entry_fits(e, p, arch)) continue;
    if (!entry_runs(e, p)) {
      ++cannot_run;
      continue;
    }
    if (e->is_default) {
      if (fallback < 0) fallback = i;
      continue;
    }
    if (e->m == p->m && e->n == p->n && e->k == p->k) {
      *entry = i;
      *how = "exact";
      return MGPU_OK;
    }
    const double distance = ratio(e->m, p->m) * ratio(e->n, p->n) * ratio(e->k, p->k);
    if (nearest < 0 || distance < best) {
      nearest = i;
      best = distance;
    }
  }
  if (!any_of_arch)
    return mgpu_pk_fail(MGPU_ERR_NO_KERNEL_FOR_ARCH, "the device is compute capability %d.%d; this pack has no kernel for it",
                        d->cc_major, d->cc_minor);
  if (nearest >= 0 || fallback >= 0) {
    *entry = nearest >= 0 ? nearest : fallback;
    *how = nearest >= 0 ? "nearest" : "default";
    return MGPU_OK;
  }
  if (cannot_run)
    return mgpu_pk_fail(MGPU_ERR_NO_KERNEL,
                        "this pack's %d %s matmul kernel(s) of %s inputs, %s output and B %s are split-K kernels that "
                        "cannot run %lld x %lld x %lld (their split would be 1), and it holds no default for them",
                        cannot_run, arch, dtype_name(p->in), dtype_name(p->out), p->layout == MGPU_B_KN ? "kn" : "nk",
                        (long long)p->m, (long long)p->n, (long long)p->k);
  return mgpu_pk_fail(MGPU_ERR_NO_KERNEL, "this pack has no %s matmul kernel of %s inputs, %s output and B %s", arch,
                      dtype_name(p->in), dtype_name(p->out), p->layout == MGPU_B_KN ? "kn" : "nk");
}

static size_t workspace_for(const mgpu_pk_matmul_entry* e, const problem* p, const mgpu_pk_device* d) {
  return MGPU_PK_MATMUL_DESCRIPTOR_BYTES + (size_t)mgpu_lm_workspace_bytes(&e->consts, p->m, p->n, p->k, d->sm_count);
}

static mgpu_status launch_entry(int index, const problem* p, const mgpu_pk_device* d, mgpu_stream stream, const void* a,
                                const void* b, void* c, void* workspace, size_t workspace_bytes) {
  const mgpu_pk_matmul_entry* e = &mgpu_pk_matmul()->entries[index];
  const mgpu_pk_kernel* k = kernel_of(e);
  if (!a || !b || !c) return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "A, B and C must not be NULL");
  if ((uintptr_t)a % 16 || (uintptr_t)b % 16 || (uintptr_t)c % 16)
    return mgpu_pk_fail(MGPU_ERR_MISALIGNED, "A, B and C must be 16-byte aligned");
  const size_t need = workspace_for(e, p, d);
  if (!workspace)  /* said as NULL, whatever size came with it (round 18, F24) */
    return mgpu_pk_fail(MGPU_ERR_WORKSPACE_TOO_SMALL, "the workspace is NULL; this call needs %zu bytes", need);
  if (workspace_bytes < need)
    return mgpu_pk_fail(MGPU_ERR_WORKSPACE_TOO_SMALL, "the workspace is %zu bytes; this call needs %zu", workspace_bytes,
                        need);
  if ((uintptr_t)workspace % 256) return mgpu_pk_fail(MGPU_ERR_MISALIGNED, "the workspace must be 256-byte aligned");
  const int64_t sizes[3] = {p->m, p->n, p->k};
  const void* bases[3] = {a, b, c};
  CUtensorMap maps[3];
  for (int i = 0; i < 3; ++i) {
    mgpu_status s = mgpu_pk_encode_map(&k->maps[i], sizes, bases[i], &maps[i]);
    if (s != MGPU_OK) return s;
  }
  const CUdeviceptr ws = (CUdeviceptr)(uintptr_t)workspace;
  mgpu_status s = mgpu_pk_upload(ws, maps, sizeof maps, (CUstream)stream);
  if (s != MGPU_OK) return s;
  CUdeviceptr descriptors[3] = {ws, ws + 128, ws + 256};
  CUdeviceptr kernel_workspace = ws + MGPU_PK_MATMUL_DESCRIPTOR_BYTES;
  if (k->takes_workspace) {
    /* The arrival counters start at zero; the caller's buffer may hold anything. */
    const mgpu_lm_workspace w = mgpu_lm_workspace_of(&e->consts, p->m, p->n, p->k, d->sm_count);
    if (w.counter_bytes > 0 && (s = mgpu_pk_zero(kernel_workspace, (size_t)w.counter_bytes, (CUstream)stream)) != MGPU_OK)
      return s;
  }
  int32_t scalars[MGPU_LM_MAX_SCALARS];
  const int scalar_count = mgpu_lm_scalar_args(&e->consts, p->m, p->n, p->k, scalars);
  void* args[3 + 1 + MGPU_LM_MAX_SCALARS];
  int n = 0;
  for (int i = 0; i < 3; ++i) args[n++] = &descriptors[i];
  if (k->takes_workspace) args[n++] = &kernel_workspace;
  for (int i = 0; i < scalar_count; ++i) args[n++] = &scalars[i];
  const unsigned grid = mgpu_lm_grid(&e->consts, p->m, p->n, p->k, d->sm_count);
  return mgpu_pk_launch(d, e->kernel, grid, args, (CUstream)stream);
}

/* The problem checked and the device found: what every call starts with. */
static mgpu_status prepare(const problem* p, mgpu_pk_device* d) {
  mgpu_status s = check_problem(p);
  return s != MGPU_OK ? s : mgpu_pk_current_device(d);
}

mgpu_status mgpu_matmul_select(int64_t m, int64_t n, int64_t k, mgpu_dtype in, mgpu_dtype out, mgpu_b_layout layout,
                               int* entry, const char** how) {
  const problem p = {m, n, k, in, out, layout};
  mgpu_pk_device d;
  const char* chosen = NULL;
  int index = -1;
  if (!entry) return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "mgpu_matmul_select: entry is NULL");
  mgpu_status s = prepare(&p, &d);
  if (s == MGPU_OK) s = select_entry(&p, &d, &index, &chosen);
  if (s != MGPU_OK) return s;
  *entry = mgpu_pk_matmul()->entries[index].info;
  if (how) *how = chosen;
  return MGPU_OK;
}

mgpu_status mgpu_matmul_workspace_size(int64_t m, int64_t n, int64_t k, mgpu_dtype in, mgpu_dtype out,
                                       mgpu_b_layout layout, size_t* bytes) {
  const problem p = {m, n, k, in, out, layout};
  mgpu_pk_device d;
  const char* how;
  int index;
  if (!bytes) return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "mgpu_matmul_workspace_size: bytes is NULL");
  mgpu_status s = prepare(&p, &d);
  if (s == MGPU_OK) s = select_entry(&p, &d, &index, &how);
  if (s != MGPU_OK) return s;
  *bytes = workspace_for(&mgpu_pk_matmul()->entries[index], &p, &d);
  return MGPU_OK;
}

mgpu_status mgpu_matmul(mgpu_stream stream, const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k,
                        mgpu_dtype in, mgpu_dtype out, mgpu_b_layout layout, void* workspace, size_t workspace_bytes) {
  const problem p = {m, n, k, in, out, layout};
  mgpu_pk_device d;
  const char* how;
  int index;
  mgpu_status s = prepare(&p, &d);
  if (s == MGPU_OK) s = select_entry(&p, &d, &index, &how);
  if (s != MGPU_OK) return s;
  return launch_entry(index, &p, &d, stream, a, b, c, workspace, workspace_bytes);
}

/* The table index of info entry `entry`, checked against the device's architecture and the call's
 * dtypes and layout. */
static mgpu_status forced_entry(int entry, const problem* p, const mgpu_pk_device* d, int* index) {
  const mgpu_pk_matmul_table* t = mgpu_pk_matmul();
  for (int i = 0; i < t->count; ++i) {
    if (t->entries[i].info != entry) continue;
    const char* arch = mgpu_pk_arch_of(d->cc_major, d->cc_minor);
    if (!arch || strcmp(kernel_of(&t->entries[i])->arch, arch) != 0)
      return mgpu_pk_fail(MGPU_ERR_NO_KERNEL_FOR_ARCH, "entry %d is a %s kernel; the device is compute capability %d.%d",
                          entry, kernel_of(&t->entries[i])->arch, d->cc_major, d->cc_minor);
    if (!entry_fits(&t->entries[i], p, arch))
      return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "entry %d is of other dtypes or another layout than the call's", entry);
    if (!entry_runs(&t->entries[i], p))
      return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT,
                          "entry %d is a split-K kernel that cannot run %lld x %lld x %lld: its split would be 1 (K of "
                          "one k-step, or more tiles than its workspace bound holds two partials each)",
                          entry, (long long)p->m, (long long)p->n, (long long)p->k);
    *index = i;
    return MGPU_OK;
  }
  return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "entry %d is no matmul entry of this pack", entry);
}

mgpu_status mgpu_matmul_entry_workspace_size(int entry, int64_t m, int64_t n, int64_t k, mgpu_dtype in, mgpu_dtype out,
                                             mgpu_b_layout layout, size_t* bytes) {
  const problem p = {m, n, k, in, out, layout};
  mgpu_pk_device d;
  int index;
  if (!bytes) return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "mgpu_matmul_entry_workspace_size: bytes is NULL");
  mgpu_status s = prepare(&p, &d);
  if (s == MGPU_OK) s = forced_entry(entry, &p, &d, &index);
  if (s != MGPU_OK) return s;
  *bytes = workspace_for(&mgpu_pk_matmul()->entries[index], &p, &d);
  return MGPU_OK;
}

mgpu_status mgpu_matmul_entry(int entry, mgpu_stream stream, const void* a, const void* b, void* c, int64_t m, int64_t n,
                              int64_t k, mgpu_dtype in, mgpu_dtype out, mgpu_b_layout layout, void* workspace,
                              size_t workspace_bytes) {
  const problem p = {m, n, k, in, out, layout};
  mgpu_pk_device d;
  int index;
  mgpu_status s = prepare(&p, &d);
  if (s == MGPU_OK) s = forced_entry(entry, &p, &d, &index);
  if (s != MGPU_OK) return s;
  return launch_entry(index, &p, &d, stream, a, b, c, workspace, workspace_bytes);
}
