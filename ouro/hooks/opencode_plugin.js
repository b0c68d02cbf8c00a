// ouro's OpenCode plugin: a thin shim. It pipes each OpenCode event's JSON to
// `ouro hook opencode <Event>` and hands the reply back; every decision (what
// to record, what to inject, what to say) is made by ouro, in Python
// (ouro/hooks/opencode.py, docs/hooks.md "OpenCode").
//
// - session.created          -> SessionStart (source startup); the packet is
//                               added to the session's first prompt
// - session.compacted        -> SessionStart (source compact); the packet is in
//                               the system prompt until the next prompt keeps it
// - chat.message             -> UserPromptSubmit; its context (and any pending
//                               packet) becomes a synthetic text part of the
//                               user's message, kept in the session
// - experimental.session.compacting -> PreCompact (the checkpoint)
// - session.idle             -> Stop (debt: shown as a notice)
// - session.deleted          -> SessionEnd
// - tool.execute.after(bash) -> PostToolUse (check receipts)
import { spawn } from "node:child_process"

// How OpenCode starts ouro (written by `ouro hook install opencode` / `ouro hook plugin`).
const COMMAND = "ouro"
const TIMEOUTS = { SessionStart: 30, UserPromptSubmit: 10, PreCompact: 30, Stop: 10, SessionEnd: 3, PostToolUse: 10 }
const OUTPUT_TAIL = 16384

let counter = 0
function partID() {
  // OpenCode's ascending id: 6 bytes of (ms * 4096 + counter) in hex, 14 random base62
  const stamp = (BigInt(Date.now()) * 4096n + BigInt(++counter % 4096)).toString(16).padStart(12, "0").slice(-12)
  const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  let tail = ""
  for (let i = 0; i < 14; i++) tail += chars[Math.floor(Math.random() * chars.length)]
  return `prt_${stamp}${tail}`
}

function run(event, payload, cwd) {
  return new Promise((resolve) => {
    const failed = (why) =>
      resolve({ systemMessage: `ouro: '${COMMAND} hook opencode ${event}' ${why}. The ouro hooks recorded and injected nothing; check the install with 'ouro hook doctor opencode'.`, failed: true })
    let child
    try {
      child = spawn("/bin/sh", ["-c", `${COMMAND} hook opencode ${event}`], { cwd, stdio: ["pipe", "pipe", "pipe"] })
    } catch (e) {
      return failed(`could not start (${e})`)
    }
    let out = ""
    let err = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), (TIMEOUTS[event] ?? 10) * 1000)
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.stdin.on("error", () => {})
    child.on("error", (e) => {
      clearTimeout(timer)
      failed(`could not start (${e.message})`)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      for (const line of err.split("\n")) if (line.trim()) console.error(line)
      if (signal) return failed(`was stopped after ${TIMEOUTS[event] ?? 10} s`)
      if (code !== 0) return failed(`exited ${code}${code === 127 ? " (command not found)" : ""}`)
      if (!out.trim()) return resolve(null)
      try {
        resolve(JSON.parse(out))
      } catch {
        failed("printed something that is not JSON")
      }
    })
    child.stdin.end(JSON.stringify(payload))
  })
}

export const OuroPlugin = async ({ client, directory }) => {
  const starting = new Map() // sessionID -> SessionStart in flight
  const pending = new Map() // sessionID -> context not yet kept in the session
  const told = new Set() // sessions shown the shim's own failure once
  const busy = new Set() // sessions with a prompt since their last Stop

  const context = (reply) => reply?.hookSpecificOutput?.additionalContext
  const notify = async (reply, sessionID) => {
    const text = reply?.systemMessage
    if (!text) return false
    if (reply.failed) {
      if (told.has(sessionID)) return false
      told.add(sessionID)
    }
    console.error(text)
    try {
      await client.tui.showToast({ body: { message: text, variant: reply.failed ? "error" : "warning" } })
    } catch {}
    return true
  }
  // the model is told too: ouro's own notice comes as context, the shim's failure once
  const said = async (reply, sessionID) => {
    const shown = await notify(reply, sessionID)
    return context(reply) ?? (shown && reply.failed ? reply.systemMessage : undefined)
  }
  const keep = (sessionID, text) => {
    if (text) pending.set(sessionID, [...(pending.get(sessionID) ?? []), text])
  }
  const start = (sessionID, source, extra) => {
    const job = run("SessionStart", { hook: "session", sessionID, source, directory, ...extra }, directory).then(async (reply) => {
      const text = await said(reply, sessionID)
      if (source === "compact") pending.delete(sessionID) // the newest packet replaces a waiting one
      keep(sessionID, text)
    })
    starting.set(sessionID, job)
    return job
  }
  const stop = async (sessionID) => {
    if (!busy.delete(sessionID)) return
    await notify(await run("Stop", { hook: "session.idle", sessionID, directory }, directory), sessionID)
  }

  return {
    event: async ({ event }) => {
      const p = event.properties ?? {}
      if (event.type === "session.created" && p.info?.id) {
        await start(p.info.id, "startup", { parentID: p.info.parentID })
      } else if (event.type === "session.compacted" && p.sessionID) {
        await start(p.sessionID, "compact", {})
      } else if (event.type === "session.idle" && p.sessionID) {
        await stop(p.sessionID)
      } else if (event.type === "session.status" && p.status?.type === "idle" && p.sessionID) {
        await stop(p.sessionID)
      } else if (event.type === "session.deleted" && p.info?.id) {
        await run("SessionEnd", { hook: "session.deleted", sessionID: p.info.id, reason: "deleted", directory }, directory)
      }
    },
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID
      busy.add(sessionID)
      await starting.get(sessionID)
      const reply = await run("UserPromptSubmit", { hook: "chat.message", ...input, directory }, directory)
      keep(sessionID, await said(reply, sessionID))
      const texts = pending.get(sessionID) ?? []
      pending.delete(sessionID)
      if (texts.length === 0 || !output?.parts || !output.message) return
      output.parts.push({ id: partID(), sessionID, messageID: output.message.id, type: "text", synthetic: true, text: texts.join("\n\n") })
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return
      await starting.get(input.sessionID) // a SessionStart (after compaction) still running
      const texts = pending.get(input.sessionID)
      if (texts && output?.system) output.system.push(...texts)
    },
    "experimental.session.compacting": async (input) => {
      await notify(await run("PreCompact", { hook: "experimental.session.compacting", ...input, directory }, directory), input.sessionID)
    },
    "tool.execute.after": async (input, output) => {
      if (input.tool !== "bash") return
      const text = typeof output?.output === "string" ? output.output.slice(-OUTPUT_TAIL) : undefined
      const metadata = output?.metadata ?? {}
      const reply = await run(
        "PostToolUse",
        { hook: "tool.execute.after", ...input, directory, output: text, exit: metadata.exit, interrupted: metadata.interrupted },
        directory,
      )
      await notify(reply, input.sessionID)
    },
  }
}
