// A real MCP client, the official TypeScript SDK, against the datanotes binary:
// over stdio (`datanotes mcp --vault DIR`), over streamable HTTP (serve's /mcp
// with the bearer token), and over stdio again while a serve holds the vault
// (`datanotes mcp` then forwards each tool call to it). It lists the tools (every
// operation of `datanotes ops` with its annotations), reads rows, checks that a
// refused write is an error result that changed nothing, that writes are
// journaled as "<credential>/<client>" and that each tool call is a tool_call
// event of the change feed. Run by `npm test` (after cargo test has built
// target/debug/datanotes); DATANOTES_BIN names another binary.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { spawn, spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CALLS } from "./mcp_every_tool.mjs";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const bin = process.env.DATANOTES_BIN || path.join(root, "target/debug/datanotes");
const CLIENT = "datanotes-mcp-test";
// The journal's `by` of an MCP write: the credential, then the client's name.
const ACTOR = `owner/${CLIENT}`;
const CHARADE = "datanotes/main/public/film/Charade.md";

let passed = 0;
let failed = 0;
const cleanups = [];

async function test(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n     ${String(e?.stack || e).split("\n").join("\n     ")}`);
  }
}

function finish() {
  for (const c of cleanups.reverse()) {
    try {
      c();
    } catch {}
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

// Nothing here should take long: stop rather than hang.
setTimeout(() => {
  failed++;
  console.log("FAIL the MCP client tests took more than 180 s");
  finish();
}, 180_000).unref();

function vault() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "datanotes-mcp-"));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const r = spawnSync(bin, ["init", "--vault", dir, "--example", "films"], { encoding: "utf8" });
  assert.equal(r.status, 0, `init failed: ${r.stderr}`);
  return dir;
}

function json(result) {
  assert.equal(result.content?.[0]?.type, "text");
  return JSON.parse(result.content[0].text);
}

async function checkTools(client, ops) {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  assert.equal(tools.length, ops.length, "one tool per operation");
  for (const op of ops) {
    const t = byName.get(op.name);
    assert.ok(t, `tool ${op.name} is listed`);
    assert.equal(t.title, op.title, `${op.name}: title`);
    assert.equal(t.description, op.description, `${op.name}: description`);
    assert.deepEqual(t.inputSchema, op.inputSchema, `${op.name}: inputSchema`);
    assert.deepEqual(t.outputSchema, op.outputSchema, `${op.name}: outputSchema`);
    assert.equal(t.annotations?.readOnlyHint, op.readOnly, `${op.name}: readOnlyHint`);
    assert.equal(t.annotations?.destructiveHint, op.destructive, `${op.name}: destructiveHint`);
    assert.equal(t.annotations?.idempotentHint, op.readOnly, `${op.name}: idempotentHint`);
  }
}

async function checkCalls(client, dir, label) {
  await test(`${label}: select_rows answers rows`, async () => {
    const r = await client.callTool({ name: "select_rows", arguments: { table: "film", columns: ["title", "year"], order_by: "year", limit: 3 } });
    assert.ok(!r.isError, `not an error: ${r.content?.[0]?.text}`);
    const a = json(r);
    assert.equal(a.rows.length, 3);
    assert.equal(a.total, 7);
    assert.ok(a.rows.every((row) => typeof row.title === "string" && typeof row.path === "string"));
    assert.deepEqual(r.structuredContent, a, "structuredContent is the answer");
  });

  await test(`${label}: a refused update_row is an error result and changes nothing`, async () => {
    const before = fs.readFileSync(path.join(dir, CHARADE), "utf8");
    const r = await client.callTool({ name: "update_row", arguments: { table: "film", path: CHARADE, set: { rating: 9 } } });
    assert.equal(r.isError, true);
    const text = r.content[0].text;
    assert.match(text, /update_row refused/);
    assert.match(text, /rating_range/);
    assert.match(text, /Hint: /);
    assert.equal(fs.readFileSync(path.join(dir, CHARADE), "utf8"), before);
  });

  await test(`${label}: bad arguments are an error result`, async () => {
    const r = await client.callTool({ name: "select_rows", arguments: { table: "film", limt: 3 } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /unknown argument "limt"/);
  });

  await test(`${label}: an unknown tool is a JSON-RPC error naming the tool meant`, async () => {
    await assert.rejects(
      () => client.callTool({ name: "select_row", arguments: { table: "film" } }),
      (e) => e.code === -32602 && /unknown tool "select_row"/.test(e.message) && /select_rows/.test(e.message) && /tools\/list/.test(e.message),
    );
  });

  await test(`${label}: a write is journaled with the client's name`, async () => {
    const r = await client.callTool({ name: "update_row", arguments: { table: "film", path: CHARADE, set: { rating: 4 } } });
    assert.ok(!r.isError, `not an error: ${r.content?.[0]?.text}`);
    assert.match(fs.readFileSync(path.join(dir, CHARADE), "utf8"), /^rating: 4$/m);
    const m = json(await client.callTool({ name: "list_migrations", arguments: { limit: 1 } }));
    assert.equal(m.migrations[0].op, "update_row");
    assert.equal(m.migrations[0].by, ACTOR);
  });

  await test(`${label}: each tool call is a tool_call event of the feed`, async () => {
    const feed = json(await client.callTool({ name: "list_changes", arguments: { kinds: ["tool_call"], limit: 5000 } }));
    const calls = feed.events.filter((e) => e.kind === "tool_call");
    const refused = calls.find((e) => e.call.tool === "update_row" && e.call.ok === false);
    assert.ok(refused, `a refused update_row is recorded: ${JSON.stringify(calls.map((e) => e.call.tool))}`);
    assert.match(String(refused.call.value), /update_row refused/);
    const write = calls.find((e) => e.call.tool === "update_row" && e.call.ok === true);
    assert.ok(write);
    assert.equal(write.call.served_by, "engine");
    assert.equal(typeof write.call.duration_ms, "number");
    assert.equal(write.call.args.table, "film");
    assert.equal(write.call.args.path, CHARADE);
    assert.equal(write.actor.credential, "owner");
    assert.equal(write.actor.client, CLIENT);
    assert.ok(write.actor.session, "the MCP session is named");
  });
}

// Every tool once (and some refused) on the film diary: each structuredContent
// validates against its tool's outputSchema, with the SDK's own validator (the
// client validated it too before answering), refusals included.
async function checkEveryTool(client, label, openapi) {
  const { tools } = await client.listTools();
  const schemas = new Map(tools.map((t) => [t.name, t.outputSchema]));
  const validator = new AjvJsonSchemaValidator();
  await test(`${label}: a wrong answer fails its tool's outputSchema`, async () => {
    const check = validator.getValidator(schemas.get("select_rows"));
    assert.equal(check({ table: "main.public.film", total: "7", rows: [] }).valid, false);
    assert.equal(check({ ok: false, op: "select_rows" }).valid, false, "a refusal names its error");
    assert.equal(check({ ok: false, op: "select_rows", error: "no" }).valid, true);
  });
  const ctx = {};
  const called = new Set();
  for (const c of CALLS) {
    const what = c.refused ? "refused" : "answered";
    await test(`${label}: ${c.op} ${what}, of its outputSchema`, async () => {
      const r = await client.callTool({ name: c.op, arguments: c.args(ctx) });
      if (c.refused) assert.equal(r.isError, true, `${c.op} is refused: ${r.content?.[0]?.text}`);
      else if (!c.maybeRefused) assert.ok(!r.isError, `${c.op} is done: ${r.content?.[0]?.text}`);
      const body = r.structuredContent;
      assert.ok(body && typeof body === "object", "structuredContent is an object");
      const v = validator.getValidator(schemas.get(c.op))(body);
      assert.ok(v.valid, `${c.op}: ${v.errorMessage}\n${JSON.stringify(body).slice(0, 600)}`);
      // The HTTP API answers with the same schemas (OpenAPI's 200 and 409).
      if (openapi) {
        const post = openapi.paths[`/datanotes/operations/${c.op}/`].post;
        const half = r.isError ? openapi.components.schemas.Refusal : post.responses["200"].content["application/json"].schema;
        const w = validator.getValidator(half)(body);
        assert.ok(w.valid, `${c.op} against the OpenAPI document: ${w.errorMessage}`);
      }
      if (r.isError) {
        assert.equal(body.ok, false);
        assert.equal(typeof body.hint === "string" || body.rolled_back === true, true, "a refusal names the way out");
        assert.ok(Array.isArray(body.reasons) && body.reasons.length > 0, "its reasons, one by one");
      } else if (c.keep) c.keep(body, ctx);
      called.add(c.op);
    });
  }
  await test(`${label}: every tool was called`, async () => {
    const missed = tools.map((t) => t.name).filter((n) => !called.has(n));
    assert.deepEqual(missed, []);
  });
}

// Resources (docs, schema, tables and views, rows by datanotes://<table>/<row>),
// resource_links in write answers, subscriptions and completions: each from
// the engine's state, and a clear error for a URI that names nothing.
async function checkResources(client, label) {
  const text = (r) => r.contents[0].text;
  await test(`${label}: resources/list names the schema, the feed, each table and view, the docs`, async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const u of ["datanotes://_schema", "datanotes://_changes", "datanotes://film", "datanotes://to_watch", "datanotes://_docs/reference%2Foperations"]) {
      assert.ok(uris.includes(u), `${u} in ${uris.join(" ")}`);
    }
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === "datanotes://{table}/{row}"));
  });
  await test(`${label}: a table, a view, a row and a docs page read as resources`, async () => {
    const film = JSON.parse(text(await client.readResource({ uri: "datanotes://film" })));
    assert.equal(film.qualified, "main.public.film");
    assert.equal(film.row_count, 7);
    assert.ok(film.columns.rating && film.checks.rating_range, "its columns and rules");
    assert.ok(film.views.some((v) => v.name === "to_watch"), "its views");
    const view = JSON.parse(text(await client.readResource({ uri: "datanotes://to_watch" })));
    assert.match(view.table, /film$/);
    assert.deepEqual(view.where, { status: "to watch" });
    const row = JSON.parse(text(await client.readResource({ uri: "datanotes://film/Sherlock%20Jr." })));
    assert.equal(row.values.title, "Sherlock Jr.");
    assert.equal(row.path, "datanotes/main/public/film/Sherlock Jr..md");
    const page = await client.readResource({ uri: "datanotes://_docs/reference%2Ffilters" });
    assert.equal(page.contents[0].mimeType, "text/markdown");
    assert.match(text(page), /^# /);
    const schema = JSON.parse(text(await client.readResource({ uri: "datanotes://_schema" })));
    assert.ok(schema.tables.length >= 4);
  });
  await test(`${label}: a URI that names nothing is a resource-not-found error with the way out`, async () => {
    for (const uri of ["datanotes://nope", "datanotes://film/Nobody", "https://example.com/x", "datanotes://_docs/nothing"]) {
      await assert.rejects(() => client.readResource({ uri }), (e) => e.code === -32002 && /resources\/list/.test(e.message), uri);
    }
    await assert.rejects(() => client.readResource({ uri: "datanotes://flim" }), (e) => /did you mean "film"/.test(e.message));
  });
  await test(`${label}: completions come from the engine's state`, async () => {
    const ref = { type: "ref/resource", uri: "datanotes://{table}/{row}" };
    const t = await client.complete({ ref, argument: { name: "table", value: "fi" } });
    assert.deepEqual(t.completion.values, ["film"]);
    const r = await client.complete({ ref, argument: { name: "row", value: "char" }, context: { arguments: { table: "film" } } });
    assert.deepEqual(r.completion.values, ["Charade"]);
    const all = await client.complete({ ref, argument: { name: "table", value: "" } });
    assert.deepEqual([...all.completion.values].sort(), ["film", "genre", "person", "to_watch", "watch"]);
  });
  await test(`${label}: a write's answer links to the notes it changed, and the link reads`, async () => {
    const r = await client.callTool({ name: "update_row", arguments: { table: "film", path: CHARADE, set: { minutes: 114 } } });
    assert.ok(!r.isError, r.content?.[0]?.text);
    const link = r.content.find((c) => c.type === "resource_link");
    assert.ok(link, JSON.stringify(r.content));
    assert.equal(link.uri, "datanotes://main.public.film/Charade");
    const row = JSON.parse(text(await client.readResource({ uri: link.uri })));
    assert.equal(row.values.minutes, 114);
  });
  await test(`${label}: a subscription to a table hears of a change to its rows`, async () => {
    const heard = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => heard.push(n.params.uri));
    await client.subscribeResource({ uri: "datanotes://film" });
    await client.subscribeResource({ uri: "datanotes://_changes" });
    await client.subscribeResource({ uri: "datanotes://person" });
    const w = await client.callTool({ name: "update_row", arguments: { table: "film", path: CHARADE, set: { minutes: 115 } } });
    assert.ok(!w.isError, w.content?.[0]?.text);
    for (let i = 0; i < 100 && !(heard.includes("datanotes://film") && heard.includes("datanotes://_changes")); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(heard.includes("datanotes://film"), `heard ${heard}`);
    assert.ok(heard.includes("datanotes://_changes"), `heard ${heard}`);
    assert.ok(!heard.includes("datanotes://person"), "a table the write did not touch is not told");
    await client.unsubscribeResource({ uri: "datanotes://film" });
    await assert.rejects(() => client.subscribeResource({ uri: "datanotes://nope" }), (e) => e.code === -32002);
  });
}

// Prompts, each written from the engine's answers at the moment it is asked.
async function checkPrompts(client, label, dir) {
  const body = (p) => p.messages.map((m) => m.content.text).join("\n");
  await test(`${label}: prompts/list names the three prompts with their arguments`, async () => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name).sort(), ["fix_rule_breaks", "review_agent_writes", "summarise_changes"]);
    assert.equal(prompts.find((p) => p.name === "fix_rule_breaks").arguments[0].required, true);
  });
  await test(`${label}: fix_rule_breaks names the rows that break rules now, from check_table`, async () => {
    const clean = body(await client.getPrompt({ name: "fix_rule_breaks", arguments: { table: "film" } }));
    assert.match(clean, /No row of main\.public\.film breaks a rule/);
    // Nosferatu rated 9 by hand: a rule broken that only check_table can know of.
    const nosferatu = path.join(dir, "datanotes/main/public/film/Nosferatu.md");
    const was = fs.readFileSync(nosferatu, "utf8");
    fs.writeFileSync(nosferatu, was.replace(/^year: .*$/m, "$&\nrating: 9"));
    let broken = "";
    for (let i = 0; i < 50 && !/Nosferatu/.test(broken); i++) {
      await new Promise((r) => setTimeout(r, 200));
      broken = body(await client.getPrompt({ name: "fix_rule_breaks", arguments: { table: "film" } }));
    }
    assert.match(broken, /1 rows of main\.public\.film break its rules/);
    assert.match(broken, /Nosferatu\.md/);
    assert.match(broken, /rating_range/);
    assert.match(broken, /undo_migration/);
    // Put back by hand, as it was: the later tests start from a clean diary.
    fs.writeFileSync(nosferatu, was);
    let after = broken;
    for (let i = 0; i < 50 && !/No row/.test(after); i++) {
      await new Promise((r) => setTimeout(r, 200));
      after = body(await client.getPrompt({ name: "fix_rule_breaks", arguments: { table: "film" } }));
    }
    assert.match(after, /No row of main\.public\.film breaks a rule/);
    const c = await client.complete({ ref: { type: "ref/prompt", name: "fix_rule_breaks" }, argument: { name: "table", value: "wa" } });
    assert.deepEqual(c.completion.values, ["watch", "to_watch"]);
  });
  await test(`${label}: summarise_changes lists the journal's operations since then`, async () => {
    const p = body(await client.getPrompt({ name: "summarise_changes", arguments: { since: "2000-01-01" } }));
    assert.match(p, /update_row — update film/);
    assert.match(p, /by owner\/datanotes-mcp-test/);
    assert.match(p, /edited by hand/);
    const none = body(await client.getPrompt({ name: "summarise_changes", arguments: { since: "2999-01-01" } }));
    assert.match(none, /^Summarise/);
    assert.match(none, /0 operations were journaled/);
  });
  await test(`${label}: review_agent_writes shows what the agent's writes did, note by note`, async () => {
    const p = body(await client.getPrompt({ name: "review_agent_writes", arguments: { actor: ACTOR, limit: "2" } }));
    assert.match(p, /Review the last 2 writes of owner\/datanotes-mcp-test/);
    assert.match(p, /"minutes"/, "the values it changed, before and after");
    assert.match(p, /undo_migration/);
  });
  await test(`${label}: a prompt without its argument, or no such prompt, is an error naming the way out`, async () => {
    await assert.rejects(() => client.getPrompt({ name: "fix_rule_breaks", arguments: {} }), (e) => e.code === -32602 && /needs the argument table/.test(e.message));
    await assert.rejects(() => client.getPrompt({ name: "fix_rule_break", arguments: {} }), (e) => /did you mean "fix_rule_breaks"/.test(e.message) && /prompts\/list/.test(e.message));
    await assert.rejects(() => client.getPrompt({ name: "fix_rule_breaks", arguments: { table: "nope" } }), (e) => /describe_database/.test(e.message));
  });
}

function serve(dir, token) {
  return new Promise((resolve, reject) => {
    let ready = false;
    const child = spawn(bin, ["serve", "--vault", dir, "--listen", "127.0.0.1:0"], {
      env: { ...process.env, DATANOTES_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(() => child.kill("SIGKILL"));
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/serving .* at (http:\/\/\S+)/);
      if (m && !ready) {
        ready = true;
        resolve({ child, base: m[1], log: () => err });
      }
    });
    child.on("exit", (code) => {
      if (!ready) reject(new Error(`serve exited (${code}) before it was ready: ${err}`));
    });
  });
}

// Issue 56: a token made with `token add NAME --propose` over MCP: its row
// writes are staged (the notes stay byte for byte), its other writes are error
// results, and the owner's accept of three of its four writes lands exactly those.
async function checkProposeToken(base, dir, owner) {
  const added = spawnSync(bin, ["token", "add", "agent-bot", "--propose", "--vault", dir], { encoding: "utf8" });
  const agentToken = added.stdout.split(/\s+/).find((w) => w.length === 64);
  const connect = async (tok) => {
    const c = new Client({ name: CLIENT, version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${tok}` } } }));
    return c;
  };
  const film = (t) => path.join(dir, `datanotes/main/public/film/${t}.md`);
  await test("propose token: its writes are staged over MCP and wait for review", async () => {
    assert.ok(agentToken, `token add printed no token: ${added.stdout} ${added.stderr}`);
    const agent = await connect(agentToken);
    const before = ["Charade", "Metropolis", "Nosferatu"].map((t) => fs.readFileSync(film(t), "utf8"));
    for (const [title, rating] of [["Charade", 4], ["Metropolis", 3], ["Nosferatu", 2]]) {
      const r = await agent.callTool({ name: "update_row", arguments: { table: "film", path: `datanotes/main/public/film/${title}.md`, set: { rating } } });
      assert.ok(!r.isError, r.content?.[0]?.text);
      assert.equal(r.structuredContent.staged, true);
      assert.equal(r.structuredContent.proposal, "agent-bot");
    }
    const ins = await agent.callTool({ name: "insert_row", arguments: { table: "film", values: { title: "Playtime", year: 1967 } } });
    assert.ok(!ins.isError, ins.content?.[0]?.text);
    assert.deepEqual(["Charade", "Metropolis", "Nosferatu"].map((t) => fs.readFileSync(film(t), "utf8")), before, "the notes stay byte for byte");
    assert.ok(!fs.existsSync(film("Playtime")));
    const drop = await agent.callTool({ name: "drop_table", arguments: { table: "film" } });
    assert.ok(drop.isError, "a write that cannot wait for review is refused");
    assert.match(drop.content[0].text, /proposes its writes for review/);
    await agent.close();
    const me = await connect(owner);
    const a = await me.callTool({ name: "accept_proposal", arguments: { proposal: "agent-bot", writes: [1, 2, 4] } });
    assert.ok(!a.isError, a.content?.[0]?.text);
    assert.match(fs.readFileSync(film("Charade"), "utf8"), /\nrating: 4\n/);
    assert.match(fs.readFileSync(film("Metropolis"), "utf8"), /\nrating: 3\n/);
    assert.equal(fs.readFileSync(film("Nosferatu"), "utf8"), before[2], "the write not accepted waits");
    assert.ok(fs.existsSync(film("Playtime")));
    await me.close();
  });
}

async function main() {
  if (!fs.existsSync(bin)) {
    console.log(`FAIL ${bin} is missing: build it first (cargo build -p datanotes)`);
    failed++;
    finish();
  }
  const ops = JSON.parse(spawnSync(bin, ["ops"], { encoding: "utf8" }).stdout);
  assert.ok(ops.length > 10, "datanotes ops lists the operations");

  // ---- stdio ----
  const dir1 = vault();
  const stdio = new Client({ name: CLIENT, version: "1.0.0" });
  const t1 = new StdioClientTransport({ command: bin, args: ["mcp", "--vault", dir1], stderr: "pipe" });
  await test("stdio: connects", () => stdio.connect(t1));
  t1.stderr?.on("data", () => {});
  await test("stdio: every operation is a tool with its annotations", () => checkTools(stdio, ops));
  await checkCalls(stdio, dir1, "stdio");
  await checkResources(stdio, "stdio");
  await checkPrompts(stdio, "stdio", dir1);
  await checkEveryTool(stdio, "stdio");
  await stdio.close();

  // ---- streamable HTTP inside serve ----
  const dir2 = vault();
  const token = "mcp-test-token-0123456789abcdef";
  const { base } = await serve(dir2, token);
  const http = new Client({ name: CLIENT, version: "1.0.0" });
  const t2 = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await test("http: connects with the bearer token", () => http.connect(t2));
  await test("http: every operation is a tool with its annotations", () => checkTools(http, ops));
  await checkCalls(http, dir2, "http");
  const openapi = await (await fetch(`${base}/datanotes/openapi.json`, { headers: { Authorization: `Bearer ${token}` } })).json();
  await checkResources(http, "http");
  await checkPrompts(http, "http", dir2);
  await checkEveryTool(http, "http", openapi);
  await http.close();

  const dir4 = vault();
  const proposing = await serve(dir4, token);
  await checkProposeToken(proposing.base, dir4, token);

  await test("http: a wrong token is refused", async () => {
    const c = new Client({ name: CLIENT, version: "1.0.0" });
    const t = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: "Bearer wrong" } } });
    await assert.rejects(() => c.connect(t));
    const res = await fetch(`${base}/mcp`, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: "{}" });
    assert.equal(res.status, 401);
    assert.ok((await res.json()).error);
  });

  // ---- stdio while a serve holds the vault: every tool call is forwarded ----
  const dir3 = vault();
  const held = await serve(dir3, token);
  const fwd = new Client({ name: CLIENT, version: "1.0.0" });
  const t3 = new StdioClientTransport({ command: bin, args: ["mcp", "--vault", dir3], env: { ...process.env, DATANOTES_TOKEN: token }, stderr: "pipe" });
  let fwdErr = "";
  t3.stderr?.on("data", (d) => (fwdErr += d));
  const started = Date.now();
  await test("forwarding: connects", () => fwd.connect(t3));
  await test("forwarding: says where it forwards", async () => {
    assert.match(fwdErr, /forwarding MCP tool calls to the engine serving/);
  });
  await test("forwarding: the first tool call is answered quickly", async () => {
    const r = await fwd.callTool({ name: "select_rows", arguments: { table: "film", limit: 1 } });
    assert.ok(!r.isError, r.content?.[0]?.text);
    console.log(`     spawn to first tool call answered: ${Date.now() - started} ms`);
  });
  await test("forwarding: every operation is a tool with its annotations", () => checkTools(fwd, ops));
  await checkCalls(fwd, dir3, "forwarding");
  await checkResources(fwd, "forwarding");
  await test("forwarding: the calls reached the serve", async () => {
    assert.match(held.log(), /POST \/datanotes\/operations\/update_row\/ 200/);
    assert.match(held.log(), /POST \/datanotes\/operations\/update_row\/ 409/);
  });
  await fwd.close();
}

main()
  .catch((e) => {
    failed++;
    console.log(`FAIL ${String(e?.stack || e)}`);
  })
  .finally(finish);
