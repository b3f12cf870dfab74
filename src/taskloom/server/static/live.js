// The live stream (SSE): its events applied, its openings, its reconnects and its refusals.
import { parse, token } from "./api.js";
import { applyChange, boardChanges, drainChanges, loadBoardIfNone } from "./board-changes.js";
import { $ } from "./dom.js";
import { schedule } from "./render.js";
import { state } from "./state.js";
import { keepTasksSoon, loadStatsSoon, loadTasks, tasksLoading } from "./tasks.js";
import { hideToast, toast } from "./toast.js";

// The threads list read again (its module opens this stream: app.js wires the two, so
// neither imports the other).
let reloadThreads = () => {};
export function reloadThreadsWith(load) {
  reloadThreads = load;
}

// A snapshot is shown if newer than the one held, or if `fresh`: part of a stream's opening,
// which is the server's current state even when its versions are lower (a restored database).
function apply(type, event, fresh = false) {
  const data = event.data;
  if (type === "task_state") {
    state.tasks.set(data.id, data);
    if (tasksLoading) tasksLoading.add(data.id);
    loadStatsSoon();
    keepTasksSoon();
    schedule("queue");
  } else if (state.thread === null) {
    // no thread picked yet (there was none): a thread's first event means one exists now
    reloadThreads();
  } else if (event.thread_id !== state.thread) {
    // another thread's event: not ours to show
  } else if (type === "todo_state") {
    if (!fresh && state.board && data.version <= state.board.version) return;
    state.board = data;
    drainChanges();
    schedule("threads");
    listThreadIfNew();
  } else if (type === "todo_change") {
    applyChange(data);
    schedule("threads");
    listThreadIfNew();
  } else if (type === "goal_state") {
    if (!fresh && state.goal && data.version <= state.goal.version) return;
    state.goal = data;
    schedule("goal", "threads");
    listThreadIfNew();
  }
}

// The followed thread's first board or goal: the list, loaded before, lacks its row.
function listThreadIfNew() {
  if (state.threads && !state.threads.some((t) => t.thread_id === state.thread)) reloadThreads();
}

function setLive(mode, text = mode) {
  const el = $("live");
  el.dataset.state = mode;
  el.querySelector("span").textContent = text;
}

// One stream: the selected thread's events and the queue's, or (no thread yet, because there
// is none) the queue's and any thread's, whose first event makes the panel pick that thread.
//
// Every event's body carries its outbox id. A stream that starts over (a fresh page, a cursor
// the server no longer covers, or one from another history: the server restarted on a
// restored or another database, whose ids may go on past ours) sends an opening: an "opening"
// event with the head, the current snapshots (each with the head as its id), then "opened",
// which carries the stream's first SSE id. The opening's snapshots replace what is shown,
// whatever their versions, and what it did not send (a board gone from that database) goes.
// Other events set `state.cursor`, from which a stream reopened after the tab was hidden
// resumes (the browser's own reconnects resume from its last event id by themselves).
export function connect(resume = false) {
  if (state.source) state.source.close();
  state.source = null;
  if (!resume) state.cursor = null;
  const wasStopped = state.stopped !== null;
  state.stopped = null;
  if (document.hidden) { // opened once the tab is shown (see onVisibility())
    setLive("paused");
    return;
  }
  const query = new URLSearchParams();
  if (state.thread !== null) query.set("thread", state.thread);
  query.set("tasks", "1");
  if (state.cursor) query.set("after", state.cursor);
  if (token) query.set("token", token);
  const source = new EventSource(`/api/events?${query}`);
  state.source = source;
  let opening = null; // the opening being read: its head, and whether it sent our board, goal
  let openings = 0;
  source.addEventListener("opening", (message) => {
    if (source !== state.source) return;
    opening = { head: Number(parse(message.data).head), todo_state: false, goal_state: false };
    boardChanges.clear(); // the stream starts over, maybe on another history: its snapshot rules
  });
  source.addEventListener("opened", (message) => {
    if (source !== state.source) return;
    state.cursor = message.lastEventId;
    if (opening !== null) dropUnsent(opening);
    opening = null;
    if (state.thread !== null) loadBoardIfNone(source); // a thread with no board: none was sent
    if (openings++ > 0) reloadThreads(); // started over: the list may have changed as much
  });
  for (const type of ["todo_state", "todo_change", "goal_state", "task_state"]) {
    source.addEventListener(type, (message) => {
      if (source !== state.source) return;
      const event = parse(message.data);
      const fresh = opening !== null && Number(event.id) === opening.head;
      if (!fresh) state.cursor = message.lastEventId;
      else if (event.thread_id === state.thread) opening[type] = true;
      apply(type, event, fresh);
    });
  }
  source.addEventListener("open", () => {
    setLive("live");
    // A fresh stream sends the board in its opening (see "opened"); one resumed from a cursor
    // may still lack it, and so does one whose opening has not begun a second after it opened
    // (held back on the way: a proxy that buffers the stream).
    if (state.thread !== null && state.cursor !== null) loadBoardIfNone(source);
    else if (state.thread !== null) {
      setTimeout(() => { if (source === state.source && opening === null && !openings) loadBoardIfNone(source); }, 1000);
    }
    if (wasStopped && $("toast").textContent.startsWith("The live view stopped")) hideToast();
    loadTasks();
  });
  source.addEventListener("error", () => {
    if (source !== state.source) return;
    setLive("reconnecting");
    // The browser retries by itself with Last-Event-ID; if it gave up, find out why.
    if (source.readyState === EventSource.CLOSED) diagnose(source, source.url);
  });
}

// The end of an opening: the selected thread's board or goal it did not send is not in the
// server's database (it was restored from a backup, or is another file), so it goes from the
// view too; a thread without a board then shows an empty one (read once the opening ends).
function dropUnsent(opening) {
  if (!opening.todo_state && state.board !== null) {
    state.board = null;
    schedule("board");
  }
  if (!opening.goal_state && state.goal !== null) {
    state.goal = null;
    schedule("goal");
  }
}

// A hidden tab holds no connection: a browser opens six at most to a server (HTTP/1.1), and
// six tabs' streams would leave none for any request, and every action hang. The stream is closed
// while the tab is hidden (nothing is polled either) and resumes from its cursor once shown.
export function onVisibility() {
  if (document.hidden) {
    if (state.source === null || state.stopped !== null) return;
    state.source.close();
    state.source = null;
    setLive("paused");
    return;
  }
  reloadThreads();
  if (state.source === null && state.stopped === null && state.thread !== null) connect(true);
}

// The browser gave up on the stream: the server is away (try again shortly), or it refused the
// stream (a wrong token, a thread id it does not take), which no retry mends: the panel says
// why and stops, instead of saying "reconnecting" for ever.
async function diagnose(source, url) {
  let refusal = null;
  let status = 0;
  try {
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    status = response.status;
    if (!response.ok && status < 500 && status !== 429) {
      const body = await response.text().then(parse).catch(() => ({}));
      refusal = refusalText(status, body.message);
    }
    controller.abort();
  } catch {
    // away: try again below
  }
  if (source !== state.source) return;
  if (refusal === null) setTimeout(() => { if (source === state.source) connect(); }, 2000);
  else stop(refusal, status);
}

// The server refuses a wrong token as it refuses none (401): the panel knows which it sent.
export function refusalText(status, message) {
  if (status !== 401) return message || `HTTP ${status}`;
  return token ? "wrong token: the token in this address (?token=…) is not this server's"
    : "this server needs its token: open the panel as /?token=YOUR_TOKEN";
}

// What a section the server refused to fill says in its place (after the toast has gone), or
// null while the server answers.
export const refused = () => (state.stopped ? `Not shown: ${state.stopped.message}` : null);

export function stop(refusal, status) {
  if (state.source) state.source.close();
  if (state.stopped?.message === refusal) return; // said already (the list and the stream)
  state.stopped = { message: refusal, status };
  setLive("stopped", "stopped");
  schedule("board", "queue"); // what was never read says why, not "Loading…" nor "empty"
  toast(`The live view stopped: ${refusal}`, true);
}
