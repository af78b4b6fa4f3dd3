#!/usr/bin/env python3
"""tools/tc-trace-svg.py — draws a tensor-core trace (tsl run --tc-trace FILE) as an SVG
timeline: one row per pipe, one box per instruction, coloured by mnemonic; what Perfetto
shows, as a picture a document can hold.

    python3 tools/tc-trace-svg.py TRACE.json OUT.svg [--from CYCLE] [--to CYCLE]
"""
import json
import sys

COLOURS = {"copy_gm_to_l1": "#4e79a7", "copy_gm_to_ub": "#76b7b2", "load2d": "#f28e2b", "load3d": "#ffbe7d",
           "mmad": "#e15759", "fixpipe": "#59a14f", "copy_l0c_to_ub": "#8cd17d", "copy_ub_to_gm": "#b6992d",
           "vadd": "#b07aa1", "vmul": "#b07aa1", "vmax": "#b07aa1", "vrelu": "#b07aa1", "vcast": "#b07aa1"}


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    lo = int(args[args.index("--from") + 1]) if "--from" in args else 0
    hi = int(args[args.index("--to") + 1]) if "--to" in args else None
    with open(args[0]) as f:
        trace = json.load(f)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M" and e["name"] == "thread_name"}
    boxes = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["dur"] > 0]
    end = hi if hi is not None else max(e["ts"] + e["dur"] for e in boxes)
    boxes = [e for e in boxes if e["ts"] + e["dur"] > lo and e["ts"] < end]
    rows = sorted(names)
    width, left, row, top = 1000, 80, 28, 30
    scale = (width - left - 10) / max(end - lo, 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + row * len(rows) + 40}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>']
    for i, tid in enumerate(rows):
        y = top + i * row
        out.append(f'<text x="5" y="{y + 17}">{names[tid]}</text>')
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y + row - 2}" y2="{y + row - 2}" stroke="#ddd"/>')
    for e in boxes:
        y = top + rows.index(e["tid"]) * row
        x0 = left + (max(e["ts"], lo) - lo) * scale
        w = max((min(e["ts"] + e["dur"], end) - max(e["ts"], lo)) * scale, 0.5)
        colour = COLOURS.get(e["name"], "#999")
        out.append(f'<rect x="{x0:.2f}" y="{y + 3}" width="{w:.2f}" height="{row - 8}" fill="{colour}" '
                   f'stroke="white" stroke-width="0.3"><title>{e["args"]["instruction"]} '
                   f'[{e["ts"]}, {e["ts"] + e["dur"]})</title></rect>')
    y = top + row * len(rows) + 15
    out.append(f'<text x="{left}" y="{y}">cycle {lo}</text>')
    out.append(f'<text x="{width - 10}" y="{y}" text-anchor="end">cycle {end}</text>')
    x = left + 120
    for name in ("copy_gm_to_l1", "load2d", "mmad", "fixpipe"):
        out.append(f'<rect x="{x}" y="{y + 8}" width="12" height="12" fill="{COLOURS[name]}"/>'
                   f'<text x="{x + 16}" y="{y + 18}">{name}</text>')
        x += 140
    out.append("</svg>")
    with open(args[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
