// How values are written on the page: status names, counts, token counts, durations.
import { h } from "./dom.js";

export const LABEL = {
  todo: "To do", awaiting_approval: "Awaiting approval", ready: "Ready", in_progress: "In progress",
  blocked: "Blocked", done: "Done", rejected: "Rejected", completed: "Completed", dead: "Dead",
  canceled: "Canceled", lease_expired: "Lease expired", active: "Active", paused: "Paused", budget_limited: "Budget limited",
  complete: "Complete",
};

export const statusChip = (status) => h("span", { class: `status s-${status}`, "data-status": status }, LABEL[status] || status);

// A count in the panel's English text, with its thousands separated: "12,345", whatever the
// browser's locale (a German one's "12.345" reads as a decimal in an English sentence).
const COUNT = new Intl.NumberFormat("en");
export const count = (n) => COUNT.format(n);

// A token count; one past 2^53 is a BigInt (see parse()), or, where the browser cannot read
// one, "over 9,007,199,254,740,991".
export const tokens = (n) => (typeof n === "bigint" || Number.isSafeInteger(n)
  ? count(n) : `over ${count(Number.MAX_SAFE_INTEGER)}`);

export function seconds(value) {
  const s = Math.round(value);
  return s >= 3600 ? `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}
