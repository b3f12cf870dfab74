// What the panel holds: the followed thread, its board and goal, the queue's tasks, the stream;
// and the person's choices kept in localStorage where the browser allows it.
// localStorage, where the browser allows it: one that refuses this site's data (cookies and
// site data blocked) throws on any use, and the panel then forgets its choices with the page.
function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
export function keep(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // not kept: the page goes on without it
  }
}

export const state = {
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
