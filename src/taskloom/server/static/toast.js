// The toast: one line of news, or the failures still on screen, one a line.
import { $, ident } from "./dom.js";

let toastTimer;
export function toast(message, bad = false) {
  const el = $("toast");
  const text = ident(message); // may quote user text: show its controls, not obey them
  // A failure does not hide an earlier one still on screen: the last three stay, one a line.
  // The same failure again (a retried action, a second failing load) is shown once, as the
  // latest, and its time on screen starts over.
  const earlier = bad && !el.hidden && el.classList.contains("bad")
    ? el.textContent.split("\n").filter((line) => line !== text).slice(-2) : [];
  el.textContent = [...earlier, text].join("\n");
  el.className = bad ? "toast bad" : "toast";
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, bad ? 8000 : 4000);
}
