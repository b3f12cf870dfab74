// The toast: one line of news, or the failures still on screen, one a line. It is a live region
// that stays in the page, empty (and so unseen) when it has nothing to say: one shown only with
// its message (`hidden` until then) is not yet in the accessibility tree when the message comes,
// and a screen reader may not read it.
import { $, ident } from "./dom.js";

let toastTimer;
export function hideToast() {
  clearTimeout(toastTimer);
  $("toast").textContent = "";
}

export function toast(message, bad = false) {
  const el = $("toast");
  const text = ident(message); // may quote user text: show its controls, not obey them
  // A failure does not hide an earlier one still on screen: the last three stay, one a line.
  // The same failure again (a retried action, a second failing load) is shown once, as the
  // latest, and its time on screen starts over.
  const earlier = bad && el.classList.contains("bad")
    ? el.textContent.split("\n").filter((line) => line && line !== text).slice(-2) : [];
  el.textContent = [...earlier, text].join("\n");
  el.className = bad ? "toast bad" : "toast";
  clearTimeout(toastTimer);
  toastTimer = setTimeout(hideToast, bad ? 8000 : 4000);
}

// An action that went through takes its own earlier failure off the screen ("Decision not
// applied to “Plan A”: the server did not answer" stays wrong once the retry approved it);
// other failures stay.
export function forget(prefix) {
  const el = $("toast");
  if (!el.classList.contains("bad")) return;
  const start = ident(prefix);
  const kept = el.textContent.split("\n").filter((line) => line && !line.startsWith(start));
  if (!kept.length) hideToast();
  else el.textContent = kept.join("\n");
}
