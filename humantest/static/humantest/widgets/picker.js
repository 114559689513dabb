// What the image widgets share: the image with an SVG layer over it
// in image pixels, the objects' boxes to click with their numbers, and the result panel's
// picture, key and layout.
import { drawOrder, make, rect, svg, tag } from "./dom.js";

// Shows `src` in the trial's <img> and sets the SVG `layer`'s viewBox to the image's size in
// pixels: `size` ({ width, height }) when it is known beforehand, which the <img> is given too;
// else (size null) the image's natural size once it has loaded, which is then passed to `loaded`.
export function showImage(image, layer, src, size, loaded) {
  const fit = ({ width, height }) => layer.setAttribute("viewBox", `0 0 ${width} ${height}`);
  if (size) {
    image.width = size.width;
    image.height = size.height;
    fit(size);
  } else {
    image.addEventListener("load", () => {
      const natural = { width: image.naturalWidth, height: image.naturalHeight };
      fit(natural);
      loaded(natural);
    });
  }
  image.src = src;
}

// The font size of the objects' numbers, in image pixels: larger for a larger image.
export const tagSize = (width) => Math.max(11, Math.round((width || 0) / 40));

// The rectangle a number takes, [x, y, width, height] in image pixels, estimated from its font
// size generously (bold digits are about 0.7 em wide, a line about 1.2 em high, plus the outline).
const tagExtent = (text, fontSize) => [text.length * 0.72 * fontSize + 4, 1.25 * fontSize];

const overlap = (a, b) =>
  Math.max(0, Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0])) *
  Math.max(0, Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]));

// Whether cost `a` comes before `b`, compared element by element.
function cheaper(a, b) {
  const index = a.findIndex((value, i) => value !== b[i]);
  return index !== -1 && a[index] < b[index];
}

// Where each candidate's number goes, so that no number hides another: at a corner of its own
// box, inside it or just outside, whichever comes first in that order among the places that stay
// in the image, overlap no number placed before nor any text the picture carries (`keepClear`:
// [x, y, width, height] rectangles, such as names painted on the image: a "3" over "table" reads
// "tabl3") and cross the fewest other boxes (a number over another box reads as that box's).
// Numbers are placed in scene order. Returns, per candidate,
// { id, text, center: [x, y], rect: [x, y, width, height] } (image pixels; `size` is
// { width, height }, either of which may be unknown yet).
export function placeTags(candidates, number, size, keepClear = []) {
  const fontSize = tagSize(size.width);
  const imageWidth = size.width || Infinity;
  const imageHeight = size.height || Infinity;
  const placed = [];
  return candidates.map((candidate) => {
    const text = String(number(candidate.id));
    const [w, h] = tagExtent(text, fontSize);
    const [x, y, bw, bh] = candidate.box;
    const corners = [
      [x + 1, y + 1], // inside: top left, top right, bottom left, bottom right
      [x + bw - w - 1, y + 1],
      [x + 1, y + bh - h - 1],
      [x + bw - w - 1, y + bh - h - 1],
      [x, y - h - 1], // outside: above, then below, then beside
      [x + bw - w, y - h - 1],
      [x, y + bh + 1],
      [x + bw - w, y + bh + 1],
      [x - w - 1, y],
      [x + bw + 1, y],
      [x - w - 1, y + bh - h],
      [x + bw + 1, y + bh - h],
    ];
    let best = null;
    corners.forEach(([left, top], rank) => {
      // A place partly out of the image is moved into it (a box at the image's edge).
      const rect = [Math.min(Math.max(left, 0), imageWidth - w), Math.min(Math.max(top, 0), imageHeight - h), w, h];
      const hidden = [...placed, ...keepClear].reduce((sum, other) => sum + overlap(rect, other), 0);
      const crossed = candidates.filter((other) => other !== candidate && overlap(rect, other.box) > 0).length;
      const cost = [hidden, crossed, rank];
      if (best === null || cheaper(cost, best.cost)) best = { rect, cost };
    });
    placed.push(best.rect);
    const [left, top] = best.rect;
    return { id: candidate.id, text, center: [left + w / 2, top + h / 2], rect: best.rect };
  });
}

// Each candidate's number (`number(id)`), placed so that none hides another nor the picture's
// text (placeTags). `size`: the image's { width, height }, or its width alone.
export function numberTags(candidates, number, size, keepClear = []) {
  if (typeof size !== "object" || size === null) size = { width: size };
  const fontSize = tagSize(size.width);
  return placeTags(candidates, number, size, keepClear).map((place) => tag(place.center, place.text, fontSize));
}

// The objects' boxes as toggle buttons in `layer`, with their numbers on top: one rect per
// candidate, larger boxes first so that a small object in front of a large one stays clickable,
// named `label(id)`, reachable with Tab; a click, Enter or Space calls `toggle(id)`.
// Returns rects (id to rect), mark(isChosen) to show which are chosen, close() to end the
// choosing (no more toggles or Tab stops) and placeTags(size) to place the numbers again for an
// image size ({ width, height }) learnt later.
export function boxPicker(layer, candidates, { label, number, size, toggle, keepClear = [] }) {
  const rects = new Map();
  let open = true;
  const press = (id) => {
    if (open) toggle(id);
  };
  for (const candidate of drawOrder(candidates)) {
    const node = rect(candidate.box, {
      class: "candidate",
      tabindex: "0",
      role: "button",
      "aria-pressed": "false",
      "aria-label": label(candidate.id),
      "data-object": candidate.id,
    });
    node.addEventListener("click", () => press(candidate.id));
    node.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      press(candidate.id);
    });
    rects.set(candidate.id, node);
    layer.append(node);
  }
  let tags = numberTags(candidates, number, size, keepClear);
  layer.append(...tags);

  return {
    rects,
    mark(isChosen) {
      for (const [id, node] of rects) {
        const chosen = isChosen(id);
        node.classList.toggle("chosen", chosen);
        node.setAttribute("aria-pressed", String(chosen));
      }
    },
    close() {
      open = false;
      for (const node of rects.values()) node.removeAttribute("tabindex");
    },
    placeTags(imageSize) {
      const placed = numberTags(candidates, number, imageSize, keepClear);
      for (const [index, node] of tags.entries()) node.replaceWith(placed[index]);
      tags = placed;
    },
  };
}

// The result panel's picture: the image again, with an SVG layer over it in image pixels to draw
// the answers on; returns { node, layer }. The <img> is given `size` too unless `naturalSize` is
// set. Without a size (the image never loaded) there is no layer: layer is null.
export function overlayFigure(src, size, { naturalSize = false } = {}) {
  const image = make("img", naturalSize ? { src, alt: "" } : { src, width: size.width, height: size.height, alt: "" });
  const layer = size ? svg("svg", { viewBox: `0 0 ${size.width} ${size.height}`, "aria-hidden": "true" }) : null;
  return { node: make("div", { class: "picker" }, layer ? [image, layer] : [image]), layer };
}

// The key under the result picture: the right answer's outline (`right` names it), then the
// tester's, drawn as `yoursKey` ("chosen-key" for boxes, "yours-key" for the evidence). `right` is
// already in the page's language (gettext).
export function legend(right, yoursKey = "chosen-key") {
  return make("p", { class: "muted legend" }, [
    make("span", { class: "key truth-key" }),
    ` ${right}  `,
    make("span", { class: `key ${yoursKey}` }),
    ` ${gettext("yours")}`,
  ]);
}

// The result panel: the picture, and beside it what was answered (`beside`: nodes).
export function resultLayout(picture, beside) {
  return make("div", { class: "result-layout" }, [picture, make("div", {}, beside)]);
}
