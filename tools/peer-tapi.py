#!/usr/bin/env python3
"""peer-tapi: OpenCV's T-API (cv2.UMat on an OpenCL device) timed on the equivalents of tandem's
filters, the peer tandem-bench's kernel times are compared with on the GPU machine (cv2 5 with
OpenCL there; shared/device/README.md). Run it in the same call as tandem-bench and commit both.

Method: 1920x1080 RGBA8 frames (CV_8UC4), a ring of distinct synthetic frames uploaded to UMats
once; per op, warm-up calls (OpenCL program builds happen there), then N samples, each ended by
cv2.ocl.finish() inside the timed region; medians. Two figures per op:
  call    one call and finish: what one frame costs, with Python's and OpenCV's launch overhead
          (tens of microseconds on a GPU)
  batch   K calls back to back, then finish, divided by K: the launch overhead overlaps the
          kernels, closest to tandem's kernel time (profiling events, no launch cost)
GB/s = compulsory bytes (the input frame read once, the output written once, as tandem-bench
counts them) / batch time; "% copy" is that against this run's copy op (UMat copyTo).
With --cpu (on by default) each op is also timed on the CPU (cv::Mat, T-API off, all of
OpenCV's threads) in the same run, as tandem-bench's OpenCV column, one call per sample.

The ops and what they are to tandem (filters/*.cpp); what is not the same is said:
  copy          cv2.copyTo(UMat, no mask): the device's copy bandwidth as OpenCV gets it.
  gaussian s=2  GaussianBlur ksize (0,0) sigma 2, BORDER_REFLECT_101: 13 taps by OpenCV's 8-bit
                rule, the taps tandem's gaussian=sigma=2 uses (bit-exact to OpenCV's CPU path).
                The T-API's path (sepFilter2D in float) may differ by an LSB.
  gaussian s=8  the same at sigma 8: 49 taps (gaussian=sigma=8).
  gaussian 5x5  ksize 5x5 sigma 2: not a tandem default; the size NVIDIA VPI's figures use.
  box r=1       blur 3x3, BORDER_REFLECT_101: box=radius=1.
  box r=64      blur 129x129: box=radius=64.
  box 5x5       blur 5x5: not a tandem default; the figure issue 12 quotes (0.143 ms, H100).
  bilateral     bilateralFilter d 13, sigmaColor 25.5, sigmaSpace 3, BORDER_REFLECT_101, on all
                4 channels (the T-API kernel takes 4; OpenCV's CPU path only 1 or 3, so the CPU
                column runs RGB): tandem's bilateral defaults (sigma_s 3, sigma_r 0.1 of 255,
                radius ceil(2 sigma_s) = 6). Both sum the same disc of 113 taps. Not the same:
                OpenCV's colour distance is the L1 sum over 4 channels through a table, tandem's
                the Euclidean RGB distance through exp2 (one a tap and pixel); OpenCV pads
                the frame first (copyMakeBorder: one more pass, not timed apart).
  point-wise    convertScaleAbs alpha 1.3 beta -38.4: one read and one write per pixel, as
                saturation=1.3, but |a x + b| per channel, not relative to the luma: the
                nearest single T-API pass (cv2.transform, the CPU column's saturation, has no
                OpenCL path and would run on the CPU unannounced).
  saturation    cvtColor RGBA2GRAY, cvtColor GRAY2RGBA, addWeighted(src 1.3, grey -0.3):
                saturation=1.3's arithmetic in three T-API passes, with BT.601 luma (OpenCV)
                where tandem uses BT.709, and the luma rounded to 8 bits in between. On the CPU
                column: cv2.transform with the 4x4 matrix of Y + 1.3 (c - Y), BT.709, as
                tandem-bench.
  unsharp       blur 5x5, then addWeighted(src 2, blur -1): tandem's unsharp defaults (amount 1,
                radius 2) in two T-API passes.
  denoise       fastNlMeansDenoisingColored h 10, hColor 10, template 3, search 11 on CV_8UC3
                (RGB UMats made once): tandem's denoise defaults' windows; OpenCV works in
                CIELAB with sliding sums and a weight table, tandem compares RGB patches
                directly through exp(). Slow on a CPU: run it with --only denoise and few
                --frames.
  scale 960     resize to 960x540 INTER_LINEAR: scale=960:540:flags=bilinear (both take 2x2
                blocks at exactly half the size). Compulsory bytes: the output's own.
  scale 4k      resize to 3840x2160 INTER_CUBIC: scale=3840:2160:flags=bicubic.
  scale 720     resize to 1280x720 INTER_LINEAR: scale=1280:720:flags=bilinear.
  crop          a 1280x720 ROI at 320,180 copied: crop=1280:720:320:180.
  pad           copyMakeBorder to 2048x1200, BORDER_CONSTANT: pad=2048:1200:64:60.
  transpose     rotate ROTATE_90_CLOCKWISE: transpose=clock.
  hflip         flip 1: hflip.
Not covered: tonemap (OpenCV's Tonemap* classes have no OpenCL path), blend, eq (the T-API has
no affine colour transform: cv2.transform runs on the CPU).

The T-API falls back to the CPU without a word when an op's OpenCL path declines its inputs:
the script refuses to run without an OpenCL device, and the CPU column is there to compare
with; an op whose T-API time is near its CPU time may have run on the CPU.

  tools/peer-tapi.py [--size 1920x1080] [--frames 100] [--warmup 10] [--batch 10]
                     [--device :GPU:0] [--no-cpu] [--only WORDS] [--json FILE]
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(
        description="OpenCV T-API (cv2.UMat) timings on the equivalents of tandem's filters.",
        epilog="See the header of this file for what each op is and is not.")
    p.add_argument("--size", default="1920x1080", help="WIDTHxHEIGHT (default 1920x1080)")
    p.add_argument("--frames", type=int, default=100, help="timed samples per op (default 100)")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls first (default 10)")
    p.add_argument("--batch", type=int, default=10,
                   help="calls per sample in the batch figure (default 10)")
    p.add_argument("--ring", type=int, default=4, help="distinct input frames (default 4)")
    p.add_argument("--device", default=None,
                   help="OPENCV_OPENCL_DEVICE for OpenCV's device choice, e.g. :GPU:0, "
                        "NVIDIA:GPU:, :CPU: (default: OpenCV's choice, or the variable's)")
    p.add_argument("--no-cpu", dest="cpu", action="store_false",
                   help="leave out the CPU column")
    p.add_argument("--only", default="",
                   help="only ops whose name contains one of these comma-separated words "
                        "(copy always runs: it is the reference)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the numbers as JSON")
    a = p.parse_args()
    try:
        w, h = (int(v) for v in a.size.split("x"))
        if not (1 <= w <= 65536 and 1 <= h <= 65536):
            raise ValueError
    except ValueError:
        p.error("--size takes WIDTHxHEIGHT, not %r" % a.size)
    a.width, a.height = w, h
    for name in ("frames", "batch", "ring"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name)
    if a.warmup < 0:
        p.error("--warmup must be at least 0")
    return a


ARGS = parse_args()
# OpenCV reads the device choice once, when OpenCL is first used.
if ARGS.device is not None:
    os.environ["OPENCV_OPENCL_DEVICE"] = ARGS.device

import numpy as np  # noqa: E402  (after the environment is set)
import cv2  # noqa: E402


def summarize(ms):
    if not ms:
        return {"median_ms": None, "q1_ms": None, "q3_ms": None, "min_ms": None,
                "max_ms": None, "frames": 0}
    q1, med, q3 = np.percentile(ms, [25, 50, 75])  # linear, as tandem-bench
    return {"median_ms": float(med), "q1_ms": float(q1), "q3_ms": float(q3),
            "min_ms": float(min(ms)), "max_ms": float(max(ms)), "frames": len(ms)}


def synthetic_frames(width, height, count):
    """Gradients, a ripple, hard-edged blocks and noise (as tandem-bench's), RGBA8, alpha 255."""
    rng = np.random.default_rng(12)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    frames = []
    for k in range(count):
        block = ((((x + 13 * k) // 96) + ((y + 7 * k) // 64)) % 3) == 0
        ripple = 0.5 + 0.5 * np.sin(0.05 * (x + y + 17 * k))
        rgb = np.stack([x / width, y / height, ripple], axis=-1)
        rgb = np.where(block[..., None], 1 - rgb, rgb) * 0.9 + 0.05
        rgb += (rng.random(rgb.shape, dtype=np.float32) - 0.5) * 0.12
        rgba = np.empty((height, width, 4), np.uint8)
        rgba[..., :3] = np.clip(np.rint(rgb * 255), 0, 255)
        rgba[..., 3] = 255
        frames.append(rgba)
    return frames


def time_calls(fn, warmup, samples, batch, finish):
    """`warmup` untimed calls; then `samples` of one call and, if batch, `samples` of `batch`
    calls, each sample ended by finish() inside the timed region. ms per call."""
    i = 0
    for _ in range(warmup):
        fn(i)
        i += 1
    finish()
    one = []
    for _ in range(samples):
        t0 = time.perf_counter()
        fn(i)
        finish()
        one.append((time.perf_counter() - t0) * 1e3)
        i += 1
    many = []
    for _ in range(samples if batch else 0):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(i)
            i += 1
        finish()
        many.append((time.perf_counter() - t0) * 1e3 / batch)
    return one, many


def tapi_ops(src, width, height):
    """name -> fn(i) on UMats; src is the ring of input UMats."""
    n = len(src)
    dst = cv2.UMat(height, width, cv2.CV_8UC4)
    grey = cv2.UMat(height, width, cv2.CV_8UC1)
    grey4 = cv2.UMat(height, width, cv2.CV_8UC4)
    border = cv2.BORDER_REFLECT_101

    def saturation(i):
        s = src[i % n]
        cv2.cvtColor(s, cv2.COLOR_RGBA2GRAY, dst=grey)
        cv2.cvtColor(grey, cv2.COLOR_GRAY2RGBA, dst=grey4)
        cv2.addWeighted(s, 1.3, grey4, -0.3, 0.0, dst=dst)

    def unsharp(i):
        s = src[i % n]
        cv2.blur(s, (5, 5), dst=grey4, borderType=border)
        cv2.addWeighted(s, 2.0, grey4, -1.0, 0.0, dst=dst)

    rgb = [cv2.cvtColor(u, cv2.COLOR_RGBA2RGB) for u in src]
    dst3 = cv2.UMat(height, width, cv2.CV_8UC3)
    return {
        "copy": lambda i: cv2.copyTo(src[i % n], None, dst),
        "gaussian s=2": lambda i: cv2.GaussianBlur(src[i % n], (0, 0), 2, dst=dst, sigmaY=2,
                                                   borderType=border),
        "gaussian s=8": lambda i: cv2.GaussianBlur(src[i % n], (0, 0), 8, dst=dst, sigmaY=8,
                                                   borderType=border),
        "gaussian 5x5": lambda i: cv2.GaussianBlur(src[i % n], (5, 5), 2, dst=dst, sigmaY=2,
                                                   borderType=border),
        "box r=1": lambda i: cv2.blur(src[i % n], (3, 3), dst=dst, borderType=border),
        "box r=64": lambda i: cv2.blur(src[i % n], (129, 129), dst=dst, borderType=border),
        "box 5x5": lambda i: cv2.blur(src[i % n], (5, 5), dst=dst, borderType=border),
        "bilateral": lambda i: cv2.bilateralFilter(src[i % n], 13, 25.5, 3, dst=dst,
                                                   borderType=border),
        "point-wise": lambda i: cv2.convertScaleAbs(src[i % n], dst=dst, alpha=1.3,
                                                    beta=-38.4),
        "saturation": saturation,
        "unsharp": unsharp,
        "denoise": lambda i: cv2.fastNlMeansDenoisingColored(rgb[i % n], dst3, 10, 10, 3, 11),
        **geometry_ops(src, n, lambda h, w: cv2.UMat(h, w, cv2.CV_8UC4)),
    }


def geometry_ops(src, n, make):
    """The size-changing ops on UMats or arrays (cv2 takes both), into outputs made once by
    make(height, width)."""
    small, big, cropped = make(540, 960), make(2160, 3840), make(720, 1280)
    smaller = make(720, 1280)
    padded, turned, same = make(1200, 2048), make(1920, 1080), make(1080, 1920)
    return {
        "scale 960": lambda i: cv2.resize(src[i % n], (960, 540), dst=small,
                                          interpolation=cv2.INTER_LINEAR),
        "scale 4k": lambda i: cv2.resize(src[i % n], (3840, 2160), dst=big,
                                         interpolation=cv2.INTER_CUBIC),
        "scale 720": lambda i: cv2.resize(src[i % n], (1280, 720), dst=smaller,
                                          interpolation=cv2.INTER_LINEAR),
        "crop": lambda i: cv2.copyTo(crop_of(src[i % n]), None, cropped),
        "pad": lambda i: cv2.copyMakeBorder(src[i % n], 60, 60, 64, 64, cv2.BORDER_CONSTANT,
                                            dst=padded, value=(0, 0, 0, 255)),
        "transpose": lambda i: cv2.rotate(src[i % n], cv2.ROTATE_90_CLOCKWISE, dst=turned),
        "hflip": lambda i: cv2.flip(src[i % n], 1, dst=same),
    }


def crop_of(image):
    """The 1280x720 region at 320,180 (a UMat's ROI, or an array's view)."""
    if isinstance(image, cv2.UMat):
        return cv2.UMat(image, (180, 900), (320, 1600))
    return image[180:900, 320:1600]


# Output pixels of the ops whose output is not the input's size (1920x1080 input).
OUTPUT_PIXELS = {"scale 960": 960 * 540, "scale 4k": 3840 * 2160, "scale 720": 1280 * 720,
                 "crop": 1280 * 720,
                 "pad": 2048 * 1200}


def cpu_ops(frames, width, height):
    """The same ops on cv::Mat (T-API off), as tandem-bench's OpenCV column runs them."""
    n = len(frames)
    rgb = [cv2.cvtColor(f, cv2.COLOR_RGBA2RGB) for f in frames]
    dst = np.empty((height, width, 4), np.uint8)
    dst3 = np.empty((height, width, 3), np.uint8)
    border = cv2.BORDER_REFLECT_101
    w = (0.2126, 0.7152, 0.0722)
    a = 1.3
    m = np.zeros((4, 4), np.float32)  # out = Y + a (c - Y), alpha kept
    for i in range(3):
        for j in range(3):
            m[i, j] = (1 - a) * w[j] + (a if i == j else 0)
    m[3, 3] = 1
    return {
        "copy": lambda i: cv2.copyTo(frames[i % n], None, dst),
        "gaussian s=2": lambda i: cv2.GaussianBlur(frames[i % n], (0, 0), 2, dst=dst, sigmaY=2,
                                                   borderType=border),
        "gaussian s=8": lambda i: cv2.GaussianBlur(frames[i % n], (0, 0), 8, dst=dst, sigmaY=8,
                                                   borderType=border),
        "gaussian 5x5": lambda i: cv2.GaussianBlur(frames[i % n], (5, 5), 2, dst=dst, sigmaY=2,
                                                   borderType=border),
        "box r=1": lambda i: cv2.blur(frames[i % n], (3, 3), dst=dst, borderType=border),
        "box r=64": lambda i: cv2.blur(frames[i % n], (129, 129), dst=dst, borderType=border),
        "box 5x5": lambda i: cv2.blur(frames[i % n], (5, 5), dst=dst, borderType=border),
        "bilateral": lambda i: cv2.bilateralFilter(rgb[i % n], 13, 25.5, 3, dst=dst3,
                                                   borderType=border),
        "point-wise": lambda i: cv2.convertScaleAbs(frames[i % n], dst=dst, alpha=1.3,
                                                    beta=-38.4),
        "saturation": lambda i: cv2.transform(frames[i % n], m, dst=dst),
        "unsharp": lambda i: cv2.addWeighted(
            frames[i % n], 2.0,
            cv2.blur(frames[i % n], (5, 5), borderType=border), -1.0, 0.0, dst=dst),
        "denoise": lambda i: cv2.fastNlMeansDenoisingColored(rgb[i % n], dst3, 10, 10, 3, 11),
        **geometry_ops(frames, n, lambda h, w: np.empty((h, w, 4), np.uint8)),
    }


def selected(name, only):
    words = [w for w in only.split(",") if w]
    return name == "copy" or not words or any(w in name for w in words)


def fmt(v, spec):
    return format(v, spec) if v is not None and v == v else "-"


def main():
    a = ARGS
    cv2.ocl.setUseOpenCL(True)
    dev = cv2.ocl.Device.getDefault()
    if not cv2.ocl.haveOpenCL() or not cv2.ocl.useOpenCL() or not dev.name():
        sys.exit("peer-tapi: OpenCV has no OpenCL device (haveOpenCL %s, useOpenCL %s, device "
                 "%r); the T-API would run on the CPU. Choose one with --device, e.g. :GPU:0 "
                 "or :CPU: (OPENCV_OPENCL_DEVICE)." %
                 (cv2.ocl.haveOpenCL(), cv2.ocl.useOpenCL(), dev.name()))
    kinds = {cv2.ocl.DEVICE_TYPE_CPU: "cpu", cv2.ocl.DEVICE_TYPE_GPU: "gpu",
             cv2.ocl.DEVICE_TYPE_ACCELERATOR: "accelerator"}
    device = {"name": dev.name(), "vendor": dev.vendorName(), "version": dev.version(),
              "driver": dev.driverVersion(), "type": kinds.get(dev.type(), str(dev.type())),
              "compute_units": dev.maxComputeUnits()}
    env = sorted("%s=%s" % kv for kv in os.environ.items()
                 if kv[0].startswith(("OPENCV_", "POCL_", "CUDA_VISIBLE", "OCL_ICD")))
    command = " ".join(shlex.quote(x) for x in [sys.argv[0]] + sys.argv[1:])
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
    print("# peer-tapi: OpenCV's T-API (cv2.UMat) on the equivalents of tandem's filters\n")
    print("date:     %s" % date)
    print("command:  %s" % command)
    print("machine:  %s, %d cores online" % (platform.node(), os.cpu_count() or 0))
    print("cv2:      %s, python %s, numpy %s" % (cv2.__version__, platform.python_version(),
                                                 np.__version__))
    for e in env:
        print("env:      %s" % e)
    print("device:   %s | %s | %s | driver %s | %s, %d CU" %
          (device["name"], device["vendor"], device["version"], device["driver"],
           device["type"], device["compute_units"]))
    if device["type"] != "gpu":
        print("note:     the OpenCL device is not a GPU")
    print("%dx%d RGBA8, a ring of %d frames; %d warm-up calls, then %d samples per figure; "
          "batch %d; T-API times end with cv2.ocl.finish(); medians (IQR).\n" %
          (a.width, a.height, a.ring, a.warmup, a.frames, a.batch))

    frames = synthetic_frames(a.width, a.height, a.ring)
    src = [cv2.UMat(f) for f in frames]
    cv2.ocl.finish()
    bytes_per_frame = a.width * a.height * 4
    compulsory = 2 * bytes_per_frame
    rows = []
    for name, fn in tapi_ops(src, a.width, a.height).items():
        if not selected(name, a.only):
            continue
        one, many = time_calls(fn, a.warmup, a.frames, a.batch, cv2.ocl.finish)
        op_bytes = bytes_per_frame + 4 * OUTPUT_PIXELS.get(name, a.width * a.height)
        rows.append({"op": name, "tapi_call": summarize(one), "tapi_batch": summarize(many),
                     "compulsory_bytes": op_bytes, "cpu": None})
    copy_ms = rows[0]["tapi_batch"]["median_ms"]
    copy_gbps = compulsory / (copy_ms * 1e6) if copy_ms else float("nan")
    for r in rows:
        ms = r["tapi_batch"]["median_ms"]
        r["gbps"] = r["compulsory_bytes"] / (ms * 1e6) if ms else float("nan")
        r["percent_of_copy"] = 100 * r["gbps"] / copy_gbps

    threads = None
    if a.cpu:
        cv2.ocl.setUseOpenCL(False)
        threads = cv2.getNumThreads()
        ops = cpu_ops(frames, a.width, a.height)
        for r in rows:
            one, _ = time_calls(ops[r["op"]], a.warmup, a.frames, 0, lambda: None)
            r["cpu"] = summarize(one)
        cv2.ocl.setUseOpenCL(True)

    print("%-13s %30s %12s %9s %7s %10s %9s" %
          ("op", "T-API call ms (IQR)", "batch ms", "GB/s", "% copy", "CPU ms", "CPU/T-API"))
    for r in rows:
        c, b = r["tapi_call"], r["tapi_batch"]
        cpu = r["cpu"]["median_ms"] if r["cpu"] else None
        ratio = cpu / b["median_ms"] if cpu and b["median_ms"] else None
        iqr = "%.4f (%.4f..%.4f)" % (c["median_ms"], c["q1_ms"], c["q3_ms"])
        print("%-13s %30s %12.4f %9.2f %7.1f %10s %9s" %
              (r["op"], iqr, b["median_ms"], r["gbps"], r["percent_of_copy"],
               fmt(cpu, ".3f"), fmt(ratio, ".2f")))
    if a.cpu:
        print("\nCPU: cv::Mat with the T-API off, cv::getNumThreads() = %d; CPU/T-API is the "
              "CPU's median over the T-API's batch median." % threads)
    print("copy: %.2f GB/s (UMat copyTo, read + written)" % copy_gbps)

    if a.json:
        doc = {"tool": "peer-tapi", "date": date, "command": command,
               "cv2": cv2.__version__, "environment": env, "device": device,
               "size": [a.width, a.height], "warmup": a.warmup, "frames": a.frames,
               "batch": a.batch, "cpu_threads": threads, "copy_gbps": copy_gbps, "ops": rows}
        tmp = a.json + ".tmp"
        with open(tmp, "w") as out:
            # NaN is not JSON: null, as tandem-bench writes it.
            json.dump(json.loads(json.dumps(doc), parse_constant=lambda _: None), out, indent=1)
            out.write("\n")
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
