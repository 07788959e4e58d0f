#!/usr/bin/python3
"""bench-plot.py - the zero-shutter-lag offset distribution as one PNG (gnuplot).

  Tests/bench-plot.py [OFFSETS] [--out PNG]
  Tests/bench-plot.py --help

OFFSETS (default .build/bench/offsets.tsv, written by Tests/VM/bench-press.sh): one photo a line,
"SIZE<TAB>offsetMs<TAB>frameIntervalMs<TAB>bracketMs". Draws, for each size, a histogram of
offsetMs (frame start − press) with the frame interval marked: −interval (the oldest a covering
frame can start), ±interval/2 (the target), and 0 (the press). Writes PNG (default
.build/bench/offsets.png). Needs gnuplot (Debian: gnuplot-nox).
"""
import collections, math, os, shutil, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
argv = sys.argv[1:]
if "-h" in argv or "--help" in argv:
    print(__doc__.split("\n", 1)[1].strip()); sys.exit(0)
out = os.path.join(root, ".build/bench/offsets.png")
if "--out" in argv:
    i = argv.index("--out"); out = os.path.realpath(argv[i + 1]); del argv[i:i + 2]
source = argv[0] if argv else os.path.join(root, ".build/bench/offsets.tsv")
if not shutil.which("gnuplot"):
    sys.exit("bench-plot: gnuplot is not installed (apt-get install gnuplot-nox)")

offsets, intervals = collections.defaultdict(list), collections.defaultdict(list)
for line in open(source):
    fields = line.rstrip("\n").split("\t")
    if len(fields) < 2 or not fields[1]:
        continue
    offsets[fields[0]].append(float(fields[1]))
    if len(fields) > 2 and fields[2]:
        intervals[fields[0]].append(float(fields[2]))
if not offsets:
    sys.exit(f"bench-plot: no offsets in {source}")
sizes = sorted(offsets, key=lambda s: [int(x) for x in s.split("x")])
work = tempfile.mkdtemp(prefix="bench-plot.")
script = [f'set terminal pngcairo size 900,{330 * len(sizes)} font "DejaVu Sans,10"', f'set output "{out}"',
          f"set multiplot layout {len(sizes)},1", "set style fill solid 0.6 border -1",
          'set xlabel "offset = frame start − press (ms)"', 'set ylabel "photos"', "set key top left"]
for size in sizes:
    values = offsets[size]
    interval = sorted(intervals[size])[len(intervals[size]) // 2] if intervals[size] else max(abs(v) for v in values)
    width = interval / 12
    counts = collections.Counter(math.floor(v / width) for v in values)
    data = os.path.join(work, f"{size}.dat")
    with open(data, "w") as f:
        for b in sorted(counts):
            f.write(f"{(b + 0.5) * width:.4f} {counts[b]}\n")
    top = max(counts.values()) * 1.25
    script += [f'set title "{size}: {len(values)} photos, frame interval {interval:.1f} ms"',
               f"set xrange [{-interval * 1.3:.3f}:{interval * 0.8:.3f}]", f"set yrange [0:{top:.2f}]",
               f"set boxwidth {width * 0.9:.4f}", "unset arrow"]
    for x, colour, dash in ((-interval, "#b00000", 1), (-interval / 2, "#d08000", 2), (interval / 2, "#d08000", 2), (0, "#000000", 3)):
        script.append(f'set arrow from {x:.3f},0 to {x:.3f},{top:.2f} nohead lw 2 dt {dash} lc rgb "{colour}"')
    script.append(f'plot "{data}" using 1:2 with boxes lc rgb "#4070c0" title "offsetMs", '
                  f'NaN with lines lw 2 dt 1 lc rgb "#b00000" title "−interval", '
                  f'NaN with lines lw 2 dt 2 lc rgb "#d08000" title "±interval/2", '
                  f'NaN with lines lw 2 dt 3 lc rgb "#000000" title "press"')
script.append("unset multiplot")
os.makedirs(os.path.dirname(out), exist_ok=True)
result = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True)
shutil.rmtree(work, ignore_errors=True)
if result.returncode:
    sys.exit("bench-plot: gnuplot failed")
print(f"bench-plot: {out}")
