"""Draws per-core utilisation and request share, variant by variant, as an SVG (no dependencies).

Usage, from the repository root:
       .venv/bin/sanlab run scenarios/studies/vdbench_hitarea.toml --json > run.json
       .venv/bin/python docs/studies/plot_core_util.py run.json docs/studies/vdbench_hitarea_cores.svg
"""

from __future__ import annotations

import json
import sys

BAR_W, GAP, GROUP_GAP, HEIGHT, TOP, LEFT = 14, 3, 40, 200, 50, 50
COLOURS = {"util": "#d62728", "share": "#1f77b4"}


def main(source: str, target: str) -> None:
    doc = json.load(open(source))
    variants = [v for v in doc["variants"] if v["arrays"] and v["arrays"][0]["cores"]]
    group_w = len(variants[0]["arrays"][0]["cores"]) * (2 * BAR_W + GAP) + GROUP_GAP
    width = LEFT + group_w * len(variants) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{TOP + HEIGHT + 70}" font-family="sans-serif" font-size="11">',
        f'<text x="{LEFT}" y="20" font-size="14">Per-core utilisation (red) and share of requests (blue), by variant</text>',
        f'<line x1="{LEFT}" y1="{TOP + HEIGHT}" x2="{width - 10}" y2="{TOP + HEIGHT}" stroke="black"/>',
    ]
    for tick in (0.0, 0.5, 1.0):
        y = TOP + HEIGHT * (1 - tick)
        out.append(f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end">{tick:.0%}</text>')
        out.append(f'<line x1="{LEFT}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#ddd"/>')
    for g, variant in enumerate(variants):
        x0 = LEFT + g * group_w + 10
        array = variant["arrays"][0]
        for k, core in enumerate(array["cores"]):
            for j, key in enumerate(("util", "share")):
                h = HEIGHT * min(core[key], 1.0)
                x = x0 + k * (2 * BAR_W + GAP) + j * BAR_W
                out.append(f'<rect x="{x}" y="{TOP + HEIGHT - h}" width="{BAR_W - 1}" height="{h}" fill="{COLOURS[key]}"/>')
        iops = variant["vms"][0]["iops"]
        lat = variant["vms"][0]["lat_ms"]["mean"]
        out.append(f'<text x="{x0}" y="{TOP + HEIGHT + 18}">{variant["name"]}: cores 1-{len(array["cores"])}</text>')
        out.append(f'<text x="{x0}" y="{TOP + HEIGHT + 34}">{iops:,.0f} IOPS, {lat:.3f} ms</text>')
    out.append("</svg>")
    with open(target, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
