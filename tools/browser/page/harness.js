// The harness page's loop: start Pyodide once, load lark and gfxrt's sources from this server, then
// run the Python jobs the server hands out (GET /job, long poll) and post each result (POST /result).
"use strict";

async function post(path, body) {
  await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
}

async function main() {
  const t0 = performance.now();
  const pyodide = await loadPyodide({indexURL: "/pyodide/"});
  const info = await (await fetch("/info")).json();
  for (const wheel of info.wheels) await pyodide.loadPackage(wheel);
  const src = await (await fetch("/src.zip")).arrayBuffer();
  pyodide.unpackArchive(src, "zip", {extractDir: "/home/pyodide/src"});
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/src')");
  await post("/ready", {seconds: (performance.now() - t0) / 1000, python: pyodide.version,
                        webgpu: !!navigator.gpu});
  for (;;) {
    const r = await fetch("/job");
    if (r.status === 204) continue;          // no job yet: poll again
    const job = await r.json();
    if (job.stop) break;
    let out;
    try {
      const ns = pyodide.globals.get("dict")();
      const value = await pyodide.runPythonAsync(job.code + "\nimport json as _j\n_j.dumps(result)", {globals: ns});
      out = {id: job.id, ok: true, value: value};
      ns.destroy();
    } catch (e) {
      out = {id: job.id, ok: false, error: String(e)};
    }
    await post("/result", out);
  }
}

main().catch(e => post("/ready", {error: String(e && e.stack || e)}));
