// The queue held: its tasks as listed by the API and changed by the stream, and their counts.
import { api } from "./api.js";
import { $ } from "./dom.js";
import { schedule } from "./render.js";
import { state } from "./state.js";
import { toast } from "./toast.js";

// The queue as the API lists it replaces what the panel holds (after a reconnect the stream
// may have resumed past pruned events, so only the list knows what changed meanwhile): listed
// tasks are updated, and tasks it no longer lists are dropped, wherever the list is complete:
// all of it if shorter than the limit, else up to its last task in the API's order. A task
// the stream changed while the request was out keeps the stream's state unless the list's is
// newer; a later load (another reconnect, another status filter) supersedes an earlier one
// still in flight. The list is of the status filter's tasks (all when none is chosen), so a
// status with few tasks is listed whole however many others are more urgent.
const TASK_LIMIT = 500;
export const SHOWN = 200; // the rows shown, of the tasks held
export let tasksLoading = null; // ids the stream changed since the newest loadTasks() started
let tasksLoad = 0;
let listFull = false; // whether the last list stopped at its limit: more tasks exist than held
export const taskOrder = (a, b) => a.priority - b.priority
  || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)
  || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export async function loadTasks() {
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
    listFull = last !== null;
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
    // Away: the live indicator says so, and the reconnect loads the list again.
    if (load === tasksLoad && !error.away) toast(error.message, true);
  } finally {
    if (load === tasksLoad) tasksLoading = null;
  }
}

// A task in progress whose lease ran out is no one's: the next claim takes it back. It is
// shown as that, and listed with the ready tasks, as the API lists it.
export function shownStatus(t) {
  return t.status === "in_progress" && t.lease_expires_at && Date.parse(t.lease_expires_at) <= Date.now()
    ? "lease_expired" : t.status;
}
export function shownAs(t, status) {
  const shown = shownStatus(t);
  return !status || shown === status || (status === "ready" && shown === "lease_expired");
}

// The tasks held, kept in bounds as the stream changes them (checked at most four times a
// second). Of the chosen status the TASK_LIMIT most urgent stay, and as many of the others
// (tasks that left the status, whose titles the shown tasks' dependencies may name): a panel
// left open while workers run through a queue of 100,000 tasks would otherwise hold, sort and
// filter every task the stream ever named. The list is read again once fewer tasks of the
// status are held than are shown while the last list said more exist: with the 500 listed
// ready tasks done by workers, the queue would say no task matches while thousands are ready.
let keepTimer = null;
export function keepTasksSoon() {
  if (keepTimer === null) keepTimer = setTimeout(() => { keepTimer = null; keepTasks(); }, 250);
}
function keepTasks() {
  const status = $("queue-status").value;
  const ours = [];
  const others = [];
  for (const task of state.tasks.values()) (shownAs(task, status) ? ours : others).push(task);
  for (const held of [ours, others]) {
    if (held.length <= TASK_LIMIT) continue;
    for (const task of held.sort(taskOrder).slice(TASK_LIMIT)) state.tasks.delete(task.id);
    if (held === ours) listFull = true; // tasks of the status exist past those held
  }
  if (status !== state.tasksFor) return; // the list of the chosen status is on its way
  if (listFull && ours.length < SHOWN && tasksLoading === null) loadTasks();
}

// One task as the server has it now, in place of the one held unless that is newer.
export async function readTask(id) {
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
// One load at a time: during a burst of changes a slow answer (what can run now is worked out
// over every ready task) must not have more piled on it every 250 ms, each slowing the next;
// one asked for meanwhile runs once the one out has answered, and shows the counts as they
// are then.
let statsTimer = null;
let statsBusy = false;
let statsAgain = false;
async function loadStats() {
  if (statsBusy) {
    statsAgain = true;
    return;
  }
  statsBusy = true;
  try {
    const [stats, ready] = await Promise.all([api("/api/tasks/stats"), api("/api/tasks/ready")]);
    state.stats = stats;
    state.ready = ready;
    schedule("queue");
  } catch {
    // the server is away; the next load catches up
  } finally {
    statsBusy = false;
    if (statsAgain) {
      statsAgain = false;
      loadStatsSoon();
    }
  }
}
export function loadStatsSoon() {
  if (statsTimer === null) statsTimer = setTimeout(() => { statsTimer = null; loadStats(); }, 250);
}
