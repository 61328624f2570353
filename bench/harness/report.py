"""Writes a results document as JSON, a Markdown table and a PNG chart:

  python -m bench.harness.report RESULTS.json      rewrites RESULTS.md and RESULTS.png

The table has one row per model and one column per runtime: the median latency in ms and,
in parentheses, its multiple of the model's physical limit (roofline); other statuses are
named. The chart shows each runtime's speedup over the best peer on each model (higher is
better; the best peer is 1), on a log scale.
"""
import json
import os
import sys

from bench.peers.runners import ORCHID, PEERS


def runtimes_in(doc):
    seen = {r["runtime"] for r in doc["results"]}
    return [r for r in PEERS + ORCHID if r in seen]


def by_model(doc):
    table = {}
    for r in doc["results"]:
        table.setdefault(r["model"], {})[r["runtime"]] = r
    return table


def best_peer_ms(row):
    times = [r["median_ms"] for rt, r in row.items() if rt in PEERS and r["status"] == "ok" and r["median_ms"]]
    return min(times) if times else None


def cell(r):
    if r is None:
        return ""
    if r["status"] != "ok":
        return r["status"]
    x = f" ({r['x_roofline']:.1f}x)" if r.get("x_roofline") else ""
    return f"{r['median_ms']:.3g}{x}"


def markdown(doc):
    m, run = doc["machine"], doc["run"]
    runtimes = runtimes_in(doc)
    lines = [f"# Benchmark {run['date']} on {run['host']}", "",
             f"{m['cpu_model']}, {m['cores']} cores, {run['threads']} threads; DRAM {m['dram_bandwidth_gbs']} GB/s "
             f"({m['dram_bandwidth_gbs_source'].split(':')[0]}), fp32 GEMM peak {m['gemm_peak_gflops']} GFLOP/s "
             f"({m['gemm_peak_gflops_source'].split(':')[0]}); load average "
             f"{' '.join(f'{x:.2f}' for x in run['load_average_start'])} at the start, "
             f"{' '.join(f'{x:.2f}' for x in run.get('load_average_end', []))} at the end; "
             f"{run.get('duration_s', 0) / 60:.1f} min in all.", "",
             "Median latency in ms (its multiple of the roofline: max(FLOPs / GEMM peak, (parameters + inputs + "
             f"outputs) / DRAM bandwidth)); {run['rounds']} alternating rounds, at least {run['min_time_s']} s and "
             f"{run['min_runs']} runs per runtime. Outputs checked against onnxruntime first.", "",
             "A multiple below 1 means the model's data fits in the last-level cache and stayed there "
             "between runs, so DRAM bandwidth was not its limit (bound: `memory, in LLC`).", "",
             "| model | GFLOP | bound | roofline ms | " + " | ".join(runtimes) + " |",
             "|---|---:|---|---:|" + "---:|" * len(runtimes)]
    for model, row in by_model(doc).items():
        info = doc["models"].get(model, {})
        roof = next((r["roofline_ms"] for r in row.values() if r.get("roofline_ms")), None)
        bound = info.get("bound", "") + (", in LLC" if info.get("bound") == "memory" and info.get("fits_in_llc") else "")
        lines.append(f"| {model} | {info.get('flops', 0) / 1e9:.3g} | {bound} | " + (f"{roof:.3g}" if roof else "") + " | " +
                     " | ".join(cell(row.get(rt)) for rt in runtimes) + " |")
    lines += ["", "Compile or load time (s) and peak RSS of the runtime's process (MB):", "",
              "| model | " + " | ".join(runtimes) + " |", "|---|" + "---:|" * len(runtimes)]
    for model, row in by_model(doc).items():
        cells = []
        for rt in runtimes:
            r = row.get(rt)
            ok = r and r["compile_s"] is not None and r["peak_rss_mb"] is not None
            cells.append(f"{r['compile_s']:.1f} / {r['peak_rss_mb']:.0f}" if ok else "")
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    reasons = sorted({(r["runtime"], r["status"], r.get("reason", "")) for r in doc["results"]
                      if r["status"] != "ok"})
    if reasons:
        lines += ["", "Runtimes that did not produce a time, and why:", ""]
        seen = {}
        for rt, status, reason in reasons:
            models = [r["model"] for r in doc["results"] if r["runtime"] == rt and r.get("reason", "") == reason]
            seen.setdefault((rt, status, reason), models)
        every = set(by_model(doc))
        for (rt, status, reason), models in seen.items():
            which = "all models" if set(models) == every else ", ".join(models)
            lines.append(f"- **{rt}** ({status}, {which}): {reason}")
    versions = sorted({(r["runtime"], r.get("version", "")) for r in doc["results"] if r.get("version")})
    if versions:
        lines += ["", "Versions: " + "; ".join(f"{rt} {v}" for rt, v in versions) + "."]
    return "\n".join(lines) + "\n"


def chart(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    table = by_model(doc)
    models = list(table)
    speedups = {}  # runtime -> {model index: speedup over the best peer}
    for rt in runtimes_in(doc):
        for j, model in enumerate(models):
            r, best = table[model].get(rt), best_peer_ms(table[model])
            if r and r["status"] == "ok" and best:
                speedups.setdefault(rt, {})[j] = best / r["median_ms"]
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(models)), 5.2))
    width = 0.8 / max(1, len(speedups))
    for i, (rt, values) in enumerate(speedups.items()):
        offset = (i - (len(speedups) - 1) / 2) * width
        ax.bar([j + offset for j in values], list(values.values()), width, label=rt, color=f"C{i}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    from matplotlib.ticker import FormatStrFormatter
    ax.yaxis.set_major_formatter(FormatStrFormatter("%.3g"))
    ax.yaxis.set_minor_formatter(FormatStrFormatter("%.2g"))
    ax.set_xticks(range(len(models)), models, rotation=35, ha="right")
    ax.set_ylabel("speedup over the best peer (higher is better)")
    absent = [rt for rt in runtimes_in(doc) if rt not in speedups]
    ax.set_title(f"{doc['machine']['cpu_model']}, {doc['run']['threads']} threads, {doc['run']['date'][:10]}" +
                 (f"\nno times: {', '.join(absent)}" if absent else ""), fontsize=10)
    ax.legend(fontsize=8, ncol=min(5, max(1, len(speedups))), loc="upper center", bbox_to_anchor=(0.5, -0.32))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(doc, stem):
    with open(stem + ".json.tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(stem + ".json.tmp", stem + ".json")
    with open(stem + ".md", "w") as f:
        f.write(markdown(doc))
    chart(doc, stem + ".png")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write(json.load(open(sys.argv[1])), sys.argv[1][:-len(".json")])
