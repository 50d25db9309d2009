#!/usr/bin/env python3
"""Reads h2load --log-file (start µs, status, µs to the end of the response) and prints
`n=… p50=… p90=… p99=… max=… mean=… (ms) statuses={…}`, nearest-rank percentiles."""
import collections, math, sys
lat, statuses = [], collections.Counter()
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) < 3:
        continue
    statuses[parts[1]] += 1
    lat.append(int(parts[2]) / 1000)
lat.sort()
rank = lambda q: lat[max(0, math.ceil(q * len(lat)) - 1)]
print(f"n={len(lat)} p50={rank(0.5):.3f} p90={rank(0.9):.3f} p99={rank(0.99):.3f} max={lat[-1]:.3f} "
      f"mean={sum(lat) / len(lat):.3f} statuses={dict(statuses)}")
