"""The load bench's arithmetic on measured blocks: the ABBA order of interleaved blocks, the share
of the floor from their pairs (by turns/s and by CPU per turn), one side's medians, and the web
servers' comparison per server and client count. Pure functions of the blocks' dicts (as
bench.load.client.turns returns them, tagged with their pair and side, or round and server)."""

from __future__ import annotations

import statistics


def schedule(pairs: int) -> list[tuple[int, str]]:
    """The blocks' order, ABBA: (pair, side) with the floor first in even pairs and second in odd
    ones (floor, product, product, floor, floor, …), so a drift in the machine's load weighs on
    both sides alike."""
    out = []
    for pair in range(pairs):
        sides = ("floor", "product") if pair % 2 == 0 else ("product", "floor")
        out += [(pair, side) for side in sides]
    return out


def pair_summary(blocks: list[dict]) -> dict:
    """The share of the floor from interleaved blocks (each {"pair", "side", "turns", "seconds"}):
    each pair's product turns/s ÷ floor turns/s; their median, range, and the pooled ratio (all the
    product's turns over all its seconds ÷ the same for the floor). A pair missing a side, or
    whose floor block served nothing, is left out."""
    by_pair: dict[int, dict[str, dict]] = {}
    for block in blocks:
        by_pair.setdefault(block["pair"], {})[block["side"]] = block
    ratios, sums = [], {"floor": [0, 0.0], "product": [0, 0.0]}
    for _pair, sides in sorted(by_pair.items()):
        if set(sides) != {"floor", "product"} or not sides["floor"]["turns"]:
            continue
        rate = {side: b["turns"] / b["seconds"] for side, b in sides.items()}
        ratios.append(rate["product"] / rate["floor"])
        for side, b in sides.items():
            sums[side][0] += b["turns"]
            sums[side][1] += b["seconds"]
    if not ratios:
        return {"pairs": 0, "ratios": []}
    pooled = (sums["product"][0] / sums["product"][1]) / (sums["floor"][0] / sums["floor"][1])
    return {
        "pairs": len(ratios),
        "ratios": ratios,
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
        "pooled": pooled,
    }


def cpu_share(blocks: list[dict]) -> dict:
    """The same pairs' share by CPU: the floor's server + PostgreSQL CPU per turn ÷ the product's, per
    pair (what the share of the floor would be on a machine given wholly to the two, each turn's cost
    being what it was). Redis (shared with the machine's other users) and the load generator are
    left out. Median and range, as pair_summary; pairs without CPU figures are left out."""
    by_pair: dict[int, dict[str, dict]] = {}
    for block in blocks:
        by_pair.setdefault(block["pair"], {})[block["side"]] = block
    ratios = []
    for _pair, sides in sorted(by_pair.items()):
        if set(sides) != {"floor", "product"} or not all(
            "cpu_ms" in b and b["turns"] for b in sides.values()
        ):
            continue
        cost = {side: b["cpu_ms"] + b.get("pg_cpu_ms", 0.0) for side, b in sides.items()}
        if cost["product"] > 0:
            ratios.append(cost["floor"] / cost["product"])
    if not ratios:
        return {"pairs": 0, "ratios": []}
    return {
        "pairs": len(ratios),
        "ratios": ratios,
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
    }


def side_summary(blocks: list[dict], side: str) -> dict:
    """One side's blocks: the median (and range) per block of turns/s and of each CPU per turn, the
    pooled CPU per turn, and the errors summed."""
    mine = [b for b in blocks if b["side"] == side]
    out: dict = {
        "blocks": len(mine),
        "turns": sum(b["turns"] for b in mine),
        "errors": sum(b["errors"] for b in mine),
    }
    for key in (
        "turns_s",
        "cpu_ms",
        "pg_cpu_ms",
        "redis_cpu_ms",
        "gen_cpu_ms",
        "gen_share",
        "server_share",
        "pg_share",
        "busy_share",
        "p50",
        "p99",
    ):
        values = [b[key] for b in mine if key in b]
        if values:
            out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    turns = max(1, out["turns"])
    for key in ("cpu_ms", "pg_cpu_ms", "gen_cpu_ms"):
        if all(key in b for b in mine) and mine:
            out[key]["pooled"] = sum(b[key] * b["turns"] for b in mine) / turns
    return out


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def servers_summary(blocks: list[dict], reference: str) -> dict:
    """Per server and client count: the blocks' turns/s, p99 and server CPU per turn (median and range),
    and the ratios to `reference`'s block of the same round (turns/s ÷ its turns/s, p99 ÷ its p99; median
    and range over the rounds)."""
    out: dict = {}
    by_key = {(b["server"], b["clients"], b["round"]): b for b in blocks}
    for server, clients, _round in sorted(by_key):
        mine = [b for (s, c, _r), b in by_key.items() if s == server and c == clients]
        row = {
            key: _spread([b[key] for b in mine]) for key in ("turns_s", "p99", "p50", "cpu_ms", "busy_share")
        }
        row["errors"] = sum(b["errors"] for b in mine)
        ratios = {"turns_s": [], "p99": []}
        for b in mine:
            ref = by_key.get((reference, clients, b["round"]))
            if ref and ref["turns_s"] and ref["p99"]:
                ratios["turns_s"].append(b["turns_s"] / ref["turns_s"])
                ratios["p99"].append(b["p99"] / ref["p99"])
        row["vs_reference"] = {key: _spread(values) for key, values in ratios.items() if values}
        out.setdefault(server, {})[str(clients)] = row
    return out
