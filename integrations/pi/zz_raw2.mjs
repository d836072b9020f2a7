import * as net from "node:net";
import { startHostd, previewSamples } from "/work/main/integrations/pi/harness.mjs";
const hostd = await startHostd(previewSamples());
const u = new URL(hostd.url);
const sock = net.connect({ host: u.hostname, port: Number(u.port), noDelay: true });
await new Promise((r) => sock.once("connect", r));
let buf = Buffer.alloc(0); let waiter;
sock.on("data", (d) => { buf = Buffer.concat([buf, d]); tryParse(); });
function tryParse() {
  const i = buf.indexOf("\r\n\r\n"); if (i < 0 || !waiter) return;
  const head = buf.subarray(0, i).toString(); const m = /content-length: (\d+)/i.exec(head); const n = m ? Number(m[1]) : 0;
  if (buf.length < i + 4 + n) return;
  const body = buf.subarray(i + 4, i + 4 + n).toString(); buf = buf.subarray(i + 4 + n); const w = waiter; waiter = undefined; w(body);
}
function post(path, body) {
  return new Promise((resolve) => { waiter = resolve; sock.write(`POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`); tryParse(); });
}
const body = JSON.stringify({ call: { id: "c", name: "bash", arguments: { command: "ls -la" } }, acceptArguments: true });
const ds = [];
for (let i = 0; i < 6000; i++) { const t0 = process.hrtime.bigint(); const r = await post("/v1/before", body); if (i === 0) console.log(r.slice(0, 60)); if (i >= 1000) ds.push(Number(process.hrtime.bigint() - t0) / 1e6); }
ds.sort((a, b) => a - b); const q = (x) => ds[Math.floor(x * ds.length)].toFixed(3);
console.log(`raw socket node->hostd /v1/before: p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${ds.at(-1).toFixed(3)}`);
sock.destroy(); await hostd.cleanup();
