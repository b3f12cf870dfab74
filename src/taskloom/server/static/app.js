// The taskloom panel: one thread's board and goal, and the shared queue, kept live from SSE.
// Every piece of user or model text reaches the page through textContent (see h()), never
// as HTML. Snapshots carry versions: an older one than shown is dropped, so a replay after a
// reconnect can never move the view backwards. Repaints are batched to one per frame.

const params = new URLSearchParams(location.search);
const token = params.get("token");

const state = {
  thread: null,
  threads: [],
  board: null,
  goal: null,
  tasks: new Map(),
  view: localStorage.getItem("taskloom.view") || "list",
  source: null,
};

const COLUMNS = ["todo", "awaiting_approval", "ready", "in_progress", "blocked", "done", "rejected"];
const LABEL = {
  todo: "To do", awaiting_approval: "Awaiting approval", ready: "Ready", in_progress: "In progress",
  blocked: "Blocked", done: "Done", rejected: "Rejected", completed: "Completed", dead: "Dead",
  canceled: "Canceled", active: "Active", paused: "Paused", budget_limited: "Budget limited",
  complete: "Complete",
};

// h("div", {class: "x", onclick: fn}, "text", child) builds DOM; strings become text nodes.
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const $ = (id) => document.getElementById(id);
const statusChip = (status) => h("span", { class: `status s-${status}`, "data-status": status }, LABEL[status] || status);

async function api(path, options = {}) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { ...options, headers });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.message || `HTTP ${response.status}`);
  return body;
}

async function act(path, body) {
  try {
    await api(path, { method: "POST", body: JSON.stringify(body || {}) });
  } catch (error) {
    toast(error.message, true);
  }
}

let toastTimer;
function toast(message, bad = false) {
  const el = $("toast");
  el.textContent = message;
  el.className = bad ? "toast bad" : "toast";
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}

// ---- rendering (at most once per animation frame) ----

// Only the parts whose data changed are rebuilt, so a half-typed budget survives a new card.
const RENDER = { threads: renderThreads, goal: renderGoal, board: renderBoard, queue: renderQueue };
const dirty = new Set();
let frameQueued = false;
function schedule(...parts) {
  for (const part of parts.length ? parts : Object.keys(RENDER)) dirty.add(part);
  if (frameQueued) return;
  frameQueued = true;
  requestAnimationFrame(() => {
    frameQueued = false;
    for (const part of dirty) RENDER[part]();
    dirty.clear();
  });
}

function renderThreads() {
  const list = $("threads");
  $("threads-empty").hidden = state.threads.length > 0;
  list.replaceChildren(...state.threads.map((t) => {
    const counts = Object.entries(t.cards || {}).map(([s, n]) => `${n} ${LABEL[s] ? LABEL[s].toLowerCase() : s}`);
    return h("li", {},
      h("a", { href: `#${encodeURIComponent(t.thread_id)}`, "aria-current": t.thread_id === state.thread ? "page" : null },
        h("span", { class: "name" }, t.thread_id),
        h("span", { class: "meta" }, counts.join(" · ") || "no cards", t.goal_status ? ` · goal ${LABEL[t.goal_status] || t.goal_status}` : "")));
  }));
  $("thread-title").textContent = state.thread || "";
}

function cardActions(card) {
  const path = `/api/threads/${encodeURIComponent(state.thread)}/cards/${encodeURIComponent(card.id)}`;
  if (card.status === "awaiting_approval") {
    return h("div", { class: "actions" },
      h("button", { class: "btn primary", type: "button", onclick: () => act(`${path}/decision`, { approve: true }) }, "Approve"),
      h("button", { class: "btn danger", type: "button", onclick: () => act(`${path}/decision`, { approve: false }) }, "Reject"));
  }
  if (card.status !== "done" && card.status !== "rejected") {
    return h("div", { class: "actions" },
      h("button", { class: "btn", type: "button", title: "Mark done", onclick: () => act(`${path}/status`, { status: "done" }) }, "Done"));
  }
  return h("div", { class: "actions" });
}

function cardDetail(card) {
  return [
    card.status === "in_progress" && card.active_form ? h("div", { class: "sub" }, card.active_form) : null,
    card.objective ? h("div", { class: "sub" }, card.objective) : null,
    card.blocker ? h("div", { class: "sub" }, `Blocked: ${card.blocker}`) : null,
    card.notes ? h("div", { class: "sub" }, card.notes) : null,
    card.assigned_agent ? h("div", { class: "sub" }, `@${card.assigned_agent}`) : null,
  ];
}

function renderBoard() {
  for (const button of document.querySelectorAll(".seg button")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === state.view));
  }
  const root = $("board");
  const cards = state.board ? state.board.cards : [];
  const done = cards.filter((c) => c.status === "done").length;
  $("board-summary").textContent = cards.length ? `${done}/${cards.length} done · v${state.board.version}` : "";
  if (!cards.length) {
    root.replaceChildren(h("p", { class: "empty" }, state.thread ? "No cards on this board yet." : "Pick a thread."));
    return;
  }
  if (state.view === "kanban") {
    const present = COLUMNS.filter((s) => s !== "rejected" || cards.some((c) => c.status === s));
    root.replaceChildren(h("div", { class: "kanban" }, present.map((status) => {
      const inColumn = cards.filter((c) => c.status === status);
      return h("div", { class: "col", "data-column": status },
        h("h3", {}, statusChip(status), " ", h("span", { class: "n" }, String(inColumn.length))),
        inColumn.map((card) => h("div", { class: "kcard", "data-card": card.id },
          h("div", { class: "title" }, card.title), cardDetail(card), cardActions(card))));
    })));
    return;
  }
  root.replaceChildren(h("ul", { class: "cards" }, cards.map((card) => h("li",
    { class: `card ${card.status}`, "data-card": card.id },
    statusChip(card.status),
    h("div", {}, h("div", { class: "title" }, card.title), cardDetail(card),
      card.plan && card.plan.length ? h("ol", {}, card.plan.map((step) => h("li", {}, step))) : null),
    cardActions(card)))));
}

function renderGoal() {
  const root = $("goal-panel");
  const goal = state.goal && state.goal.goal;
  if (!goal) {
    root.replaceChildren();
    return;
  }
  const path = `/api/threads/${encodeURIComponent(state.thread)}/goal`;
  const budget = goal.token_budget;
  const used = goal.tokens_used || 0;
  const share = budget ? Math.min(1, used / budget) : 0;
  const bar = h("div", { class: `bar${share >= 1 ? " over" : share >= 0.8 ? " high" : ""}`, role: "progressbar",
    "aria-valuenow": String(used), "aria-valuemax": budget === null ? null : String(budget) }, h("i", { style: `width:${(share * 100).toFixed(1)}%` }));
  const toggle = goal.status === "paused"
    ? h("button", { class: "btn", type: "button", onclick: () => act(`${path}/resume`) }, "Resume")
    : goal.status === "complete" ? null
      : h("button", { class: "btn", type: "button", onclick: () => act(`${path}/pause`) }, "Pause");
  const input = h("input", { type: "number", min: "1", step: "1", placeholder: "new budget", "aria-label": "New token budget" });
  const form = h("form", { onsubmit: (event) => {
    event.preventDefault();
    const value = Number.parseInt(input.value, 10);
    if (!Number.isFinite(value) || value < 1) return toast("Budget must be a positive whole number", true);
    act(`${path}/budget`, { token_budget: value });
    input.value = "";
  } }, input, h("button", { class: "btn", type: "submit" }, "Set budget"));
  root.replaceChildren(h("div", { class: "goal" },
    h("div", { class: "row" }, h("h2", {}, "Goal"), statusChip(goal.status)),
    h("div", { class: "objective" }, goal.objective),
    goal.reason ? h("div", { class: "sub" }, goal.reason) : null,
    h("div", { class: "row" }, bar,
      h("span", { class: "usage" }, budget ? `${used.toLocaleString()} / ${budget.toLocaleString()} tokens` : `${used.toLocaleString()} tokens · no budget`)),
    h("div", { class: "row" }, toggle, form)));
}

function renderQueue() {
  const status = $("queue-status").value;
  const agent = $("queue-agent").value.trim().toLowerCase();
  const text = $("queue-text").value.trim().toLowerCase();
  const all = [...state.tasks.values()];
  const counts = {};
  for (const t of all) counts[t.status] = (counts[t.status] || 0) + 1;
  $("queue-stats").textContent = Object.entries(counts).map(([s, n]) => `${n} ${LABEL[s].toLowerCase()}`).join(" · ");
  const rows = all
    .filter((t) => (!status || t.status === status)
      && (!agent || (t.claimed_by || t.target_agent || "").toLowerCase().includes(agent))
      && (!text || t.title.toLowerCase().includes(text)))
    .sort((a, b) => a.priority - b.priority || a.created_at.localeCompare(b.created_at))
    .slice(0, 200);
  if (!rows.length) {
    $("queue").replaceChildren(h("p", { class: "empty" }, all.length ? "No task matches the filters." : "The queue is empty."));
    return;
  }
  $("queue").replaceChildren(h("table", { class: "tasks" },
    h("thead", {}, h("tr", {}, ["Status", "Title", "Kind", "Agent", "Prio", "Tries", ""].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((t) => h("tr", { "data-task": t.id },
      h("td", {}, statusChip(t.status)),
      h("td", {}, t.title, t.last_error ? h("div", { class: "err" }, t.last_error) : null),
      h("td", {}, t.kind || ""),
      h("td", {}, t.claimed_by || (t.target_agent ? `→ ${t.target_agent}` : "")),
      h("td", { class: "num" }, String(t.priority)),
      h("td", { class: "num" }, `${t.attempts}/${t.max_attempts}`),
      h("td", {}, t.status === "ready" || t.status === "in_progress"
        ? h("button", { class: "btn danger", type: "button", onclick: () => act(`/api/tasks/${encodeURIComponent(t.id)}/cancel`, { reason: "canceled from the panel" }) }, "Cancel")
        : null))))));
}

// ---- live data ----

function apply(type, event) {
  const data = event.data;
  if (type === "task_state") {
    state.tasks.set(data.id, data);
    schedule("queue");
  } else if (event.thread_id !== state.thread) {
    // another thread's event: not ours to show
  } else if (type === "todo_state") {
    if (state.board && data.version <= state.board.version) return;
    state.board = data;
    schedule("board");
  } else if (type === "goal_state") {
    if (state.goal && data.version <= state.goal.version) return;
    state.goal = data;
    schedule("goal");
  }
}

function setLive(mode) {
  const el = $("live");
  el.dataset.state = mode;
  el.querySelector("span").textContent = mode;
}

function connect() {
  if (state.source) state.source.close();
  const query = new URLSearchParams({ thread: state.thread || "" });
  if (token) query.set("token", token);
  const source = new EventSource(`/api/events?${query}`);
  state.source = source;
  for (const type of ["todo_state", "goal_state", "task_state"]) {
    source.addEventListener(type, (message) => {
      if (source === state.source) apply(type, JSON.parse(message.data));
    });
  }
  source.addEventListener("open", () => {
    setLive("live");
    loadTasks();
  });
  source.addEventListener("error", () => {
    if (source !== state.source) return;
    setLive("reconnecting");
    // The browser retries by itself with Last-Event-ID; if it gave up, start a fresh stream.
    if (source.readyState === EventSource.CLOSED) setTimeout(() => { if (source === state.source) connect(); }, 2000);
  });
}

async function loadTasks() {
  try {
    const tasks = await api("/api/tasks?limit=500");
    for (const task of tasks) if (!state.tasks.has(task.id)) state.tasks.set(task.id, task);
    schedule("queue");
  } catch (error) {
    toast(error.message, true);
  }
}

async function loadThreads() {
  try {
    const threads = await api("/api/threads");
    const changed = JSON.stringify(threads) !== JSON.stringify(state.threads);
    state.threads = threads;
    if (!state.thread && threads.length) selectThread(threads[0].thread_id);
    else if (changed) schedule("threads");
  } catch {
    // the server is away; the live indicator already says so
  }
}

function selectThread(thread) {
  if (thread === state.thread) return;
  state.thread = thread;
  state.board = null;
  state.goal = null;
  if (location.hash.slice(1) !== encodeURIComponent(thread)) location.hash = encodeURIComponent(thread);
  connect();
  schedule();
}

function start() {
  for (const button of document.querySelectorAll(".seg button")) {
    button.addEventListener("click", () => {
      state.view = button.dataset.view;
      localStorage.setItem("taskloom.view", state.view);
      schedule("board");
    });
  }
  for (const id of ["queue-status", "queue-agent", "queue-text"]) $(id).addEventListener("input", () => schedule("queue"));
  window.addEventListener("hashchange", () => {
    const thread = decodeURIComponent(location.hash.slice(1));
    if (thread) selectThread(thread);
  });
  const initial = decodeURIComponent(location.hash.slice(1));
  if (initial) selectThread(initial);
  else connect();
  loadThreads();
  setInterval(loadThreads, 3000);
}

start();
