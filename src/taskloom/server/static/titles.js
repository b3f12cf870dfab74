// Long titles and texts: clamped to their first lines, opened and closed by a click or the keyboard.
import { bidiShown, h, iso } from "./dom.js";

// A title element: CSS clamps it to its first lines ("cut"), and its title attribute holds all
// of it. One the clamp cuts short gets a tab stop (see markCut()); a click, Enter or Space opens
// or closes it, and the keyboard focus shows it whole while there.
// A goal's objective and reason are cut the same way (`key`: what keeps one open across
// redraws), or a 4,000-character objective would push the goal's buttons screens down.
export const titleEl = (text, cls = "title", key = null) => iso("div",
  { class: `${cls} cut`, title: bidiShown(text), "data-open": key }, text);
// A long text other than a title (a card's notes, a task's error), cut the same way: `label`
// ("Blocked: ") goes before it, outside its bidi isolate; `key` keeps it open across redraws.
export const cutText = (text, cls, key, label = null) => (label === null
  ? iso("div", { class: `${cls} cut`, title: bidiShown(text), "data-open": key }, text)
  : h("div", { class: `${cls} cut`, title: `${label}${bidiShown(text)}`, "data-open": key }, label, iso("span", {}, text)));
const opened = new Set(); // the titles and texts a person opened, by their row key (or their own)

const openKey = (el) => {
  if (el.dataset.open) return el.dataset.open;
  const row = el.closest("[data-card], [data-task]");
  return row ? (row.dataset.card ? `card ${row.dataset.card}` : `task ${row.dataset.task}`) : null;
};

// Which titles and texts under `root` the clamp cuts short: all are measured first, then marked, so the
// page is laid out once.
export function markCut(root) {
  const titles = [...root.querySelectorAll(".cut")];
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

export function toggleTitle(el) {
  const key = openKey(el);
  if (key === null) return;
  if (opened.has(key)) opened.delete(key);
  else opened.add(key);
  el.classList.toggle("open", opened.has(key));
  el.setAttribute("aria-expanded", String(opened.has(key)));
}
