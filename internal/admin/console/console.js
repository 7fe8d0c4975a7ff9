// The RockStream console: polls the read-only JSON endpoints under /api/
// and redraws the panels. Every value from the server is inserted as text
// (textContent), never as markup.
"use strict";

const intervalMs = 2000;
const svgNS = "http://www.w3.org/2000/svg";
let selected = decodeURIComponent((location.hash.match(/view=([^&]*)/) || [])[1] || "");
// The previous sample of each counter, to turn totals into rates.
let prevOps = null, prevConns = {};

async function getJSON(path) {
  const resp = await fetch(path, { cache: "no-store", credentials: "same-origin" });
  const body = await resp.json();
  if (!resp.ok) throw new Error(body.error || resp.statusText);
  return body;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : String(c ?? ""));
  return e;
}

function td(value, cls) {
  const e = el("td", cls ? { class: cls } : {}, value ?? "–");
  return e;
}

function fill(tableId, rows) {
  const body = document.querySelector("#" + tableId + " tbody");
  if (rows.length === 0) {
    const cols = document.querySelectorAll("#" + tableId + " thead th").length;
    rows = [el("tr", { class: "empty" }, el("td", { colspan: cols }, "none"))];
  }
  body.replaceChildren(...rows);
}

function bytes(n) {
  if (n == null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}

function ago(seconds) {
  if (seconds < 1) return "just now";
  if (seconds < 120) return Math.round(seconds) + " s ago";
  if (seconds < 7200) return Math.round(seconds / 60) + " min ago";
  return Math.round(seconds / 3600) + " h ago";
}

// changed describes a view's last change: its epoch, and how long ago
// when the server remembers.
function changed(v) {
  if (v.last_change_epoch == null) return null;
  return v.last_change_age_seconds == null ? `epoch ${v.last_change_epoch}` : `epoch ${v.last_change_epoch}, ${ago(v.last_change_age_seconds)}`;
}

function rate(now, prev, dt) {
  if (prev == null || dt <= 0) return "–";
  return ((now - prev) / dt).toFixed(1);
}

function drawOverview(ov) {
  document.getElementById("status").textContent = ov.status;
  document.getElementById("epoch").textContent = ov.epoch ?? "–";
  document.getElementById("durable").textContent = ov.durable_epoch ?? (ov.in_memory ? "in memory" : "–");
  document.getElementById("frontier-age").textContent = ago(ov.frontier_age_seconds);
  document.getElementById("version").textContent = ov.version;
  const problem = document.getElementById("problem");
  problem.hidden = !ov.problem;
  problem.textContent = ov.problem || "";

  const now = performance.now() / 1000;
  fill("connectors", ov.connectors.map(c => {
    const prev = prevConns[c.name];
    prevConns[c.name] = { t: now, records: c.records };
    return el("tr", { "data-connector": c.name },
      td(c.name), td(c.kind), td(c.type), td(c.target),
      td(c.state, "state-" + c.state), td(c.lag, "num"),
      td(c.throughput == null ? null : c.throughput.toFixed(1), "num"),
      td(c.records, "num"), td(c.errors, "num"), td(c.failures, "num"), td(c.last_error || "", "error"));
  }));
  fill("sessions", ov.session_list.map(s => el("tr", { "data-session": s.id },
    td(s.id, "num"), td(s.user), td(s.database), td(s.application_name), td(s.client_addr),
    td(s.state), td(s.query_start ? new Date(s.query_start).toLocaleTimeString() : ""), td(s.query))));
}

function drawCatalog(cat) {
  fill("catalog", cat.relations.map(r => el("tr", { "data-relation": r.name },
    td(r.name), td(r.kind), td(r.rows, "num"), td(r.reads.join(", ")), td(r.read_by.join(", ")),
    td(r.sources.concat(r.sinks).join(", ")), td(r.frontier_epoch, "num"), td(changed(r)))));
  const views = cat.relations.filter(r => r.kind === "materialized view").map(r => r.name);
  if (!views.includes(selected)) selected = views[0] || "";
  const select = document.getElementById("view-select");
  const options = views.map(v => { const o = el("option", { value: v }, v); o.selected = v === selected; return o; });
  if (select.options.length !== options.length || [...select.options].some((o, i) => o.value !== views[i])) {
    select.replaceChildren(...options);
  }
  select.value = selected;
}

function drawCircuit(c) {
  const summary = document.getElementById("circuit-summary");
  summary.textContent = `${c.rows} rows · consistent at epoch ${c.frontier_epoch} · last changed ${changed(c) ?? "–"} · state ${c.state_keys}${c.state_complete ? "" : "+"} keys, ${bytes(c.state_bytes)}`;
  const now = performance.now() / 1000;
  const dt = prevOps && prevOps.view === c.view ? now - prevOps.t : 0;
  const before = dt > 0 ? prevOps.rows : {};
  prevOps = { view: c.view, t: now, rows: Object.fromEntries(c.operators.map(o => [o.id, o.rows])) };

  // The graph: one box per operator, data flowing down from the scans.
  const boxW = 200, boxH = 46, gapX = 24, gapY = 34;
  const width = Math.max(1, ...c.operators.map(o => o.column + 1));
  // Room on the right for the exchange labels of the last column.
  const W = width * (boxW + gapX) + gapX + 120, H = c.layers * (boxH + gapY) + gapY;
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "circuit of " + c.view);
  const defs = document.createElementNS(svgNS, "defs");
  const marker = document.createElementNS(svgNS, "marker");
  for (const [k, v] of Object.entries({ id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" })) marker.setAttribute(k, v);
  const tip = document.createElementNS(svgNS, "path");
  tip.setAttribute("d", "M0,0 L10,5 L0,10 z");
  tip.setAttribute("fill", "#8a93a6");
  marker.append(tip);
  defs.append(marker);
  svg.append(defs);
  const pos = {};
  for (const o of c.operators) pos[o.id] = { x: gapX + o.column * (boxW + gapX), y: gapY + o.layer * (boxH + gapY) };
  for (const o of c.operators) {
    o.inputs.forEach((i, k) => {
      const x1 = pos[i].x + boxW / 2, y1 = pos[i].y + boxH, x2 = pos[o.id].x + boxW / 2, y2 = pos[o.id].y;
      const line = document.createElementNS(svgNS, "line");
      line.setAttribute("x1", x1); line.setAttribute("y1", y1);
      line.setAttribute("x2", x2); line.setAttribute("y2", y2);
      svg.append(line);
      // An input exchanged between workers is labelled with its route.
      if (o.exchanges[k]) {
        const label = document.createElementNS(svgNS, "text");
        label.setAttribute("x", (x1 + x2) / 2 + 4); label.setAttribute("y", (y1 + y2) / 2 + 4);
        label.setAttribute("class", "small exchange");
        label.textContent = o.exchanges[k].replace(/^exchange\s+/, "⇄ ");
        svg.append(label);
      }
    });
  }
  for (const o of c.operators) {
    const g = document.createElementNS(svgNS, "g");
    g.setAttribute("data-operator", o.id);
    const rect = document.createElementNS(svgNS, "rect");
    for (const [k, v] of Object.entries({ x: pos[o.id].x, y: pos[o.id].y, width: boxW, height: boxH, rx: 4 })) rect.setAttribute(k, v);
    rect.setAttribute("class", o.root ? "root" : o.kind === "scan" ? "scan" : "");
    const title = document.createElementNS(svgNS, "title");
    title.textContent = o.explain;
    const label = document.createElementNS(svgNS, "text");
    label.setAttribute("x", pos[o.id].x + 6); label.setAttribute("y", pos[o.id].y + 17);
    const first = o.explain.split("\n")[0];
    label.textContent = `#${o.id} ` + (first.length > 30 ? first.slice(0, 29) + "…" : first);
    const stats = document.createElementNS(svgNS, "text");
    stats.setAttribute("x", pos[o.id].x + 6); stats.setAttribute("y", pos[o.id].y + 35);
    stats.setAttribute("class", "small");
    stats.textContent = `${o.state_keys} keys · ${bytes(o.state_bytes)} · ${o.rows} rows`;
    g.append(title, rect, label, stats);
    svg.append(g);
  }
  document.getElementById("circuit-graph").replaceChildren(svg);

  fill("operators", c.operators.map(o => el("tr", { "data-operator": o.id },
    td(o.id, "num"), td(o.explain.split("\n")[0]), td(o.state_keys, "num"), td(bytes(o.state_bytes), "num"),
    td(o.rows, "num"), td(rate(o.rows, before[o.id], dt), "num"))));
}

async function poll() {
  try {
    drawOverview(await getJSON("/api/overview"));
    drawCatalog(await getJSON("/api/catalog"));
    if (selected) {
      drawCircuit(await getJSON("/api/views/" + encodeURIComponent(selected)));
    } else {
      document.getElementById("circuit-summary").textContent = "no materialized view";
      document.getElementById("circuit-graph").replaceChildren();
      fill("operators", []);
    }
    document.getElementById("updated").textContent = new Date().toLocaleTimeString();
  } catch (err) {
    document.getElementById("status").textContent = "unreachable: " + err.message;
  }
}

document.getElementById("view-select").addEventListener("change", e => {
  selected = e.target.value;
  location.hash = "view=" + encodeURIComponent(selected);
  poll();
});
document.getElementById("interval").textContent = intervalMs / 1000;
poll();
setInterval(poll, intervalMs);
