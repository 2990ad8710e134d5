// The message view and editor: the input as a tree opened node by node
// from /api/message/node (a repeated field a page of 100 elements at a
// time), each element summarised on its line, each reference a link to
// what it points at; validation's findings on their rows, search, the
// bytes of the selected field, edits (validated again on the server) and
// save. Every string from the message is written with textContent.
"use strict";

// `$` and `el` are app.js's, called once both are loaded.
const messageView = (() => {
  const PAGE = 100;
  const state = { meta: null, findings: [], selected: null, actions: 0 };

  async function call(address, body) {
    const init = body === undefined ? {} : {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    };
    const response = await fetch(address, init);
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || response.statusText);
    return answer;
  }

  const node = (path, offset) =>
    call(`/api/message/node?path=${encodeURIComponent(path)}&offset=${offset || 0}`);

  // Each step of a path as the rows it passes: `sample[3].value` is
  // `sample`, `sample[3]`, `sample[3].value`.
  function rowsAlong(path) {
    const rows = [];
    let prefix = "";
    for (const step of path.split(".")) {
      const m = /^([^[\]]+)(?:\[(\d+)\])?$/.exec(step);
      if (!m) break;
      const field = prefix ? `${prefix}.${m[1]}` : m[1];
      rows.push({ path: field });
      prefix = field;
      if (m[2] !== undefined) {
        prefix = `${field}[${m[2]}]`;
        rows.push({ path: prefix, index: Number(m[2]) });
      }
    }
    return rows;
  }

  function findingsUnder(path) {
    return state.findings.filter((f) => f.path === path || f.path.startsWith(path + ".") || f.path.startsWith(path + "["));
  }

  function rowOf(path) {
    return [...document.querySelectorAll("#message-tree .mrow")].find((r) => r.dataset.path === path);
  }

  function done() {
    state.actions += 1;
    document.body.dataset.messageActions = String(state.actions);
  }

  function lineRow(line) {
    const row = el("div", undefined, `mrow ${line.kind}`);
    row.dataset.path = line.path;
    row.dataset.kind = line.kind;
    row.append(el("span", line.opens ? "▸" : "", "toggle"));
    row.append(el("span", line.name, "name"));
    if (line.kind === "repeated" || line.kind === "map") row.append(el("span", `(${line.count})`, "count"));
    if (line.text) row.append(el("span", line.text, "text"));
    if (line.points_to) {
      const link = el("a", `→ ${line.points_to.path} ${line.points_to.label}`, "ref");
      link.href = "#";
      link.dataset.target = line.points_to.path;
      link.addEventListener("click", (e) => {
        e.preventDefault();
        e.stopPropagation();
        reveal(line.points_to.path).then(done, (err) => showError(err.message));
      });
      row.append(link);
    }
    row.title = [line.path, line.type, line.text, line.points_to ? `→ ${line.points_to.label}` : ""].filter(Boolean).join("\n");
    if (findingsUnder(line.path).length) row.classList.add("flagged");
    const children = el("div", undefined, "children");
    children.hidden = true;
    row.addEventListener("click", () => {
      const opened = line.opens ? toggle(row, children) : null;
      Promise.all([select(line), opened]).then(done, (err) => { showError(err.message); done(); });
    });
    return [row, children];
  }

  // Fills `children` with the node at `path` from `offset` (a repeated
  // field's window: the page holding `offset`, with more after it).
  async function fill(children, path, offset) {
    const answer = await node(path, offset);
    children.replaceChildren();
    children.dataset.offset = String(answer.offset);
    if (answer.offset > 0) {
      const first = el("button", `↑ elements 0–${answer.offset - 1}`, "more");
      first.addEventListener("click", () => fill(children, path, Math.max(0, answer.offset - PAGE)).then(done));
      children.append(first);
    }
    appendLines(children, answer);
    addMore(children, path, answer);
  }

  function appendLines(children, answer) {
    for (const line of answer.children) {
      const [row, sub] = lineRow(line);
      children.append(row, sub);
    }
  }

  function addMore(children, path, answer) {
    const shown = answer.offset + answer.children.length;
    if (answer.kind !== "repeated" || shown >= answer.count) return;
    const more = el("button", `more (${shown} of ${answer.count} shown)`, "more");
    more.addEventListener("click", async () => {
      const next = await node(path, shown);
      more.remove();
      appendLines(children, next);
      addMore(children, path, next);
      done();
    });
    children.append(more);
  }

  async function toggle(row, children, open) {
    const opening = open === undefined ? children.hidden : open;
    if (opening && !children.dataset.offset) await fill(children, row.dataset.path, 0);
    children.hidden = !opening;
    row.querySelector(".toggle").textContent = opening ? "▾" : "▸";
  }

  // Opens every row on the way to `path` and marks its row.
  async function reveal(path) {
    for (const step of rowsAlong(path)) {
      let row = rowOf(step.path);
      if (!row && step.index !== undefined) {
        // Not on the loaded page of its repeated field: load the page.
        const parent = rowOf(step.path.replace(/\[\d+\]$/, ""));
        if (!parent) break;
        await fill(parent.nextSibling, parent.dataset.path, Math.floor(step.index / PAGE) * PAGE);
        row = rowOf(step.path);
      }
      if (!row) break;
      if (step.path !== path && row.dataset.kind !== "scalar") await toggle(row, row.nextSibling, true);
    }
    const target = rowOf(path) || rowOf(rowsAlong(path).map((s) => s.path).filter(rowOf).pop());
    document.querySelectorAll("#message-tree .current").forEach((e) => e.classList.remove("current"));
    if (!target) return;
    target.classList.add("current");
    target.scrollIntoView({ block: "center" });
    await select({ path: target.dataset.path, kind: target.dataset.kind });
  }

  // The detail pane: the field's findings, its editor and its bytes.
  async function select(line) {
    state.selected = line;
    document.querySelectorAll("#message-tree .current").forEach((e) => e.classList.remove("current"));
    const row = rowOf(line.path);
    if (row) row.classList.add("current");
    $("message-detail").hidden = false;
    $("detail-path").textContent = line.path;
    $("detail-type").textContent = row ? row.title.split("\n")[1] || "" : "";
    $("detail-findings").replaceChildren(...findingsUnder(line.path).map((f) =>
      el("div", `${f.severity} ${f.rule} at ${f.path}: ${f.message}`, `finding ${f.severity}`)));
    editor(line, row);
    try {
      const bytes = await call(`/api/message/bytes?path=${encodeURIComponent(line.path)}`);
      $("detail-bytes-caption").textContent = `bytes ${bytes.offset}–${bytes.offset + bytes.length} of the binary encoding (${bytes.length} bytes)`;
      $("detail-bytes").textContent = bytes.hex + (bytes.length > 4096 ? " …" : "");
    } catch (e) {
      $("detail-bytes-caption").textContent = e.message;
      $("detail-bytes").textContent = "";
    }
  }

  function editor(line, row) {
    const box = $("detail-edit");
    box.replaceChildren();
    const isElement = /\]$/.test(line.path);
    const input = el("input");
    input.id = "edit-value";
    const button = (text, id, action) => {
      const b = el("button", text);
      b.id = id;
      b.addEventListener("click", () => action().then(done, (e) => { $("message-status").textContent = e.message; done(); }));
      box.append(b);
    };
    if (line.kind === "scalar" || line.kind === "unset") {
      const text = row ? row.querySelector(".text") : null;
      input.value = text ? text.textContent.replace(/^"(.*)"$/, "$1") : "";
      box.append(input);
      button("Set", "edit-set", () => edit({ op: "set", path: line.path, value: input.value }));
    }
    if (line.kind === "repeated") {
      box.append(input);
      input.placeholder = "value (for a scalar element)";
      button("Add element", "edit-add", () => edit({ op: "add", path: line.path, value: input.value }));
    }
    if (isElement) button("Remove element", "edit-remove", () => edit({ op: "remove", path: line.path }));
  }

  async function edit(change) {
    const answer = await call("/api/message/edit", change);
    state.findings = answer.findings;
    $("message-status").textContent = `${answer.edits} edits, not saved`;
    await drawRoot();
    showFindings();
    const left = change.op === "remove" ? change.path.replace(/\[\d+\]$/, "") : answer.changed;
    await reveal(left);
  }

  async function save() {
    const answer = await call("/api/message/save", { file: $("save-name").value, overwrite: $("save-overwrite").checked });
    const findings = answer.findings ? `${answer.findings} findings` : "valid";
    $("message-status").textContent = `wrote ${answer.written} (${answer.bytes} bytes, ${findings})`;
  }

  async function search() {
    const query = $("message-search").value.trim();
    const hits = $("search-hits");
    hits.hidden = !query;
    if (!query) return;
    const answer = await call(`/api/message/search?q=${encodeURIComponent(query)}`);
    hits.replaceChildren(el("div", `${answer.hits.length}${answer.stopped ? "+" : ""} matches`));
    for (const hit of answer.hits) {
      const row = el("div", `${hit.path}: ${hit.text}`, "hit");
      row.addEventListener("click", () => reveal(hit.path).then(done));
      hits.append(row);
    }
  }

  function showFindings() {
    const box = $("findings");
    box.replaceChildren(el("p", state.findings.length
      ? `Validation: ${state.findings.length} findings (click one to see where)`
      : "Validation found nothing wrong."));
    for (const f of state.findings) {
      const row = el("div", `${f.severity} ${f.rule} at ${f.path}: ${f.message}`, `finding ${f.severity}`);
      row.addEventListener("click", () => reveal(f.path).then(done, (e) => showError(e.message)));
      box.append(row);
    }
  }

  async function drawRoot() {
    const tree = $("message-tree");
    const root = await node("", 0);
    tree.replaceChildren();
    appendLines(tree, root);
  }

  let wired = false;
  async function render() {
    if (!page.meta.message) {
      $("message-tree").replaceChildren(el("p", "This server shows no message: serve one file to view and edit it."));
      return;
    }
    state.meta = await call("/api/message/meta");
    state.findings = state.meta.findings;
    if (!wired) {
      wired = true;
      $("save-name").value = state.meta.save_as;
      $("save").addEventListener("click", () => save().then(done, (e) => { $("message-status").textContent = e.message; done(); }));
      $("message-search").addEventListener("keydown", (e) => {
        if (e.key === "Enter") search().then(done, (err) => showError(err.message));
      });
    }
    $("message-status").textContent = `${state.meta.type}${state.meta.edits ? `, ${state.meta.edits} edits, not saved` : ""}`;
    showFindings();
    await drawRoot();
  }

  return { render, reveal, state };
})();
