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

// Each candidate's number, `number(id)`, in the top-left corner of its box, in scene order.
export function numberTags(candidates, number, width) {
  return candidates.map((candidate) => tag(candidate.box, number(candidate.id), tagSize(width)));
}

// The objects' boxes as toggle buttons in `layer`, with their numbers on top: one rect per
// candidate, larger boxes first so that a small object in front of a large one stays clickable,
// named `label(id)`, reachable with Tab; a click, Enter or Space calls `toggle(id)`.
// Returns rects (id to rect), mark(isChosen) to show which are chosen, close() to end the
// choosing (no more toggles or Tab stops) and sizeTags(width) for an image width learnt later.
export function boxPicker(layer, candidates, { label, number, width, toggle }) {
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
  const tags = numberTags(candidates, number, width);
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
    sizeTags(imageWidth) {
      for (const node of tags) node.setAttribute("font-size", tagSize(imageWidth));
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
// tester's, drawn as `yoursKey` ("chosen-key" for boxes, "yours-key" for the evidence).
export function legend(right, yoursKey = "chosen-key") {
  return make("p", { class: "muted legend" }, [
    make("span", { class: "key truth-key" }),
    ` ${right}  `,
    make("span", { class: `key ${yoursKey}` }),
    " yours",
  ]);
}

// The result panel: the picture, and beside it what was answered (`beside`: nodes).
export function resultLayout(picture, beside) {
  return make("div", { class: "result-layout" }, [picture, make("div", {}, beside)]);
}
