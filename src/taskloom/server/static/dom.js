// Building the page: h() makes elements, and user or model text reaches the page only as text,
// in its own bidi-isolated element, its controls shown as marks.
// h("div", {class: "x", onclick: fn}, "text", child) builds DOM; strings become text nodes.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// User or model text in its own element: dir="auto" takes its direction from its first strong
// character, and class "u" (unicode-bidi: isolate) keeps its controls from leaking out.
export function iso(tag, attrs, value) {
  const cls = attrs.class ? `u ${attrs.class}` : "u";
  return h(tag, { ...attrs, class: cls, dir: "auto" }, typeof value === "string" ? bidiShown(value) : value);
}

// Free text with its embedding, override and isolate controls shown as marks (the marks a
// right-to-left language uses, LRM, RLM and ALM, stay): isolation keeps an override from
// reordering the text around it, not its own; a plan step "rm -rf /\u202e krow/emoh~" would
// read as "rm -rf /~home/work" on the card a person is approving.
const BIDI = /[\u202a-\u202e\u2066-\u2069]/gu;
export const bidiShown = (text) => text.replace(BIDI,
  (c) => `\u27e8U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);

// An identifier (thread, agent) as shown: invisible and bidi-control characters become
// visible marks, so "\u202eevil" cannot pass for "live" nor "a\u200b" for "a".
const HIDDEN = /[\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\uffa0]/gu;
export const ident = (value) => String(value).replace(HIDDEN,
  (c) => `\u27e8U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);

export const $ = (id) => document.getElementById(id);

// Make `parent`'s children exactly `nodes`, moving only what is out of place.
export function place(parent, nodes) {
  const keep = new Set(nodes);
  for (const child of [...parent.children]) if (!keep.has(child)) child.remove();
  nodes.forEach((node, i) => {
    if (parent.children[i] !== node) parent.insertBefore(node, parent.children[i] || null);
  });
}
