// ouro for Pi: a thin shim. Written by 'ouro hook install pi' / 'ouro hook plugin pi';
// rewrite it with those commands rather than by hand (the CONFIG line is ouro's).
//
// For each Pi event in CONFIG.events it pipes the event's JSON to the installed
// command ('ouro hook pi <Event>') and hands the reply back to Pi. All the logic
// (what to record, what to inject, which Pi event means what) is in Python:
// ouro/hooks/pi.py. The reply is {hookSpecificOutput: {additionalContext}, systemMessage,
// decision, reason}; context goes to the model as a custom message, systemMessage to the
// user (ctx.ui.notify, or stderr without a UI), a Stop block as a follow-up prompt.
// A command that fails or times out changes nothing in Pi (fail open); ouro says why.
import { spawn } from "node:child_process";

const CONFIG = {};

type Handler = { type?: string; command?: string; timeout?: number };
type Group = { matcher?: string; hooks?: Handler[] };
type Reply = {
  hookSpecificOutput?: { additionalContext?: string };
  systemMessage?: string;
  decision?: string;
  reason?: string;
};

const config = CONFIG as { events?: Record<string, string>; hooks?: Record<string, Group[]> };
const DROP = new Set(["systemPrompt", "systemPromptOptions", "images", "branchEntries",
  "preparation", "signal", "compactionEntry", "toolResults"]);

function text(content: unknown): string {
  return (Array.isArray(content) ? content : [])
    .filter((b: any) => b?.type === "text").map((b: any) => b.text).join("\n").slice(0, 2000);
}

function slim(event: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (DROP.has(key)) continue;
    if (key === "messages" && Array.isArray(value)) {
      out.messages = value.map((m: any) => ({ role: m?.role, text: text(m?.content) }));
    } else if (key === "message" && value && typeof value === "object") {
      out.message = { role: (value as any).role, stopReason: (value as any).stopReason };
    } else out[key] = value;
  }
  return out;
}

function run(command: string, timeout: number, input: string): Promise<Reply | undefined> {
  return new Promise((resolve) => {
    let stdout = "";
    let done = false;
    const finish = (reply: Reply | undefined) => { if (!done) { done = true; resolve(reply); } };
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "pipe", "pipe"] });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      process.stderr.write(`ouro: '${command}' timed out after ${timeout}s\n`);
      finish(undefined);
    }, timeout * 1000);
    child.stdout.on("data", (chunk) => { stdout += chunk; });
    child.stderr.on("data", (chunk) => { process.stderr.write(chunk); });
    child.on("error", (err) => {
      clearTimeout(timer);
      process.stderr.write(`ouro: could not run '${command}': ${err.message}\n`);
      finish(undefined);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      // ouro's hooks always exit 0: another status means the command did not run ouro
      if (code !== 0 && !done) process.stderr.write(`ouro: '${command}' exited with status ${code}\n`);
      try { finish(stdout.trim() ? JSON.parse(stdout) : undefined); }
      catch { process.stderr.write(`ouro: '${command}' printed no JSON\n`); finish(undefined); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

async function call(piEvent: string, event: any, ctx: any): Promise<Reply> {
  const ouroEvent = config.events?.[piEvent];
  const reply: Reply = {};
  // What a group's matcher is tested against: the tool, or the turn's stop reason.
  const subject = typeof event?.toolName === "string" ? event.toolName : event?.message?.stopReason;
  const entries: any[] = ctx.sessionManager?.getEntries?.() ?? [];
  const users = entries.filter((e) => e?.type === "message" && e.message?.role === "user");
  const input = JSON.stringify({
    pi: piEvent,
    event: slim(event ?? {}),
    ctx: {
      sessionId: ctx.sessionManager?.getSessionId?.(),
      sessionFile: ctx.sessionManager?.getSessionFile?.(),
      cwd: ctx.cwd,
      messages: entries.filter((e) => e?.type === "message").length,
      lastUser: users.length ? text(users[users.length - 1].message.content) : undefined,
    },
  });
  for (const group of (ouroEvent && config.hooks?.[ouroEvent]) || []) {
    if (group.matcher && !(subject && new RegExp(`^(${group.matcher})$`).test(subject))) continue;
    for (const handler of group.hooks ?? []) {
      if (typeof handler.command !== "string") continue;
      const out = await run(handler.command, handler.timeout ?? 10, input);
      const context = out?.hookSpecificOutput?.additionalContext;
      if (context) reply.hookSpecificOutput = { additionalContext: context };
      if (out?.systemMessage) reply.systemMessage = out.systemMessage;
      if (out?.decision === "block" && out.reason) { reply.decision = "block"; reply.reason = out.reason; }
    }
  }
  if (reply.systemMessage) {
    if (ctx.hasUI) ctx.ui.notify(reply.systemMessage, "warning");
    else process.stderr.write(reply.systemMessage + "\n");
  }
  return reply;
}

// Pi runs an extension's handlers from a queue it does not wait on (agent-session.js
// _handleAgentEvent), so a turn can end, and print mode ('pi -p') shut down, while a Stop
// check is still running or before the run its follow-up starts. session_shutdown waits
// for both: every handler still running ('inflight'), and every run a follow-up asked for
// through to its agent_end ('owed'); it gives up on a run that has not started after
// IDLE_WAIT of idleness with nothing running (the follow-up failed), and after SHUTDOWN_WAIT.
const inflight = new Set<Promise<unknown>>();
let owed = 0;
const IDLE_WAIT = 5_000;
const SHUTDOWN_WAIT = 120_000;

async function settle(ctx: any): Promise<void> {
  const deadline = Date.now() + SHUTDOWN_WAIT;
  let idleSince = Date.now();
  while (Date.now() < deadline) {
    if (inflight.size) { await Promise.allSettled([...inflight]); idleSince = Date.now(); continue; }
    const idle = ctx.isIdle?.() ?? true;
    if (owed === 0 && idle) return;
    if (!idle) idleSince = Date.now();
    else if (Date.now() - idleSince > IDLE_WAIT) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stderr.write("ouro: Pi shut down before a Stop follow-up ran\n");
}

export default function (pi: any) {
  const message = (content: string) => ({ customType: "ouro", content, display: false });
  pi.on("agent_end", async () => { if (owed > 0) owed -= 1; return undefined; });
  for (const piEvent of Object.keys(config.events ?? {})) {
    pi.on(piEvent, async (event: any, ctx: any) => {
      if (piEvent === "session_shutdown") await settle(ctx);
      const work = call(piEvent, event, ctx);
      inflight.add(work);
      let reply: Reply;
      try { reply = await work; } finally { inflight.delete(work); }
      const context = reply.hookSpecificOutput?.additionalContext;
      if (piEvent === "before_agent_start") return context ? { message: message(context) } : undefined;
      if (context) pi.sendMessage(message(context), { deliverAs: "nextTurn" });
      if (reply.decision === "block" && reply.reason) {
        owed += 1;
        pi.sendUserMessage(reply.reason, { deliverAs: "followUp" });
      }
      return undefined;
    });
  }
}
