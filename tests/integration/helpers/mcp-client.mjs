// A small MCP client on the official TypeScript SDKs, for mcp.sh: the
// 2025-11-25 era through @modelcontextprotocol/sdk (v1), the 2026-07-28
// era through @modelcontextprotocol/client (v2, pinned to that version).
//
//   node mcp-client.mjs v1|v2 STEPS -- SERVER [ARG...]
//
// STEPS is a JSON array run in order on one connection; each step prints
// one JSON line:
//   {"list": true}                          -> {"tools": [names], "era", "version"}
//   {"name": N, "arguments": {...}}         -> {"isError", "text"} (a tool call)
//     with "progress": true                 -> ... "progress": [messages]
//     with "cancelAfter": MS                -> {"cancelled": true, "ms"} (aborted)
//   {"raw": METHOD, "params": {...}}        -> {"result"} or {"error": {code, message}}
// A step that throws prints {"error": {...}}. The server gets this
// process's whole environment.
const [sdk, stepsText, sep, ...server] = process.argv.slice(2);
if (!['v1', 'v2'].includes(sdk) || sep !== '--' || server.length === 0) {
  process.stderr.write('usage: mcp-client.mjs v1|v2 STEPS -- SERVER [ARG...]\n');
  process.exit(2);
}
const steps = JSON.parse(stepsText);
const { z } = await import('zod');
const anyResult = z.object({}).passthrough();

async function connect() {
  const env = { ...process.env };
  if (sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'umwelt-test-v1', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StdioClientTransport({ command: server[0], args: server.slice(1), env }));
    return { client, era: 'legacy', version: '2025-11-25' };
  }
  const { Client } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
  const client = new Client({ name: 'umwelt-test-v2', version: '2.0.0' }, {
    capabilities: {},
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  });
  await client.connect(new StdioClientTransport({ command: server[0], args: server.slice(1), env }));
  return { client, era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() };
}

// v1's callTool takes a result schema before its options; v2's does not.
const call = (c, req, opts) =>
  sdk === 'v1' ? c.client.callTool(req, undefined, opts) : c.client.callTool(req, opts);
const text = (r) => (r.content || []).map((c) => c.text ?? '').join('');
const errorOf = (e) => ({ code: e?.code, message: e?.message });

async function step(c, s) {
  const opts = { timeout: 120000 };
  if (s.list) {
    const r = await c.client.listTools({}, opts);
    return { tools: r.tools.map((t) => t.name), era: c.era, version: c.version, schemas: r.tools };
  }
  if (s.raw) {
    try {
      return { result: await c.client.request({ method: s.raw, params: s.params ?? {} }, anyResult, opts) };
    } catch (e) {
      return { error: errorOf(e) };
    }
  }
  const req = { name: s.name, arguments: s.arguments ?? {} };
  if (s.cancelAfter !== undefined) {
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(new Error('cancelled by the test')), s.cancelAfter);
    try {
      const r = await call(c, req, { ...opts, signal: ac.signal });
      return { cancelled: false, isError: !!r.isError, text: text(r) };
    } catch (e) {
      return { cancelled: ac.signal.aborted, ms: Date.now() - t0 };
    }
  }
  const progress = [];
  if (s.progress) {
    opts.onprogress = (p) => progress.push(p.message ?? String(p.progress));
    opts.resetTimeoutOnProgress = true;
  }
  const r = await call(c, req, opts);
  const out = { isError: !!r.isError, text: text(r) };
  if (s.progress) out.progress = progress;
  return out;
}

let code = 0;
let c;
try {
  c = await connect();
  for (const s of steps) {
    let out;
    try {
      out = await step(c, s);
    } catch (e) {
      out = { error: errorOf(e) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
} catch (e) {
  process.stdout.write(JSON.stringify({ error: errorOf(e) }) + '\n');
  code = 1;
} finally {
  await c?.client.close().catch(() => {});
}
process.exit(code);
