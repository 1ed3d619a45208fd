#!/usr/bin/env python3
"""The scan function of acres_vehicle::scan, vectorised with numpy: the reference and the
baseline of the `scan` benchmark.

Semantics are those of the Rust module docs (ros_pkgs/acres_vehicle/src/scan.rs): keep points
with min_z <= z <= max_z and 0.05 < hypot(x, y) <= max_range; bin = rint(degrees(arctan2(y, x)))
mod 360; ranges = min horizontal range per bin (inf when empty); sectors = min over the bins k
with ((k + 22) % 360) // 45 == s; ahead = min x over kept points with x > 0 and |y| <= half width.
Arithmetic is float32 like the Rust version (the bearing too: numpy's float32 arctan2 is exact to
about 1e-5 degree, far inside the documented 1e-3 degree edge tolerance).

Usage: python3 scan_numpy.py POINTS.bin OUT.json [--repeat N] [--min-z M] [--max-z M]
                             [--ahead-half-width M] [--max-range M]

POINTS.bin is little-endian float32, N x 4 (x, y, z, intensity). OUT.json receives
{"ranges_m": [...], "sectors_m": [...], "ahead_m": ..., "seconds_per_call": ..., "points": N}
with null for infinity. Exit codes: 0 ok, 2 bad input or usage.
"""

import argparse
import json
import math
import sys
import time

import numpy as np

BINS = 360


def scan(points, min_z=-1.9, max_z=0.5, ahead_half_width=1.7, max_range=40.0):
    """Returns (ranges_m[360], sectors_m[8], ahead_m) for an (N, 4) float32 array.

    The height filter comes first so the later steps see only in-band points; rows are selected
    with np.compress, much faster than boolean fancy indexing of a 2-D array.
    """
    f32 = np.float32
    z = points[:, 2]
    band = np.compress((z >= f32(min_z)) & (z <= f32(max_z)), points[:, :2], axis=0)
    r2 = band[:, 0] * band[:, 0] + band[:, 1] * band[:, 1]
    keep = (r2 <= f32(max_range) * f32(max_range)) & (r2 > f32(0.05) * f32(0.05))
    kept = np.compress(keep, band, axis=0)
    r2 = r2[keep]
    x = kept[:, 0]
    y = kept[:, 1]
    # rint(degrees) is in [-180, 180]; mod 360 maps it to [0, 359].
    k = np.rint(np.degrees(np.arctan2(y, x))).astype(np.int32)
    k[k < 0] += BINS
    best = np.full(BINS, np.inf, dtype=np.float32)
    np.minimum.at(best, k, r2)
    ranges = np.sqrt(best)
    # Sector s holds bins k with ((k + 22) % 360) // 45 == s: roll by 22, then rows of 45.
    sectors = np.roll(ranges, 22).reshape(8, 45).min(axis=1)
    ahead_x = x[(x > 0) & (np.abs(y) <= f32(ahead_half_width))]
    ahead = ahead_x.min() if ahead_x.size else f32(np.inf)
    return ranges, sectors, ahead


def finite_or_none(v):
    v = float(v)
    return v if math.isfinite(v) else None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("points")
    ap.add_argument("out")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--min-z", type=float, default=-1.9)
    ap.add_argument("--max-z", type=float, default=0.5)
    ap.add_argument("--ahead-half-width", type=float, default=1.7)
    ap.add_argument("--max-range", type=float, default=40.0)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        print("--repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        raw = np.fromfile(args.points, dtype="<f4")
    except OSError as e:
        print(f"{args.points}: {e}", file=sys.stderr)
        return 2
    if raw.size % 4:
        print(f"{args.points}: {raw.size} floats is not a multiple of 4", file=sys.stderr)
        return 2
    points = raw.reshape(-1, 4)
    params = (args.min_z, args.max_z, args.ahead_half_width, args.max_range)
    result = scan(points, *params)  # warm-up, and the result written out
    start = time.perf_counter()
    for _ in range(args.repeat):
        scan(points, *params)
    seconds = (time.perf_counter() - start) / args.repeat
    ranges, sectors, ahead = result
    with open(args.out, "w") as f:
        json.dump(
            {
                "ranges_m": [finite_or_none(r) for r in ranges],
                "sectors_m": [finite_or_none(s) for s in sectors],
                "ahead_m": finite_or_none(ahead),
                "seconds_per_call": seconds,
                "points": int(points.shape[0]),
            },
            f,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
