# Differential run of random option sets (-l -d -D -t -y -a -n -S -A -s -c, masks; -f with
# FMT=1) of bpls and gpubpls on the datasets of wheel_reads.py and our_writer.py (in DIFF_OUT).
#   BPLS=/path/to/bpls DIFF_OUT=DIR python3 bpls_options.py SEED NFILES
# Differences where bpls prints what it never read (a selection past the end, a string or value
# of -t -dD on BP5, a float given to %x) are bpls's own (docs/interop.md).
import random, subprocess, sys, os, glob
from diffenv import BPLS, G, OUT
R = random.Random(int(sys.argv[1]))
files = sorted(glob.glob(os.path.join(OUT, "c*.bp")) + glob.glob(os.path.join(OUT, "w*.bp")))[:int(sys.argv[2])]
bad = 0; n = 0
for f in files:
    d, b = os.path.dirname(f), os.path.basename(f)
    for _ in range(4):
        opts = []
        if R.random() < 0.5: opts.append("-l")
        if R.random() < 0.7: opts.append("-d")
        if R.random() < 0.3: opts.append("-D")
        if R.random() < 0.2: opts.append("-t")
        if R.random() < 0.2: opts.append("-y")
        if R.random() < 0.2: opts.append("-a")
        if R.random() < 0.15: opts += ["-n", str(R.randint(1, 8))]
        if R.random() < 0.1: opts.append("-S")
        if R.random() < 0.1: opts.append("-A")
        if R.random() < 0.4:
            nd = R.randint(1, 4)
            opts += ["-s", ",".join(str(R.randint(-3, 3)) for _ in range(nd)), "-c", ",".join(str(R.choice([-1, 1, 2, 3])) for _ in range(nd))]
        if os.environ.get("FMT") and R.random() < 0.1: opts += ["-f", R.choice(["%g", "%5.2f", "%d", "%x"])]
        args = opts + [b]
        if R.random() < 0.3: args.append(R.choice(["v0*", "grp/*", "v1_ga", "*la*"]))
        try:
            r1 = subprocess.run([BPLS] + args, cwd=d, capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            continue
        r2 = subprocess.run([G] + args, cwd=d, capture_output=True, timeout=60)
        n += 1
        if b"caught an exception" in r1.stdout or r1.returncode < 0: continue
        if r1.stdout != r2.stdout or r1.returncode != r2.returncode:
            bad += 1
            print("DIFF", f, " ".join(args), "rc", r1.returncode, r2.returncode, flush=True)
print("done", n, "runs,", bad, "diffs")
