#pragma once
// The one error type of tandem: what failed, the OpenCL status when there is one, and what tandem
// was doing at the time. A failed program build also carries the compiler's log.
#include <stdexcept>
#include <string>

namespace tandem {

class Error : public std::runtime_error {
 public:
  /// An error that did not come from an OpenCL call (bad input, bad graph, I/O).
  explicit Error(std::string message);
  /// An OpenCL call that returned `status` while tandem was doing `doing`.
  Error(int status, std::string call, std::string doing, std::string build_log = {});
  /// `cause` with `prefix` put before its message; status, call and build log are kept.
  Error(const std::string& prefix, const Error& cause);

  /// OpenCL status code, 0 when the error is not an OpenCL one.
  int status() const { return status_; }
  /// Name of the failed OpenCL call ("clBuildProgram"), empty when not an OpenCL error.
  const std::string& call() const { return call_; }
  /// The program build log of a failed build, empty otherwise.
  const std::string& build_log() const { return build_log_; }

 private:
  int status_ = 0;
  std::string call_;
  std::string build_log_;
};

/// "CL_OUT_OF_RESOURCES" for -5, and so on; "CL_ERROR(<n>)" for unknown codes.
std::string cl_status_name(int status);

}  // namespace tandem
