// The threads list: its rows, its loading (polled every 3 s), and which thread is followed.
import { api } from "./api.js";
import { boardChanges } from "./board-changes.js";
import { $, h, ident, iso, place } from "./dom.js";
import { count, LABEL } from "./format.js";
import { connect, refusalText, stop } from "./live.js";
import { schedule } from "./render.js";
import { state } from "./state.js";
import { toast } from "./toast.js";

// The followed thread's row counts the cards of the board shown, which its events keep
// current, unless the list has seen a newer board (the stream is behind); the goal's status
// likewise. Other threads' rows are as the list says (polled every 3 s).
function threadRow(t) {
  if (t.thread_id !== state.thread) return t;
  const board = state.board;
  const row = { ...t };
  if (board && board.version >= (t.board_version || 0)) {
    row.cards = {};
    for (const card of board.cards) row.cards[card.status] = (row.cards[card.status] || 0) + 1;
  }
  if (state.goal) row.goal_status = state.goal.goal ? state.goal.goal.status : null;
  return row;
}

// Rows, reused while a thread's row is unchanged: the followed board's every change repaints
// its row, and rebuilding 2,000 rows for it would freeze the page.
let rowViews = new Map(); // thread id -> { key, el }

function threadItem(t) {
  const current = t.thread_id === state.thread;
  const key = `${current}|${JSON.stringify(t)}`;
  const held = rowViews.get(t.thread_id);
  if (held && held.key === key) return held.el;
  const counts = Object.entries(t.cards || {}).map(([s, n]) => `${count(n)} ${LABEL[s] ? LABEL[s].toLowerCase() : s}`);
  const el = h("li", {},
    h("a", { href: `#${encodeURIComponent(t.thread_id)}`, "aria-current": current ? "page" : null },
      iso("span", { class: "name", title: ident(t.thread_id) }, ident(t.thread_id)),
      h("span", { class: "meta" }, counts.join(" · ") || "no cards", t.goal_status ? ` · goal ${LABEL[t.goal_status] || t.goal_status}` : "")));
  rowViews.set(t.thread_id, { key, el });
  return el;
}

export function renderThreads() {
  const threads = state.threads || [];
  $("threads-empty").hidden = state.threads === null || threads.length > 0;
  $("threads-count").textContent = state.threads === null ? "" : count(threads.length);
  const items = threads.map(threadRow).map(threadItem);
  const listed = new Set(threads.map((t) => t.thread_id));
  rowViews = new Map([...rowViews].filter(([id]) => listed.has(id)));
  place($("threads"), items);
  $("thread-title").textContent = state.thread === null ? "" : ident(state.thread);
  // Each window's tab (and history entry) names its thread: five panels are not five "taskloom".
  document.title = state.thread === null ? "taskloom" : `${ident(state.thread)} · taskloom`;
}

// On a phone the thread list is folded behind its button; picking a thread folds it again.
export function foldThreads(open) {
  $("threads-nav").classList.toggle("open", open);
  $("threads-toggle").setAttribute("aria-expanded", String(open));
}

// One load of the list at a time: a slow server must not have a new poll piled on every 3 s
// per tab. A load asked for meanwhile (an opening said the list may have changed) runs once
// the one in flight is done, which may have been answered before the change.
let threadsBusy = false;
let threadsAgain = false;
export async function loadThreads() {
  if (state.stopped?.status === 401) return; // no list without the token: the message is on screen
  if (threadsBusy) {
    threadsAgain = true;
    return;
  }
  threadsBusy = true;
  try {
    const threads = await api("/api/threads");
    const changed = JSON.stringify(threads) !== JSON.stringify(state.threads); // true on the first load
    state.threads = threads;
    if (!state.thread && threads.length) selectThread(threads[0].thread_id);
    else if (changed) schedule("threads");
    // No thread to pick: follow the queue (and new threads).
    if (!state.source && !document.hidden) connect();
  } catch (error) {
    // The server is away (the live indicator says so), or it answered with an error, which
    // the person must see: a database replaced under the server must not look like an empty one.
    if (error.status === 401) stop(refusalText(401), 401);
    else if (!error.away) toast(error.message, true);
  } finally {
    threadsBusy = false;
    if (threadsAgain) {
      threadsAgain = false;
      loadThreads();
    }
  }
}

// The periodic poll (threads other than the one followed change too): not while hidden, and
// not while a load is still out.
export function pollThreads() {
  if (!document.hidden && !threadsBusy) loadThreads();
}

export function selectThread(thread) {
  if (thread === state.thread) return;
  state.thread = thread;
  state.board = null;
  boardChanges.clear();
  state.goal = null;
  state.budgetDraft = ""; // typed for the goal shown, not for the next thread's
  // The address names the thread shown in place, adding no history entry: a thread picked
  // for a page opened without one (or a hash written another way, "#%20t") would leave an
  // entry Back returns to with nothing changed. A person's pick is a link, already in history.
  if (location.hash.slice(1) !== encodeURIComponent(thread)) history.replaceState(history.state, "", `#${encodeURIComponent(thread)}`);
  connect();
  schedule();
}

// The thread named by the URL's hash, or null: a hash that is not valid percent-encoding
// ("#100%") names no thread rather than stopping the panel.
export function hashThread() {
  try {
    // Trimmed as the server trims a thread id: "#%20fa" is thread "fa", whose events say "fa".
    return decodeURIComponent(location.hash.slice(1)).trim() || null;
  } catch {
    return null;
  }
}
