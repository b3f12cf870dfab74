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
//
// One module per concept, all under /static/ (plain ES modules, no build step): api.js (requests
// and the token), state.js, dom.js and format.js (building and writing the page), render.js
// (repaints), titles.js, toast.js, actions.js, live.js (the stream), threads.js, board.js and
// board-changes.js, goal.js and goal-read.js, queue.js, tasks.js and graph.js. This one starts the panel.

import { renderBoard } from "./board.js";
import { $ } from "./dom.js";
import { renderGoal } from "./goal.js";
import { onVisibility, reloadThreadsWith } from "./live.js";
import { renderQueue } from "./queue.js";
import { CUT_PARTS, renderWith, schedule } from "./render.js";
import { keep, state } from "./state.js";
import { loadTasks } from "./tasks.js";
import { foldThreads, hashThread, loadThreads, pollThreads, renderThreads, selectThread } from "./threads.js";
import { markCut, toggleTitle } from "./titles.js";
import { hideToast } from "./toast.js";

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
    const title = event.target.closest?.(".cut[tabindex]");
    if (title && !getSelection().toString()) toggleTitle(title); // not when selecting its text
  });
  document.addEventListener("keydown", (event) => {
    // Escape puts away the toast, which may cover the buttons at the window's bottom corner.
    if (event.key === "Escape" && $("toast").textContent) hideToast();
    if ((event.key === "Enter" || event.key === " ") && event.target.matches?.(".cut[tabindex]")) {
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

reloadThreadsWith(loadThreads);
renderWith({ threads: renderThreads, goal: renderGoal, board: renderBoard, queue: renderQueue });
start();
