"""The soak's figures as one self-contained SVG: five panels over the run's minutes (each replica's
RSS, each path's p99, each path's achieved rate as a share of its target, PostgreSQL's largest
tables, the cores each part used), a line per series, axes with units, a legend, and the starts and restarts marked."""
from html import escape

WIDTH = 980
PANEL_HEIGHT = 250
LEFT, RIGHT, TOP = 70, 230, 100
PLOT_WIDTH = WIDTH - LEFT - RIGHT
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]
PATHS = ("reads", "registrations", "broadcasts")


def nice_ceiling(value):
    """The smallest 1, 2, 2.5 or 5 × 10^k at or above value (at least 1)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** len(str(int(value))) / 10 if value >= 1 else 1.0
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10 * magnitude


def panel(out, index, title, unit, series, minutes, marks):
    """series: [(label, [(minute, value)])]."""
    top = TOP + index * (PANEL_HEIGHT + 50)
    height = PANEL_HEIGHT - 40
    y_max = nice_ceiling(max((v for _, points in series for _, v in points), default=1) * 1.05)

    def x(minute):
        return LEFT + PLOT_WIDTH * minute / minutes

    def y(value):
        return top + height - height * value / y_max

    out.append(f'<text x="{LEFT}" y="{top - 10}" font-size="14" font-weight="bold">{escape(title)}</text>')
    out.append(f'<rect x="{LEFT}" y="{top}" width="{PLOT_WIDTH}" height="{height}" fill="none" stroke="#444"/>')
    for i in range(6):
        value = y_max * i / 5
        out.append(f'<line x1="{LEFT}" x2="{LEFT + PLOT_WIDTH}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" font-size="11" text-anchor="end">{value:g}</text>')
    ticks = max(1, round(minutes / 10)) if minutes >= 10 else (0.5 if minutes > 2 else 0.25)
    tick = 0.0
    while tick <= minutes + 1e-9:
        out.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top + height}" y2="{top + height + 4}" stroke="#444"/>')
        out.append(f'<text x="{x(tick):.1f}" y="{top + height + 16}" font-size="11" text-anchor="middle">{tick:g}</text>')
        tick += ticks
    out.append(f'<text x="{LEFT + PLOT_WIDTH / 2}" y="{top + height + 32}" font-size="11" text-anchor="middle">minutes into the run</text>')
    out.append(f'<text x="18" y="{top + height / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 18 {top + height / 2})">{escape(unit)}</text>')
    for i, (minute, label) in enumerate(marks):
        out.append(f'<line x1="{x(minute):.1f}" x2="{x(minute):.1f}" y1="{top}" y2="{top + height}" stroke="#999" stroke-dasharray="3,3"/>')
        if index == 0:  # labelled once, on the first panel, staggered so that close marks stay legible
            out.append(f'<text x="{x(minute) + 3:.1f}" y="{top + 12 + 12 * (i % 3)}" font-size="10" fill="#666">{escape(label)}</text>')
    for i, (label, points) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        if points:
            path = " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for m, v in points:
                out.append(f'<circle cx="{x(m):.1f}" cy="{y(v):.1f}" r="2" fill="{colour}"/>')
        legend_y = top + 14 + 16 * i
        out.append(f'<line x1="{LEFT + PLOT_WIDTH + 14}" x2="{LEFT + PLOT_WIDTH + 34}" y1="{legend_y - 4}" y2="{legend_y - 4}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{LEFT + PLOT_WIDTH + 40}" y="{legend_y}" font-size="11">{escape(label)}</text>')


def plot(figures, marks):
    samples = figures["samples"]
    minutes = max([figures["minutes"]] + [s["minute"] for s in samples])
    targets = figures["targets"]
    rss = {}
    for s in samples:
        for name, value in s["rss"].items():
            rss.setdefault(name, []).append((s["minute"], value["rssMiB"]))
    p99 = [(f"{path} p99", [(s["minute"], s["paths"][path]["p99Ms"]) for s in samples]) for path in PATHS]
    rates = [(f"{path} (target {targets[path]:g}/s)", [(s["minute"], 100 * s["paths"][path]["rate"] / targets[path]) for s in samples if targets[path]])
             for path in PATHS]
    last = samples[-1]["tables"] if samples else {}
    largest = sorted(last, key=lambda name: -last[name]["bytes"])[:8]
    tables = [(name, [(s["minute"], s["tables"].get(name, {}).get("bytes", 0) / 1048576) for s in samples]) for name in largest]

    parts = []
    for s in samples:
        for name in s.get("cpuCores", {}):
            if name not in parts:
                parts.append(name)
    cores = [(name if name in ("machine", "other", "emulator", "postgres") else f"replica {name}",
              [(s["minute"], s["cpuCores"][name]) for s in samples if name in s.get("cpuCores", {})]) for name in parts]
    panels = 5 if cores else 4

    height = TOP + panels * (PANEL_HEIGHT + 50) + 10
    load = figures.get("load", {})
    title = (f"Marquee match-day soak: {figures['minutes']:g} min, {figures.get('build') or figures['binary']}, started {figures['startedAt']}")
    subtitles = [
        f"targets: channel-ID reads {targets['reads']:g}/s, token registrations {targets['registrations']:g}/s (a tenth of the devices rotating), "
        f"broadcasts {targets['broadcasts']:g}/s over {figures['events']} events;",
        f"a {figures['startDevices']:,}-device start every {figures['startEverySeconds']:g} s from {figures.get('firstStartSeconds', 0):g} s; 2 replicas on durable PostgreSQL with the APNs emulator, "
        f"each SIGTERMed at half time; one sample every {figures['sampleSeconds']:g} s;",
        f"load average (1 min) {load.get('before', 0):.1f} before, {load.get('after', 0):.1f} after, on {figures.get('cores', '?')} cores",
    ]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
    ] + [f'<text x="{LEFT}" y="{40 + 14 * i}" font-size="11">{escape(line)}</text>' for i, line in enumerate(subtitles)]
    panel(out, 0, "RSS of each replica (VmRSS; a restart starts a new process)", "MiB", [(f"replica {n}", points) for n, points in sorted(rss.items())], minutes, marks)
    panel(out, 1, "p99 latency per path (each sample's requests pooled)", "milliseconds", p99, minutes, marks)
    panel(out, 2, "achieved rate per path, as a share of its target", "% of target", rates, minutes, marks)
    panel(out, 3, "PostgreSQL tables, pg_total_relation_size (the largest 8 at the end)", "MiB", tables, minutes, marks)
    if cores:
        panel(out, 4, "cores used per part (other: the machine less the parts: wrk, the soak's script)", "cores", cores, minutes, marks)
    out.append("</svg>")
    return "\n".join(out) + "\n"
