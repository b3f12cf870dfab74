// The queue view: the task counts and the most urgent tasks, filtered, with their actions.
import { actButton, pending } from "./actions.js";
import { $, bidiShown, h, ident, iso, place } from "./dom.js";
import { count, LABEL, statusChip } from "./format.js";
import { graphFacts, graphOf } from "./graph.js";
import { refused } from "./live.js";
import { state } from "./state.js";
import { SHOWN, shownAs, shownStatus, taskOrder } from "./tasks.js";
import { cutText, titleEl } from "./titles.js";

// The counts come from the server (all tasks); the rows are the most urgent TASK_LIMIT of the
// chosen status, loaded from the server, and the view says when more exist than it shows.
export function renderQueue() {
  rowViewsFor += 1;
  const status = $("queue-status").value;
  const agent = $("queue-agent").value.trim().toLowerCase();
  const text = $("queue-text").value.trim().toLowerCase();
  const stats = state.stats;
  // "can run now" is said only when dependencies or groups hold some ready tasks back.
  const runnable = state.ready && stats && state.ready.count !== (stats.ready ?? 0) + (stats.lease_expired ?? 0)
    ? `${count(state.ready.count)} can run now · ` : "";
  $("queue-stats").textContent = runnable
    + (stats ? Object.entries(stats)
      .filter(([s, n]) => s !== "total" && n > 0)
      .map(([s, n]) => `${count(n)} ${(LABEL[s] || s).toLowerCase()}`).join(" · ") : "");
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
    if (rows.length && total > rows.length) more = `Showing the ${count(rows.length)} most urgent of ${count(total)}${kind} tasks.`;
  } else if (total > held.length) {
    more = `Only the ${count(held.length)} most urgent of ${count(total)}${kind} tasks are searched`
      + `${matched.length > rows.length ? ` (${count(rows.length)} of ${count(matched.length)} matches shown)` : ""}.`;
  } else if (matched.length > rows.length) {
    more = `Showing the ${count(rows.length)} most urgent of ${count(matched.length)} matching tasks.`;
  }
  const said = $("queue").querySelector(":scope > p.more");
  const note = more ? (said?.textContent === more ? said : h("p", { class: "more" }, more)) : null;
  if (!rows.length) {
    // Any task at all, whatever the status filter shows (its count is only that status's).
    const any = (stats ? stats.total : 0) || held.length;
    const empty = any ? "No task matches the filters." : (!stats && refused()) || "The queue is empty.";
    $("queue").replaceChildren(h("p", { class: "empty" }, empty), ...(note ? [note] : []));
    return;
  }
  const table = holder($("queue"), "table.tasks", () => h("table", { class: "tasks" },
    h("thead", {}, h("tr", {}, head("Status"), head("Title"), head("Kind"), head("Agent"),
      head("Prio", "num"), head("Tries", "num"), head(h("span", { class: "vh" }, "Actions")))), h("tbody")));
  place(table.tBodies[0], rows.map(taskRow));
  place($("queue"), [table, ...(note ? [note] : [])]);
  rowViews = new Map([...rowViews].filter(([, view]) => view.at === rowViewsFor));
}

const head = (label, cls = null) => h("th", { class: cls, scope: "col" }, label);

// The element of `root` matching `selector` as its first child, else one made by `make`.
function holder(root, selector, make) {
  const el = root.firstElementChild;
  return el && el.matches(selector) ? el : make();
}

// Rows, reused while all they show of their task is unchanged: a burst of task changes
// repaints the queue every frame, and rebuilding its 200 rows each time (and laying out the
// page again) kept the page busy for most of the burst.
let rowViews = new Map(); // task id -> { key, el }
let rowViewsFor = 0; // the renderQueue() call that last used them

function taskRow(t) {
  const path = `/api/tasks/${encodeURIComponent(t.id)}`;
  const key = JSON.stringify([t, shownStatus(t), waitsAt(t), graphFacts(t), pending.has(`${path}/cancel`),
    pending.has(`${path}/requeue`), t.status === "canceled" && blocksOthers(t)]);
  const held = rowViews.get(t.id);
  if (held && held.key === key) {
    held.at = rowViewsFor;
    return held.el;
  }
  // Each cell has a class for its place on a phone, where the rows are cards, and the facts
  // carry their column's name (data-label), shown there above them.
  const fact = (label, cls, ...content) => h("td", { class: cls, "data-label": label }, ...content);
  const el = h("tr", { "data-task": t.id },
    h("td", { class: "c-status" }, statusChip(shownStatus(t)), waits(t)),
    h("td", { class: "c-title" }, titleEl(t.title), graphOf(t),
      t.last_error ? cutText(t.last_error, "err", `error ${t.id}`) : null),
    fact("Kind", "c-kind", t.kind ? iso("span", {}, t.kind) : null),
    fact("Agent", "c-agent", t.claimed_by ? iso("span", {}, ident(t.claimed_by))
      : t.target_agent ? ["→ ", iso("span", {}, ident(t.target_agent))] : null),
    fact("Prio", "num c-prio", String(t.priority)),
    fact("Tries", "num c-tries", `${t.attempts}/${t.max_attempts}`),
    h("td", { class: "c-act" }, taskAction(t)));
  rowViews.set(t.id, { key, el, at: rowViewsFor });
  return el;
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

// A ready task no one may claim yet (added with a delay, or failed with a retry delay) says
// from when: otherwise it looks like work the agents are ignoring. An absolute time stays
// true while the page sits unchanged.
function waitsAt(t) {
  const from = t.status === "ready" && t.not_before ? Date.parse(t.not_before) : NaN;
  if (!(from > Date.now())) return null;
  const at = new Date(from);
  return at.toDateString() === new Date().toDateString() ? at.toLocaleTimeString() : at.toLocaleString();
}
function waits(t) {
  const when = waitsAt(t);
  return when === null ? null : h("div", { class: "waits", title: t.not_before }, `not before ${when}`);
}
