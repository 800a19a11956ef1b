// The gfxrt page (docs/browser.md, "The page"): starts Pyodide, loads lark and gfxrt's sources
// from this site, and runs the editor's program with runner.py (as module page_runner). What the
// program passes to show(x) arrives in draw(): an image or a line plot on a canvas. Every file is
// fetched relative to this page, so the folder works under any path of any static host.
"use strict";

const $ = id => document.getElementById(id);
const url = path => new URL(path, document.baseURI).href;
const LIB = "/home/pyodide/lib";  // where gfxrt's sources and the runner live in Pyodide's file system

// window.page: the page's state and actions (the Run button, the dropdown; tests drive them too)
const page = window.page = {ready: null, run, select, lastRun: null, examples: []};
let pyodide = null;
let busy = false;
let current = null;          // the example in the editor
const edits = {};            // the visitor's edits of each example, kept while the page is open
let shown = [];              // the views of the run in progress

function status(text) { $("status").textContent = text; }

function out(text, cls) {
  const span = document.createElement("span");
  if (cls) span.className = cls;
  span.textContent = text + "\n";
  $("output").append(span);
  $("output").scrollTop = $("output").scrollHeight;
}

async function get(path) {
  const r = await fetch(url(path));
  if (!r.ok) throw new Error(`could not load ${path}: HTTP ${r.status}`);
  return r;
}

// -- views: show(x) from the program -------------------------------------------------------------
const byte = v => Math.round(Math.min(1, Math.max(0, v)) * 255);  // NaN -> 0

function drawImage(canvas, shape, v) {
  // Taichi's gui.set_image: x[i, j] is the pixel i from the left, j from the bottom
  const [w, h] = shape, c = shape.length === 3 ? shape[2] : 1;
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  for (let i = 0; i < w; i++) {
    for (let j = 0; j < h; j++) {
      const src = (i * h + j) * c, dst = ((h - 1 - j) * w + i) * 4;
      for (let k = 0; k < 3; k++) img.data[dst + k] = byte(v[src + (c === 1 ? 0 : k)]);
      img.data[dst + 3] = c === 4 ? byte(v[src + 3]) : 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  if (w < 256) canvas.style.width = `${w * Math.ceil(256 / w)}px`;  // small images: whole pixels, bigger
}

function drawPlot(canvas, v) {
  const W = 480, H = 240, L = 64, R = 12, T = 12, B = 24;
  canvas.width = W;
  canvas.height = H;
  const ctx = canvas.getContext("2d");
  const finite = Array.from(v).filter(Number.isFinite);
  let lo = finite.length ? Math.min(...finite) : 0, hi = finite.length ? Math.max(...finite) : 1;
  if (lo === hi) { lo -= 1; hi += 1; }
  const n = v.length;
  const x = i => L + (n > 1 ? i / (n - 1) : 0.5) * (W - L - R);
  const y = val => T + (hi - val) / (hi - lo) * (H - T - B);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, W, H);
  ctx.strokeStyle = "#999";
  ctx.strokeRect(L, T, W - L - R, H - T - B);
  ctx.fillStyle = "#333";
  ctx.font = "11px sans-serif";
  ctx.textAlign = "right";
  ctx.fillText(hi.toPrecision(3), L - 4, T + 8);
  ctx.fillText(lo.toPrecision(3), L - 4, H - B);
  ctx.textAlign = "center";
  ctx.fillText("0", x(0), H - 8);
  if (n > 1) ctx.fillText(String(n - 1), x(n - 1), H - 8);
  ctx.strokeStyle = "#1f6feb";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(v[i])) { pen = false; continue; }   // a gap where the value is NaN / inf
    if (pen) ctx.lineTo(x(i), y(v[i])); else ctx.moveTo(x(i), y(v[i]));
    pen = true;
  }
  if (n === 1) ctx.arc(x(0), y(v[0]), 3, 0, 2 * Math.PI);
  ctx.stroke();
}

// called from Python (runner.py's show): the arguments are Python objects, valid during the call.
// A view is named by its title: showing under an earlier view's title redraws it (a loop animates).
function draw(kind, shapeProxy, dataProxy, title) {
  const shape = shapeProxy.toJs();
  const buf = dataProxy.getBuffer("f32");
  const data = new Float32Array(buf.data);  // a copy: the buffer is released below
  buf.release();
  const at = shown.findIndex(v => v.title === title);
  let canvas;
  if (at >= 0) {
    canvas = $("views").children[at].querySelector("canvas");
    canvas.style.width = "";
  } else {
    const figure = document.createElement("figure");
    canvas = document.createElement("canvas");
    figure.append(canvas);
    if (title) {
      const caption = document.createElement("figcaption");
      caption.textContent = title;
      figure.append(caption);
    }
    $("views").append(figure);
  }
  canvas.dataset.kind = kind;
  if (kind === "image") drawImage(canvas, shape, data); else drawPlot(canvas, data);
  const view = {kind, shape, title, data, count: at >= 0 ? shown[at].count + 1 : 1};
  if (at >= 0) shown[at] = view; else shown.push(view);
}

// -- running the editor's program ------------------------------------------------------------------
async function run() {
  if (busy || !pyodide) return null;
  busy = true;
  $("run").disabled = true;
  $("output").textContent = "";
  $("views").textContent = "";
  shown = [];
  status("running…");
  const t0 = performance.now();
  let ok = false;
  const ns = pyodide.globals.get("dict")();
  try {
    ns.set("SOURCE", $("code").value);
    ns.set("SINK", draw);
    // runPythonAsync: gfxrt's waits (pyodide.ffi.run_sync) suspend only inside it (JSPI)
    ok = await pyodide.runPythonAsync("import page_runner\npage_runner.run(SOURCE, SINK)", {globals: ns});
  } catch (e) {
    out(String(e), "err");  // the runner reports the program's own errors: this is the page's
  } finally {
    ns.destroy();
  }
  const seconds = (performance.now() - t0) / 1000;
  page.lastRun = {ok, seconds, output: $("output").textContent, views: shown};
  status(`${ok ? "ran" : "failed"} in ${seconds.toFixed(2)} s`);
  busy = false;
  $("run").disabled = false;
  return page.lastRun;
}

async function select(name) {
  const example = page.examples.find(e => e.name === name);
  if (!example) throw new Error(`no example ${name}`);
  if (current) edits[current] = $("code").value;
  $("code").value = edits[name] ?? await (await get(example.file)).text();
  $("example").value = current = name;
  where();
}

// -- the editor: Tab indents, Ctrl+Enter runs, the cursor's line and column below it ----------------
function where() {
  const code = $("code"), before = code.value.slice(0, code.selectionStart).split("\n");
  $("where").textContent = `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

$("code").addEventListener("keydown", e => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
  } else if (e.key === "Tab" && !e.shiftKey) {
    e.preventDefault();
    if (!document.execCommand("insertText", false, "    ")) $("code").setRangeText("    ", $("code").selectionStart, $("code").selectionEnd, "end");
  }
});
for (const ev of ["keyup", "click", "input"]) $("code").addEventListener(ev, where);
$("run").addEventListener("click", () => run());
$("example").addEventListener("change", e => select(e.target.value));

// -- start: Pyodide, lark, gfxrt, the examples --------------------------------------------------------
async function boot() {
  if (!navigator.gpu) out("This browser offers no WebGPU (navigator.gpu): programs will fail at gr.init(). " +
                          "WebGPU needs a secure context (https, or http://localhost).", "err");
  if (typeof WebAssembly.Suspending !== "function") out("This browser lacks WebAssembly stack switching (JSPI; " +
                          "Chrome 137+): gfxrt cannot wait for the GPU here.", "err");
  status("loading Python (Pyodide)…");
  pyodide = await loadPyodide({indexURL: url("pyodide/"), stdout: s => out(s), stderr: s => out(s, "err")});
  const manifest = await (await get("manifest.json")).json();
  for (const wheel of manifest.wheels) await pyodide.loadPackage(url(wheel), {messageCallback: () => {}});
  status("loading gfxrt…");
  pyodide.unpackArchive(await (await get("gfxrt.zip")).arrayBuffer(), "zip", {extractDir: LIB});
  pyodide.FS.writeFile(`${LIB}/page_runner.py`, await (await get("runner.py")).text());
  await pyodide.runPythonAsync(`import sys\nsys.path.insert(0, "${LIB}")\nimport page_runner, gfxrt`);
  page.examples = manifest.examples;
  for (const e of manifest.examples) $("example").append(new Option(e.label, e.name));
  const wanted = new URLSearchParams(location.search).get("example");
  await select(manifest.examples.some(e => e.name === wanted) ? wanted : manifest.examples[0].name);
  $("run").disabled = false;
  status("ready: Run (Ctrl+Enter) runs the program on this browser's GPU");
}

page.ready = boot().catch(e => {
  status("failed to load");
  out(String(e && e.stack || e), "err");
  throw e;
});
