"""Space-time diagrams of traces: one lane per broker plus one for the controller, time flowing down.

``build(trace)`` replays the trace and turns every step into an event on a lane (appends,
fetches, truncations, ISR changes, control requests, elections, faults, scheduler tasks, ticks),
with an arrow for each message between lanes and, after every step, each broker's
``LEO/HW/epoch`` written beside its lane where it changed.  The step at which the trace's
invariant first fails is highlighted.  The diagram is a list of drawing primitives rendered
either to SVG (``to_svg``, hand-written XML: no dependency) or to PNG (``to_png``, a small
rasterizer with a built-in 5x7 pixel font and ``zlib``: no dependency either, so the CLI never
needs matplotlib or Pillow).  Both outputs are deterministic: no clock, no random, no dict/set order.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from .model import actions as A
from .model.state import Partition
from .model.step import initial_state, step
from .properties.invariants import LIVENESS_BY_NAME, SAFETY, check_state, check_transition

CONTROLLER = "controller"

#: event kind of each action type
_KIND = {
    A.ElectController: "election", A.ControllerProcessBrokerChange: "control",
    A.ControllerProcessIsrChangeNotification: "control", A.ControllerResign: "control",
    A.DeliverControlRequest: "control", A.Produce: "append", A.ConsumerFetch: "fetch", A.FetchRequest: "fetch",
    A.FetchResponse: "fetch", A.OffsetsForLeaderEpoch: "fetch", A.AlterIsrRequest: "control",
    A.AlterIsrResponse: "control", A.IsrExpiration: "task",
    A.IsrChangePropagation: "task", A.HighWatermarkCheckpoint: "task", A.DelayedProduceExpire: "task",
    A.FlushLog: "task", A.Tick: "tick", A.BrokerCrash: "fault", A.BrokerRestart: "fault",
    A.ZkSessionExpire: "fault", A.ZkReconnect: "fault", A.ZkDeleteController: "fault", A.ListOffsets: "fetch",
}
COLOURS = {"append": "#1f77b4", "fetch": "#2ca02c", "truncation": "#d62728", "isr": "#9467bd",
           "control": "#8c564b", "election": "#ff7f0e", "fault": "#000000", "task": "#7f7f7f",
           "tick": "#bbbbbb"}


@dataclass
class Event:
    step: int
    action: object
    lane: str                 # "controller" or "broker N"
    kinds: list               # "append", "fetch", "truncation", "isr", "control", "election", ...
    label: str
    arrow_to: str | None = None
    violated: list = field(default_factory=list)


@dataclass
class Diagram:
    lanes: list
    events: list
    states: list              # per step (0 = initial): {lane: "LEO/HW/e"} for every broker
    violation_step: int | None
    title: str


def _lane(b: int) -> str:
    return f"broker {b}"


def _replica_label(s, b: int, p: int = 0) -> str:
    br = s.brokers[b]
    log = br.logs[p]
    if not br.alive:
        return "down"
    if log is None:
        return "-"
    part = br.partitions[p]
    epoch = part.leader_epoch if type(part) is Partition else -1
    role = "L" if type(part) is Partition and part.leader == b else "F"
    label = f"{role} {log.log_end_offset}/{log.high_watermark}/e{epoch}"
    pend = part.pending_isr if type(part) is Partition else None
    if pend is not None:  # a pending AlterIsr (KIP-497): +r for an expansion, -r for a shrink
        label += " " + "".join(("+" if pend.expand else "-") + str(r) for r in pend.replicas)
    return label


def _describe(a) -> str:
    t = type(a)
    if t is A.Produce:
        return f"produce acks={a.acks}"
    if t is A.Tick:
        return f"tick {a.ms} ms"
    if t is A.DeliverControlRequest:
        return "deliver"
    if t is A.BrokerCrash:
        return "crash" + (" (clean)" if a.clean else "")
    name = t.__name__
    return {"FetchRequest": "fetch req", "FetchResponse": "fetch resp", "OffsetsForLeaderEpoch": "OffsetsForLE",
            "ElectController": "elected controller", "ControllerProcessBrokerChange": "BrokerChange",
            "ControllerProcessIsrChangeNotification": "IsrChangeNotif", "ControllerResign": "resign",
            "IsrExpiration": "isr-expiration", "IsrChangePropagation": "isr-propagation",
            "HighWatermarkCheckpoint": "hw-checkpoint", "DelayedProduceExpire": "produce timeout",
            "BrokerRestart": "restart", "ZkSessionExpire": "session expired", "ZkReconnect": "zk reconnect",
            "ConsumerFetch": "consumer fetch", "FlushLog": "flush", "AlterIsrRequest": "AlterIsr",
            "AlterIsrResponse": "AlterIsr resp", "ZkDeleteController": "/controller deleted"}.get(name, name)


def build(trace, invariants=SAFETY) -> Diagram:
    """Replay ``trace`` (a model.trace.Trace) into a Diagram; the first failing step is the violation."""
    cfg = trace.config
    n = cfg.n_brokers
    lanes = [CONTROLLER] + [_lane(b) for b in range(n)]
    s = initial_state(cfg, trace.start)
    states = [{_lane(b): _replica_label(s, b) for b in range(n)}]
    events = []
    violation_step = None
    wanted = trace.violated
    for i, a in enumerate(trace.actions, 1):
        s2 = step(cfg, s, a)
        if s2 is None:
            raise ValueError(f"step {i}: {A.describe(a)} is not enabled")
        vs = check_transition(cfg, s, a, s2, i, invariants)
        names = [v.invariant for v in vs]
        if violation_step is None and names and (wanted is None or wanted in names):
            violation_step = i
        t = type(a)
        kinds = [_KIND[t]]
        arrow = None
        label = _describe(a)
        if t in (A.ElectController,):
            lane = CONTROLLER
            label = f"broker {a.broker} elected controller"
        elif t in (A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification, A.ControllerResign):
            lane = CONTROLLER
            label = f"{label} (on {a.controller})"
        elif t is A.DeliverControlRequest:
            lane = CONTROLLER
            c = s.controller_on(a.controller)
            req = c.queues[a.broker][0] if c is not None and c.queues[a.broker] else None
            label = type(req).__name__ if req is not None else "request"
            arrow = _lane(a.broker)
        elif t is A.FetchRequest:
            lane = _lane(a.broker)
            f = s.brokers[a.broker].fetchers[a.partition]
            arrow = _lane(f.leader) if f is not None else None
            label = f"fetch @{f.fetch_offset}" if f is not None else label
        elif t is A.FetchResponse:
            f = s.brokers[a.broker].fetchers[a.partition]
            lane = _lane(f.leader) if f is not None else _lane(a.broker)
            arrow = _lane(a.broker)
            if f is not None and f.inflight is not None:
                r = f.inflight
                label = f"{r.error} +{len(r.entries)} hw={r.high_watermark}"
                if r.diverging:   # divergingEpoch (KAFKA-10554); its second step truncates (before KAFKA-14704)
                    label = (f"truncate to e{r.diverging[0]}@{r.diverging[1]}" if r.hw_applied
                             else f"{label} diverging e{r.diverging[0]}@{r.diverging[1]}")
        elif t is A.AlterIsrRequest:
            lane = _lane(a.broker)
            br = s.brokers[a.broker]
            arrow = CONTROLLER
            label = "AlterIsr " + ", ".join(f"p{x.request.partition} {list(x.request.new_isr)} v{x.request.zk_version}"
                                            for x in br.alter_isr_unsent)
        elif t is A.AlterIsrResponse:
            lane = CONTROLLER
            arrow = _lane(a.broker)
            inflight = s.brokers[a.broker].alter_isr_inflight
            resp = inflight.response if inflight is not None else None
            if resp is not None and resp.error != "NONE":
                label = f"AlterIsr resp {resp.error}"
            elif resp is not None:
                label = "AlterIsr resp " + ", ".join(
                    f"p{r.partition} {r.error}" if r.error != "NONE" else f"p{r.partition} {list(r.isr)} v{r.zk_version}"
                    for r in resp.partitions)
        elif t is A.Tick:
            lane = CONTROLLER
        elif t is A.ZkDeleteController:
            lane = CONTROLLER
            label = f"/controller of {a.controller} deleted (it has not noticed)"
        elif t is A.ListOffsets:
            lane = _lane(a.broker)
            r = s2.ghost.responses.list_offsets[a.broker][a.partition]
            target = {-1: "latest", -2: "earliest"}.get(a.timestamp, f"t={a.timestamp}")
            label = f"ListOffsets {target}: " + (f"@{r.offset} e{r.leader_epoch}" if r.error == "NONE" else r.error)
        else:
            lane = _lane(a.broker)
        # consequences read from the states: truncations, ISR changes, elections
        for b in range(n):
            l0, l1 = s.brokers[b].logs[0], s2.brokers[b].logs[0]
            if l0 is not None and l1 is not None and l1.log_end_offset < l0.log_end_offset:
                kinds.append("truncation")
                label += f"; b{b} truncated to {l1.log_end_offset}"
        z0, z1 = s.zk.partition_states[0] if s.zk.partition_states else None, \
            s2.zk.partition_states[0] if s2.zk.partition_states else None
        if z1 is not None and (z0 is None or z0.leader_epoch != z1.leader_epoch):
            kinds.append("election")
            label += f"; leader {z1.leader} epoch {z1.leader_epoch}"
        if z1 is not None and z0 is not None and z0.isr != z1.isr:
            kinds.append("isr")
            label += f"; ISR {list(z1.isr)}"
        if s2.ghost.unclean_losses is not s.ghost.unclean_losses:
            lost = sorted(set(s2.ghost.unclean_losses) - set(s.ghost.unclean_losses))
            if lost:  # a documented loss of an unclean election, not a violation
                label += "; unclean loss: " + ", ".join(f"r{r}@{o}" for _p, _e, _l, o, r in lost)
        events.append(Event(i, a, lane, kinds, label, arrow, names))
        states.append({_lane(b): _replica_label(s2, b) for b in range(n)})
        s = s2
    if wanted in LIVENESS_BY_NAME and trace.actions:
        violation_step = len(trace.actions)   # a liveness violation: the cluster has not settled by the last step
    title = f"{trace.preset or 'trace'}: {trace.violated or 'no violation expected'}"
    return Diagram(lanes, events, states, violation_step, title)


# =========================================================================== layout -> primitives
LANE_W, ROW_H, LEFT, TOP = 200, 26, 260, 84


def scene(d: Diagram) -> tuple[int, int, list]:
    """(width, height, primitives): ("rect"|"line"|"circle"|"text", {attributes}) in drawing order."""
    width = LEFT + LANE_W * len(d.lanes) + 40
    height = TOP + ROW_H * (len(d.events) + 1) + 40
    out = [("rect", {"x": 0, "y": 0, "w": width, "h": height, "fill": "#ffffff", "id": "background"})]
    out.append(("text", {"x": 10, "y": 22, "s": d.title, "size": 14, "fill": "#000000", "id": "title"}))
    xs = {lane: LEFT + LANE_W * i + LANE_W // 2 for i, lane in enumerate(d.lanes)}
    if d.violation_step is not None:
        y = TOP + ROW_H * d.violation_step - ROW_H // 2
        out.append(("rect", {"x": 4, "y": y, "w": width - 8, "h": ROW_H, "fill": "#ffd6d6",
                             "id": "violation", "class": "violation", "data-step": d.violation_step}))
    for lane in d.lanes:
        x = xs[lane]
        out.append(("text", {"x": x, "y": TOP - 30, "s": lane, "size": 13, "fill": "#000000", "anchor": "middle",
                             "class": "lane-label"}))
        out.append(("line", {"x1": x, "y1": TOP - 20, "x2": x, "y2": height - 30, "stroke": "#444444", "w": 2,
                             "id": "lane-" + lane.replace(" ", "-"), "class": "lane"}))
    for lane, text in d.states[0].items():
        out.append(("text", {"x": xs[lane] + 6, "y": TOP - 6, "s": text, "size": 10, "fill": "#333333",
                             "class": "replica-state"}))
    for ev in d.events:
        y = TOP + ROW_H * ev.step
        colour = COLOURS[ev.kinds[-1] if len(ev.kinds) > 1 else ev.kinds[0]]
        out.append(("text", {"x": 10, "y": y + 4, "s": f"{ev.step:>3} {ev.label}"[:40], "size": 10,
                             "fill": "#b00000" if ev.step == d.violation_step else "#000000", "class": "step-label"}))
        x = xs[ev.lane]
        if ev.arrow_to is not None and ev.arrow_to != ev.lane:
            out.append(("line", {"x1": x, "y1": y - 8, "x2": xs[ev.arrow_to], "y2": y + 8, "stroke": colour, "w": 2,
                                 "arrow": True, "class": "message " + " ".join(ev.kinds)}))
        out.append(("circle", {"cx": x, "cy": y - 8 if ev.arrow_to else y, "r": 5, "fill": colour,
                               "class": "event " + " ".join(ev.kinds), "data-step": ev.step}))
        before, after = d.states[ev.step - 1], d.states[ev.step]
        for lane, text in after.items():
            if text != before[lane]:
                out.append(("text", {"x": xs[lane] + 8, "y": y + 4, "s": text, "size": 10, "fill": "#333333",
                                     "class": "replica-state", "data-step": ev.step}))
    return width, height, out


# =========================================================================== SVG
def to_svg(d: Diagram) -> str:
    width, height, prims = scene(d)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>']

    def extra(a):
        out = ""
        for k in ("id", "class", "data-step"):
            if k in a:
                out += f' {k}="{escape(str(a[k]))}"'
        return out

    for kind, a in prims:
        if kind == "rect":
            lines.append(f'<rect x="{a["x"]}" y="{a["y"]}" width="{a["w"]}" height="{a["h"]}" fill="{a["fill"]}"'
                         f'{extra(a)}/>')
        elif kind == "line":
            marker = ' marker-end="url(#arrow)"' if a.get("arrow") else ""
            lines.append(f'<line x1="{a["x1"]}" y1="{a["y1"]}" x2="{a["x2"]}" y2="{a["y2"]}" stroke="{a["stroke"]}" '
                         f'stroke-width="{a["w"]}"{marker}{extra(a)}/>')
        elif kind == "circle":
            lines.append(f'<circle cx="{a["cx"]}" cy="{a["cy"]}" r="{a["r"]}" fill="{a["fill"]}"{extra(a)}/>')
        else:
            anchor = f' text-anchor="{a["anchor"]}"' if "anchor" in a else ""
            lines.append(f'<text x="{a["x"]}" y="{a["y"]}" font-size="{a["size"]}" fill="{a["fill"]}"{anchor}'
                         f'{extra(a)}>{escape(a["s"])}</text>')
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


# =========================================================================== PNG
# 5x7 glyphs, one int per row (bit 4 = leftmost pixel); lower case is drawn as upper case.
_FONT = {
    "A": (14, 17, 17, 31, 17, 17, 17), "B": (30, 17, 17, 30, 17, 17, 30), "C": (14, 17, 16, 16, 16, 17, 14),
    "D": (30, 17, 17, 17, 17, 17, 30), "E": (31, 16, 16, 30, 16, 16, 31), "F": (31, 16, 16, 30, 16, 16, 16),
    "G": (14, 17, 16, 23, 17, 17, 15), "H": (17, 17, 17, 31, 17, 17, 17), "I": (14, 4, 4, 4, 4, 4, 14),
    "J": (7, 2, 2, 2, 2, 18, 12), "K": (17, 18, 20, 24, 20, 18, 17), "L": (16, 16, 16, 16, 16, 16, 31),
    "M": (17, 27, 21, 21, 17, 17, 17), "N": (17, 17, 25, 21, 19, 17, 17), "O": (14, 17, 17, 17, 17, 17, 14),
    "P": (30, 17, 17, 30, 16, 16, 16), "Q": (14, 17, 17, 17, 21, 18, 13), "R": (30, 17, 17, 30, 20, 18, 17),
    "S": (15, 16, 16, 14, 1, 1, 30), "T": (31, 4, 4, 4, 4, 4, 4), "U": (17, 17, 17, 17, 17, 17, 14),
    "V": (17, 17, 17, 17, 17, 10, 4), "W": (17, 17, 17, 21, 21, 21, 10), "X": (17, 17, 10, 4, 10, 17, 17),
    "Y": (17, 17, 10, 4, 4, 4, 4), "Z": (31, 1, 2, 4, 8, 16, 31),
    "0": (14, 17, 19, 21, 25, 17, 14), "1": (4, 12, 4, 4, 4, 4, 14), "2": (14, 17, 1, 2, 4, 8, 31),
    "3": (31, 2, 4, 2, 1, 17, 14), "4": (2, 6, 10, 18, 31, 2, 2), "5": (31, 16, 30, 1, 1, 17, 14),
    "6": (6, 8, 16, 30, 17, 17, 14), "7": (31, 1, 2, 4, 8, 8, 8), "8": (14, 17, 17, 14, 17, 17, 14),
    "9": (14, 17, 17, 15, 1, 2, 12),
    " ": (0,) * 7, "-": (0, 0, 0, 31, 0, 0, 0), "_": (0, 0, 0, 0, 0, 0, 31), ".": (0, 0, 0, 0, 0, 12, 12),
    ",": (0, 0, 0, 0, 12, 4, 8), ":": (0, 12, 12, 0, 12, 12, 0), ";": (0, 12, 12, 0, 12, 4, 8),
    "/": (1, 1, 2, 4, 8, 16, 16), "=": (0, 0, 31, 0, 31, 0, 0), "+": (0, 4, 4, 31, 4, 4, 0),
    "(": (2, 4, 8, 8, 8, 4, 2), ")": (8, 4, 2, 2, 2, 4, 8), "[": (14, 8, 8, 8, 8, 8, 14),
    "]": (14, 2, 2, 2, 2, 2, 14), "@": (14, 17, 23, 21, 23, 16, 14), "'": (4, 4, 8, 0, 0, 0, 0),
    ">": (8, 4, 2, 1, 2, 4, 8), "<": (2, 4, 8, 16, 8, 4, 2), "?": (14, 17, 1, 2, 4, 0, 4),
}


def _hex(c: str) -> tuple:
    return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)


class _Canvas:
    def __init__(self, w: int, h: int):
        self.w, self.h = w, h
        self.px = bytearray(b"\xff" * (w * h * 3))

    def dot(self, x: int, y: int, rgb) -> None:
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(rgb)

    def rect(self, x, y, w, h, rgb):
        x0, y0, x1, y1 = max(0, int(x)), max(0, int(y)), min(self.w, int(x + w)), min(self.h, int(y + h))
        row = bytes(rgb) * max(0, x1 - x0)
        for yy in range(y0, y1):
            i = (yy * self.w + x0) * 3
            self.px[i:i + len(row)] = row

    def line(self, x1, y1, x2, y2, rgb, width=1):
        steps = int(max(abs(x2 - x1), abs(y2 - y1))) or 1
        half = width // 2
        for k in range(steps + 1):
            x = round(x1 + (x2 - x1) * k / steps)
            y = round(y1 + (y2 - y1) * k / steps)
            for dx in range(-half, width - half):
                for dy in range(-half, width - half):
                    self.dot(x + dx, y + dy, rgb)

    def circle(self, cx, cy, r, rgb):
        for yy in range(-r, r + 1):
            for xx in range(-r, r + 1):
                if xx * xx + yy * yy <= r * r:
                    self.dot(cx + xx, cy + yy, rgb)

    def text(self, x, y, s, rgb, scale=1, anchor=None):
        adv = 6 * scale
        if anchor == "middle":
            x -= len(s) * adv // 2
        top = y - 7 * scale
        for ch in s:
            glyph = _FONT.get(ch.upper(), _FONT["?"])
            for row, bits in enumerate(glyph):
                for col in range(5):
                    if bits & (16 >> col):
                        self.rect(x + col * scale, top + row * scale, scale, scale, rgb)
            x += adv

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(tag: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def to_png(d: Diagram) -> bytes:
    """The same scene rasterized to an RGB PNG (deterministic bytes)."""
    width, height, prims = scene(d)
    cv = _Canvas(width, height)
    for kind, a in prims:
        if kind == "rect":
            cv.rect(a["x"], a["y"], a["w"], a["h"], _hex(a["fill"]))
        elif kind == "line":
            cv.line(a["x1"], a["y1"], a["x2"], a["y2"], _hex(a["stroke"]), a["w"])
            if a.get("arrow"):
                cv.circle(a["x2"], a["y2"], 3, _hex(a["stroke"]))
        elif kind == "circle":
            cv.circle(a["cx"], a["cy"], a["r"], _hex(a["fill"]))
        else:
            cv.text(a["x"], a["y"], a["s"], _hex(a["fill"]), 2 if a["size"] >= 13 else 1, a.get("anchor"))
    return cv.png()
