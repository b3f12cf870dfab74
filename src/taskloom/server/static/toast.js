// The toast: one line of news, or the failures still on screen, one a line. It is a live region
// that stays in the page, empty (and so unseen) when it has nothing to say: one shown only with
// its message (`hidden` until then) is not yet in the accessibility tree when the message comes,
// and a screen reader may not read it.
import { $, ident } from "./dom.js";

let toastTimer;
let failures = []; // the failures on screen, oldest first
let news = null; // the line of news below them, or null

function show() {
  const el = $("toast");
  el.textContent = [...failures, ...(news === null ? [] : [news])].join("\n");
  el.className = failures.length ? "toast bad" : "toast";
  clearTimeout(toastTimer);
  if (el.textContent) toastTimer = setTimeout(hideToast, failures.length ? 8000 : 4000);
}

export function hideToast() {
  clearTimeout(toastTimer);
  failures = [];
  news = null;
  $("toast").textContent = "";
}

export function toast(message, bad = false) {
  const text = ident(message); // may quote user text: show its controls, not obey them
  // A failure does not hide an earlier one still on screen: the last three stay, one a line.
  // The same failure again (a retried action, a second failing load) is shown once, as the
  // latest, and its time on screen starts over. News ("Pause: done") goes under the failures,
  // which it does not hide, in place of the news before it; a failure replaces the news (an
  // action's "waiting for the database…" is over once it failed).
  if (bad) {
    failures = [...failures.filter((line) => line !== text).slice(-2), text];
    news = null;
  } else {
    news = text;
  }
  show();
}

// An action that went through takes its own earlier failure off the screen ("Decision not
// applied to “Plan A”: the server did not answer" stays wrong once the retry approved it);
// other failures stay.
export function forget(prefix) {
  const start = ident(prefix);
  const kept = failures.filter((line) => !line.startsWith(start));
  if (kept.length === failures.length) return;
  failures = kept;
  show();
}
