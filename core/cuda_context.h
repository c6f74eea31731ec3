// A device's primary context and device memory, through the run-time-loaded driver.
// Contract: CudaContext::primary(ordinal) retains the device's primary context once per
// process and makes it current on the calling thread (call make_current() on other threads);
// DeviceBuffer owns an allocation and frees it on destruction. Driver failures throw
// Error{Launch} naming the call; no driver throws Error{Unavailable}.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>

namespace mgpu::core {

class CudaContext {
 public:
  static CudaContext& primary(int ordinal = 0);
  void make_current() const;
  void synchronize() const;  // waits for all work; surfaces asynchronous kernel faults
  CUdevice device() const { return device_; }

 private:
  CudaContext(CUdevice device, CUcontext ctx) : device_(device), ctx_(ctx) {}
  CUdevice device_;
  CUcontext ctx_;
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(std::span<const std::byte> host);
  void download(std::span<std::byte> host) const;
  void fill_bytes(unsigned char value);

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace mgpu::core
