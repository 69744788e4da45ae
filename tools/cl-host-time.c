// Where a program's host time goes inside OpenCL: an LD_PRELOAD library that times the calls
// the executor makes per frame and prints, at exit, per function: calls, total ms and us per
// call (to stderr). Nothing is changed: each call goes on to the ICD loader.
//   cc -O2 -shared -fPIC tools/cl-host-time.c -o /tmp/cl-host-time.so -ldl
//   LD_PRELOAD=/tmp/cl-host-time.so tandem-bench stream --devices gpu ...
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

enum { kMaxFunctions = 32 };
static struct {
  const char* name;
  unsigned long calls;
  double ns;
} table[kMaxFunctions];
static int used;

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

// Single-threaded callers are assumed (the counts may race otherwise; the sums stay close).
static int slot(const char* name) {
  for (int i = 0; i < used; ++i)
    if (table[i].name == name) return i;
  table[used].name = name;
  return used < kMaxFunctions - 1 ? used++ : used;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "cl-host-time: %-32s %10s %10s %8s\n", "function", "calls", "ms", "us/call");
  for (int i = 0; i < used; ++i) {
    fprintf(stderr, "cl-host-time: %-32s %10lu %10.1f %8.2f\n", table[i].name, table[i].calls,
            table[i].ns / 1e6, table[i].ns / 1e3 / (double)(table[i].calls ? table[i].calls : 1));
  }
}

#define TIMED(ret, name, params, args)                        \
  ret name params {                                           \
    static ret(*next) params;                                 \
    static int index = -1;                                    \
    if (!next) next = (ret(*) params)dlsym(RTLD_NEXT, #name); \
    if (index < 0) index = slot(#name);                       \
    const double start = now_ns();                            \
    ret result_ = next args;                                  \
    table[index].ns += now_ns() - start;                      \
    ++table[index].calls;                                     \
    return result_;                                           \
  }

TIMED(cl_int, clEnqueueWriteBuffer,
      (cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size, const void* p,
       cl_uint n, const cl_event* w, cl_event* e),
      (q, b, blocking, offset, size, p, n, w, e))
TIMED(cl_int, clEnqueueReadBuffer,
      (cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size, void* p,
       cl_uint n, const cl_event* w, cl_event* e),
      (q, b, blocking, offset, size, p, n, w, e))
TIMED(cl_int, clEnqueueCopyBuffer,
      (cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof, size_t size, cl_uint n,
       const cl_event* w, cl_event* e),
      (q, s, d, so, dof, size, n, w, e))
TIMED(cl_int, clEnqueueNDRangeKernel,
      (cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* o, const size_t* g,
       const size_t* l, cl_uint n, const cl_event* w, cl_event* e),
      (q, k, dims, o, g, l, n, w, e))
TIMED(cl_int, clEnqueueBarrierWithWaitList,
      (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e), (q, n, w, e))
TIMED(cl_int, clEnqueueMarkerWithWaitList,
      (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e), (q, n, w, e))
TIMED(void*, clEnqueueMapBuffer,
      (cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags f, size_t o, size_t s,
       cl_uint n, const cl_event* w, cl_event* e, cl_int* err),
      (q, b, blocking, f, o, s, n, w, e, err))
TIMED(cl_int, clEnqueueUnmapMemObject,
      (cl_command_queue q, cl_mem b, void* p, cl_uint n, const cl_event* w, cl_event* e),
      (q, b, p, n, w, e))
TIMED(cl_int, clFlush, (cl_command_queue q), (q))
TIMED(cl_int, clFinish, (cl_command_queue q), (q))
TIMED(cl_int, clWaitForEvents, (cl_uint n, const cl_event* e), (n, e))
TIMED(cl_int, clGetEventProfilingInfo,
      (cl_event e, cl_profiling_info i, size_t s, void* v, size_t* r), (e, i, s, v, r))
TIMED(cl_int, clGetEventInfo, (cl_event e, cl_event_info i, size_t s, void* v, size_t* r),
      (e, i, s, v, r))
TIMED(cl_int, clReleaseEvent, (cl_event e), (e))
TIMED(cl_int, clRetainEvent, (cl_event e), (e))
TIMED(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void* v), (k, i, s, v))
TIMED(cl_mem, clCreateSubBuffer,
      (cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void* i, cl_int* err),
      (b, f, t, i, err))
TIMED(cl_int, clReleaseMemObject, (cl_mem m), (m))
TIMED(cl_int, clRetainMemObject, (cl_mem m), (m))
TIMED(cl_int, clRetainKernel, (cl_kernel k), (k))
TIMED(cl_int, clReleaseKernel, (cl_kernel k), (k))
TIMED(cl_int, clRetainProgram, (cl_program p), (p))
TIMED(cl_int, clReleaseProgram, (cl_program p), (p))
TIMED(cl_int, clRetainCommandQueue, (cl_command_queue q), (q))
TIMED(cl_int, clReleaseCommandQueue, (cl_command_queue q), (q))
