// The work graph view of a task: its group, what it runs after, why it cannot run now.
import { h, iso } from "./dom.js";
import { state } from "./state.js";

// A task's place in the work graph: its group, the tasks it runs after (by title when the
// panel holds them), and why it cannot run now (blocked by which task, waiting on which, its
// group busy), from /api/tasks/ready.
export function graphOf(t) {
  const { group, after, why } = graphFacts(t);
  if (!group && !after.length && !why.length) return null;
  return h("div", { class: "graph" },
    group ? iso("span", { class: "group", title: "At most one task of this group runs at a time" }, `group ${group}`) : null,
    after.length ? iso("span", { class: "after" }, `after ${after.join(", ")}`) : null,
    ...why.map((text) => iso("div", { class: "why" }, text)));
}

// What graphOf() shows of a task: also what tells whether its row must be drawn again.
export function graphFacts(t) {
  const name = (id) => state.tasks.get(id)?.title || `…${id.slice(-8)}`;
  const after = [...(t.depends_on || []).map(name), ...(t.depends_on_keys || []).map((k) => `key ${k}`)];
  const why = t.status === "blocked" ? [t.result]
    : (state.ready?.waiting || []).filter((w) => w.id === t.id).flatMap((w) => w.why.map((r) => r.text));
  return { group: t.group_key, after, why: why.filter((text) => text) };
}
