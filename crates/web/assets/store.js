// The store bar of `serve --store`: a label selector offering the values
// present, a time range (relative times become absolute in the URL, so a
// link names the same profiles tomorrow), a chart of totals per step
// grouped by a label (drag across it to select a time range), and a
// second selection to compare with. Every string from the store is
// written with textContent or as an SVG text node, never as markup.
"use strict";

// `$`, `el` and `formatValue` are app.js's, called once both are loaded.
const storeBar = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];
  const UNITS = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 };
  const state = { series: null, drag: null };

  // `-1h`, `-30m`, `now` as an absolute RFC 3339 time; anything else as typed.
  function absolute(text) {
    const t = text.trim();
    if (t === "now") return new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const m = /^-(\d+)([smhd])$/.exec(t);
    if (!m) return t;
    const at = new Date(Date.now() - Number(m[1]) * UNITS[m[2]]);
    return at.toISOString().replace(/\.\d+Z$/, "Z");
  }

  function navigate(changes) {
    const q = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === "") q.delete(k); else q.set(k, v);
    }
    // The profile changes: filters of the old one may name nothing now,
    // but are kept, as pprof keeps them across a reload.
    location.assign(`${location.pathname}?${q}`);
  }

  function select() {
    navigate({
      sel: $("store-select").value.trim() || null,
      from: absolute($("store-from").value) || null,
      to: absolute($("store-to").value) || null,
    });
  }

  function compare() {
    const bsel = $("store-bselect").value.trim() || $("store-select").value.trim();
    navigate({
      sel: $("store-select").value.trim() || null,
      from: absolute($("store-from").value) || null,
      to: absolute($("store-to").value) || null,
      bsel: bsel || null,
      bfrom: absolute($("store-bfrom").value) || null,
      bto: absolute($("store-bto").value) || null,
    });
  }

  function fill(initial) {
    const q = new URLSearchParams(location.search);
    const named = ["sel", "from", "to"].some((k) => q.has(k));
    $("store-select").value = named ? q.get("sel") || "" : initial.select;
    $("store-from").value = named ? q.get("from") || "" : initial.from;
    $("store-to").value = named ? q.get("to") || "" : initial.to;
    $("store-bselect").value = q.get("bsel") || "";
    $("store-bfrom").value = q.get("bfrom") || "";
    $("store-bto").value = q.get("bto") || "";
    $("store-uncompare").hidden = !["bsel", "bfrom", "bto"].some((k) => q.has(k));
    if (q.get("step")) $("store-step").value = q.get("step");
  }

  async function fillLabels() {
    const response = await fetch("/api/store/labels");
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    const list = $("store-labels"), by = $("store-by");
    for (const label of body.labels) {
      const key = el("option", label.key);
      key.value = label.key;
      by.append(key);
      if (label.values.length === 0) {
        const o = document.createElement("option");
        o.value = `${label.key}=""`;
        list.append(o);
      }
      for (const v of label.values) {
        const o = document.createElement("option");
        o.value = `${label.key}=${JSON.stringify(v)}`;
        list.append(o);
      }
    }
    by.value = new URLSearchParams(location.search).get("by") || "";
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function loadSeries() {
    const q = new URLSearchParams(location.search);
    q.set("step", $("store-step").value);
    q.set("by", $("store-by").value);
    $("store-status").textContent = "…";
    const response = await fetch(`/api/store/series?${q}`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    state.series = body;
    $("store-status").textContent = body.points.length
      ? `${body.sample_type} (${body.unit}) per ${$("store-step").value}`
      : "nothing in this selection";
    drawChart();
  }

  // Stacked bars, one per step; the heaviest groups in colour, the rest
  // together in grey.
  function drawChart() {
    const chart = $("store-chart");
    chart.replaceChildren();
    const s = state.series;
    if (!s || s.points.length === 0) return;
    const totals = new Map();
    for (const p of s.points) totals.set(p.group, (totals.get(p.group) || 0) + p.value);
    const groups = [...totals.keys()].sort((a, b) => totals.get(b) - totals.get(a));
    const shown = groups.slice(0, PALETTE.length);
    const colour = (g) => (shown.includes(g) ? PALETTE[shown.indexOf(g)] : "#aaa");
    const steps = new Map();
    for (const p of s.points) {
      const bars = steps.get(p.time_ms) || [];
      bars.push(p);
      steps.set(p.time_ms, bars);
    }
    const times = [...steps.keys()];
    const t0 = Math.min(...times), t1 = Math.max(...times) + s.step_ms;
    const stepMax = Math.max(...[...steps.values()].map((b) => b.reduce((a, p) => a + Math.max(p.value, 0), 0)));
    const width = chart.clientWidth || 800, height = 90, bottom = 14;
    const x = (t) => ((t - t0) / (t1 - t0)) * width;
    state.scale = { t0, t1, width };
    for (const [time, bars] of steps) {
      let y = height - bottom;
      bars.sort((a, b) => shown.indexOf(a.group) - shown.indexOf(b.group));
      for (const p of bars) {
        const h = stepMax > 0 ? (Math.max(p.value, 0) / stepMax) * (height - bottom - 4) : 0;
        y -= h;
        const bar = svg("rect", {
          x: x(time), y, width: Math.max(3, x(time + s.step_ms) - x(time) - 1), height: h,
          fill: colour(p.group), "data-time": time, "data-group": p.group, "data-value": p.value,
        });
        bar.append(svg("title", {}, `${new Date(time).toISOString()} ${p.group} ${formatValue(p.value, s.unit)}`));
        chart.append(bar);
      }
    }
    chart.append(svg("text", { x: 2, y: height - 2, class: "axis" }, new Date(t0).toISOString()));
    chart.append(svg("text", { x: width - 2, y: height - 2, class: "axis", "text-anchor": "end" }, new Date(t1).toISOString()));
    const legend = $("store-legend");
    legend.replaceChildren();
    if ($("store-by").value) {
      for (const g of shown) {
        const swatch = el("span");
        swatch.className = "swatch";
        swatch.style.background = colour(g);
        legend.append(swatch, el("span", g || "(none)"));
      }
      if (groups.length > shown.length) legend.append(el("span", ` and ${groups.length - shown.length} more`));
    }
  }

  // Dragging across the chart selects that time range; a click, its step.
  function setupBrush() {
    const chart = $("store-chart");
    const timeAt = (e) => {
      const { t0, t1, width } = state.scale;
      const box = chart.getBoundingClientRect();
      return t0 + ((e.clientX - box.left) / width) * (t1 - t0);
    };
    chart.addEventListener("mousedown", (e) => {
      if (!state.scale) return;
      state.drag = { start: timeAt(e), x: e.clientX - chart.getBoundingClientRect().left };
    });
    chart.addEventListener("mousemove", (e) => {
      if (!state.drag) return;
      chart.querySelector(".brush")?.remove();
      const x = e.clientX - chart.getBoundingClientRect().left;
      chart.append(svg("rect", { class: "brush", x: Math.min(x, state.drag.x), y: 0, width: Math.abs(x - state.drag.x), height: 90 }));
    });
    window.addEventListener("mouseup", (e) => {
      if (!state.drag) return;
      const a = state.drag.start, b = timeAt(e);
      state.drag = null;
      const step = state.series.step_ms;
      let from = Math.min(a, b), to = Math.max(a, b);
      if (to - from < step / 4) {
        from = state.series.points.length ? Math.floor((from - state.scale.t0) / step) * step + state.scale.t0 : from;
        to = from + step;
      }
      const iso = (t) => new Date(Math.round(t)).toISOString().replace(/\.000Z$/, "Z");
      $("store-from").value = iso(from);
      $("store-to").value = iso(to);
      select();
    });
  }

  async function start(meta) {
    if (!meta.store) return;
    window.protoprof.storeSeries = () => state.series;
    $("store-bar").hidden = false;
    fill(meta.store);
    $("store-apply").addEventListener("click", select);
    $("store-compare").addEventListener("click", compare);
    $("store-uncompare").addEventListener("click", () => navigate({ bsel: null, bfrom: null, bto: null }));
    for (const id of ["store-select", "store-from", "store-to"]) {
      $(id).addEventListener("keydown", (e) => { if (e.key === "Enter") select(); });
    }
    const quick = $("store-quick");
    for (const range of ["-15m", "-1h", "-6h", "-1d", "-7d"]) {
      const b = el("button", range);
      b.title = `From ${range} until now`;
      b.addEventListener("click", () => {
        $("store-from").value = range;
        $("store-to").value = "";
        select();
      });
      quick.append(b);
    }
    const reload = () => {
      const q = new URLSearchParams(location.search);
      q.set("step", $("store-step").value);
      q.set("by", $("store-by").value);
      history.replaceState(null, "", `${location.pathname}?${q}`);
      loadSeries().catch((e) => { $("store-status").textContent = e.message; });
    };
    $("store-step").addEventListener("change", reload);
    $("store-by").addEventListener("change", reload);
    setupBrush();
    window.addEventListener("resize", drawChart);
    try {
      await fillLabels();
      await loadSeries();
    } catch (e) {
      $("store-status").textContent = e.message;
    }
    document.body.dataset.storeReady = "yes";
  }

  return { start, absolute };
})();
