// The host link's limit for streams of whole frames: copies between pinned host memory and each
// GPU, each GPU alone and all of them at once, up, down and both ways together (a queue per
// direction and device, as tandem's), in wall time. Two GPUs can stream twice one's frames only
// if the link carries twice one's bytes; this says whether it does. Then a stream of frames shaped
// as tandem's (each frame up, a device copy for its kernels, down; a queue for each, chained by
// events; `depth` frames on each device; frames to the devices in turn), from host frames
// pinned through the first device's queue as tandem's allocator does: the pace a stream of
// whole frames can reach, without tandem's host side.
//   cc -O2 tools/cl-pcie.c -o /tmp/cl-pcie -lOpenCL && /tmp/cl-pcie [bytes] [copies] [depth]
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef DEVICE_TYPE  // -DDEVICE_TYPE=CL_DEVICE_TYPE_ALL tries it on a CPU device
#define DEVICE_TYPE CL_DEVICE_TYPE_GPU
#endif

enum { kMaxDevices = 8 };

#define CHECK(x)                                                                 \
  do {                                                                           \
    cl_int e_ = (x);                                                             \
    if (e_ != CL_SUCCESS) {                                                      \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, (int)e_); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

typedef struct {
  cl_device_id id;
  char name[128];
  cl_command_queue up, down, compute;
  cl_mem device_buffer[2];  // one per direction, so both ways run at once
  void* host[2];            // pinned: mapped CL_MEM_ALLOC_HOST_PTR buffers
} Gpu;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* pinned(cl_context context, cl_command_queue queue, size_t bytes) {
  cl_int err;
  cl_mem b = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
  CHECK(err);
  void* p = clEnqueueMapBuffer(queue, b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                               NULL, &err);
  CHECK(err);
  memset(p, 1, bytes);
  return p;  // the buffer stays mapped for the program's life
}

// Wall-clock GB/s of `copies` copies per selected device and direction, all enqueued, then waited.
static double run(Gpu* gpus, int count, unsigned mask, int up, int down, size_t bytes,
                  int copies) {
  double t0 = now_s();
  int transfers = 0;
  for (int c = 0; c < copies; ++c)
    for (int i = 0; i < count; ++i) {
      if (!(mask & (1u << i))) continue;
      if (up) {
        CHECK(clEnqueueWriteBuffer(gpus[i].up, gpus[i].device_buffer[0], CL_FALSE, 0, bytes,
                                   gpus[i].host[0], 0, NULL, NULL));
        ++transfers;
      }
      if (down) {
        CHECK(clEnqueueReadBuffer(gpus[i].down, gpus[i].device_buffer[1], CL_FALSE, 0, bytes,
                                  gpus[i].host[1], 0, NULL, NULL));
        ++transfers;
      }
    }
  for (int i = 0; i < count; ++i) {
    clFlush(gpus[i].up);
    clFlush(gpus[i].down);
  }
  for (int i = 0; i < count; ++i) {
    CHECK(clFinish(gpus[i].up));
    CHECK(clFinish(gpus[i].down));
  }
  return (double)transfers * bytes / (now_s() - t0) / 1e9;
}

enum { kInputs = 4, kMaxDepth = 8 };

// Milliseconds a frame over `frames` frames streamed through the devices in `mask`.
static double stream(cl_context context, Gpu* gpus, int count, unsigned mask, size_t bytes,
                     int frames, int depth, void* const* inputs, void* const* outputs) {
  int chosen[kMaxDevices], n = 0;
  for (int i = 0; i < count; ++i)
    if (mask & (1u << i)) chosen[n++] = i;
  cl_int err;
  cl_mem in[kMaxDevices][kMaxDepth], out[kMaxDevices][kMaxDepth];
  cl_event computed[kMaxDevices][kMaxDepth] = {{0}};
  for (int k = 0; k < n; ++k)
    for (int s = 0; s < depth; ++s) {
      in[k][s] = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
      CHECK(err);
      out[k][s] = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
      CHECK(err);
    }
  const int ring = n * depth;  // output frames: one per frame on the devices
  cl_event* done = calloc((size_t)frames, sizeof(cl_event));
  double t0 = 0;
  const int warm = ring * 2;
  for (int f = 0; f < frames + warm; ++f) {
    if (f == warm) {
      for (int g = 0; g < f; ++g) clWaitForEvents(1, &done[g]);
      t0 = now_s();
    }
    if (f >= ring) CHECK(clWaitForEvents(1, &done[(f - ring) % frames]));
    const int k = f % n, s = (f / n) % depth;
    Gpu* g = &gpus[chosen[k]];
    cl_event up, copy;
    // The upload overwrites what the slot's last kernel read: it waits for that kernel.
    CHECK(clEnqueueWriteBuffer(g->up, in[k][s], CL_FALSE, 0, bytes, inputs[f % kInputs],
                               computed[k][s] ? 1 : 0, computed[k][s] ? &computed[k][s] : NULL,
                               &up));
    CHECK(clEnqueueCopyBuffer(g->compute, in[k][s], out[k][s], 0, 0, bytes, 1, &up, &copy));
    if (computed[k][s]) clReleaseEvent(computed[k][s]);
    computed[k][s] = copy;
    cl_event* d = &done[f % frames];
    if (f >= frames) clReleaseEvent(*d);
    CHECK(clEnqueueReadBuffer(g->down, out[k][s], CL_FALSE, 0, bytes, outputs[f % ring], 1, &copy,
                              d));
    clReleaseEvent(up);
    clFlush(g->up);
    clFlush(g->compute);
    clFlush(g->down);
  }
  for (int k = 0; k < n; ++k) {
    CHECK(clFinish(gpus[chosen[k]].down));
    CHECK(clFinish(gpus[chosen[k]].compute));
  }
  const double ms = (now_s() - t0) * 1e3 / frames;
  for (int f = 0; f < frames; ++f) clReleaseEvent(done[f]);
  free(done);
  for (int k = 0; k < n; ++k)
    for (int s = 0; s < depth; ++s) {
      clReleaseMemObject(in[k][s]);
      clReleaseMemObject(out[k][s]);
      if (computed[k][s]) clReleaseEvent(computed[k][s]);
    }
  return ms;
}

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 1920u * 1080u * 4u;
  const int copies = argc > 2 ? atoi(argv[2]) : 100;
  int depth = argc > 3 ? atoi(argv[3]) : 3;
  if (depth < 1 || depth > kMaxDepth) depth = 3;
  cl_platform_id platforms[8];
  cl_uint platform_count = 0;
  CHECK(clGetPlatformIDs(8, platforms, &platform_count));
  for (cl_uint p = 0; p < platform_count; ++p) {
    cl_device_id ids[kMaxDevices];
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], DEVICE_TYPE, kMaxDevices, ids, &n) != CL_SUCCESS ||
        n == 0)
      continue;
    cl_int err;
    cl_context context = clCreateContext(NULL, n, ids, NULL, NULL, &err);
    CHECK(err);
    Gpu gpus[kMaxDevices];
    for (cl_uint i = 0; i < n; ++i) {
      Gpu* g = &gpus[i];
      g->id = ids[i];
      clGetDeviceInfo(ids[i], CL_DEVICE_NAME, sizeof g->name, g->name, NULL);
      g->up = clCreateCommandQueueWithProperties(context, ids[i], NULL, &err);
      CHECK(err);
      g->down = clCreateCommandQueueWithProperties(context, ids[i], NULL, &err);
      CHECK(err);
      g->compute = clCreateCommandQueueWithProperties(context, ids[i], NULL, &err);
      CHECK(err);
      for (int k = 0; k < 2; ++k) {
        g->device_buffer[k] = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
        CHECK(err);
        g->host[k] = pinned(context, k ? g->down : g->up, bytes);
      }
    }
    printf("%u device(s) in one context; %zu bytes a copy, %d copies a direction and device\n", n,
           bytes, copies);
    static const char* kWays[] = {"up", "down", "both"};
    unsigned all = (1u << n) - 1;
    for (unsigned mask = 1; mask <= all; ++mask) {
      if (mask != all && (mask & (mask - 1))) continue;  // each alone, then all together
      char who[64] = "";
      for (cl_uint i = 0; i < n; ++i)
        if (mask & (1u << i)) snprintf(who + strlen(who), sizeof who - strlen(who), "%u ", i);
      for (int w = 0; w < 3; ++w) {
        run(gpus, n, mask, w != 1, w != 0, bytes, 5);  // warm-up
        double best = 0;
        for (int rep = 0; rep < 3; ++rep) {
          double g = run(gpus, n, mask, w != 1, w != 0, bytes, copies);
          if (g > best) best = g;
        }
        printf("  devices %-8s %-5s %7.1f GB/s (all bytes moved / wall time, best of 3)\n", who,
               kWays[w], best);
      }
    }
    // tandem's way: every host frame pinned through the first device's queue.
    void* inputs[kInputs];
    void* outputs[kMaxDevices * kMaxDepth];
    for (int i = 0; i < kInputs; ++i) inputs[i] = pinned(context, gpus[0].up, bytes);
    for (int i = 0; i < (int)n * depth; ++i) outputs[i] = pinned(context, gpus[0].up, bytes);
    for (unsigned mask = 1; mask <= all; ++mask) {
      if (mask != all && (mask & (mask - 1))) continue;
      char who[64] = "";
      for (cl_uint i = 0; i < n; ++i)
        if (mask & (1u << i)) snprintf(who + strlen(who), sizeof who - strlen(who), "%u ", i);
      double best = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        double ms = stream(context, gpus, n, mask, bytes, copies * 2, depth, inputs, outputs);
        if (ms < best) best = ms;
      }
      printf("  stream: devices %-8s %.4f ms a frame (%d frames on each device; up, device copy, "
             "down; best of 3)\n", who, best, depth);
    }
    for (cl_uint i = 0; i < n; ++i) printf("  device %u: %s\n", i, gpus[i].name);
  }
  return 0;
}
