// A flame graph drawn on a canvas from the server's call-path tree
// (/api/flamegraph). Names are only ever drawn as canvas text or written as
// DOM text: a profile's strings never become markup.
"use strict";

const ROW = 18;

class FlameChart {
  // data: {names, parent, name, value, self, base?, total, base_total?}
  constructor(canvas, data, options) {
    this.canvas = canvas;
    this.data = data;
    this.options = options; // {icicle, diff, onHover(node|null, event), onMenu(node, event), format(v)}
    this.zoom = -1;
    this.highlight = null;
    this.layout();
    canvas.addEventListener("mousemove", (e) => this.options.onHover(this.nodeAt(e), e));
    canvas.addEventListener("mouseleave", (e) => this.options.onHover(null, e));
    canvas.addEventListener("click", (e) => {
      const node = this.nodeAt(e);
      this.zoomTo(node === null ? -1 : node);
    });
    canvas.addEventListener("contextmenu", (e) => {
      const node = this.nodeAt(e);
      if (node !== null) {
        e.preventDefault();
        this.options.onMenu(node, e);
      }
    });
    this.resize = () => this.draw();
    window.addEventListener("resize", this.resize);
  }

  detach() {
    window.removeEventListener("resize", this.resize);
  }

  // Each node's depth and offset: children follow their parent in the
  // server's order, laid out left to right from the parent's start.
  layout() {
    const d = this.data, n = d.value.length;
    this.depth = new Int32Array(n);
    this.start = new Float64Array(n);
    const next = new Float64Array(n);
    let rootNext = 0, maxDepth = 0;
    for (let i = 0; i < n; i++) {
      const p = d.parent[i];
      const width = Math.abs(d.value[i]);
      if (p < 0) {
        this.depth[i] = 0;
        this.start[i] = rootNext;
        rootNext += width;
      } else {
        this.depth[i] = this.depth[p] + 1;
        this.start[i] = next[p];
        next[p] += width;
      }
      next[i] = this.start[i];
      if (this.depth[i] > maxDepth) maxDepth = this.depth[i];
    }
    this.width = Math.max(rootNext, 1);
    this.maxDepth = maxDepth;
    this.children = Array.from({ length: n }, () => []);
    this.roots = [];
    for (let i = 0; i < n; i++) (d.parent[i] < 0 ? this.roots : this.children[d.parent[i]]).push(i);
    this.colours = packageColours(d);
  }

  // The packages drawn in colours of their own, heaviest first: [name, colour].
  legend() {
    return this.colours.legend;
  }

  isAncestor(a, b) {
    for (let p = b; p >= 0; p = this.data.parent[p]) if (p === a) return true;
    return false;
  }

  zoomTo(node) {
    this.zoom = node;
    this.draw();
  }

  setHighlight(regex) {
    this.highlight = regex;
    this.draw();
    return this.matchedValue();
  }

  // The value under the highlighted frames, each sample counted once (a
  // match inside a match adds nothing).
  matchedValue() {
    const d = this.data, n = d.value.length;
    if (!this.highlight) return 0;
    const covered = new Uint8Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const p = d.parent[i];
      const inside = p >= 0 && covered[p];
      const hit = this.highlight.test(d.names[d.name[i]]);
      if (hit && !inside) sum += d.value[i];
      covered[i] = inside || hit ? 1 : 0;
    }
    return sum;
  }

  range() {
    if (this.zoom < 0) return [0, this.width];
    return [this.start[this.zoom], Math.max(Math.abs(this.data.value[this.zoom]), 1e-9)];
  }

  // Where node i is drawn, or null when it is off the view.
  box(i, scale, x0, height) {
    const d = this.data;
    let x, w;
    if (this.zoom >= 0 && this.isAncestor(i, this.zoom) && i !== this.zoom) {
      x = 0; w = this.canvas.clientWidth; // an ancestor of the zoomed node spans the view
    } else {
      if (this.zoom >= 0 && !this.isAncestor(this.zoom, i)) return null;
      x = (this.start[i] - x0) * scale;
      w = Math.abs(d.value[i]) * scale;
    }
    if (w < 0.5) return null;
    return { x, y: this.rowY(this.depth[i] + 1, height), w };
  }

  // The top of row `row` (0: the root bar), in either orientation.
  rowY(row, height) {
    return this.options.icicle ? row * ROW : height - (row + 1) * ROW;
  }

  draw() {
    const canvas = this.canvas, d = this.data;
    const ratio = window.devicePixelRatio || 1;
    const cssWidth = canvas.clientWidth || 800;
    const height = (this.maxDepth + 2) * ROW + 2;
    canvas.style.height = height + "px";
    canvas.width = Math.floor(cssWidth * ratio);
    canvas.height = Math.floor(height * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, cssWidth, height);
    g.font = "12px ui-monospace, monospace";
    g.textBaseline = "middle";
    const [x0, span] = this.range();
    const scale = cssWidth / span;
    this.boxes = [];
    this.drawRoot(g, cssWidth, height);
    const maxChange = this.maxChange();
    for (let i = 0; i < d.value.length; i++) {
      const b = this.box(i, scale, x0, height);
      if (b === null) continue;
      this.boxes.push([i, b]);
      const name = d.names[d.name[i]];
      g.fillStyle = this.colour(i, name, maxChange);
      g.fillRect(b.x, b.y, Math.max(b.w - 0.5, 0.5), ROW - 1);
      if (b.w > 24) {
        g.fillStyle = "#111";
        g.fillText(fit(g, name, b.w - 6), b.x + 3, b.y + ROW / 2);
      }
      if (i === this.cursor) {
        g.strokeStyle = "#000";
        g.lineWidth = 2;
        g.strokeRect(b.x + 1, b.y + 1, Math.max(b.w - 2, 1), ROW - 3);
      }
    }
  }

  // The root bar: every sample, the total on it; a click on it unzooms.
  drawRoot(g, width, height) {
    const y = this.rowY(0, height);
    this.rootBox = { x: 0, y, w: width };
    g.fillStyle = "#c9ccd3";
    g.fillRect(0, y, width, ROW - 1);
    g.fillStyle = "#111";
    g.fillText(fit(g, this.options.rootLabel || "root", width - 6), 3, y + ROW / 2);
  }

  // Keyboard moves: "parent", "child" (the heaviest), "prev", "next"
  // (siblings in drawing order). Returns the node the cursor is on.
  moveCursor(direction) {
    const d = this.data;
    const c = this.cursor;
    const siblings = (i) => (d.parent[i] < 0 ? this.roots : this.children[d.parent[i]]);
    const heaviest = (list) => list.reduce((a, b) => (Math.abs(d.value[b]) > Math.abs(d.value[a]) ? b : a), list[0]);
    let next = c;
    if (c === undefined || c === null) next = this.roots.length ? heaviest(this.roots) : null;
    else if (direction === "parent") next = d.parent[c] >= 0 ? d.parent[c] : c;
    else if (direction === "child") next = this.children[c].length ? heaviest(this.children[c]) : c;
    else {
      const list = siblings(c), at = list.indexOf(c);
      const step = direction === "next" ? 1 : -1;
      next = list[Math.min(Math.max(at + step, 0), list.length - 1)];
    }
    this.cursor = next;
    this.draw();
    return next;
  }

  maxChange() {
    const d = this.data;
    if (!d.base || !this.options.diff) return 0;
    let max = 0;
    for (let i = 0; i < d.value.length; i++) max = Math.max(max, Math.abs(d.value[i] - d.base[i]));
    return max;
  }

  colour(i, name, maxChange) {
    const d = this.data;
    if (this.highlight && this.highlight.test(name)) return "#e040fb";
    if (d.base && this.options.diff) {
      const change = d.value[i] - d.base[i];
      if (change === 0 || maxChange === 0) return "#dcdcdc";
      const strength = Math.sqrt(Math.abs(change) / maxChange);
      const light = Math.round(92 - 42 * strength);
      return change > 0 ? `hsl(0, 85%, ${light}%)` : `hsl(130, 60%, ${light}%)`;
    }
    return this.colours.of(packageOf(name));
  }

  nodeAt(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    for (let k = this.boxes.length - 1; k >= 0; k--) {
      const [i, b] = this.boxes[k];
      if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW) return i;
    }
    return null;
  }

  // The frames from the root to node i.
  path(i) {
    const out = [];
    for (let p = i; p >= 0; p = this.data.parent[p]) out.unshift(this.data.names[this.data.name[p]]);
    return out;
  }
}

// The label that fits `width`: the name, else its short form (as pprof
// shortens names in its flame graph), else the short form cut with an
// ellipsis. The tooltip has the name whole.
function fit(g, name, width) {
  if (g.measureText(name).width <= width) return name;
  const text = shortName(name);
  if (g.measureText(text).width <= width) return text;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (g.measureText(text.slice(0, mid) + "…").width <= width) lo = mid; else hi = mid - 1;
  }
  return lo === 0 ? "" : text.slice(0, lo) + "…";
}

// A name without its package path: Go's import path's directories
// (`github.com/x/y/web.(*H).f` → `web.(*H).f`), a Java class's package
// (`java.util.HashMap.get` → `HashMap.get`).
function shortName(name) {
  const call = name.indexOf("(");
  const head = call < 0 ? name : name.slice(0, call);
  const slash = head.lastIndexOf("/");
  if (slash >= 0) return name.slice(slash + 1);
  const java = /^(?:[a-z_][\w$]*\.)+([A-Z][\w$]*\..*)$/.exec(name);
  return java ? java[1] : name;
}

// A frame's package: Go's import path and package, a C++ or Rust namespace,
// a Java class's package.
function packageOf(name) {
  const cut = name.replace(/\(.*$/, "");
  const rust = cut.lastIndexOf("::");
  if (rust > 0) return cut.slice(0, rust);
  const slash = cut.lastIndexOf("/");
  const dot = cut.indexOf(".", slash + 1);
  return dot > 0 ? cut.slice(0, dot) : cut;
}

// Colours by package from a fixed palette: the heaviest packages (by the
// value of their own frames) each take a colour of their own, the one
// their name hashes to or the next free one, so the same package keeps
// its colour across profiles where it can; the rest share lighter tones.
const PALETTE = [
  "#f4a259", "#5b9bd5", "#8cc084", "#e07a9f", "#b39ddb", "#4db6ac",
  "#f2d15c", "#e57373", "#90a4ae", "#c5a880", "#81c7e8", "#aed581",
];

function packageColours(d) {
  const weight = new Map();
  for (let i = 0; i < d.value.length; i++) {
    const p = packageOf(d.names[d.name[i]]);
    weight.set(p, (weight.get(p) || 0) + Math.abs(d.self[i]));
  }
  const heaviest = [...weight.keys()].sort((a, b) => weight.get(b) - weight.get(a) || (a < b ? -1 : 1));
  const taken = new Array(PALETTE.length).fill(null);
  const own = new Map();
  for (const p of heaviest.slice(0, PALETTE.length)) {
    let k = hashString(p) % PALETTE.length;
    while (taken[k] !== null) k = (k + 1) % PALETTE.length;
    taken[k] = p;
    own.set(p, PALETTE[k]);
  }
  return {
    legend: heaviest.filter((p) => own.has(p)).map((p) => [p, own.get(p)]),
    of: (p) => own.get(p) || `hsl(${hashString(p) % 360}, 35%, 82%)`,
  };
}

function hashString(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

window.FlameChart = FlameChart;
