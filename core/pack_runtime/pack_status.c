/* A pack's words: status names, the calling thread's last failure, and what the pack holds. */
#include <stdarg.h>
#include <stdio.h>

#include "pack_internal.h"

static _Thread_local char last_error[512];
static _Thread_local int last_cuda_result;

const char* mgpu_status_name(mgpu_status status) {
  switch (status) {
    case MGPU_OK: return "MGPU_OK";
    case MGPU_ERR_INVALID_ARGUMENT: return "MGPU_ERR_INVALID_ARGUMENT";
    case MGPU_ERR_UNSUPPORTED_DTYPE: return "MGPU_ERR_UNSUPPORTED_DTYPE";
    case MGPU_ERR_UNSUPPORTED_LAYOUT: return "MGPU_ERR_UNSUPPORTED_LAYOUT";
    case MGPU_ERR_MISALIGNED: return "MGPU_ERR_MISALIGNED";
    case MGPU_ERR_WORKSPACE_TOO_SMALL: return "MGPU_ERR_WORKSPACE_TOO_SMALL";
    case MGPU_ERR_NO_KERNEL_FOR_ARCH: return "MGPU_ERR_NO_KERNEL_FOR_ARCH";
    case MGPU_ERR_NO_KERNEL: return "MGPU_ERR_NO_KERNEL";
    case MGPU_ERR_DRIVER_UNAVAILABLE: return "MGPU_ERR_DRIVER_UNAVAILABLE";
    case MGPU_ERR_NO_CONTEXT: return "MGPU_ERR_NO_CONTEXT";
    case MGPU_ERR_CUDA: return "MGPU_ERR_CUDA";
  }
  return "(not an mgpu_status)";
}

const char* mgpu_last_error(void) { return last_error; }
int mgpu_last_cuda_result(void) { return last_cuda_result; }

mgpu_status mgpu_pk_fail(mgpu_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  if (status != MGPU_ERR_CUDA) last_cuda_result = 0;
  return status;
}

mgpu_status mgpu_pk_cuda_fail(CUresult result, const char* call) {
  last_cuda_result = (int)result;
  return mgpu_pk_fail(MGPU_ERR_CUDA, "%s failed: CUDA error %d", call, (int)result);
}

int mgpu_pack_entry_count(void) { return mgpu_pk_common()->info_count; }

mgpu_status mgpu_pack_entry(int index, mgpu_pack_entry_info* info) {
  const mgpu_pk_common_tables* t = mgpu_pk_common();
  if (!info) return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "mgpu_pack_entry: info is NULL");
  if (index < 0 || index >= t->info_count)
    return mgpu_pk_fail(MGPU_ERR_INVALID_ARGUMENT, "mgpu_pack_entry: no entry %d (the pack has %d)", index,
                        t->info_count);
  *info = t->infos[index];
  return MGPU_OK;
}

const char* mgpu_pk_arch_of(int cc_major, int cc_minor) {
  /* Architecture-specific cubins (sm_90a, sm_100a) run on exactly their compute capability. */
  if (cc_major == 9 && cc_minor == 0) return "sm_90a";
  if (cc_major == 10 && cc_minor == 0) return "sm_100a";
  return NULL;
}
