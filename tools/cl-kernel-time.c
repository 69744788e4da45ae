// Where a frame's device time goes, kernel by kernel: an LD_PRELOAD library that attaches a
// profiling event to every clEnqueueNDRangeKernel and prints, at exit, per kernel function:
// launches, median and total device time (END - START; the queues must have profiling on, as
// tandem's have). Finished events are read and released as the program runs, so the driver is
// still up when they are. Results go to stderr.
//   cc -O2 -shared -fPIC tools/cl-kernel-time.c -o /tmp/cl-kernel-time.so -ldl -lpthread
//   LD_PRELOAD=/tmp/cl-kernel-time.so tandem-bench filters --devices gpu --only 'box radius=64'
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxKernels = 64, kMaxPending = 4096, kMaxTimes = 1 << 16 };

static struct {
  char name[64];
  double* us;  // device time of each launch, microseconds
  size_t count;
} kernels[kMaxKernels];
static int kernel_count;

static struct {
  cl_event event;
  int kernel;
} pending[kMaxPending];
static size_t pending_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int kernel_index(cl_kernel k) {
  char name[64] = "?";
  clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
  for (int i = 0; i < kernel_count; ++i)
    if (strcmp(kernels[i].name, name) == 0) return i;
  if (kernel_count == kMaxKernels) return kMaxKernels - 1;
  snprintf(kernels[kernel_count].name, sizeof kernels[kernel_count].name, "%s", name);
  kernels[kernel_count].us = malloc(sizeof(double) * kMaxTimes);
  return kernel_count++;
}

// Reads and releases the finished events (all of them, waiting, when wait is set).
static void collect(int wait) {
  size_t kept = 0;
  for (size_t i = 0; i < pending_count; ++i) {
    cl_int status = CL_QUEUED;
    clGetEventInfo(pending[i].event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                   NULL);
    if (status > CL_COMPLETE && wait) {
      clWaitForEvents(1, &pending[i].event);
      status = CL_COMPLETE;
    }
    if (status > CL_COMPLETE) {
      pending[kept++] = pending[i];
      continue;
    }
    cl_ulong start = 0, end = 0;
    if (status == CL_COMPLETE &&
        clGetEventProfilingInfo(pending[i].event, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                NULL) == CL_SUCCESS &&
        clGetEventProfilingInfo(pending[i].event, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                NULL) == CL_SUCCESS) {
      int k = pending[i].kernel;
      if (kernels[k].count < kMaxTimes) kernels[k].us[kernels[k].count++] = (end - start) / 1e3;
    }
    clReleaseEvent(pending[i].event);
  }
  pending_count = kept;
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* o,
                              const size_t* g, const size_t* l, cl_uint n, const cl_event* w,
                              cl_event* e) {
  static cl_int (*next)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                        const size_t*, cl_uint, const cl_event*, cl_event*);
  if (!next) next = dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
  cl_event own = NULL;
  cl_int result = next(q, k, dims, o, g, l, n, w, e ? e : &own);
  if (result != CL_SUCCESS) return result;
  cl_event event = e ? *e : own;
  if (e) clRetainEvent(event);
  pthread_mutex_lock(&lock);
  if (pending_count == kMaxPending) collect(1);
  pending[pending_count].event = event;
  pending[pending_count].kernel = kernel_index(k);
  ++pending_count;
  if (pending_count % 256 == 0) collect(0);
  pthread_mutex_unlock(&lock);
  return result;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// Also called by clFinish and clReleaseContext below, while the driver is surely up.
static void flush(void) {
  pthread_mutex_lock(&lock);
  collect(1);
  pthread_mutex_unlock(&lock);
}

cl_int clReleaseContext(cl_context c) {
  static cl_int (*next)(cl_context);
  if (!next) next = dlsym(RTLD_NEXT, "clReleaseContext");
  flush();
  return next(c);
}

__attribute__((destructor)) static void report(void) {
  if (kernel_count == 0) return;
  fprintf(stderr, "cl-kernel-time: %-28s %9s %12s %12s\n", "kernel", "launches", "median us",
          "total ms");
  for (int i = 0; i < kernel_count; ++i) {
    double total = 0;
    for (size_t j = 0; j < kernels[i].count; ++j) total += kernels[i].us[j];
    qsort(kernels[i].us, kernels[i].count, sizeof(double), by_value);
    const double median = kernels[i].count ? kernels[i].us[kernels[i].count / 2] : 0;
    fprintf(stderr, "cl-kernel-time: %-28s %9zu %12.2f %12.3f\n", kernels[i].name, kernels[i].count,
            median, total / 1e3);
  }
}
