import * as http from "node:http";
import { startHostd, previewSamples } from "/work/main/integrations/pi/harness.mjs";
const hostd = await startHostd(previewSamples());
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(hostd.url + path, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      const chunks = []; res.on("data", (c) => chunks.push(c)); res.on("end", () => resolve(Buffer.concat(chunks).toString()));
    });
    req.on("error", reject); req.end(body);
  });
}
const body = JSON.stringify({ call: { id: "c", name: "bash", arguments: { command: "ls -la" } }, acceptArguments: true });
const ds = [];
for (let i = 0; i < 6000; i++) {
  const t0 = process.hrtime.bigint();
  await post("/v1/before", body);
  if (i >= 1000) ds.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
ds.sort((a, b) => a - b);
const q = (x) => ds[Math.floor(x * ds.length)].toFixed(3);
console.log(`raw node->hostd /v1/before: p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${ds.at(-1).toFixed(3)}`);
await hostd.cleanup();
