#include "core/cuda_context.h"

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/cuda_driver.h"
#include "core/error.h"

namespace mgpu::core {

CudaContext& CudaContext::primary(int ordinal) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<CudaContext>> contexts;
  std::lock_guard lock(mu);
  auto& slot = contexts[ordinal];
  if (!slot) {
    const CudaDriver& drv = CudaDriver::get();
    CUdevice dev{};
    drv.check(drv.api().cuDeviceGet(&dev, ordinal), "cuDeviceGet", ErrorKind::Unavailable);
    CUcontext ctx{};
    drv.check(drv.api().cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain", ErrorKind::Unavailable);
    slot.reset(new CudaContext(dev, ctx));  // held for the life of the process
  }
  slot->make_current();
  return *slot;
}

void CudaContext::make_current() const {
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
}

void CudaContext::synchronize() const {
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuCtxSynchronize(ctx_), "cuCtxSynchronize (kernel execution)");
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuMemAlloc(&ptr_, bytes), fmt::format("cuMemAlloc({} bytes)", bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) CudaDriver::get().api().cuMemFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

void DeviceBuffer::upload(std::span<const std::byte> host) {
  if (host.size() > bytes_) throw Error(ErrorKind::InvalidInput, "upload larger than the device buffer");
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuMemcpyHtoD(ptr_, host.data(), host.size()), "cuMemcpyHtoD");
}

void DeviceBuffer::download(std::span<std::byte> host) const {
  if (host.size() > bytes_) throw Error(ErrorKind::InvalidInput, "download larger than the device buffer");
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuMemcpyDtoH(host.data(), ptr_, host.size()), "cuMemcpyDtoH");
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  const CudaDriver& drv = CudaDriver::get();
  drv.check(drv.api().cuMemsetD8(ptr_, value, bytes_), "cuMemsetD8");
}

}  // namespace mgpu::core
