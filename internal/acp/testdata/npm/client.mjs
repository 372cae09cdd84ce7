// An ACP client on the protocol's own TypeScript SDK, driving `harness acp`
// for internal/acp's tests. It prints one JSON object per line on stdout:
// what it received (updates, permission requests) and what each request
// answered, so the Go test asserts on what a real client saw.
//
// node client.mjs HARNESS_BINARY new CWD    initialize, session/new, four prompts
//                                           (a sandboxed command, one that asks to leave
//                                           the sandbox, a long one that is cancelled, one
//                                           whose connection the sandbox network asks about),
//                                           session/set_mode, bad requests
// node client.mjs HARNESS_BINARY load CWD ID initialize, session/load ID, one prompt

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [bin, phase, cwd, loadId] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const child = spawn(bin, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

// The call whose in_progress update makes the client cancel the turn.
const cancelOn = "c-sleep";

const app = acp
  .client({ name: "harness-acp-test" })
  .onNotification(acp.methods.client.session.update, async ({ params, agent }) => {
    out({ kind: "update", sessionId: params.sessionId, update: params.update });
    const u = params.update;
    if (u.sessionUpdate === "tool_call_update" && u.toolCallId === cancelOn && u.status === "in_progress") {
      out({ kind: "cancel", sessionId: params.sessionId });
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    out({ kind: "permission", params });
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });

async function call(agent, method, params) {
  try {
    const result = await agent.request(method, params);
    out({ kind: "response", method, result });
    return result;
  } catch (err) {
    out({ kind: "response", method, error: { code: err.code, message: err.message, data: err.data } });
    return undefined;
  }
}

const prompt = (sessionId, text) => ({ sessionId, prompt: [{ type: "text", text }] });

await app.connectWith(stream, async (agent) => {
  await call(agent, acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  if (phase === "new") {
    const s = await call(agent, acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const id = s.sessionId;
    await call(agent, acp.methods.agent.session.prompt, prompt(id, "Say hello with echo."));
    await call(agent, acp.methods.agent.session.prompt, prompt(id, "Fetch the page."));
    await call(agent, acp.methods.agent.session.prompt, prompt(id, "Wait a while."));
    await call(agent, acp.methods.agent.session.prompt, prompt(id, "Fetch the loopback page."));
    await call(agent, acp.methods.agent.session.setMode, { sessionId: id, modeId: "plan" });
    await call(agent, acp.methods.agent.session.setMode, { sessionId: id, modeId: "yolo" });
    await call(agent, acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] });
    await call(agent, acp.methods.agent.session.prompt, prompt("no-such-session", "hi"));
  } else {
    await call(agent, acp.methods.agent.session.load, { sessionId: loadId, cwd, mcpServers: [] });
    await call(agent, acp.methods.agent.session.prompt, prompt(loadId, "Go on."));
  }
});
child.stdin.end();
out({ kind: "exit", ...(await exited) });
