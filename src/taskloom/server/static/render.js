// Repaints, at most one per animation frame, of the parts whose data changed; the focused
// control is found again after each.
import { $ } from "./dom.js";
import { markCut } from "./titles.js";

// Only the parts whose data changed are rebuilt, so a half-typed budget survives a new card.
// Each part's renderer is set by app.js (see renderWith()): the views import schedule(), and
// this module imports none of them.
const RENDER = {};
export function renderWith(renderers) {
  Object.assign(RENDER, renderers);
}
const dirty = new Set();
export const CUT_PARTS = [["board", "board"], ["queue", "queue"], ["goal", "goal-panel"]]; // see markCut()
let frameQueued = false;
export function schedule(...parts) {
  for (const part of parts.length ? parts : Object.keys(RENDER)) dirty.add(part);
  if (frameQueued) return;
  frameQueued = true;
  requestAnimationFrame(() => {
    frameQueued = false;
    keepingFocus(() => { for (const part of dirty) RENDER[part](); });
    for (const [part, root] of CUT_PARTS) if (dirty.has(part)) markCut($(root));
    dirty.clear();
  });
}

// A rebuilt section has new elements: the control a person was on (a focused Approve button, a
// link in the thread list) is found again by its tag, its card or task and its name, and
// focused, so keyboard use survives an agent's updates. By name alone, focus could move to the
// Approve button of another card with the same title, where Enter would approve the wrong plan.
function nameOf(el) {
  const row = el.closest("[data-card], [data-task]");
  const where = row ? row.dataset.card || row.dataset.task : "";
  // An action button by what it does (its label names its card's title, which an edit moves).
  const what = el.dataset.act ? `${el.dataset.act}|${el.textContent}` : el.getAttribute("aria-label") || el.getAttribute("href") || el.textContent;
  return `${el.tagName}|${where}|${what}`;
}
// A control that is gone (Approve once the plan is approved, Pause once paused) leaves focus
// on its card or task, else its section: on <body>, a keyboard user would start over from the
// top of the page. Not on another button there, where a second Enter would act again.
function keepingFocus(render) {
  const active = document.activeElement;
  const name = active && active !== document.body ? nameOf(active) : null;
  const caret = typeof active?.selectionStart === "number"
    ? [active.selectionStart, active.selectionEnd, active.selectionDirection] : null;
  const row = active?.closest?.("[data-card], [data-task]");
  const rowKey = row ? (row.dataset.card ? `[data-card="${CSS.escape(row.dataset.card)}"]` : `[data-task="${CSS.escape(row.dataset.task)}"]`) : null;
  // The section itself stays (only its content is rebuilt): a row that left it (a card the
  // agent removed, a task a filter no longer shows once canceled, a thread no longer listed)
  // leaves the focus there.
  const section = active?.closest?.("section, nav");
  render();
  if (name === null || document.activeElement === active && active.isConnected) return;
  const again = [...document.querySelectorAll(active.tagName)].find((el) => nameOf(el) === name)
    || (rowKey && document.querySelector(rowKey)) || (section?.isConnected && section);
  if (!again) return;
  if (!again.matches("a[href], button, input, select, textarea, [tabindex]")) again.tabIndex = -1;
  again.focus({ preventScroll: true });
  if (caret && typeof again.setSelectionRange === "function") again.setSelectionRange(...caret);
}
