"""Why one tiling's estimate is slower than another's, in words (for the runners-up of
a device ranking). Works on any backend's :class:`~.estimate.Estimate`: the part of the
time that grew most (reads, writes, compute, or a breakdown item such as a dot's main
loop or a per-step overhead), then the facts that explain it (bytes read, blocks,
warps, flops)."""

from __future__ import annotations

from hlo_indexing.cost_model.estimate import Estimate, time_text


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.3g}x" if b else "more"


def why_slower(best: Estimate, other: Estimate) -> str:
    """Why ``other`` takes longer than ``best``: ``+D us: <part> <facts>``; for an equal
    time, that it comes later in the candidates' order."""
    delta = other.exec_time_ns - best.exec_time_ns
    if delta <= 0:
        return "the same estimated time; ranked after it in the candidates' order (XLA's stable sort)"
    parts = {
        "reads": other.read_time_ns - best.read_time_ns,
        "writes": other.write_time_ns - best.write_time_ns,
        "compute": other.compute_time_ns - best.compute_time_ns,
    }
    best_items = {item.label: item.time_ns for item in best.breakdown}
    for item in other.breakdown:
        if item.label in best_items and item.label not in ("write", "compute") and not item.label.startswith("read "):
            parts[item.label] = item.time_ns - best_items[item.label]
    part, grew = max(parts.items(), key=lambda kv: kv[1])
    facts = []
    if part == "reads":
        if other.bytes_read > best.bytes_read:
            facts.append(f"reads {_ratio(other.bytes_read, best.bytes_read)} the bytes ({other.bytes_read} B vs {best.bytes_read} B)")
        else:
            facts.append("reads the same bytes at a lower rate (less contiguous tiles, or too few blocks to fill the memory system)")
    elif part == "writes":
        facts.append("writes its output at a lower rate (less contiguous output tiles)")
    elif part == "compute":
        if other.num_blocks < best.num_blocks:
            facts.append(f"{other.num_blocks} blocks vs {best.num_blocks} keep fewer cores busy")
        if other.num_warps is not None and best.num_warps is not None and other.num_warps < best.num_warps:
            facts.append(f"{other.num_warps} warps per block vs {best.num_warps}")
        if other.flops > best.flops:
            facts.append(f"{_ratio(other.flops, best.flops)} the flops (padding to powers of two)")
    if not facts and other.num_blocks != best.num_blocks:
        facts.append(f"{other.num_blocks} blocks vs {best.num_blocks}")
    detail = f" ({'; '.join(facts)})" if facts else ""
    return f"+{time_text(delta)}: {part} {time_text(grew)} longer{detail}"
