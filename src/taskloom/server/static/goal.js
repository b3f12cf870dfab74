// The goal view: the followed thread's goal, its budgets and its host controls.
import { act, actButton, pending } from "./actions.js";
import { $, h } from "./dom.js";
import { count, seconds, statusChip, tokens } from "./format.js";
import { schedule } from "./render.js";
import { state } from "./state.js";
import { titleEl } from "./titles.js";
import { toast } from "./toast.js";

// The host controls each goal status allows (domain/goals.py): pause takes an active or a
// blocked goal, resume a paused or blocked one; a budget-limited goal continues when its
// budget is raised (the form below), and a complete one is done.
const GOAL_ACTIONS = {
  active: [["pause", "Pause"]],
  blocked: [["resume", "Resume"], ["pause", "Pause"]],
  paused: [["resume", "Resume"]],
};

export function renderGoal() {
  const root = $("goal-panel");
  const goal = state.goal && state.goal.goal;
  if (!goal) {
    root.replaceChildren();
    return;
  }
  const path = `/api/threads/${encodeURIComponent(state.thread)}/goal`;
  const budget = goal.token_budget;
  const used = goal.tokens_used || 0;
  const share = budget ? Math.min(1, Number(used) / Number(budget)) : 0;
  // A screen reader reads the bar as the text beside it says it ("900 / 1,000 tokens"), not as
  // a percentage, which without a budget would be of 100 ("5000 percent").
  const timed = goal.time_budget_s !== null && goal.time_budget_s !== undefined;
  const usage = budget ? `${tokens(used)} / ${tokens(budget)} tokens`
    : timed ? `${tokens(used)} tokens` : `${tokens(used)} tokens · no budget`;
  const bar = h("div", { class: `bar${share >= 1 ? " over" : share >= 0.8 ? " high" : ""}`, role: "progressbar",
    "aria-label": "Tokens used of the budget", "aria-valuetext": usage,
    "aria-valuenow": budget ? String(used) : null, "aria-valuemax": budget ? String(budget) : null }, fill(share));
  // A time budget is a budget too: shown beside the tokens (a goal with one is never said to
  // have "no budget"), and removable here, since raising the token budget does not lift a
  // goal limited by its time.
  const timeBudget = goal.time_budget_s;
  const timeUsed = Number(goal.time_used_s || 0);
  const timeOver = timed && timeUsed >= Number(timeBudget);
  const time = !timed ? null
    : h("span", { class: `usage${timeOver ? " over" : ""}` }, `${seconds(timeUsed)} / ${seconds(Number(timeBudget))} of time`);
  const dropTime = timeOver ? actButton({}, "Remove time budget", `${path}/budget`, { time_budget_s: null }) : null;
  const button = (action, label) => actButton({}, label, `${path}/${action}`);
  const toggles = (GOAL_ACTIONS[goal.status] || []).map(([action, label]) => button(action, label));
  // Text, not type=number: only a text field tells where its caret is, and a redraw (the
  // agent reporting usage) must put it back, or "12", an update, "3" becomes 312.
  const input = h("input", { type: "text", inputmode: "numeric", autocomplete: "off", placeholder: "new budget", "aria-label": "New token budget",
    value: state.budgetDraft || "", oninput: (event) => { state.budgetDraft = event.target.value; } });
  // novalidate: every bad value gets the same message from here, not the browser's bubble.
  const form = h("form", { novalidate: true, onsubmit: (event) => {
    event.preventDefault();
    if (pending.has(`${path}/budget`)) return; // the draft stays until the last change answers
    // Decimal digits, "1e6" a million; not Number()'s other forms ("0x10" is 16, "0b11" 3).
    const typed = input.value.trim();
    const value = /^\+?(\d+\.?\d*|\.\d+)(e\+?\d+)?$/i.test(typed) ? Number(typed) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < 1) {
      return toast(`Budget must be a whole number from 1 to ${count(Number.MAX_SAFE_INTEGER)}`, true);
    }
    // The typed budget stays until it is applied: one the server did not take ("the server did
    // not answer: try again…") is there to send again, not to type again.
    const [thread, sent] = [state.thread, input.value];
    state.budgetDraft = sent;
    act(`${path}/budget`, { token_budget: value }).then((applied) => {
      if (!applied || state.thread !== thread || state.budgetDraft !== sent) return; // typed on since
      state.budgetDraft = "";
      schedule("goal");
    });
  } }, input, h("button", { class: "btn", type: "submit", "aria-disabled": pending.has(`${path}/budget`) ? "true" : null }, "Set budget"));
  root.replaceChildren(h("div", { class: "goal" },
    h("div", { class: "row" }, h("h2", {}, "Goal"), statusChip(goal.status)),
    titleEl(goal.objective, "objective title", `goal ${state.thread}`),
    goal.reason ? titleEl(goal.reason, "sub title", `reason ${state.thread}`) : null,
    h("div", { class: "row" }, bar,
      h("span", { class: "usage" }, usage),
      time),
    h("div", { class: "row" }, toggles, form, dropTime)));
}

// The budget bar's fill, sized through the DOM: the content security policy refuses style
// attributes, so a style smuggled into the page would not apply either.
function fill(share) {
  const el = h("i");
  el.style.width = `${(share * 100).toFixed(1)}%`;
  return el;
}
