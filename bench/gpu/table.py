"""The GPU section of the benchmark table: Orchid's times from cuda_model_bench and PyTorch's
from torch_models.py (eager, torch.compile in each mode run), all measured in one run on one
GPU, joined into one table with Orchid's speedup over each peer and their geomeans.
Run from the repository root:
python3 -m bench.gpu.table MODELS.md TORCH.md [TORCH.md ...] > TABLE.md
Each input is the markdown those programs print; a model missing from a peer's table has an
empty cell there and counts in no geomean of that peer."""
import math
import sys


def rows_of(path):
    """The markdown table rows of a file as dicts of header -> cell, and its first line."""
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f]
    header, rows = None, []
    for line in lines:
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(line) <= set("|-: "):
            rows.append(dict(zip(header, cells)))
    first = next((line for line in lines if line.strip()), "")
    return first, rows


def number(text):
    try:
        return float(text.split()[0])
    except (ValueError, IndexError, AttributeError):
        return None


def orchid_times(path):
    gpu, rows = rows_of(path)
    return gpu, {r["model"]: number(r.get("ms per run")) for r in rows if r.get("matches") == "yes"}


def peer_times(paths):
    """{peer column: {model: ms}} over every torch_models table (a model's first time counts,
    eager's included), and their first lines."""
    peers, firsts = {}, []
    for path in paths:
        first, rows = rows_of(path)
        firsts.append(first)
        for r in rows:
            for column, cell in r.items():
                if column.endswith(" ms") and number(cell) is not None:
                    name = "torch eager" if column == "eager ms" else "torch.compile " + column[:-3]
                    peers.setdefault(name, {}).setdefault(r["model"], number(cell))
    return peers, firsts


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def table(orchid, peers):
    names = list(peers)
    out = ["| model | Orchid ms | " + " | ".join(f"{p} ms | Orchid speedup" for p in names) + " |",
           "|---|---:|" + "---:|---:|" * len(names)]
    speedups = {p: [] for p in names}
    for model, ms in orchid.items():
        if not ms:
            continue
        cells = []
        for p in names:
            theirs = peers[p].get(model)
            if theirs is None:
                cells += ["", ""]
                continue
            speedups[p].append(theirs / ms)
            cells += [f"{theirs:.3f}", f"{theirs / ms:.2f}"]
        out.append(f"| {model} | {ms:.3f} | " + " | ".join(cells) + " |")
    geo = []
    for p in names:
        g = geomean(speedups[p])
        geo += ["", f"**{g:.2f}** ({len(speedups[p])})" if g else ""]
    out.append("| geomean (models) | | " + " | ".join(geo) + " |")
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    gpu, orchid = orchid_times(sys.argv[1])
    peers, firsts = peer_times(sys.argv[2:])
    print(f"{gpu}; {'; '.join(dict.fromkeys(firsts))}\n")
    print("Milliseconds per run (Orchid: one CUDA graph launch, median of 50; PyTorch: CUDA events, "
          "median of 50), f32, models that matched the interpreter; speedup = peer ms / Orchid ms.\n")
    print("\n".join(table(orchid, peers)))


if __name__ == "__main__":
    main()
