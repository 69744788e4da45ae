// The driver's floor for one frame: the host's wall time to enqueue a kernel that does nothing,
// flush and wait for it, on each OpenCL device, over a grid of one work-item and over a 1080p
// frame's grid (120 x 1080 work-items, 16 pixels each, as the CPU schedules' wider kernels take
// them), waiting with clFinish and with clWaitForEvents; median of `launches` after 50. A filter
// whose kernel time plus this exceeds its peer's whole time cannot match the peer on that device,
// whatever its kernel does (PoCL's CPU devices: tandem-bench filters' frame minus kernel time).
//   cc -O2 tools/cl-roundtrip.c -o /tmp/cl-roundtrip -lOpenCL && /tmp/cl-roundtrip [launches]
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kWarmup = 50, kMaxPlatforms = 8, kMaxDevices = 8 };

#define CHECK(x)                                                                 \
  do {                                                                           \
    cl_int e_ = (x);                                                             \
    if (e_ != CL_SUCCESS) {                                                      \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, (int)e_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// The kernel reads its buffer so that it cannot be compiled away, and never writes.
static const char* kSource =
    "__kernel void nothing(__global int* p) {\n"
    "  if (p[0] == 12345) p[1] = (int)get_global_id(0);\n"
    "}\n";

static void time_device(cl_device_id device, int launches) {
  char name[256];
  CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL));
  cl_int err;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  CHECK(err);
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
  cl_kernel kernel = clCreateKernel(program, "nothing", &err);
  CHECK(err);
  const int zeros[16] = {0};
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros,
                                 (void*)zeros, &err);
  CHECK(err);
  CHECK(clSetKernelArg(kernel, 0, sizeof buffer, &buffer));
  const size_t grids[2][2] = {{1, 1}, {120, 1080}};
  double* ms = malloc(sizeof(double) * (size_t)(kWarmup + launches));
  if (!ms) exit(1);
  for (int g = 0; g < 2; ++g) {
    for (int wait_event = 0; wait_event < 2; ++wait_event) {
      for (int i = 0; i < kWarmup + launches; ++i) {
        cl_event done;
        const double start = now_ms();
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, grids[g], NULL, 0, NULL, &done));
        CHECK(clFlush(queue));
        if (wait_event) {
          CHECK(clWaitForEvents(1, &done));
        } else {
          CHECK(clFinish(queue));
        }
        ms[i] = now_ms() - start;
        CHECK(clReleaseEvent(done));
      }
      qsort(ms + kWarmup, (size_t)launches, sizeof(double), by_value);
      const double* t = ms + kWarmup;
      printf("%s: grid %zux%zu, %s: median %.4f ms, q1 %.4f, q3 %.4f\n", name, grids[g][0],
             grids[g][1], wait_event ? "clWaitForEvents" : "clFinish", t[launches / 2],
             t[launches / 4], t[3 * launches / 4]);
    }
  }
  free(ms);
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? atoi(argv[1]) : 500;
  if (launches < 4) {
    fprintf(stderr, "usage: %s [launches >= 4]\n", argv[0]);
    return 2;
  }
  cl_platform_id platforms[kMaxPlatforms];
  cl_uint platform_count = 0;
  CHECK(clGetPlatformIDs(kMaxPlatforms, platforms, &platform_count));
  if (platform_count > kMaxPlatforms) platform_count = kMaxPlatforms;
  for (cl_uint p = 0; p < platform_count; ++p) {
    cl_device_id devices[kMaxDevices];
    cl_uint device_count = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, kMaxDevices, devices, &device_count) !=
        CL_SUCCESS) {
      continue;
    }
    if (device_count > kMaxDevices) device_count = kMaxDevices;
    for (cl_uint d = 0; d < device_count; ++d) time_device(devices[d], launches);
  }
  return 0;
}
