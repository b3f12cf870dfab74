// The taskloom panel: one thread's board and goal, and the shared queue, kept live from SSE.
// Every piece of user or model text reaches the page through textContent (see h()), never
// as HTML, and in its own bidi-isolated element (see iso()), so a right-to-left override in
// one title cannot reorder what is shown around it, and its own override controls are shown
// as marks (see bidiShown()); identifiers also show their invisible and direction-control
// characters (see ident()). Snapshots carry versions: an older one than shown
// is dropped, so a replay after a reconnect can never move the view backwards, except when the
// stream starts over (an opening, e.g. after a database restore: see connect()), whose
// snapshots replace the view. A board's changes (todo_change) apply in version order, and a
// missed one makes the board be read whole again (see applyChange()). Repaints are batched to
// one per frame.

// The token as typed in the address: URLSearchParams reads "+" as a space, and a base64
// token ("Ab+cD/eF==") would be refused; only %-escapes are decoded.
function addressToken() {
  const match = /(?:^|&)token=([^&]*)/.exec(location.search.slice(1));
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]) || null;
  } catch {
    return match[1]; // a "%" that starts no escape is part of the token
  }
}
const token = addressToken();

// localStorage, where the browser allows it: one that refuses this site's data (cookies and
// site data blocked) throws on any use, and the panel then forgets its choices with the page.
function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
function keep(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // not kept: the page goes on without it
  }
}

const state = {
  thread: null,
  threads: null, // null until the first load: "no threads yet" only once we know
  board: null,
  goal: null,
  tasks: new Map(),
  tasksFor: "", // the status filter the held tasks were loaded for ("" for all)
  stats: null, // task counts by status, from /api/tasks/stats
  ready: null, // what can run now and why the rest cannot, from /api/tasks/ready
  view: stored("taskloom.view") || "list",
  source: null,
  cursor: null, // the last event id the stream sent (see connect()), or null
  stopped: null, // why the server refused the live view (a wrong token), or null
};

const COLUMNS = ["todo", "awaiting_approval", "ready", "in_progress", "blocked", "done", "rejected"];
const LABEL = {
  todo: "To do", awaiting_approval: "Awaiting approval", ready: "Ready", in_progress: "In progress",
  blocked: "Blocked", done: "Done", rejected: "Rejected", completed: "Completed", dead: "Dead",
  canceled: "Canceled", lease_expired: "Lease expired", active: "Active", paused: "Paused", budget_limited: "Budget limited",
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

// User or model text in its own element: dir="auto" takes its direction from its first strong
// character, and class "u" (unicode-bidi: isolate) keeps its controls from leaking out.
function iso(tag, attrs, value) {
  const cls = attrs.class ? `u ${attrs.class}` : "u";
  return h(tag, { ...attrs, class: cls, dir: "auto" }, typeof value === "string" ? bidiShown(value) : value);
}

// Free text with its embedding, override and isolate controls shown as marks (the marks a
// right-to-left language uses, LRM, RLM and ALM, stay): isolation keeps an override from
// reordering the text around it, not its own; a plan step "rm -rf /\u202e krow/emoh~" would
// read as "rm -rf /~home/work" on the card a person is approving.
const BIDI = /[\u202a-\u202e\u2066-\u2069]/gu;
const bidiShown = (text) => text.replace(BIDI,
  (c) => `\u27e8U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);

// An identifier (thread, agent) as shown: invisible and bidi-control characters become
// visible marks, so "\u202eevil" cannot pass for "live" nor "a\u200b" for "a".
const HIDDEN = /[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\uffa0]/gu;
const ident = (value) => String(value).replace(HIDDEN,
  (c) => `\u27e8U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);

const $ = (id) => document.getElementById(id);
const statusChip = (status) => h("span", { class: `status s-${status}`, "data-status": status }, LABEL[status] || status);

// Token budgets and usages may pass 2^53 (the CLI takes up to 2^63-1), where a JSON number
// loses digits: those fields are read from their source text as BigInt (JSON.parse source
// text access); where the browser cannot, tokens() says "over 9,007,199,254,740,991".
const BIG_FIELDS = new Set(["token_budget", "tokens_used"]);
function parse(text) {
  return JSON.parse(text, (key, value, context) => (BIG_FIELDS.has(key) && typeof value === "number"
    && !Number.isSafeInteger(value) && /^\d+$/.test(context?.source ?? "") ? BigInt(context.source) : value));
}
const tokens = (n) => (typeof n === "bigint" || Number.isSafeInteger(n)
  ? n.toLocaleString() : `over ${Number.MAX_SAFE_INTEGER.toLocaleString()}`);

async function api(path, options = {}) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  // A request that got no answer (the server stopped, restarting, unreachable) says so, not
  // the browser's "Failed to fetch"; `away` tells it from a refusal.
  const response = await fetch(path, { ...options, headers }).catch(() => {
    throw Object.assign(new Error("the server did not answer: try again once the panel is live"), { away: true });
  });
  const body = await response.text().then(parse).catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(body.message || `HTTP ${response.status}`), { status: response.status });
  return body;
}

// What a person's action is called in the messages about it, by the route's last segment.
const ACTION_NAMES = { decision: "Decision", status: "Status change", pause: "Pause", resume: "Resume",
  budget: "Budget change", cancel: "Cancel", requeue: "Requeue", clear: "Clear" };

// The card or task an action is on, as its failure names it: the server's message names it by
// id, and failures stack, so "Cancel not applied: task '01a2…' is already canceled" alone
// does not say which row it was. A long title is cut.
function subjectOf(title) {
  if (!title) return "";
  const chars = [...title]; // by code point: an emoji is not cut in half
  return ` to “${chars.length > 60 ? `${chars.slice(0, 60).join("")}…` : title}”`;
}

// A person's action. One that waits (SQLite's write lock, held by another process, may keep it
// up to ten seconds) says so after a second, and says when it went through; one that fails
// says which action was not applied, and to which card or task, each in its own line.
// Actions in flight, by route: their buttons say busy (aria-disabled, which keeps keyboard focus
// where `disabled` would drop it) and a second click is ignored until the answer, so a double
// click does not send a decision twice nor cancel a task twice.
const pending = new Set();
const ACTION_PARTS = ["goal", "board", "queue"];

async function act(path, body, subject = null) {
  if (pending.has(path)) return;
  pending.add(path);
  schedule(...ACTION_PARTS);
  const what = ACTION_NAMES[path.split("/").pop()] || "Action";
  let waiting = false;
  const slow = setTimeout(() => { waiting = true; toast(`${what}: waiting for the database…`); }, 1000);
  try {
    await api(path, { method: "POST", body: JSON.stringify(body || {}) });
    if (waiting) toast(`${what}: done`);
  } catch (error) {
    toast(`${what} not applied${subjectOf(subject)}: ${error.message}`, true);
    // A card that changed since it was shown (409): the view is behind, so the board is read.
    if (error.status === 409 && path.includes("/cards/")) readBoard();
    // A task the server refused to cancel or requeue, or a goal it refused to pause or resume,
    // is not as shown (another window, a worker or the agent moved it): it is read again, so
    // the view stops offering what was just refused.
    if (!error.away && path.startsWith("/api/tasks/")) readTask(decodeURIComponent(path.split("/")[3]));
    if (!error.away && /^\/api\/threads\/[^/]+\/goal\//.test(path)) readGoal();
  } finally {
    clearTimeout(slow);
    pending.delete(path);
    schedule(...ACTION_PARTS);
  }
}

// A button that runs a person's action; busy while an action on the same route is in flight.
// `subject`: the title of the card or task it acts on (none for the goal's).
function actButton(attrs, label, path, body, subject = null) {
  const busy = pending.has(path);
  return h("button", { class: "btn", type: "button", ...attrs, "aria-disabled": busy ? "true" : null,
    "data-act": path, onclick: () => act(path, body, subject) }, label);
}

let toastTimer;
function toast(message, bad = false) {
  const el = $("toast");
  const text = ident(message); // may quote user text: show its controls, not obey them
  // A failure does not hide an earlier one still on screen: the last three stay, one a line.
  const earlier = bad && !el.hidden && el.classList.contains("bad") ? el.textContent.split("\n").slice(-2) : [];
  el.textContent = [...earlier, text].join("\n");
  el.className = bad ? "toast bad" : "toast";
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, bad ? 8000 : 4000);
}

// ---- rendering (at most once per animation frame) ----

// Only the parts whose data changed are rebuilt, so a half-typed budget survives a new card.
const RENDER = { threads: renderThreads, goal: renderGoal, board: renderBoard, queue: renderQueue };
const dirty = new Set();
const CUT_PARTS = [["board", "board"], ["queue", "queue"], ["goal", "goal-panel"]]; // see markCut()
let frameQueued = false;
function schedule(...parts) {
  for (const part of parts.length ? parts : Object.keys(RENDER)) dirty.add(part);
  if (frameQueued) return;
  frameQueued = true;
  requestAnimationFrame(() => {
    frameQueued = false;
    keepingFocus(() => { for (const part of dirty) RENDER[part](); });
    for (const [part, root] of CUT_PARTS) if (dirty.has(part)) markCut($(root));
    dirty.clear();
  });
}

// ---- long titles ----

// A title element: CSS clamps it to its first lines ("cut"), and its title attribute holds all
// of it. One the clamp cuts short gets a tab stop (see markCut()); a click, Enter or Space opens
// or closes it, and the keyboard focus shows it whole while there.
// A goal's objective and reason are cut the same way (`key`: what keeps one open across
// redraws), or a 4,000-character objective would push the goal's buttons screens down.
const titleEl = (text, cls = "title", key = null) => iso("div",
  { class: `${cls} cut`, title: bidiShown(text), "data-open": key }, text);
const opened = new Set(); // the titles a person opened, by their row key (or their own)

const openKey = (el) => {
  if (el.dataset.open) return el.dataset.open;
  const row = el.closest("[data-card], [data-task]");
  return row ? (row.dataset.card ? `card ${row.dataset.card}` : `task ${row.dataset.task}`) : null;
};

// Which titles under `root` the clamp cuts short: all are measured first, then marked, so the
// page is laid out once.
function markCut(root) {
  const titles = [...root.querySelectorAll(".title.cut")];
  const open = titles.map((el) => opened.has(openKey(el)));
  const cut = titles.map((el, i) => open[i] || el.scrollHeight > el.clientHeight + 1);
  titles.forEach((el, i) => {
    el.classList.toggle("open", open[i]);
    // The focused one keeps its stop (focus shows it whole, so it measures as uncut). A stop
    // is a button that a screen reader says opens and closes.
    if (cut[i] || el === document.activeElement) {
      if (el.tabIndex !== 0) el.tabIndex = 0;
      el.setAttribute("role", "button");
      el.setAttribute("aria-expanded", String(open[i]));
    } else if (el.hasAttribute("tabindex")) {
      for (const name of ["tabindex", "role", "aria-expanded"]) el.removeAttribute(name);
    }
  });
}

function toggleTitle(el) {
  const key = openKey(el);
  if (key === null) return;
  if (opened.has(key)) opened.delete(key);
  else opened.add(key);
  el.classList.toggle("open", opened.has(key));
  el.setAttribute("aria-expanded", String(opened.has(key)));
}

// A rebuilt section has new elements: the control a person was on (a focused Approve button, a
// link in the thread list) is found again by its tag, its card or task and its name, and
// focused, so keyboard use survives an agent's updates. By name alone, focus could move to the
// Approve button of another card with the same title, where Enter would approve the wrong plan.
function nameOf(el) {
  const row = el.closest("[data-card], [data-task]");
  const where = row ? row.dataset.card || row.dataset.task : "";
  // An action button by what it does (its label names its card's title, which an edit moves).
  const what = el.dataset.act ? `${el.dataset.act}|${el.textContent}` : el.getAttribute("aria-label") || el.getAttribute("href") || el.textContent;
  return `${el.tagName}|${where}|${what}`;
}
// A control that is gone (Approve once the plan is approved, Pause once paused) leaves focus
// on its card or task, else its section: on <body>, a keyboard user would start over from the
// top of the page. Not on another button there, where a second Enter would act again.
function keepingFocus(render) {
  const active = document.activeElement;
  const name = active && active !== document.body ? nameOf(active) : null;
  const caret = typeof active?.selectionStart === "number"
    ? [active.selectionStart, active.selectionEnd, active.selectionDirection] : null;
  const row = active?.closest?.("[data-card], [data-task]");
  const rowKey = row ? (row.dataset.card ? `[data-card="${CSS.escape(row.dataset.card)}"]` : `[data-task="${CSS.escape(row.dataset.task)}"]`) : null;
  const section = active?.closest?.("section[id]")?.id;
  render();
  if (name === null || document.activeElement === active && active.isConnected) return;
  const again = [...document.querySelectorAll(active.tagName)].find((el) => nameOf(el) === name)
    || (rowKey && document.querySelector(rowKey)) || (section && document.getElementById(section));
  if (!again) return;
  if (!again.matches("a[href], button, input, select, textarea, [tabindex]")) again.tabIndex = -1;
  again.focus({ preventScroll: true });
  if (caret && typeof again.setSelectionRange === "function") again.setSelectionRange(...caret);
}

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

function renderThreads() {
  const list = $("threads");
  const threads = state.threads || [];
  $("threads-empty").hidden = state.threads === null || threads.length > 0;
  $("threads-count").textContent = state.threads === null ? "" : String(threads.length);
  list.replaceChildren(...threads.map(threadRow).map((t) => {
    const counts = Object.entries(t.cards || {}).map(([s, n]) => `${n} ${LABEL[s] ? LABEL[s].toLowerCase() : s}`);
    return h("li", {},
      h("a", { href: `#${encodeURIComponent(t.thread_id)}`, "aria-current": t.thread_id === state.thread ? "page" : null },
        iso("span", { class: "name", title: ident(t.thread_id) }, ident(t.thread_id)),
        h("span", { class: "meta" }, counts.join(" · ") || "no cards", t.goal_status ? ` · goal ${LABEL[t.goal_status] || t.goal_status}` : "")));
  }));
  $("thread-title").textContent = state.thread === null ? "" : ident(state.thread);
}

// On a phone the thread list is folded behind its button; picking a thread folds it again.
function foldThreads(open) {
  $("threads-nav").classList.toggle("open", open);
  $("threads-toggle").setAttribute("aria-expanded", String(open));
}

function cardActions(card) {
  const path = `/api/threads/${encodeURIComponent(state.thread)}/cards/${encodeURIComponent(card.id)}`;
  if (card.status === "awaiting_approval") {
    return h("div", { class: "actions" },
      // `seen`: the server refuses the decision if the plan changed since it was shown.
      actButton({ class: "btn primary", "aria-label": `Approve the plan: ${bidiShown(card.title)}` }, "Approve",
        `${path}/decision`, { approve: true, seen: card.updated_at }, card.title),
      actButton({ class: "btn danger", "aria-label": `Reject the plan: ${bidiShown(card.title)}` }, "Reject",
        `${path}/decision`, { approve: false, seen: card.updated_at }, card.title));
  }
  if (card.status !== "done" && card.status !== "rejected") {
    return h("div", { class: "actions" },
      // `seen` here too: a card another window or the agent changed since is not moved blind.
      actButton({ title: "Mark done", "aria-label": `Mark done: ${bidiShown(card.title)}` }, "Done",
        `${path}/status`, { status: "done", seen: card.updated_at }, card.title));
  }
  return h("div", { class: "actions" });
}

// The cards a card comes after, each with its title and status, by the board held.
function afterOf(card, byId) {
  return (card.blocked_by || []).map((id) => {
    const other = byId.get(id);
    return { id, title: other ? other.title : id, status: other ? other.status : "missing" };
  });
}

// A card that comes after unfinished cards waits for them: said apart from a blocker note
// (the reason a blocked card gives), and the cards it comes after shown as chips, done or not.
function waitsOn(card, after) {
  return card.status === "done" || card.status === "rejected" ? [] : after.filter((a) => a.status !== "done");
}

function afterChips(card, after) {
  if (!after.length) return null;
  const waiting = waitsOn(card, after);
  return h("div", { class: "sub after" },
    waiting.length ? h("span", { class: "waiting-note" }, `Waiting on ${waiting.length}`) : null,
    h("span", { class: "label" }, "After"),
    after.map((a) => h("span", { class: `chip ${a.status === "done" ? "met" : "unmet"}`, "data-after": a.id,
      title: `${bidiShown(a.title)} (${LABEL[a.status] || a.status})` }, iso("span", {}, a.title))));
}

function cardDetail(card) {
  return [
    card.status === "in_progress" && card.active_form ? iso("div", { class: "sub" }, card.active_form) : null,
    card.objective ? iso("div", { class: "sub" }, card.objective) : null,
    card.blocker ? h("div", { class: "sub" }, "Blocked: ", iso("span", {}, card.blocker)) : null,
    card.notes ? iso("div", { class: "sub" }, card.notes) : null,
    card.assigned_agent ? h("div", { class: "sub" }, "@", iso("span", {}, ident(card.assigned_agent))) : null,
  ];
}

const planList = (card) => (card.plan && card.plan.length
  ? h("ol", {}, card.plan.map((step) => iso("li", {}, step))) : null);

// What approving a plan grants (the tools the card may use) and what it is judged by, shown
// beside the plan, so no one approves a plan without seeing the tools it is allowed.
function cardTerms(card) {
  const tools = card.allowed_tools || [];
  const items = (label, values) => (values && values.length
    ? h("div", { class: "sub terms" }, h("span", { class: "label" }, label),
      h("ul", {}, values.map((value) => iso("li", {}, value)))) : null);
  return [
    tools.length ? h("div", { class: "sub terms tools" }, h("span", { class: "label" }, "Tools allowed"),
      h("span", {}, tools.map((tool) => iso("code", {}, ident(tool))))) : null,
    items("Acceptance criteria", card.acceptance_criteria),
    items("Evidence", card.evidence),
  ];
}

const waitingClass = (card, after) => (waitsOn(card, after).length ? " waiting" : "");
const listCard = (card, after) => h("li", { class: `card ${card.status}${waitingClass(card, after)}`, "data-card": card.id },
  statusChip(card.status),
  h("div", { class: "body" }, titleEl(card.title), afterChips(card, after), cardDetail(card), planList(card), cardTerms(card)),
  cardActions(card));
// A plan waiting for approval is shown where it is decided on, in either view.
const kanbanCard = (card, after) => h("div", { class: `kcard${waitingClass(card, after)}`, "data-card": card.id },
  titleEl(card.title), afterChips(card, after), cardDetail(card), planList(card), cardTerms(card),
  cardActions(card));

// Card elements, reused while the card and its buttons' busy state are unchanged: rebuilding
// all of a 1,000-card board on every live update would freeze the page.
let cardViews = new Map(); // card id -> { key, el }
let cardViewsFor = ""; // the thread and view they were built for

function cardElement(card, build, byId) {
  const path = `/api/threads/${encodeURIComponent(state.thread)}/cards/${encodeURIComponent(card.id)}`;
  const { order, ...shown } = card; // its place is place()'s business
  const after = afterOf(card, byId);
  const key = `${pending.has(`${path}/decision`)}|${pending.has(`${path}/status`)}|${JSON.stringify(shown)}|${JSON.stringify(after)}`;
  const held = cardViews.get(card.id);
  if (held && held.key === key) return held.el;
  const el = build(card, after);
  cardViews.set(card.id, { key, el });
  return el;
}

// Make `parent`'s children exactly `nodes`, moving only what is out of place.
function place(parent, nodes) {
  const keep = new Set(nodes);
  for (const child of [...parent.children]) if (!keep.has(child)) child.remove();
  nodes.forEach((node, i) => {
    if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
  });
}

// The element of `root` matching `selector`, made by `make` if `root` shows something else.
function holder(root, selector, make) {
  const el = root.firstElementChild;
  if (el && el.matches(selector) && root.children.length === 1) return el;
  const fresh = make();
  root.replaceChildren(fresh);
  return fresh;
}

function renderBoard() {
  for (const button of document.querySelectorAll(".seg button")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === state.view));
  }
  const root = $("board");
  const cards = state.board ? state.board.cards : [];
  const done = cards.filter((c) => c.status === "done").length;
  const ready = state.board && state.board.ready_count !== undefined ? ` · ${state.board.ready_count} ready to start` : "";
  $("board-summary").textContent = cards.length ? `${done}/${cards.length} done${ready} · v${state.board.version}` : "";
  const byId = new Map(cards.map((c) => [c.id, c]));
  const scope = `${state.thread}|${state.view}`;
  if (scope !== cardViewsFor) {
    cardViews = new Map();
    cardViewsFor = scope;
  }
  const ids = new Set(cards.map((c) => c.id));
  for (const id of [...cardViews.keys()]) if (!ids.has(id)) cardViews.delete(id);
  if (!cards.length) {
    const empty = state.board ? "No cards on this board yet." : refused() || (state.thread ? "Loading…" : "Pick a thread.");
    root.replaceChildren(h("p", { class: "empty" }, empty));
    return;
  }
  if (state.view === "kanban") {
    const board = holder(root, "div.kanban", () => h("div", { class: "kanban" }));
    const present = COLUMNS.filter((s) => s !== "rejected" || cards.some((c) => c.status === s));
    place(board, present.map((status) => {
      const inColumn = cards.filter((c) => c.status === status);
      const column = board.querySelector(`:scope > [data-column="${status}"]`) || h("div", { class: "col", "data-column": status });
      place(column, [h("h3", {}, statusChip(status), " ", h("span", { class: "n" }, String(inColumn.length))),
        ...inColumn.map((card) => cardElement(card, kanbanCard, byId))]);
      return column;
    }));
    return;
  }
  place(holder(root, "ul.cards", () => h("ul", { class: "cards" })), cards.map((card) => cardElement(card, listCard, byId)));
}

// The host controls each goal status allows (domain/goals.py): pause takes an active or a
// blocked goal, resume a paused or blocked one; a budget-limited goal continues when its
// budget is raised (the form below), and a complete one is done.
const GOAL_ACTIONS = {
  active: [["pause", "Pause"]],
  blocked: [["resume", "Resume"], ["pause", "Pause"]],
  paused: [["resume", "Resume"]],
};

function seconds(value) {
  const s = Math.round(value);
  return s >= 3600 ? `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
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
  const share = budget ? Math.min(1, Number(used) / Number(budget)) : 0;
  const bar = h("div", { class: `bar${share >= 1 ? " over" : share >= 0.8 ? " high" : ""}`, role: "progressbar",
    "aria-label": "Tokens used of the budget",
    "aria-valuenow": String(used), "aria-valuemax": budget === null ? null : String(budget) }, fill(share));
  // A time budget is a budget too: shown beside the tokens (a goal with one is never said to
  // have "no budget"), and removable here, since raising the token budget does not lift a
  // goal limited by its time.
  const timeBudget = goal.time_budget_s;
  const timeUsed = Number(goal.time_used_s || 0);
  const timeOver = timeBudget !== null && timeBudget !== undefined && timeUsed >= Number(timeBudget);
  const time = timeBudget === null || timeBudget === undefined ? null
    : h("span", { class: `usage${timeOver ? " over" : ""}` }, `${seconds(timeUsed)} / ${seconds(Number(timeBudget))} of time`);
  const dropTime = timeOver ? actButton({}, "Remove time budget", `${path}/budget`, { time_budget_s: null }) : null;
  const button = (action, label) => actButton({}, label, `${path}/${action}`);
  const toggles = (GOAL_ACTIONS[goal.status] || []).map(([action, label]) => button(action, label));
  // Text, not type=number: only a text field tells where its caret is, and a redraw (the
  // agent reporting usage) must put it back, or "12", an update, "3" becomes 312.
  const input = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", placeholder: "new budget", "aria-label": "New token budget",
    value: state.budgetDraft || "", oninput: (event) => { state.budgetDraft = event.target.value; } });
  // novalidate: every bad value gets the same message from here, not the browser's bubble.
  const form = h("form", { novalidate: true, onsubmit: (event) => {
    event.preventDefault();
    if (pending.has(`${path}/budget`)) return; // the draft stays until the last change answers
    // Decimal digits, "1e6" a million; not Number()'s other forms ("0x10" is 16, "0b11" 3).
    const typed = input.value.trim();
    const value = /^\+?(\d+\.?\d*|\.\d+)(e\+?\d+)?$/i.test(typed) ? Number(typed) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < 1) {
      return toast(`Budget must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER.toLocaleString()}`, true);
    }
    act(`${path}/budget`, { token_budget: value });
    input.value = state.budgetDraft = "";
  } }, input, h("button", { class: "btn", type: "submit", "aria-disabled": pending.has(`${path}/budget`) ? "true" : null }, "Set budget"));
  root.replaceChildren(h("div", { class: "goal" },
    h("div", { class: "row" }, h("h2", {}, "Goal"), statusChip(goal.status)),
    titleEl(goal.objective, "objective title", `goal ${state.thread}`),
    goal.reason ? titleEl(goal.reason, "sub title", `reason ${state.thread}`) : null,
    h("div", { class: "row" }, bar,
      h("span", { class: "usage" }, budget ? `${tokens(used)} / ${tokens(budget)} tokens`
        : time ? `${tokens(used)} tokens` : `${tokens(used)} tokens · no budget`),
      time),
    h("div", { class: "row" }, toggles, form, dropTime)));
}

// The budget bar's fill, sized through the DOM: the content security policy refuses style
// attributes, so a style smuggled into the page would not apply either.
function fill(share) {
  const el = h("i");
  el.style.width = `${(share * 100).toFixed(1)}%`;
  return el;
}

// The counts come from the server (all tasks); the rows are the most urgent TASK_LIMIT of the
// chosen status, loaded from the server, and the view says when more exist than it shows.
const SHOWN = 200;
function renderQueue() {
  const status = $("queue-status").value;
  const agent = $("queue-agent").value.trim().toLowerCase();
  const text = $("queue-text").value.trim().toLowerCase();
  const stats = state.stats;
  // "can run now" is said only when dependencies or groups hold some ready tasks back.
  const runnable = state.ready && stats && state.ready.count !== (stats.ready ?? 0) + (stats.lease_expired ?? 0)
    ? `${state.ready.count} can run now · ` : "";
  $("queue-stats").textContent = runnable
    + (stats ? Object.entries(stats)
      .filter(([s, n]) => s !== "total" && n > 0)
      .map(([s, n]) => `${n} ${(LABEL[s] || s).toLowerCase()}`).join(" · ") : "");
  const held = [...state.tasks.values()].filter((t) => shownAs(t, status));
  const matched = held
    .filter((t) => (!agent || (t.claimed_by || t.target_agent || "").toLowerCase().includes(agent))
      && (!text || t.title.toLowerCase().includes(text)))
    .sort(taskOrder);
  const rows = matched.slice(0, SHOWN);
  const total = stats ? (status ? (stats[status] ?? 0) + (status === "ready" ? stats.lease_expired ?? 0 : 0)
    : stats.total) : held.length;
  const kind = status ? ` ${(LABEL[status] || status).toLowerCase()}` : "";
  let more = null;
  if (!agent && !text) {
    if (rows.length && total > rows.length) more = `Showing the ${rows.length} most urgent of ${total}${kind} tasks.`;
  } else if (total > held.length) {
    more = `Only the ${held.length} most urgent of ${total}${kind} tasks are searched`
      + `${matched.length > rows.length ? ` (${rows.length} of ${matched.length} matches shown)` : ""}.`;
  } else if (matched.length > rows.length) {
    more = `Showing the ${rows.length} most urgent of ${matched.length} matching tasks.`;
  }
  const note = more ? h("p", { class: "more" }, more) : null;
  if (!rows.length) {
    // Any task at all, whatever the status filter shows (its count is only that status's).
    const any = (stats ? stats.total : 0) || held.length;
    const empty = any ? "No task matches the filters." : (!stats && refused()) || "The queue is empty.";
    $("queue").replaceChildren(h("p", { class: "empty" }, empty), ...(note ? [note] : []));
    return;
  }
  // Each cell has a class for its place on a phone, where the rows are cards, and the facts
  // carry their column's name (data-label), shown there above them.
  const head = (label, cls = null) => h("th", { class: cls, scope: "col" }, label);
  const fact = (label, cls, ...content) => h("td", { class: cls, "data-label": label }, ...content);
  $("queue").replaceChildren(h("table", { class: "tasks" },
    h("thead", {}, h("tr", {}, head("Status"), head("Title"), head("Kind"), head("Agent"),
      head("Prio", "num"), head("Tries", "num"), h("td", {}))),
    h("tbody", {}, rows.map((t) => h("tr", { "data-task": t.id },
      h("td", { class: "c-status" }, statusChip(shownStatus(t)), waits(t)),
      h("td", { class: "c-title" }, titleEl(t.title), graphOf(t),
        t.last_error ? iso("div", { class: "err" }, t.last_error) : null),
      fact("Kind", "c-kind", t.kind ? iso("span", {}, t.kind) : null),
      fact("Agent", "c-agent", t.claimed_by ? iso("span", {}, ident(t.claimed_by))
        : t.target_agent ? ["→ ", iso("span", {}, ident(t.target_agent))] : null),
      fact("Prio", "num c-prio", String(t.priority)),
      fact("Tries", "num c-tries", `${t.attempts}/${t.max_attempts}`),
      h("td", { class: "c-act" }, taskAction(t)))))), ...(note ? [note] : []));
}

// Cancel work not yet finished; run a dead task again (its attempts reset), once whatever
// killed it is fixed, and a canceled one that a held task is blocked by (a cancel undone), as
// the API takes.
function taskAction(t) {
  const path = `/api/tasks/${encodeURIComponent(t.id)}`;
  if (t.status === "ready" || t.status === "in_progress" || t.status === "blocked") {
    return actButton({ class: "btn danger", "aria-label": `Cancel the task: ${bidiShown(t.title)}` }, "Cancel",
      `${path}/cancel`, { reason: "canceled from the panel" }, t.title);
  }
  return t.status === "dead" || (t.status === "canceled" && blocksOthers(t))
    ? actButton({ "aria-label": `Requeue the task: ${bidiShown(t.title)}` }, "Requeue", `${path}/requeue`, {}, t.title)
    : null;
}

// Whether a task the panel holds is blocked by `t` (by its id, or by its dedup key).
const blocksOthers = (t) => [...state.tasks.values()].some((o) => o.status === "blocked"
  && ((o.depends_on || []).includes(t.id) || (t.dedup_key && (o.depends_on_keys || []).includes(t.dedup_key))));

// A task in progress whose lease ran out is no one's: the next claim takes it back. It is
// shown as that, and listed with the ready tasks, as the API lists it.
function shownStatus(t) {
  return t.status === "in_progress" && t.lease_expires_at && Date.parse(t.lease_expires_at) <= Date.now()
    ? "lease_expired" : t.status;
}
function shownAs(t, status) {
  const shown = shownStatus(t);
  return !status || shown === status || (status === "ready" && shown === "lease_expired");
}

// A task's place in the work graph: its group, the tasks it runs after (by title when the
// panel holds them), and why it cannot run now (blocked by which task, waiting on which, its
// group busy), from /api/tasks/ready.
function graphOf(t) {
  const name = (id) => state.tasks.get(id)?.title || `…${id.slice(-8)}`;
  const after = [...(t.depends_on || []).map(name), ...(t.depends_on_keys || []).map((k) => `key ${k}`)];
  const why = t.status === "blocked" ? [t.result]
    : (state.ready?.waiting || []).filter((w) => w.id === t.id).flatMap((w) => w.why.map((r) => r.text));
  if (!t.group_key && !after.length && !why.length) return null;
  return h("div", { class: "graph" },
    t.group_key ? iso("span", { class: "group", title: "At most one task of this group runs at a time" }, `group ${t.group_key}`) : null,
    after.length ? iso("span", { class: "after" }, `after ${after.join(", ")}`) : null,
    ...why.filter((text) => text).map((text) => iso("div", { class: "why" }, text)));
}

// A ready task no one may claim yet (added with a delay, or failed with a retry delay) says
// from when: otherwise it looks like work the agents are ignoring. An absolute time stays
// true while the page sits unchanged.
function waits(t) {
  const from = t.status === "ready" && t.not_before ? Date.parse(t.not_before) : NaN;
  if (!(from > Date.now())) return null;
  const at = new Date(from);
  const when = at.toDateString() === new Date().toDateString()
    ? at.toLocaleTimeString() : at.toLocaleString();
  return h("div", { class: "waits", title: t.not_before }, `not before ${when}`);
}

// ---- live data ----

// A snapshot is shown if newer than the one held, or if `fresh`: part of a stream's opening,
// which is the server's current state even when its versions are lower (a restored database).
function apply(type, event, fresh = false) {
  const data = event.data;
  if (type === "task_state") {
    state.tasks.set(data.id, data);
    if (tasksLoading) tasksLoading.add(data.id);
    loadStatsSoon();
    schedule("queue");
  } else if (state.thread === null) {
    // no thread picked yet (there was none): a thread's first event means one exists now
    loadThreads();
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
  if (state.threads && !state.threads.some((t) => t.thread_id === state.thread)) loadThreads();
}

// A board's change (todo_change) applies to the board at the version before it: its cards
// replace theirs by id, its removed ids go, and the cards are shown by their order. A change
// that does not follow the board held (one was missed: the stream resumed past it, or it came
// while the board was being read) is kept, and the board is read whole again; the kept changes
// that follow what was read then apply. A thread's first change applies to an empty board.
const boardChanges = new Map(); // version -> change not applied yet
let boardRead = null; // the thread whose board is being read whole, or null

function applyChange(change) {
  if (state.board && change.version <= state.board.version) return;
  boardChanges.set(change.version, change);
  drainChanges();
}

function drainChanges(afterRead = false) {
  if (!state.board && boardChanges.has(1)) state.board = { thread_id: state.thread, version: 0, cards: [] };
  if (state.board) {
    for (const version of [...boardChanges.keys()]) if (version <= state.board.version) boardChanges.delete(version);
    for (let next; (next = boardChanges.get(state.board.version + 1));) {
      boardChanges.delete(next.version);
      state.board = merged(state.board, next);
    }
  }
  schedule("board");
  if (!boardChanges.size) return;
  // Still a change missing right after a read: read again shortly, not in a tight loop.
  if (afterRead) setTimeout(() => { if (boardChanges.size) readBoard(); }, 1000);
  else readBoard();
}

function merged(board, change) {
  const gone = new Set([...change.removed, ...change.cards.map((c) => c.id)]);
  const cards = board.cards.filter((c) => !gone.has(c.id)).concat(change.cards).sort((a, b) => a.order - b.order);
  return { thread_id: board.thread_id, version: change.version, updated_at: change.updated_at, cards,
    summary: change.summary, ready_count: change.ready_count };
}

async function readBoard() {
  if (boardRead !== null) return;
  const thread = state.thread;
  boardRead = thread;
  let board = null;
  try {
    board = await api(`/api/threads/${encodeURIComponent(thread)}/board`);
  } catch {
    // the server is away: the stream's reconnect reads it again
  } finally {
    boardRead = null;
  }
  if (state.thread !== thread) return;
  if (board && (!state.board || board.version > state.board.version)) state.board = board;
  drainChanges(true);
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
function connect(resume = false) {
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
    if (openings++ > 0) loadThreads(); // started over: the list may have changed as much
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
    if (state.thread !== null) loadBoardIfNone(source);
    if (wasStopped && $("toast").textContent.startsWith("The live view stopped")) $("toast").hidden = true;
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
// view too; a thread without a board then shows an empty one.
function dropUnsent(opening) {
  if (!opening.todo_state && state.board !== null) {
    state.board = null;
    schedule("board");
    loadBoardIfNone(state.source);
  }
  if (!opening.goal_state && state.goal !== null) {
    state.goal = null;
    schedule("goal");
  }
}

// A hidden tab holds no connection: a browser opens six at most to a server (HTTP/1.1), and
// six tabs' streams would leave none for any request, and every action hang. The stream is closed
// while the tab is hidden (nothing is polled either) and resumes from its cursor once shown.
function onVisibility() {
  if (document.hidden) {
    if (state.source === null || state.stopped !== null) return;
    state.source.close();
    state.source = null;
    setLive("paused");
    return;
  }
  loadThreads();
  if (state.source === null && state.stopped === null && state.thread !== null) connect(true);
}

// A thread without a board has no todo_state in the stream's opening, so the board would say
// "Loading…" for ever. Once the stream is open (and when an opening dropped the board) the
// board is asked for, and shown only if the stream sent none meanwhile.
async function loadBoardIfNone(source) {
  const thread = state.thread;
  try {
    const board = await api(`/api/threads/${encodeURIComponent(thread)}/board`);
    if (source !== state.source || state.thread !== thread || state.board !== null) return;
    state.board = board;
    drainChanges();
  } catch {
    // the server is away (the stream says so) or refused the thread (the list says why)
  }
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
function refusalText(status, message) {
  if (status !== 401) return message || `HTTP ${status}`;
  return token ? "wrong token: the token in this address (?token=…) is not this server's"
    : "this server needs its token: open the panel as /?token=YOUR_TOKEN";
}

// What a section the server refused to fill says in its place (after the toast has gone), or
// null while the server answers.
const refused = () => (state.stopped ? `Not shown: ${state.stopped.message}` : null);

function stop(refusal, status) {
  if (state.source) state.source.close();
  if (state.stopped?.message === refusal) return; // said already (the list and the stream)
  state.stopped = { message: refusal, status };
  setLive("stopped", "stopped");
  schedule("board", "queue"); // what was never read says why, not "Loading…" nor "empty"
  toast(`The live view stopped: ${refusal}`, true);
}

// The queue as the API lists it replaces what the panel holds (after a reconnect the stream
// may have resumed past pruned events, so only the list knows what changed meanwhile): listed
// tasks are updated, and tasks it no longer lists are dropped, wherever the list is complete:
// all of it if shorter than the limit, else up to its last task in the API's order. A task
// the stream changed while the request was out keeps the stream's state unless the list's is
// newer; a later load (another reconnect, another status filter) supersedes an earlier one
// still in flight. The list is of the status filter's tasks (all when none is chosen), so a
// status with few tasks is listed whole however many others are more urgent.
const TASK_LIMIT = 500;
let tasksLoading = null; // ids the stream changed since the newest loadTasks() started
let tasksLoad = 0;
const taskOrder = (a, b) => a.priority - b.priority
  || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)
  || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

async function loadTasks() {
  const load = ++tasksLoad;
  const status = $("queue-status").value;
  const touched = new Set();
  tasksLoading = touched;
  loadStats();
  try {
    const query = new URLSearchParams({ limit: String(TASK_LIMIT) });
    if (status) query.set("status", status);
    const tasks = await api(`/api/tasks?${query}`);
    if (load !== tasksLoad) return;
    if (status !== state.tasksFor) { // held for another filter: only the stream's news stay
      for (const id of [...state.tasks.keys()]) if (!touched.has(id)) state.tasks.delete(id);
      state.tasksFor = status;
    }
    const last = tasks.length >= TASK_LIMIT ? tasks[tasks.length - 1] : null;
    const listed = new Set(tasks.map((t) => t.id));
    for (const [id, task] of state.tasks) {
      if (!listed.has(id) && !touched.has(id) && (!last || taskOrder(task, last) <= 0)) state.tasks.delete(id);
    }
    for (const task of tasks) {
      const held = state.tasks.get(task.id);
      if (!touched.has(task.id) || !held || (task.changed_at && held.changed_at && task.changed_at > held.changed_at)) {
        state.tasks.set(task.id, task);
      }
    }
    schedule("queue");
  } catch (error) {
    if (load === tasksLoad) toast(error.message, true);
  } finally {
    if (load === tasksLoad) tasksLoading = null;
  }
}

// The followed thread's goal as the server has it now, unless the one held is as new.
async function readGoal() {
  const thread = state.thread;
  try {
    const goal = await api(`/api/threads/${encodeURIComponent(thread)}/goal`);
    if (state.thread !== thread || (state.goal && goal.version <= state.goal.version)) return;
    state.goal = goal;
    schedule("goal", "threads");
  } catch {
    // away: the stream's reconnect brings it
  }
}

// One task as the server has it now, in place of the one held unless that is newer.
async function readTask(id) {
  try {
    const task = await api(`/api/tasks/${encodeURIComponent(id)}`);
    const held = state.tasks.get(id);
    if (held && held.changed_at && task.changed_at && held.changed_at > task.changed_at) return;
    state.tasks.set(id, task);
    loadStatsSoon();
    schedule("queue");
  } catch {
    // away, or gone (pruned): the stream or the next load says what it is
  }
}

// The counts by status, for all tasks; reloaded (at most a few times a second) as tasks change.
let statsLoad = 0;
let statsTimer = null;
async function loadStats() {
  const load = ++statsLoad;
  try {
    const [stats, ready] = await Promise.all([api("/api/tasks/stats"), api("/api/tasks/ready")]);
    if (load !== statsLoad) return;
    state.stats = stats;
    state.ready = ready;
    schedule("queue");
  } catch {
    // the server is away; the next load catches up
  }
}
function loadStatsSoon() {
  if (statsTimer === null) statsTimer = setTimeout(() => { statsTimer = null; loadStats(); }, 250);
}

// One load of the list at a time: a slow server must not have a new poll piled on every 3 s
// per tab. A load asked for meanwhile (an opening said the list may have changed) runs once
// the one in flight is done, which may have been answered before the change.
let threadsBusy = false;
let threadsAgain = false;
async function loadThreads() {
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
function pollThreads() {
  if (!document.hidden && !threadsBusy) loadThreads();
}

function selectThread(thread) {
  if (thread === state.thread) return;
  state.thread = thread;
  state.board = null;
  boardChanges.clear();
  state.goal = null;
  state.budgetDraft = ""; // typed for the goal shown, not for the next thread's
  if (location.hash.slice(1) !== encodeURIComponent(thread)) location.hash = encodeURIComponent(thread);
  connect();
  schedule();
}

// The thread named by the URL's hash, or null: a hash that is not valid percent-encoding
// ("#100%") names no thread rather than stopping the panel.
function hashThread() {
  try {
    // Trimmed as the server trims a thread id: "#%20fa" is thread "fa", whose events say "fa".
    return decodeURIComponent(location.hash.slice(1)).trim() || null;
  } catch {
    return null;
  }
}

function start() {
  for (const button of document.querySelectorAll(".seg button")) {
    button.addEventListener("click", () => {
      state.view = button.dataset.view;
      keep("taskloom.view", state.view);
      schedule("board");
    });
  }
  for (const id of ["queue-agent", "queue-text"]) $(id).addEventListener("input", () => schedule("queue"));
  // A keyboard user reaches the goal and board without tabbing through every thread.
  $("skip").addEventListener("click", () => $("main").focus());
  $("threads-toggle").addEventListener("click", () => foldThreads(!$("threads-nav").classList.contains("open")));
  $("threads").addEventListener("click", (event) => {
    if (!event.target.closest("a")) return;
    // On a phone the picked link folds away with the list: the focus goes to the thread's
    // goal and board, not to <body>, where a screen reader says nothing and starts over.
    const folding = $("threads-nav").classList.contains("open") && $("threads-toggle").offsetParent !== null;
    foldThreads(false);
    if (folding) $("main").focus({ preventScroll: true });
  });
  document.addEventListener("click", (event) => {
    const title = event.target.closest?.(".title[tabindex]");
    if (title && !getSelection().toString()) toggleTitle(title); // not when selecting its text
  });
  document.addEventListener("keydown", (event) => {
    if ((event.key === "Enter" || event.key === " ") && event.target.matches?.(".title[tabindex]")) {
      event.preventDefault();
      toggleTitle(event.target);
    }
  });
  // A wider or narrower window cuts other titles.
  let resized = false;
  window.addEventListener("resize", () => {
    if (resized) return;
    resized = true;
    requestAnimationFrame(() => {
      resized = false;
      for (const [, root] of CUT_PARTS) markCut($(root));
    });
  });
  $("queue-status").addEventListener("change", () => {
    schedule("queue");
    loadTasks();
  });
  window.addEventListener("hashchange", () => {
    const thread = hashThread();
    if (thread) selectThread(thread);
  });
  // The stream opens once the thread is known: from the hash, else the first thread listed.
  const initial = hashThread();
  if (initial) selectThread(initial);
  else schedule();
  loadThreads();
  setInterval(pollThreads, 3000);
  document.addEventListener("visibilitychange", onVisibility);
}

start();
