// Line-based proxy to one mobile-mcp server over MCP stdio, for benches/peers.rs (outside
// cargo test and CI). Reads JSON lines {"tool": NAME, "args": {...}} on stdin; answers one JSON
// line per call: {"ms": round trip in ms, "ok": bool, "mime": image mime or null,
// "bytes": decoded image bytes (0 without an image), "text": first text content (cut)}.
// The server is `node node_modules/@mobilenext/mobile-mcp/lib/index.js` with this process's
// environment (MOBILEMCP_LEGACY_ROBOT=1 selects its legacy adb robot).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(here, "node_modules/@mobilenext/mobile-mcp/lib/index.js")],
  env: { ...process.env, MOBILEMCP_DISABLE_TELEMETRY: "1" },
  stderr: "ignore",
});
const client = new Client({ name: "xagent-peers-bench", version: "0.1.0" });
await client.connect(transport);
process.stdout.write(JSON.stringify({ ready: true }) + "\n");

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  const { tool, args } = JSON.parse(line);
  const t = process.hrtime.bigint();
  let out;
  try {
    const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120000 });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    const img = (r.content || []).find((c) => c.type === "image");
    const txt = (r.content || []).find((c) => c.type === "text");
    out = {
      ms,
      // mobile-mcp answers some failures as plain text ("Error: Device … not found") without
      // isError: those are errors too.
      ok: !r.isError && !(txt && /^Error\b/.test(txt.text)),
      mime: img ? img.mimeType : null,
      bytes: img ? Buffer.from(img.data, "base64").length : 0,
      text: txt ? txt.text.slice(0, 200) : "",
    };
  } catch (e) {
    out = { ms: Number(process.hrtime.bigint() - t) / 1e6, ok: false, mime: null, bytes: 0, text: String(e).slice(0, 200) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
await client.close();
