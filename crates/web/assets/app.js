// protoprof's page: the view comes from the path (/ui/<view>), the state
// from the query, with pprof's parameter names. Every string from the
// profile is written with textContent or drawn on a canvas, never parsed
// as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const FILTERS = ["f", "i", "h", "s", "sf", "prunefrom", "tf", "ti", "ts", "th", "pivot"];
const page = { meta: null, flame: null, base: null, top: null, topSort: "flat", selected: null };
window.protoprof = page; // for the browser tests and the curious

function view() {
  const v = location.pathname.replace(/^\/ui\//, "");
  return v || "flamegraph";
}

function params() {
  return new URLSearchParams(location.search);
}

// Moves to `view` with `changes` applied to the query (null removes).
function go(toView, changes) {
  const q = params();
  for (const [k, v] of Object.entries(changes || {})) {
    if (v === null || v === "") q.delete(k); else q.set(k, v);
  }
  const query = q.toString();
  history.pushState(null, "", `/ui/${toView}${query ? "?" + query : ""}`);
  render();
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function showError(message) {
  $("error").hidden = !message;
  $("error").textContent = message || "";
}

function showNotice(message) {
  $("notice").hidden = !message;
  $("notice").textContent = message || "";
}

async function api(report, extra) {
  const q = params();
  for (const [k, v] of Object.entries(extra || {})) q.set(k, v);
  const response = await fetch(`/api/${report}?${q}`);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function escapeRegex(text) {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

// Values as pprof scales them: time and bytes in the largest unit that
// keeps a whole number, others as they are.
function formatValue(v, unit) {
  const scales = {
    nanoseconds: [[1e9, "s"], [1e6, "ms"], [1e3, "us"], [1, "ns"]],
    microseconds: [[1e6, "s"], [1e3, "ms"], [1, "us"]],
    milliseconds: [[1e3, "s"], [1, "ms"]],
    seconds: [[1, "s"]],
    bytes: [[1024 ** 4, "TB"], [1024 ** 3, "GB"], [1024 ** 2, "MB"], [1024, "kB"], [1, "B"]],
  }[unit];
  if (!scales) return `${v}${unit && unit !== "count" ? " " + unit : ""}`;
  for (const [factor, name] of scales) {
    if (Math.abs(v) >= factor || factor === 1) {
      const scaled = v / factor;
      return `${Number.isInteger(scaled) ? scaled : scaled.toFixed(2).replace(/\.?0+$/, "")}${name}`;
    }
  }
  return String(v);
}

function percent(v, total) {
  return total === 0 ? "" : `${(100 * v / total).toFixed(2)}%`;
}

// ---- header: pickers, refine, filters ----

function setupHeader() {
  const m = page.meta;
  $("title").textContent = m.title + (m.base ? `  (compared with ${m.base})` : "");
  document.title = `${m.title} — protoprof`;
  const si = $("si");
  m.sample_types.forEach((t, i) => {
    const o = el("option", `${t.type} (${t.unit})`);
    o.value = t.type;
    if (i === m.default_index) o.selected = true;
    si.append(o);
  });
  const tagroot = $("tagroot"), tagkey = $("tagkey");
  for (const label of m.labels) {
    for (const select of [tagroot, tagkey]) {
      const o = el("option", label.key);
      o.value = label.key;
      select.append(o);
    }
  }
  tagkey.addEventListener("change", fillTagValues);
  si.addEventListener("change", () => go(view(), { si: si.value }));
  $("g").addEventListener("change", () => go(view(), { g: $("g").value }));
  tagroot.addEventListener("change", () => go(view(), { tagroot: tagroot.value }));
  for (const a of document.querySelectorAll("nav a")) {
    a.addEventListener("click", (e) => {
      e.preventDefault();
      go(a.dataset.view, {});
    });
  }
  for (const b of document.querySelectorAll("[data-refine]")) {
    b.addEventListener("click", () => {
      const text = $("search").value;
      if (text) go(view(), { [b.dataset.refine]: text });
    });
  }
  for (const b of document.querySelectorAll("[data-tag]")) {
    b.addEventListener("click", () => {
      const key = $("tagkey").value, value = $("tagvalue").value;
      if (key && value) go(view(), { [b.dataset.tag]: `${key}=^${escapeRegex(value)}$` });
    });
  }
  $("reset").addEventListener("click", () => {
    const changes = {};
    for (const f of FILTERS) changes[f] = null;
    $("search").value = "";
    go(view(), changes);
  });
  $("search").addEventListener("input", search);
  $("search").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && ["peek", "source"].includes(view())) go(view(), { f: $("search").value });
  });
  setupMenu();
  setupFlameTools();
  setupKeys();
}

function fillTagValues() {
  const select = $("tagvalue");
  select.replaceChildren(el("option", "value"));
  select.firstChild.value = "";
  const label = page.meta.labels.find((l) => l.key === $("tagkey").value);
  for (const v of label ? label.values : []) {
    const o = el("option", v);
    o.value = v;
    select.append(o);
  }
}

function syncHeader() {
  const q = params();
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("active", a.dataset.view === view());
    a.href = `/ui/${a.dataset.view}${location.search}`;
  }
  if (q.get("si")) $("si").value = q.get("si");
  $("g").value = q.get("g") || "";
  $("tagroot").value = q.get("tagroot") || "";
  const chips = $("filters");
  chips.replaceChildren();
  for (const f of FILTERS) {
    const v = q.get(f);
    if (!v) continue;
    const chip = el("span", `${f}=${v}`, "chip");
    const remove = el("button", "×");
    remove.title = "Remove this filter";
    remove.addEventListener("click", () => go(view(), { [f]: null }));
    chip.append(remove);
    chips.append(chip);
  }
}

// ---- the flame graph ----

function setupFlameTools() {
  // The root at the top (an icicle) unless `icicle=0` asks for a flame.
  $("orientation").addEventListener("click", () => {
    const icicle = params().get("icicle") !== "0";
    go("flamegraph", { icicle: icicle ? "0" : null });
  });
  $("unzoom").addEventListener("click", () => {
    for (const chart of [page.flame, page.base]) if (chart) chart.zoomTo(-1);
  });
  $("compare").addEventListener("change", () => go("flamegraph", { compare: $("compare").value }));
  $("show-top").addEventListener("change", () => { $("side-top").hidden = !$("show-top").checked; });
}

// Where the flame graph goes on below the window's bottom edge, a marker
// there says how many levels are cut from this screen (scrolling shows
// them): the first screen never looks whole when it is not.
function markFold() {
  const fold = $("flame-fold");
  const chart = page.flame;
  if (!chart || view() !== "flamegraph" || !chart.options.icicle) {
    fold.hidden = true;
    return;
  }
  const top = chart.canvas.getBoundingClientRect().top;
  const rows = chart.maxDepth + 2; // the root bar, then every depth
  const shown = Math.max(0, Math.floor((window.innerHeight - top) / ROW));
  const cut = rows - shown;
  fold.hidden = cut <= 0;
  fold.textContent = cut > 0
    ? `▼ ${cut} of ${rows - 1} levels are below this screen: scroll to see them`
    : "";
  page.foldCut = Math.max(cut, 0);
}
window.addEventListener("scroll", markFold, { passive: true });
window.addEventListener("resize", markFold);

async function renderFlame() {
  const q = params();
  const icicle = q.get("icicle") !== "0";
  const mode = q.get("compare") || "diff";
  $("orientation").textContent = icicle ? "Flame" : "Icicle";
  $("compare-label").hidden = !page.meta.base;
  $("compare").value = mode;
  const side = page.meta.base && mode === "side";
  // The top table beside the graph is asked for at once but drawn when it
  // comes: the graph does not wait for it.
  const topAnswer = api("top");
  topAnswer.catch(() => {});
  const [data, baseData] = await Promise.all([
    api("flamegraph"),
    side ? api("flamegraph", { of: "base" }) : Promise.resolve(null),
  ]);
  for (const chart of [page.flame, page.base]) if (chart) chart.detach();
  const options = (d) => ({
    icicle,
    diff: !side,
    rootLabel: `root: ${formatValue(d.total, d.unit)} of ${d.sample_type}` +
      (d.base_total !== null && d.base_total !== undefined ? ` (base ${formatValue(d.base_total, d.unit)})` : ""),
    onHover: (node, e) => hover(d, node, e),
    onMenu: (node, e) => openMenu(d, node, e),
  });
  const pivot = q.get("pivot");
  $("flame-caption").textContent = side ? page.meta.title : pivot ? `Callers of ${pivot}` : "";
  page.flame = new FlameChart(freshCanvas("flame"), data, options(data));
  page.flame.chart = page.flame;
  page.flameData = data;
  markFold();
  showLegend(side || !data.base ? page.flame.legend() : []);
  $("base-box").hidden = !side;
  page.base = null;
  if (side) {
    $("base-caption").textContent = page.meta.base;
    page.base = new FlameChart(freshCanvas("flame-base"), baseData, options(baseData));
  }
  const left = data.nodes_left_out ? `; ${data.nodes_left_out} nodes too narrow to draw left out` : "";
  $("flame-status").textContent =
    `${data.sample_type}: total ${formatValue(data.total, data.unit)}` +
    (data.base_total !== null && data.base_total !== undefined
      ? `, base ${formatValue(data.base_total, data.unit)}` : "") + left;
  warnUnmatched(data.unmatched);
  page.top = await topAnswer;
  renderTopTable($("side-top"), true);
  search();
}

// The packages with colours of their own, as swatches beside the tools.
function showLegend(packages) {
  const legend = $("flame-legend");
  legend.replaceChildren();
  for (const [name, colour] of packages.slice(0, 8)) {
    const item = el("span", name, "legend-item");
    item.style.setProperty("--swatch", colour);
    item.title = `${name}: frames of this package`;
    legend.append(item);
  }
}

// Keys on the flame graph: "/" searches, Esc resets (search, zoom,
// cursor), arrows walk the frames (up and down the stack, across
// siblings), Enter zooms on the frame under the cursor.
function setupKeys() {
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement?.tagName);
    if (e.key === "/" && !typing) {
      e.preventDefault();
      $("search").focus();
      return;
    }
    if (e.key === "Escape") {
      if (typing) document.activeElement.blur();
      $("search").value = "";
      for (const chart of [page.flame, page.base]) if (chart) { chart.cursor = null; chart.zoomTo(-1); }
      search();
      return;
    }
    if (typing || view() !== "flamegraph" || !page.flame) return;
    const icicle = params().get("icicle") !== "0";
    const moves = {
      ArrowUp: icicle ? "parent" : "child", ArrowDown: icicle ? "child" : "parent",
      ArrowLeft: "prev", ArrowRight: "next",
    };
    if (moves[e.key]) {
      e.preventDefault();
      const node = page.flame.moveCursor(moves[e.key]);
      const d = page.flameData;
      if (node !== null) {
        $("flame-cursor").textContent =
          `${d.names[d.name[node]]}: ${formatValue(d.value[node], d.unit)} (${percent(d.value[node], d.total)})`;
      }
    } else if (e.key === "Enter" && page.flame.cursor !== null && page.flame.cursor !== undefined) {
      page.flame.zoomTo(page.flame.cursor);
    }
  });
}

// A new canvas in place of the old one, so no listener stays behind.
function freshCanvas(id) {
  const old = $(id);
  const canvas = el("canvas");
  canvas.id = id;
  old.replaceWith(canvas);
  return canvas;
}

function hover(data, node, e) {
  const tip = $("tooltip");
  if (node === null) {
    tip.hidden = true;
    return;
  }
  const unit = data.unit;
  tip.replaceChildren(el("div", data.names[data.name[node]], "name"));
  const line = (text) => tip.append(el("div", text));
  line(`${formatValue(data.value[node], unit)} (${percent(data.value[node], data.total)} of the total)`);
  line(`self ${formatValue(data.self[node], unit)}`);
  if (data.base) {
    const change = data.value[node] - data.base[node];
    line(`base ${formatValue(data.base[node], unit)}, change ${change >= 0 ? "+" : ""}${formatValue(change, unit)}`);
  }
  tip.hidden = false;
  tip.style.left = Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + "px";
  tip.style.top = e.clientY + 14 + "px";
}

function search() {
  const input = $("search");
  let regex = null;
  input.classList.remove("invalid");
  if (input.value) {
    try {
      regex = new RegExp(input.value);
    } catch {
      input.classList.add("invalid");
    }
  }
  const share = $("search-share");
  share.textContent = "";
  if (view() !== "flamegraph" || !page.flame) return;
  const matched = page.flame.setHighlight(regex);
  if (page.base) page.base.setHighlight(regex);
  if (regex) {
    const d = page.flameData;
    share.textContent = `Matched ${formatValue(matched, d.unit)} (${percent(matched, d.total)})`;
  }
}

// ---- right-click menu ----

function setupMenu() {
  const menu = $("menu");
  document.addEventListener("click", () => { menu.hidden = true; });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") menu.hidden = true; });
  for (const b of menu.querySelectorAll("button")) {
    b.addEventListener("click", () => {
      const regex = `^${escapeRegex(menu.dataset.name)}$`;
      menu.hidden = true;
      if (b.dataset.action === "search") {
        $("search").value = regex;
        search();
      } else {
        go("flamegraph", { [b.dataset.action]: regex });
      }
    });
  }
}

function openMenu(data, node, e) {
  const menu = $("menu");
  menu.dataset.name = data.names[data.name[node]];
  $("menu-name").textContent = menu.dataset.name;
  menu.hidden = false;
  menu.style.left = Math.min(e.clientX, window.innerWidth - menu.offsetWidth - 4) + "px";
  menu.style.top = Math.min(e.clientY, window.innerHeight - menu.offsetHeight - 4) + "px";
}

// ---- top ----

function renderTopTable(container, compact) {
  const top = page.top;
  container.replaceChildren();
  if (!compact) {
    const header = el("pre");
    header.textContent = top.header.join("\n");
    container.append(header);
  }
  const rows = top.rows.slice();
  const sort = page.topSort;
  if (sort === "cum") rows.sort((a, b) => b.cum_value - a.cum_value);
  if (sort === "name") rows.sort((a, b) => a.name.localeCompare(b.name));
  const table = el("table", undefined, "top");
  const head = el("tr");
  // Every column sorts: the percentages as their values do.
  const columns = [["flat", "flat"], ["flat%", "flat"], ["sum%", "flat"], ["cum", "cum"], ["cum%", "cum"], ["name", "name"]];
  for (const [label, key] of columns) {
    const th = el("th", label, key === "name" ? "name" : "");
    if (key) {
      th.dataset.sort = key;
      if (label === sort) th.classList.add("sorted");
      th.addEventListener("click", () => { page.topSort = key; renderTopTable(container, compact); });
    }
    head.append(th);
  }
  table.append(head);
  for (const r of rows) {
    const tr = el("tr");
    const name = r.inline ? `${r.name} ${r.inline}` : r.name;
    for (const [text, cls] of [[r.flat], [r.flat_pct], [r.sum_pct], [r.cum], [r.cum_pct], [name, "name"]]) {
      tr.append(el("td", text, cls || ""));
    }
    if (r.name === page.selected) tr.classList.add("selected");
    tr.addEventListener("click", () => selectRow(r.name, container, compact));
    table.append(tr);
  }
  container.append(table);
}

function selectRow(name, container, compact) {
  page.selected = name;
  $("search").value = `^${escapeRegex(name)}$`;
  renderTopTable(container, compact);
  search();
}

async function renderTop() {
  page.top = await api("top");
  renderTopTable($("top-view"), false);
  warnUnmatched(page.top.unmatched);
}

// ---- graph and the text reports ----

async function renderGraph() {
  const box = $("graph-box");
  box.replaceChildren(el("p", "Drawing the call graph…"));
  const response = await fetch(`/api/graph.svg?${params()}`);
  if (!response.ok) {
    box.replaceChildren(el("p", await response.text()));
    return;
  }
  // As an image: an SVG shown this way runs no script.
  const img = el("img");
  img.alt = "call graph";
  img.src = URL.createObjectURL(await response.blob());
  box.replaceChildren(img);
}

async function renderText(report) {
  const body = await api(report);
  $("text").textContent = body.text || body.note || "";
  warnUnmatched(body.unmatched);
}

function warnUnmatched(unmatched) {
  if (unmatched && unmatched.length) {
    showNotice(unmatched.map((f) => `${f} expression matched no samples`).join("; "));
  }
}

// ---- views ----

async function render() {
  const v = view();
  showError("");
  showNotice("");
  syncHeader();
  $("tooltip").hidden = true;
  for (const section of document.querySelectorAll("main > section")) section.hidden = true;
  const section = ["peek", "source", "traces", "tags"].includes(v) ? "text" : v;
  const target = $(`${section}-view`);
  if (!target) {
    showError(`No view ${v}`);
    return;
  }
  target.hidden = false;
  document.body.dataset.view = v;
  document.body.dataset.ready = "";
  try {
    if (v === "flamegraph") await renderFlame();
    else if (v === "top") await renderTop();
    else if (v === "graph") await renderGraph();
    else if (v === "message") await messageView.render();
    else {
      if (["peek", "source"].includes(v) && params().get("f")) $("search").value = params().get("f");
      await renderText(v);
    }
  } catch (e) {
    showError(e.message);
  }
  document.body.dataset.ready = v;
}

async function start() {
  try {
    // The meta of the profile the URL names (a store's selection, maybe).
    const response = await fetch(`/api/meta?${params()}`);
    page.meta = await response.json();
    if (!response.ok) throw new Error(page.meta.error || response.statusText);
  } catch (e) {
    showError(`Cannot read the profile: ${e.message}`);
    if (page.meta && page.meta.error) storeBar.start({ store: { select: "", from: "", to: "" } });
    return;
  }
  setupHeader();
  if (page.meta.message_only) {
    // Not a profile: its message is all there is to show.
    document.body.classList.add("message-only");
    if (view() !== "message") history.replaceState(null, "", `/ui/message${location.search}`);
  }
  storeBar.start(page.meta);
  window.addEventListener("popstate", render);
  await render();
}

start();
