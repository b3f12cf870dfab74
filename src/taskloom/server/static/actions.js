// A person's actions (approve, done, pause, cancel, requeue…): sent once, said while waiting,
// and named with their card or task when refused.
import { api } from "./api.js";
import { readBoard } from "./board-changes.js";
import { h } from "./dom.js";
import { readGoal } from "./goal-read.js";
import { schedule } from "./render.js";
import { readTask } from "./tasks.js";
import { forget, toast } from "./toast.js";

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
// click does not send a decision twice nor cancel a task twice. Answers whether it was applied.
export const pending = new Set();
const ACTION_PARTS = ["goal", "board", "queue"];

export async function act(path, body, subject = null) {
  if (pending.has(path)) return false;
  pending.add(path);
  schedule(...ACTION_PARTS);
  const what = ACTION_NAMES[path.split("/").pop()] || "Action";
  let waiting = false;
  const slow = setTimeout(() => { waiting = true; toast(`${what}: waiting for the database…`); }, 1000);
  try {
    await api(path, { method: "POST", body: JSON.stringify(body || {}) });
    forget(`${what} not applied${subjectOf(subject)}: `);
    if (waiting) toast(`${what}: done`);
    return true;
  } catch (error) {
    toast(`${what} not applied${subjectOf(subject)}: ${error.message}`, true);
    // A card, task or goal the server refused an action on is not as shown (it changed since,
    // 409, or is gone, 404: another window, a worker or the agent moved it): it is read again,
    // so the view stops offering what was just refused.
    if (!error.away && path.includes("/cards/")) readBoard();
    if (!error.away && path.startsWith("/api/tasks/")) readTask(decodeURIComponent(path.split("/")[3]));
    if (!error.away && /^\/api\/threads\/[^/]+\/goal\//.test(path)) readGoal();
    return false;
  } finally {
    clearTimeout(slow);
    pending.delete(path);
    schedule(...ACTION_PARTS);
  }
}

// A button that runs a person's action; busy while an action on the same route is in flight.
// `subject`: the title of the card or task it acts on (none for the goal's).
export function actButton(attrs, label, path, body, subject = null) {
  const busy = pending.has(path);
  return h("button", { class: "btn", type: "button", ...attrs, "aria-disabled": busy ? "true" : null,
    "data-act": path, onclick: () => act(path, body, subject) }, label);
}
