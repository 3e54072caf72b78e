#!/usr/bin/env python3
"""Draws BENCHMARKS.md's chart from the tables a benchmark run printed.

    python3 Benchmarks/tools/chart.py --timing timing.md --instructions instructions.md --out chart.svg
    python3 Benchmarks/tools/chart.py --csv chart.csv --out chart.svg    # redraw from the numbers

`timing.md` is what `Benchmarks/run.sh` prints (a Markdown table with the columns `client`, `c`
and `CPU µs/req`); `instructions.md` what `Benchmarks/run.sh --instructions` prints (`client`,
`c`, `instructions/request`). Either may be left out. The numbers drawn are also written beside
the SVG as CSV (`chart.svg` → `chart.csv`: `metric,client,c,value`, plus a `caption` line), which
`--csv` reads back, so the chart can be redrawn without rerunning the benchmark. The chart has
one panel per table: a group of horizontal bars per client, one bar per concurrency level, each
labelled with its value; both panels name the clients as the timing table does. Plain SVG, no
plotting library, so the script runs wherever Python 3 does.
"""

import argparse
import csv
import html
import os
import sys

COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1"]

# `--clients` names (what the instruction table prints) → the timing table's row names.
NAMES = {
    "libcurl": "raw libcurl (multi)",
    "libcurl-curlew-wire": "raw libcurl, Curlew's wire",
    "curlew-data": "Curlew (Data)",
    "curlew-decoded": "Curlew (Decodable)",
    "curlew-middleware": "Curlew (5 middleware)",
    "curlew-queue": "Curlew (queue)",
    "curlew-cache-memory": "Curlew (memory cache hit)",
    "curlew-cache-disk": "Curlew (disk cache hit)",
    "curlew-revalidate": "Curlew (304 revalidation)",
    "async-http-client": "AsyncHTTPClient",
    "urlsession": "URLSession",
    "go-net-http": "Go net/http",
    "rust-reqwest": "Rust reqwest",
}
CPU, INSTRUCTIONS = "cpu_us_per_request", "instructions_per_request"


def read_table(path, value_column):
    """(client, c, value) rows of the first Markdown table in `path` with `value_column`."""
    rows = []
    header = None
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line.startswith("|"):
                if header is not None and rows:
                    break
                header = None
                continue
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if header is None:
                if "client" in cells and "c" in cells and value_column in cells:
                    header = cells
                continue
            if set(line.replace("|", "").strip()) <= set("-: "):
                continue
            record = dict(zip(header, cells))
            try:
                value = float(record[value_column].replace(",", "").replace("k", "e3"))
                level = int(record["c"])
            except (KeyError, ValueError):
                continue
            rows.append((NAMES.get(record["client"], record["client"]), level, value))
    if not rows:
        sys.exit(f"chart.py: no table with the column '{value_column}' in {path}")
    return rows


def panel(rows, title, unit, x, y, width):
    """SVG elements of one panel at (x, y); returns (elements, height)."""
    clients = list(dict.fromkeys(client for client, _, _ in rows))
    levels = sorted({level for _, level, _ in rows})
    values = {(client, level): value for client, level, value in rows}
    biggest = max(values.values())
    label_width, bar_height, gap = 210, 11, 9
    plot_width = width - label_width - 70
    elements = [f'<text x="{x}" y="{y + 14}" class="title">{html.escape(title)}</text>']
    top = y + 30
    for index, level in enumerate(levels):
        legend_x = x + label_width + index * 70
        elements.append(f'<rect x="{legend_x}" y="{top - 2}" width="10" height="10" fill="{COLOURS[index % len(COLOURS)]}"/>')
        elements.append(f'<text x="{legend_x + 14}" y="{top + 7}">c = {level}</text>')
    top += 20
    for client in clients:
        group = [level for level in levels if (client, level) in values]
        group_height = len(group) * bar_height
        elements.append(
            f'<text x="{x + label_width - 8}" y="{top + group_height / 2 + 4}" text-anchor="end">{html.escape(client)}</text>')
        for level in group:
            value = values[(client, level)]
            length = max(1.0, plot_width * value / biggest)
            colour = COLOURS[levels.index(level) % len(COLOURS)]
            elements.append(
                f'<rect x="{x + label_width}" y="{top}" width="{length:.1f}" height="{bar_height - 2}" fill="{colour}"/>')
            text = f"{value / 1000:.1f}k" if value >= 10000 else f"{value:.1f}"
            elements.append(f'<text x="{x + label_width + length + 4:.1f}" y="{top + bar_height - 3}" class="value">{text}</text>')
            top += bar_height
        top += gap
    elements.append(f'<text x="{x + label_width}" y="{top + 10}" class="note">{html.escape(unit)}</text>')
    return elements, top + 20 - y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timing")
    parser.add_argument("--instructions")
    parser.add_argument("--csv", help="redraw from a CSV this script wrote")
    parser.add_argument("--out", required=True)
    parser.add_argument("--caption", default="")
    arguments = parser.parse_args()
    data = {CPU: [], INSTRUCTIONS: []}
    caption = arguments.caption
    if arguments.csv:
        with open(arguments.csv, encoding="utf-8", newline="") as handle:
            for row in csv.reader(handle):
                if not row or row[0] == "metric":
                    continue
                if row[0] == "caption":
                    caption = caption or row[1]
                    continue
                data[row[0]].append((row[1], int(row[2]), float(row[3])))
    if arguments.timing:
        data[CPU] = read_table(arguments.timing, "CPU µs/req")
    if arguments.instructions:
        data[INSTRUCTIONS] = read_table(arguments.instructions, "instructions/request")
    if not data[CPU] and not data[INSTRUCTIONS]:
        sys.exit("chart.py: give --timing, --instructions, both, or --csv")
    width = 640
    elements, height = [], 10
    if caption:
        elements.append(f'<text x="10" y="22" class="caption">{html.escape(caption)}</text>')
        height += 24
    if data[CPU]:
        drawn, used = panel(data[CPU], "CPU per request",
                            "µs of the client process's user + system time per request (shorter is better)", 10, height, width)
        elements += drawn
        height += used
    if data[INSTRUCTIONS]:
        drawn, used = panel(data[INSTRUCTIONS], "Instructions per request",
                            "callgrind: (Ir(3N) − Ir(N)) / 2N (shorter is better)", 10, height, width)
        elements += drawn
        height += used
    style = ("text{font-family:sans-serif;font-size:11px;fill:#222}.title{font-size:14px;font-weight:bold}"
             ".value{font-size:10px;fill:#444}.note{font-size:10px;fill:#666}.caption{font-size:12px;fill:#444}")
    with open(arguments.out, "w", encoding="utf-8") as handle:
        handle.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">\n')
        handle.write(f'<style>{style}</style>\n<rect width="100%" height="100%" fill="white"/>\n')
        handle.write("\n".join(elements))
        handle.write("\n</svg>\n")
    numbers = os.path.splitext(arguments.out)[0] + ".csv"
    if not arguments.csv or os.path.abspath(arguments.csv) != os.path.abspath(numbers):
        with open(numbers, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["metric", "client", "c", "value"])
            if caption:
                writer.writerow(["caption", caption, "", ""])
            for metric in (CPU, INSTRUCTIONS):
                for client, level, value in data[metric]:
                    writer.writerow([metric, client, level, f"{value:g}"])


if __name__ == "__main__":
    main()
