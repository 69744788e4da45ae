#!/usr/bin/env bash
# How bright each tonemap operator leaves a radiance map, in stops against reinhard: the mean
# and the log-average of the output's linear luminance (sRGB decoded), at exposure 0, then for
# aces and hable at reinhard's own exposure, log2(key / the input's log-average luminance), to
# tell the curves from reinhard's adaptation. Also prints that log-average (Radiance RGBE read
# here, flat or run-length scanlines with the #?RADIANCE line first).
#   tools/tonemap-stops.sh TANDEM INPUT.hdr
set -euo pipefail
tandem=$1 input=$2 work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stops=$(python3 - "$input" <<'PY'
import math, sys
d = open(sys.argv[1], 'rb').read()
i = d.index(b'\n\n') + 2
j = d.index(b'\n', i)
size = d[i:j].split()
h, w, p = int(size[1]), int(size[3]), j + 1
total = 0.0
for _ in range(h):
    if d[p] == 2 and d[p + 1] == 2:  # run-length encoded, a channel at a time
        p += 4
        ch = []
        for _ in range(4):
            row = []
            while len(row) < w:
                k = d[p]; p += 1
                if k > 128: row += [d[p]] * (k - 128); p += 1
                else: row += list(d[p:p + k]); p += k
            ch.append(row)
        px = list(zip(*ch))
    else:
        px = [tuple(d[p + 4 * x:p + 4 * x + 4]) for x in range(w)]; p += 4 * w
    for r, g, b, e in px:
        f = math.ldexp(1.0, e - 136) if e else 0.0
        total += math.log(1e-4 + f * (0.2126 * (r + .5) + 0.7152 * (g + .5) + 0.0722 * (b + .5)))
lavg = math.exp(total / (w * h))
print('%.6f %.2f' % (lavg, math.log2(0.18 / lavg)))
PY
)
read -r lavg exposure <<<"$stops"
echo "input log-average luminance $lavg: reinhard (key 0.18) scales it by $exposure stops"
runs="reinhard aces hable drago aces:exposure=$exposure hable:exposure=$exposure"
for run in $runs; do
  "$tandem" -i "$input" -o "$work/$run.png" -y -f "tonemap=op=$run" > /dev/null 2>&1
  ffmpeg -loglevel error -y -i "$work/$run.png" -f rawvideo -pix_fmt rgb24 "$work/$run.rgb"
done
python3 - "$work" $runs <<'PY'
import math, sys
work, runs = sys.argv[1], sys.argv[2:]
lin = [(c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4) for c in range(256)]
def stats(run):
    b = open('%s/%s.rgb' % (work, run), 'rb').read()
    ls = [0.2126 * lin[b[i]] + 0.7152 * lin[b[i + 1]] + 0.0722 * lin[b[i + 2]] for i in range(0, len(b), 3)]
    return sum(ls) / len(ls), math.exp(sum(math.log(l + 1e-4) for l in ls) / len(ls))
ref = stats('reinhard')
for run in runs:
    m, g = stats(run)
    print('%-24s mean %.4f  log-average %.4f  stops against reinhard: %+.2f (mean) %+.2f (log-average)'
          % (run, m, g, math.log2(m / ref[0]), math.log2(g / ref[1])))
PY
