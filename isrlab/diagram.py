"""Space-time diagrams of traces: one lane per broker plus one for the controller, time flowing down.

``build(trace)`` replays the trace and turns every step into an event on a lane (appends,
fetches, truncations, ISR changes, control requests, elections, faults, scheduler tasks, ticks),
with an arrow (and arrowhead) for each message from sender to receiver and, after every step, each
broker's cell (role LEO/HW e<epoch> [ISR], the step table's notation) beside its lane where it changed.
Runs of control-request deliveries from one controller are folded into one row.  The step at which the
trace's invariant first fails is highlighted; a caption names the invariant and gives the explainer's
sentence (and, when given, the known bugs it is attributed to), and a legend explains the notation and
the colours.  The diagram is a list of drawing primitives rendered to SVG (``to_svg``, hand-written XML)
or to PNG by matplotlib (``to_png``).  Both are deterministic: no clock, no random, no dict/set order,
no PNG metadata.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from .model import actions as A
from .model.step import initial_state, orphan_of, step
from .properties.invariants import LIVENESS_BY_NAME, SAFETY, check_transition
from .properties.steptable import action_words, cell

CONTROLLER = "controller"

#: event kind of each action type
_KIND = {
    A.ElectController: "election", A.ControllerProcessBrokerChange: "control",
    A.ControllerProcessIsrChangeNotification: "control", A.ControllerResign: "control",
    A.DeliverControlRequest: "control", A.Produce: "append", A.ConsumerFetch: "fetch", A.FetchRequest: "fetch",
    A.FetchResponse: "fetch", A.OffsetsForLeaderEpoch: "fetch", A.AlterIsrRequest: "control",
    A.AlterIsrReceived: "control", A.AlterIsrResponse: "control", A.IsrExpiration: "task",
    A.IsrChangePropagation: "task", A.HighWatermarkCheckpoint: "task", A.DelayedProduceExpire: "task",
    A.FlushLog: "task", A.Tick: "tick", A.BrokerCrash: "fault", A.BrokerRestart: "fault",
    A.ZkSessionExpire: "fault", A.ZkReconnect: "fault", A.ZkDeleteController: "fault", A.ListOffsets: "fetch",
    A.ConsumerFetchWithClientMetadata: "fetch", A.OffsetsForLeaderEpochRequest: "fetch",
    A.OffsetsForLeaderEpochResponse: "fetch", A.MetadataApply: "control", A.BrokerHeartbeat: "task",
    A.FenceStaleBroker: "control", A.HeartbeatsLost: "fault", A.ControlledShutdown: "fault",
    A.ControllerFailover: "fault",
    A.DiskWipe: "fault", A.ControlledShutdownRequest: "control", A.ControlledShutdownResponse: "control",
    A.PreferredReplicaElection: "fault", A.ControllerProcessPreferredReplicaElection: "election",
    A.AutoLeaderRebalance: "election", A.ElectLeaders: "election",
    A.DeleteRecords: "append", A.DeleteOldSegments: "task", A.DeleteTopic: "control", A.CreateTopic: "control", A.CreatePartitions: "control",
    A.ControllerProcessTopicDeletion: "control", A.ControllerProcessTopicChange: "control",
    A.ControllerProcessStopReplicaResponse: "control", A.ConsumerFetchWait: "fetch", A.DelayedFetchExpire: "task",
    A.ReassignPartitions: "control", A.ControllerProcessPartitionReassignment: "control",
    A.ControllerProcessReassignmentIsrChange: "control", A.PrepareIsrExpand: "control",
    A.AlterIsrFailed: "fault",
    A.OrphanRequestReceived: "fetch",
    A.AlterPartitionReceived: "fault", A.ExpiredBrokerHeartbeat: "fault",
    A.AlterTopicConfig: "control",
    A.LogDirFailure: "fault", A.AssignReplicasToDirs: "control",
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
    caption: str = ""         # the violated invariant and the explainer's sentence
    attribution: str = ""     # the known bugs the violation is attributed to by their fixes (Attribution.summary)


def _lane(b: int) -> str:
    return f"broker {b}"


def build(trace, invariants=SAFETY, sentence: str | None = None, attribution: str = "") -> Diagram:
    """Replay ``trace`` (a model.trace.Trace) into a Diagram; the first failing step is the violation.

    ``sentence`` is the caption's explanation; by default the trace's own, else the explainer's for the
    first violation of the invariant the trace names.  ``attribution``, a line drawn under the caption, says
    which known bugs the violation is (``Attribution.summary``; none by default, it costs replays)."""
    cfg = trace.config
    n = cfg.n_brokers
    lanes = [CONTROLLER] + [_lane(b) for b in range(n)]
    s = initial_state(cfg, trace.start)
    states = [{_lane(b): cell(s, b) for b in range(n)}]
    first = None
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
            first = next(v for v in vs if wanted is None or v.invariant == wanted)
        t = type(a)
        kinds = [_KIND[t]]
        arrow = None
        label = action_words(cfg, s, a)
        if t in (A.ElectController, A.ControllerProcessBrokerChange, A.ControllerProcessIsrChangeNotification,
                 A.ControllerResign, A.Tick, A.ZkDeleteController, A.PreferredReplicaElection,
                 A.ControllerProcessPreferredReplicaElection, A.AutoLeaderRebalance, A.DeleteTopic, A.CreateTopic,
                 A.CreatePartitions, A.ControllerProcessTopicDeletion, A.ControllerProcessTopicChange,
                 A.ControllerProcessStopReplicaResponse, A.ReassignPartitions,
                 A.ControllerProcessPartitionReassignment, A.ControllerProcessReassignmentIsrChange,
                 A.ControllerFailover, A.AlterIsrReceived, A.AlterTopicConfig):
            lane = CONTROLLER
        elif t is A.DeliverControlRequest:
            lane = CONTROLLER
            arrow = _lane(a.broker)
        elif t is A.FetchRequest:
            lane = _lane(a.broker)
            f = s.brokers[a.broker].fetchers[a.partition]
            arrow = _lane(f.leader) if f is not None else None
        elif t is A.FetchResponse:
            f = s.brokers[a.broker].fetchers[a.partition]
            lane = _lane(f.leader) if f is not None else _lane(a.broker)
            arrow = _lane(a.broker)
            if f is not None and f.inflight is not None and f.inflight.diverging and f.inflight.hw_applied:
                r = f.inflight   # divergingEpoch's second step truncates (before KAFKA-14704)
                label = (f"broker {a.broker} truncates to epoch {r.diverging[0]} end offset {r.diverging[1]} "
                         f"(the diverging fetch response)")
        elif t is A.AlterIsrRequest or t is A.ControlledShutdownRequest:
            lane = _lane(a.broker)
            arrow = CONTROLLER
        elif t is A.MetadataApply or t is A.FenceStaleBroker:
            lane = CONTROLLER
            arrow = _lane(a.broker) if t is A.MetadataApply else None
        elif t is A.AlterIsrResponse:
            lane = CONTROLLER
            arrow = _lane(a.broker)
            inflight = s.brokers[a.broker].alter_isr_inflight
            resp = inflight.response if inflight is not None else None
            if resp is not None and resp.error != "NONE":
                label = f"broker {a.broker} receives AlterIsr response {resp.error}"
            elif resp is not None:
                label = f"broker {a.broker} receives AlterIsr response " + ", ".join(
                    f"p{r.partition} {r.error}" if r.error != "NONE" else f"p{r.partition} {list(r.isr)} v{r.zk_version}"
                    for r in resp.partitions)
        elif t is A.DeleteRecords:
            lane = _lane(a.broker)
            r = s2.ghost.responses.delete_records[a.broker][a.partition]
            label += ": " + (f"log start {r.requested_offset}, low watermark {r.low_watermark}" if r.error == "NONE"
                             else r.error)
        elif t is A.DeleteOldSegments:
            lane = _lane(a.broker)
            label += f": log start {s2.brokers[a.broker].logs[a.partition].log_start_offset}"
        elif t is A.OrphanRequestReceived:     # an earlier incarnation's request: drawn at its receiver
            o = orphan_of(s, a)
            lane = _lane(o.leader) if a.api == "FETCH" and o is not None else CONTROLLER
        elif t is A.AlterPartitionReceived:     # handled by the controller, answered to no one
            lane = CONTROLLER
            label += ": " + s2.ghost.forged_answers[-1]
        elif t is A.ListOffsets:
            lane = _lane(a.broker)
            r = s2.ghost.responses.list_offsets[a.broker][a.partition]
            label += ": " + (f"offset {r.offset} epoch {r.leader_epoch}" if r.error == "NONE" else r.error)
        else:
            lane = _lane(a.broker)
        # consequences read from the states: truncations, ISR changes, elections
        for b in range(n):
            l0, l1 = s.brokers[b].logs[0], s2.brokers[b].logs[0]
            if l0 is not None and l1 is not None and l1.log_end_offset < l0.log_end_offset:
                kinds.append("truncation")
                label += f"; broker {b} truncated to {l1.log_end_offset}"
        c0, c1 = s.controller_partition_states(), s2.controller_partition_states()
        z0, z1 = c0[0] if c0 else None, c1[0] if c1 else None
        if z1 is not None and (z0 is None or z0.leader_epoch != z1.leader_epoch):
            kinds.append("election")
            where = "ZooKeeper" if s2.quorum is None else "controller"
            label += f"; {where}: leader {z1.leader if z1.leader >= 0 else 'none'} epoch {z1.leader_epoch}"
        if z1 is not None and z0 is not None and z0.isr != z1.isr:
            kinds.append("isr")
            label += f"; ISR [{','.join(map(str, z1.isr))}]"
        if s2.ghost.unclean_losses is not s.ghost.unclean_losses:
            lost = sorted(set(s2.ghost.unclean_losses) - set(s.ghost.unclean_losses))
            if lost:  # a documented loss of an unclean election, not a violation
                label += "; unclean election lost " + ", ".join(f"r{r}@{o}" for _p, _e, _l, o, r in lost)
        events.append(Event(i, a, lane, kinds, label, arrow, names))
        states.append({_lane(b): cell(s2, b) for b in range(n)})
        s = s2
    if wanted in LIVENESS_BY_NAME and trace.actions:
        violation_step = len(trace.actions)   # a liveness violation: the cluster has not settled by the last step
    title = f"{trace.preset or 'trace'}: {trace.violated or 'no violation expected'}"
    if sentence is None:
        sentence = trace.explanation or ""
        if not sentence and first is not None:
            from .properties.explain import sentence as explain

            sentence = explain(cfg, trace.actions, first, trace.start)
    caption = (f"Invariant {trace.violated} fails at step {violation_step}. " if trace.violated and violation_step
               else "") + sentence
    return Diagram(lanes, events, states, violation_step, title, caption,
                   f"Attribution: {attribution}" if attribution else "")


# =========================================================================== layout -> primitives
LANE_W, ROW_H, TOP_PAD = 170, 26, 60
LINE_H = 12           # a wrapped step label's further lines
LABEL_CHARS = 72      # a step label wraps beyond this many characters, so the diagram is about a page wide
MIN_WIDTH = 940       # the legend's three columns of colours
CHAR_W = 6.2          # a 10 px monospace character, wide enough for DejaVu Sans Mono and browsers' monospace
KIND_WORDS = (("append", "produce (append)"), ("fetch", "fetch / consumer"), ("truncation", "truncation"),
              ("isr", "ISR change"), ("control", "controller / control request"), ("election", "leader election"),
              ("fault", "crash / session"), ("task", "scheduled task"), ("tick", "time passes"))
NOTATION = ("L 3/2 e1 [0,1]: leader, LEO 3, HW 2, leader epoch 1, ISR [0,1];  F: follower (no ISR);  "
            "down: crashed;  -: no replica;  log 1/0: a log, no partition yet (restarted);  "
            "+2 / -2: an AlterIsr adding / removing broker 2 in flight")


def fold(d: Diagram) -> list:
    """Rows of events: a run of control-request deliveries from one controller is one row (never across the
    violating step, which keeps a row of its own)."""
    rows: list = []
    for ev in d.events:
        prev = rows[-1][-1] if rows else None
        if (prev is not None and type(ev.action) is A.DeliverControlRequest
                and type(prev.action) is A.DeliverControlRequest and prev.action.controller == ev.action.controller
                and d.violation_step not in (ev.step, prev.step)):
            rows[-1].append(ev)
        else:
            rows.append([ev])
    return rows


def _row_label(row: list) -> str:
    if len(row) == 1:
        return f"{row[0].step:>3} {row[0].label}"
    names, brokers = [], []
    for ev in row:
        name = ev.label.split(" delivers ", 1)[-1].rsplit(" to broker ", 1)[0]
        names += [name] if name not in names else []
        brokers += [ev.action.broker] if ev.action.broker not in brokers else []
    return (f"{row[0].step:>3}-{row[-1].step} controller {row[0].action.controller} delivers {len(row)} requests "
            f"({', '.join(names)}) to broker{'s' * (len(brokers) > 1)} {', '.join(map(str, brokers))}")


def _wrap(text: str, width_px: float) -> list:
    return textwrap.wrap(text, max(40, int(width_px / CHAR_W))) if text else []


def _wrap_label(label: str) -> list:
    """A row's label in lines of at most LABEL_CHARS, split at spaces only (joined by one space they give the label
    back: no word is cut, no hyphen broken)."""
    return textwrap.wrap(label, LABEL_CHARS, break_long_words=False, break_on_hyphens=False) or [label]


def _hits(segment: tuple, box: tuple, tip: float = 8.0) -> bool:
    """Whether a message line (x1, y1, x2, y2), 2 px wide and ending in an arrowhead, touches ``box``
    (x0, y0, x1, y1): points every 2 px along it, those of the head (its last 2 x ``tip`` px) given its half-width
    ``tip`` across the line, which is never steep."""
    x1, y1, x2, y2 = segment
    length = max(1.0, ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5)
    for i in range(int(length // 2) + 1):
        t = min(1.0, 2 * i / length)
        px, py = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t
        spread = tip if (1 - t) * length <= 2 * tip else 1.5     # the head spreads across the (flat) line
        if box[0] - 1.5 <= px <= box[2] + 1.5 and box[1] - spread <= py <= box[3] + spread:
            return True
    return False


def _place(x: float, y: float, w: float, taken: list, messages: list) -> tuple:
    """Where a replica's state label of width ``w`` goes beside its lane at ``x`` on the row at ``y``: right of the
    lane, else left, else under the row's arrows (right), the first whose box neither a message of the row nor a label
    placed before (``taken``) covers; right when none is free.  (text x, baseline y, text-anchor, box)."""
    spots = ((x + 8, y + 4, None, (x + 6, y - 7, x + 10 + w, y + 7)),
             (x - 8, y + 4, "end", (x - 10 - w, y - 7, x - 6, y + 7)),
             (x + 8, y + 17, None, (x + 6, y + 9, x + 10 + w, y + 20)))
    for spot in spots:
        box = spot[3]
        if not any(_hits(m, box) for m in messages) and not any(
                box[0] < t[2] and t[0] < box[2] and box[1] < t[3] and t[1] < box[3] for t in taken):
            return spot
    return spots[0]


def scene(d: Diagram) -> tuple[int, int, list]:
    """(width, height, primitives): ("rect"|"line"|"circle"|"text", {attributes}) in drawing order.

    Long step labels wrap onto more lines (their row grows), so that a diagram is about as wide as a page; a replica's
    state label goes where no message of its row passes (``_place``)."""
    rows = fold(d)
    labels = [_wrap_label(_row_label(r)) for r in rows]
    left = int(max([len(x) for lines in labels for x in lines] + [30]) * CHAR_W) + 30
    width = max(left + LANE_W * len(d.lanes) + 40, MIN_WIDTH)
    caption = _wrap(d.caption, (width - 20) / 1.25)   # 11 px type, with room for wider monospace faces
    attribution = _wrap(d.attribution, (width - 20) / 1.25)
    notation = _wrap(NOTATION, width - 20)
    top = TOP_PAD + 16 * (len(caption) + len(attribution)) + 24
    ys, y = [], top
    for k in range(len(labels)):  # each row's first baseline: a row of n label lines is LINE_H x (n - 1) taller
        y += ROW_H + (LINE_H * (len(labels[k - 1]) - 1) if k else 0)
        ys.append(y)
    body_end = (ys[-1] + LINE_H * (len(labels[-1]) - 1) if ys else top) + ROW_H
    legend_rows = (len(KIND_WORDS) + 2) // 3 + 3 + len(notation)
    height = body_end + 18 * legend_rows + 20
    out = [("rect", {"x": 0, "y": 0, "w": width, "h": height, "fill": "#ffffff", "id": "background"})]
    out.append(("text", {"x": 10, "y": 22, "s": d.title, "size": 14, "fill": "#000000", "id": "title"}))
    for k, line in enumerate(caption):
        out.append(("text", {"x": 10, "y": 44 + 16 * k, "s": line, "size": 11, "fill": "#b00000",
                             "class": "caption"}))
    for k, line in enumerate(attribution, len(caption)):
        out.append(("text", {"x": 10, "y": 44 + 16 * k, "s": line, "size": 11, "fill": "#333333",
                             "class": "attribution"}))
    xs = {lane: left + LANE_W * i + LANE_W // 2 for i, lane in enumerate(d.lanes)}
    row_of = {ev.step: k for k, r in enumerate(rows) for ev in r}
    if d.violation_step is not None and d.violation_step in row_of:
        k = row_of[d.violation_step]
        out.append(("rect", {"x": 4, "y": ys[k] - ROW_H // 2, "w": width - 8,
                             "h": ROW_H + LINE_H * (len(labels[k]) - 1), "fill": "#ffd6d6", "id": "violation",
                             "class": "violation", "data-step": d.violation_step}))
    for lane in d.lanes:
        x = xs[lane]
        out.append(("text", {"x": x, "y": top - 30, "s": lane, "size": 13, "fill": "#000000", "anchor": "middle",
                             "class": "lane-label"}))
        out.append(("line", {"x1": x, "y1": top - 20, "x2": x, "y2": body_end, "stroke": "#444444", "w": 2,
                             "id": "lane-" + lane.replace(" ", "-"), "class": "lane"}))
    for lane, text in d.states[0].items():
        out.append(("text", {"x": xs[lane] + 6, "y": top - 6, "s": text, "size": 10, "fill": "#333333",
                             "class": "replica-state"}))
    taken: list = []      # the boxes of the labels placed so far
    for row, lines, y in zip(rows, labels, ys):
        bad = any(ev.step == d.violation_step for ev in row)
        for j, line in enumerate(lines):      # a wrapped label's later lines start under its words, not its number
            out.append(("text", {"x": 10 if j == 0 else 10 + 4 * CHAR_W, "y": y + 4 + LINE_H * j, "s": line,
                                 "size": 10, "fill": "#b00000" if bad else "#000000", "class": "step-label",
                                 "data-step": row[0].step}))
        messages = []
        for ev in row:
            colour = COLOURS[ev.kinds[-1] if len(ev.kinds) > 1 else ev.kinds[0]]
            x = xs[ev.lane]
            if ev.arrow_to is not None and ev.arrow_to != ev.lane:
                messages.append((x, y - 8, xs[ev.arrow_to], y + 8))
                out.append(("line", {"x1": x, "y1": y - 8, "x2": xs[ev.arrow_to], "y2": y + 8, "stroke": colour,
                                     "w": 2, "arrow": True, "class": "message " + " ".join(ev.kinds)}))
            out.append(("circle", {"cx": x, "cy": y - 8 if ev.arrow_to else y, "r": 5, "fill": colour,
                                   "class": "event " + " ".join(ev.kinds), "data-step": ev.step}))
        before, after = d.states[row[0].step - 1], d.states[row[-1].step]
        taken = [box for box in taken if box[3] > y - ROW_H // 2]     # a label put under the row above reaches here
        for lane, text in after.items():
            if text != before[lane]:   # on a white ground, beside its lane where no message of the row passes
                w = int(len(text) * CHAR_W)
                tx, ty, anchor, box = _place(xs[lane], y, w, taken, messages)
                taken.append(box)
                out.append(("rect", {"x": box[0], "y": box[1], "w": box[2] - box[0], "h": box[3] - box[1],
                                     "fill": "#ffffff", "class": "replica-state-ground"}))
                out.append(("text", {"x": tx, "y": ty, "s": text, "size": 10, "fill": "#333333",
                                     "class": "replica-state", "data-step": row[-1].step,
                                     **({"anchor": anchor} if anchor else {})}))
    # the legend: notation, colours, marks
    y = body_end + 22
    out.append(("text", {"x": 10, "y": y, "s": "Legend", "size": 12, "fill": "#000000", "class": "legend"}))
    for j, line in enumerate(notation):
        out.append(("text", {"x": 10, "y": y + 18 * (j + 1), "s": line, "size": 10, "fill": "#333333",
                             "class": "legend"}))
    y += 18 * (len(notation) - 1)
    for k, (kind, words) in enumerate(KIND_WORDS):
        lx, ly = 16 + 300 * (k % 3), y + 36 + 18 * (k // 3)
        out.append(("circle", {"cx": lx, "cy": ly - 4, "r": 5, "fill": COLOURS[kind], "class": "legend"}))
        out.append(("text", {"x": lx + 12, "y": ly, "s": words, "size": 10, "fill": "#333333", "class": "legend"}))
    y += 36 + 18 * ((len(KIND_WORDS) + 2) // 3)
    out.append(("text", {"x": 10, "y": y, "s": "arrow: a message, from sender to receiver;  red band: the step where "
                         "the invariant first fails;  3-8: control-request deliveries folded into one row",
                         "size": 10, "fill": "#333333", "class": "legend"}))
    return width, height, out


# =========================================================================== SVG
def to_svg(d: Diagram) -> str:
    width, height, prims = scene(d)
    colours = sorted({a["stroke"] for kind, a in prims if kind == "line" and a.get("arrow")})
    markers = "".join(f'<marker id="arrow-{c[1:]}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
                      f'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{c}"/>'
                      f'</marker>' for c in colours)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace">',
             f'<defs>{markers}</defs>']

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
            marker = f' marker-end="url(#arrow-{a["stroke"][1:]})"' if a.get("arrow") else ""
            lines.append(f'<line x1="{a["x1"]}" y1="{a["y1"]}" x2="{a["x2"]}" y2="{a["y2"]}" stroke="{a["stroke"]}" '
                         f'stroke-width="{a["w"]}"{marker}{extra(a)}/>')
        elif kind == "circle":
            lines.append(f'<circle cx="{a["cx"]}" cy="{a["cy"]}" r="{a["r"]}" fill="{a["fill"]}"{extra(a)}/>')
        else:
            anchor = f' text-anchor="{a["anchor"]}"' if "anchor" in a else ""
            lines.append(f'<text x="{a["x"]}" y="{a["y"]}" font-size="{a["size"]}" fill="{a["fill"]}"{anchor}'
                         f' xml:space="preserve"{extra(a)}>{escape(a["s"])}</text>')
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


# =========================================================================== PNG
def to_png(d: Diagram) -> bytes:
    """The same scene drawn by matplotlib (Agg) at one pixel per unit: an RGB PNG, deterministic bytes."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, FancyArrowPatch, Rectangle

    width, height, prims = scene(d)
    dpi = 100
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    pt = 72 / dpi          # points per pixel: SVG font sizes are pixels
    for z, (kind, a) in enumerate(prims):
        if kind == "rect":
            ax.add_patch(Rectangle((a["x"], a["y"]), a["w"], a["h"], facecolor=a["fill"], edgecolor="none", zorder=z))
        elif kind == "line" and a.get("arrow"):
            ax.add_patch(FancyArrowPatch((a["x1"], a["y1"]), (a["x2"], a["y2"]), arrowstyle="-|>",
                                         mutation_scale=12, color=a["stroke"], linewidth=a["w"] * pt,
                                         shrinkA=0, shrinkB=0, zorder=z))
        elif kind == "line":
            ax.plot([a["x1"], a["x2"]], [a["y1"], a["y2"]], color=a["stroke"], linewidth=a["w"] * pt, zorder=z)
        elif kind == "circle":
            ax.add_patch(Circle((a["cx"], a["cy"]), a["r"], facecolor=a["fill"], edgecolor="none", zorder=z))
        else:
            ax.text(a["x"], a["y"], a["s"], fontsize=a["size"] * pt * 1.05, color=a["fill"], family="monospace",
                    ha={"middle": "center", "end": "right"}.get(a.get("anchor"), "left"), va="baseline", zorder=z)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()
