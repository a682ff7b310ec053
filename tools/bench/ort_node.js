// ONNX Runtime's CPU build from npm (onnxruntime-node) timing one model, for cpu_vs_ort.py where
// Python's onnxruntime is not installed. Inputs as lockstep's `--seed-inputs vits`:
// z_p[b,c,t] = 0.5 sin(2 pi (3c + t) / 128), masks 1; a symbolic dim takes T.
// Usage: NODE_PATH=DIR/node_modules node ort_node.js MODEL THREADS RUNS [T]   (0 threads: ORT's default)
// Prints the median ms of RUNS runs after 3 warm-up runs, and the version.
const ort = require("onnxruntime-node");

function seedInputs(session, T) {
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata.find((m) => m.name === name);
    const shape = meta.shape.map((d) => (typeof d === "number" ? d : T));
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (name.includes("mask")) data.fill(1);
    else
      for (let i = 0; i < n; ++i) {
        const t = i % shape[2], c = Math.floor(i / shape[2]) % shape[1];
        data[i] = Math.fround(0.5 * Math.sin((2 * Math.PI * (3 * c + t)) / 128));
      }
    feeds[name] = new ort.Tensor("float32", data, shape);
  }
  return feeds;
}

async function main() {
  const [model, threads, runs, T] = process.argv.slice(2);
  const options = { executionProviders: ["cpu"], interOpNumThreads: 1, executionMode: "sequential" };
  if (Number(threads) > 0) options.intraOpNumThreads = Number(threads);
  const session = await ort.InferenceSession.create(model, options);
  const feeds = seedInputs(session, Number(T || 1024));
  for (let i = 0; i < 3; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < Number(runs); ++i) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const mid = ms.length >> 1;
  const median = ms.length % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
  console.log(JSON.stringify({ median_ms: median, version: ort.env.versions ? ort.env.versions.common : "" }));
}

main().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
