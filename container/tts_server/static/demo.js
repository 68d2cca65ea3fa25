// The demo page: one session on the bidirectional WebSocket (served by the speech server
// itself, or by `make demo`'s bridge to a SageMaker endpoint), pcm_f32 binary frames into
// Web Audio, word highlighting from alignments, TTFA and RTF per response, pipelining,
// Stop, and an agent mode. window.demoState exposes what happened, for tests.
import { SentenceChunker } from "./chunker.js";
import { PcmPlayer } from "./player.js";
import { DemoSession } from "./session.js";

const $ = (id) => document.getElementById(id);
const SOCKET_URL = new URL("/invocations-bidirectional-stream", location.href.replace(/^http/, "ws")).href;

let session = null;
let player = null;
let opening = null;
let agentTurn = null;
let nextId = 1;
const records = new Map(); // response_id -> what the page knows about that response

const state = (window.demoState = {
  ready: false,
  language: null,
  speakers: [],
  sessionsOpened: 0,
  responses: {}, // response_id -> {text, status, history, ttfaMs, rtf, chunks, audioMs, usageAudioMs, firstStart, lastEnd}
  chunksScheduled: 0,
  scheduledMs: 0,
  highlighted: [], // {response_id, start_char, end_char, text, due, at}, in the order they lit up
  errors: [], // {code, message, response_id}, as the server sent them
  agent: null, // {mode, tokensPerSecond, sentences, sentAtMs, firstAudioMs, llmDoneMs}
  stops: 0,
  get playing() {
    return player ? player.playing : 0;
  },
});

// -- session -------------------------------------------------------------------------------

function ensureSession() {
  if (session && session.usable) return Promise.resolve(session);
  if (opening) return opening;
  const language = $("language").value;
  const candidate = new DemoSession(SOCKET_URL, { onEvent, onAudio, onClose: (code, reason) => onClose(candidate, code, reason) });
  $("connection").textContent = `opening a session (${language})…`;
  opening = candidate
    .open({ language, format: "pcm_f32", sample_rate: 24000 })
    .then((created) => {
      session = candidate;
      state.sessionsOpened += 1;
      state.language = created.language;
      state.speakers = created.speakers;
      fillVoices(created.speakers);
      $("connection").textContent =
        `session ${created.session_id.slice(0, 8)} · ${created.language} · ${created.format} ` +
        `${created.sample_rate / 1000} kHz · ${created.speakers.length} voices · ${location.host}`;
      state.ready = true;
      return session;
    })
    .catch((error) => {
      showError({ code: error.code, message: error.message });
      $("connection").textContent = `no session: ${error.code}`;
      if (error.retryAfter) setTimeout(ensureSession, error.retryAfter * 1000); // model still loading
      throw error;
    })
    .finally(() => {
      opening = null;
    });
  return opening;
}

function fillVoices(speakers) {
  const list = $("speakers");
  const blend = $("blend");
  list.replaceChildren(...speakers.map((id) => new Option(id, id)));
  blend.replaceChildren(new Option("(none)", ""), ...speakers.map((id) => new Option(id, id)));
  if (!speakers.includes($("voice").value) && !$("voice").value.includes(":")) $("voice").value = "default";
}

function speakerId() {
  const voice = $("voice").value.trim() || "default";
  const other = $("blend").value;
  if (!other) return voice;
  const share = Number($("blend-share").value) / 100;
  return `${voice}:${(1 - share).toFixed(2)}+${other}:${share.toFixed(2)}`;
}

function onClose(closed, code, reason) {
  if (closed !== session) return;
  state.ready = false;
  $("connection").textContent = `disconnected (${code}${reason ? " " + reason : ""}); Speak opens a new session`;
  for (const record of records.values()) if (!record.finished) finish(record, "disconnected");
}

// -- responses -----------------------------------------------------------------------------

function send(text) {
  const id = `r${nextId++}`;
  const record = {
    id, text, chars: Array.from(text), cursor: 0, sentAt: performance.now(), createdAt: null,
    firstAudioAt: null, finished: false, stopped: false, audioMs: 0, current: null, view: render(id, text),
  };
  records.set(id, record);
  state.responses[id] = {
    text, status: "sent", history: [], ttfaMs: null, rtf: null, chunks: 0, audioMs: 0, usageAudioMs: null,
    firstStart: null, lastEnd: null, // on the audio clock (seconds)
  };
  setStatus(record, "sent");
  session.create(id, text, { speaker_id: speakerId(), speed: Number($("speed").value) });
  return record;
}

function render(id, text) {
  const item = document.createElement("li");
  item.dataset.responseId = id;
  item.innerHTML = `<div class="meta"><span class="id"></span> · <span class="status"></span>` +
    ` · TTFA <span class="ttfa">–</span> · RTF <span class="rtf">–</span></div><div class="transcript"></div>`;
  item.querySelector(".id").textContent = id;
  const rest = document.createElement("span");
  rest.className = "word pending rest";
  rest.textContent = text;
  item.querySelector(".transcript").append(rest);
  $("responses").prepend(item);
  return { item, status: item.querySelector(".status"), ttfa: item.querySelector(".ttfa"),
    rtf: item.querySelector(".rtf"), transcript: item.querySelector(".transcript"), rest };
}

function setStatus(record, status) {
  state.responses[record.id].status = status;
  state.responses[record.id].history.push(status);
  record.view.status.textContent = status;
  record.view.status.className = `status ${status}`;
}

function finish(record, status) {
  record.finished = true;
  setStatus(record, status);
}

function onEvent(event) {
  const record = records.get(event.type === "error" ? event.error.response_id : event.response_id);
  switch (event.type) {
    case "response.queued":
      if (record) setStatus(record, "queued");
      break;
    case "response.created":
      if (record) {
        record.createdAt = performance.now();
        setStatus(record, "speaking");
      }
      break;
    case "response.done":
      if (record) onDone(record, event);
      break;
    case "error":
      onError(event.error, record);
      break;
  }
}

function onDone(record, event) {
  finish(record, event.status);
  if (event.error) showError({ ...event.error, response_id: record.id });
  state.responses[record.id].usageAudioMs = event.usage.audio_ms;
  const audioS = event.usage.audio_ms / 1000;
  if (event.status === "completed" && audioS > 0 && record.createdAt !== null) {
    const rtf = (performance.now() - record.createdAt) / 1000 / audioS;
    state.responses[record.id].rtf = rtf;
    record.view.rtf.textContent = rtf.toFixed(2);
  }
  // Everything aligned has been heard once the last scheduled sample has played.
  if (player && record.current) player.cue(player.next, () => record.current?.classList.replace("current", "spoken"));
}

function onError(error, record) {
  if (record && record.stopped && error.code === "response_not_found") return; // Stop raced its end
  if (record && !record.finished && record.createdAt === null && state.responses[record.id].status === "sent") {
    finish(record, "rejected");
  }
  showError({ ...error, response_id: record?.id });
}

function showError(error) {
  state.errors.push({ code: error.code, message: error.message, response_id: error.response_id ?? null });
  const item = document.createElement("li");
  const code = document.createElement("b");
  code.textContent = error.code + (error.response_id ? ` (${error.response_id})` : "");
  item.append(code, ": ", document.createTextNode(error.message));
  $("errors").prepend(item);
}

// -- audio and highlighting ----------------------------------------------------------------

function onAudio(event, data) {
  const record = records.get(event.response_id);
  if (!record || record.stopped || !player) return;
  const now = performance.now();
  const view = state.responses[record.id];
  if (record.firstAudioAt === null) {
    record.firstAudioAt = now;
    view.ttfaMs = now - record.sentAt;
    record.view.ttfa.textContent = `${Math.round(view.ttfaMs)} ms`;
    if (agentTurn && agentTurn.ids.includes(record.id) && state.agent.firstAudioMs === null) {
      state.agent.firstAudioMs = now - agentTurn.started;
      showAgentSummary();
    }
  }
  const samples = new Float32Array(data);
  const start = player.schedule(samples);
  const offsetMs = record.audioMs;
  const durationMs = (samples.length / player.sampleRate) * 1000;
  record.audioMs += durationMs;
  view.chunks += 1;
  view.firstStart ??= start;
  view.lastEnd = start + durationMs / 1000;
  view.audioMs = record.audioMs;
  state.chunksScheduled += 1;
  state.scheduledMs += durationMs;
  for (const alignment of event.alignments || []) {
    const span = wordSpan(record, alignment);
    const due = start + Math.max(0, alignment.start_ms - offsetMs) / 1000;
    player.cue(due, () => highlight(record, span, alignment, due));
  }
}

// Alignments cover the text in order: split the pending remainder at each one.
function wordSpan(record, alignment) {
  const { transcript, rest } = record.view;
  if (alignment.start_char > record.cursor) {
    transcript.insertBefore(document.createTextNode(record.chars.slice(record.cursor, alignment.start_char).join("")), rest);
  }
  const span = document.createElement("span");
  span.className = "word pending";
  span.dataset.startChar = alignment.start_char;
  span.textContent = record.chars.slice(alignment.start_char, alignment.end_char).join("");
  transcript.insertBefore(span, rest);
  record.cursor = Math.max(record.cursor, alignment.end_char);
  rest.textContent = record.chars.slice(record.cursor).join("");
  return span;
}

function highlight(record, span, alignment, due) {
  if (record.stopped) return;
  record.current?.classList.replace("current", "spoken");
  span.classList.replace("pending", "current");
  record.current = span;
  state.highlighted.push({
    response_id: record.id, start_char: alignment.start_char, end_char: alignment.end_char, text: alignment.text,
    due, at: player.now, // when the word is heard, when it lit up (audio clock)
  });
}

// -- agent mode: a canned LLM answer, token by token ----------------------------------------

function tokens(text) {
  if (/\s/.test(text.trim())) return text.match(/\s*\S+/g) || [];
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += 2) out.push(chars.slice(i, i + 2).join(""));
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runAgent(text) {
  const batch = $("agent-batch").checked;
  const rate = Number($("rate").value);
  const turn = (agentTurn = { started: performance.now(), ids: [], aborted: false });
  state.agent = { mode: batch ? "batch" : "bidi", tokensPerSecond: rate, sentences: [], sentAtMs: [], firstAudioMs: null, llmDoneMs: null };
  $("agent-panel").hidden = false;
  const llm = $("llm");
  llm.replaceChildren();
  showAgentSummary();
  const speakSentence = (sentence) => {
    state.agent.sentences.push(sentence);
    state.agent.sentAtMs.push(performance.now() - turn.started);
    turn.ids.push(send(sentence).id);
  };
  const chunker = new SentenceChunker();
  for (const token of tokens(text)) {
    await sleep(1000 / rate);
    if (turn.aborted) return;
    llm.append(token);
    if (!batch) chunker.feed(token).forEach(speakSentence);
  }
  state.agent.llmDoneMs = performance.now() - turn.started;
  if (batch) {
    if (text.trim()) speakSentence(text.trim());
  } else {
    chunker.flush().forEach(speakSentence);
  }
  showAgentSummary();
}

function showAgentSummary() {
  const agent = state.agent;
  const seconds = (ms) => (ms === null ? "…" : `${(ms / 1000).toFixed(2)} s`);
  $("agent-summary").textContent =
    `${agent.mode === "bidi" ? "streaming sentences as the LLM writes them" : "waiting for the whole answer"} ` +
    `at ${agent.tokensPerSecond} tokens/s · LLM done after ${seconds(agent.llmDoneMs)} · ` +
    `first audio after ${seconds(agent.firstAudioMs)} · ${agent.sentences.length} response(s)`;
}

// -- controls ------------------------------------------------------------------------------

async function speak() {
  const text = $("text").value;
  let ready;
  try {
    ready = await ensureSession();
  } catch {
    return; // the error is on the page already
  }
  if (!player || player.sampleRate !== ready.created.sample_rate) player = new PcmPlayer(ready.created.sample_rate);
  await player.resume();
  if ($("agent").checked) await runAgent(text);
  else send(text);
}

function stop() {
  state.stops += 1;
  if (agentTurn) agentTurn.aborted = true;
  // Newest first: each queued response is dropped before the active one's cancel could start it.
  for (const record of [...records.values()].reverse()) {
    if (record.finished || record.stopped) continue;
    record.stopped = true;
    if (session && session.usable) session.cancel(record.id);
  }
  player?.stop();
}

function changeLanguage() {
  stop();
  session?.close();
  session = null;
  state.ready = false;
  ensureSession().catch(() => {});
}

function bindOutput(input, output, format) {
  const update = () => ($(output).textContent = format($(input).value));
  $(input).addEventListener("input", update);
  update();
}

$("speak").addEventListener("click", speak);
addEventListener("pagehide", () => {
  stop();
  session?.close();
});
$("stop").addEventListener("click", stop);
$("language").addEventListener("change", changeLanguage);
$("agent").addEventListener("change", () => ($("agent-panel").hidden = !$("agent").checked));
bindOutput("speed", "speed-out", (v) => `${Number(v).toFixed(1)}×`);
bindOutput("rate", "rate-out", (v) => v);
bindOutput("blend-share", "blend-share-out", (v) => `${v}%`);
ensureSession().catch(() => {});
