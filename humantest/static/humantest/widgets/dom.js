// What the trial widgets share: building elements, SVG boxes over an image, the result table.
const SVG = "http://www.w3.org/2000/svg";

// An element with attributes ("text" sets its text) and children; SVG when `namespace` is given.
export function make(tag, attributes = {}, children = [], namespace = null) {
  const node = namespace ? document.createElementNS(namespace, tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

export const svg = (tag, attributes) => make(tag, attributes, [], SVG);

export function rect(box, attributes) {
  const [x, y, width, height] = box;
  return svg("rect", { x, y, width, height, ...attributes });
}

// An object's number, centred on the point [x, y] (see picker.js's placeTags for where).
export function tag([x, y], number, size) {
  const attributes = { class: "tag", x, y, "font-size": size, "text-anchor": "middle", "dominant-baseline": "central" };
  return make("text", { ...attributes, text: number }, [], SVG);
}

// Larger boxes first, so a small object in front of a large one stays clickable.
const area = (candidate) => candidate.box[2] * candidate.box[3];
export const drawOrder = (candidates) => [...candidates].sort((a, b) => area(b) - area(a));

// The result panel's table: one row per part of the answer, the tester's beside the right one.
export function compareTable(rows) {
  const row = (cells) => make("tr", {}, cells.map((text, index) => make(index ? "td" : "th", { text })));
  return make("table", { class: "grid compare", id: "compare" }, [
    make("thead", {}, [row(["", gettext("Yours"), gettext("Right")])]),
    make("tbody", {}, rows.map(row)),
  ]);
}
