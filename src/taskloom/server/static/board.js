// The board view: the followed thread's cards, as a list or as kanban columns.
import { actButton, pending } from "./actions.js";
import { $, bidiShown, h, ident, iso, place } from "./dom.js";
import { count, LABEL, statusChip } from "./format.js";
import { refused } from "./live.js";
import { state } from "./state.js";
import { cutText, titleEl } from "./titles.js";

const COLUMNS = ["todo", "awaiting_approval", "ready", "in_progress", "blocked", "done", "rejected"];

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
    waiting.length ? h("span", { class: "waiting-note" }, `Waiting on ${count(waiting.length)}`) : null,
    h("span", { class: "label" }, "After"),
    after.map((a) => h("span", { class: `chip ${a.status === "done" ? "met" : "unmet"}`, "data-after": a.id,
      title: `${bidiShown(a.title)} (${LABEL[a.status] || a.status})` }, iso("span", {}, a.title))));
}

// Each long text is cut to its first lines (see cutText()), or one 60,000-character note
// would push the rest of the board and the queue screens down.
function cardDetail(card) {
  const cut = (text, what, label = null) => cutText(text, "sub", `${what} ${card.id}`, label);
  return [
    card.status === "in_progress" && card.active_form ? cut(card.active_form, "doing") : null,
    card.objective ? cut(card.objective, "objective") : null,
    card.blocker ? cut(card.blocker, "blocker", "Blocked: ") : null,
    card.notes ? cut(card.notes, "notes") : null,
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

// The element of `root` matching `selector`, made by `make` if `root` shows something else.
function holder(root, selector, make) {
  const el = root.firstElementChild;
  if (el && el.matches(selector) && root.children.length === 1) return el;
  const fresh = make();
  root.replaceChildren(fresh);
  return fresh;
}

export function renderBoard() {
  for (const button of document.querySelectorAll(".seg button")) {
    button.setAttribute("aria-pressed", String(button.dataset.view === state.view));
  }
  const root = $("board");
  const cards = state.board ? state.board.cards : [];
  const done = cards.filter((c) => c.status === "done").length;
  const ready = state.board && state.board.ready_count !== undefined ? ` · ${count(state.board.ready_count)} ready to start` : "";
  $("board-summary").textContent = cards.length ? `${count(done)}/${count(cards.length)} done${ready} · v${state.board.version}` : "";
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
      place(column, [h("h3", {}, statusChip(status), " ", h("span", { class: "n" }, count(inColumn.length))),
        ...inColumn.map((card) => cardElement(card, kanbanCard, byId))]);
      return column;
    }));
    return;
  }
  place(holder(root, "ul.cards", () => h("ul", { class: "cards" })), cards.map((card) => cardElement(card, listCard, byId)));
}
