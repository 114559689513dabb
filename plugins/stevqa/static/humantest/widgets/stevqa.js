// STE-VQA trial: type the answer and draw the evidence quadrilateral by clicking its 4 corners
// on the image (Redraw starts again), or type the 8 coordinates. The image's size is known only
// once it has loaded: the SVG's viewBox is then set to its natural size, so clicks map to image
// pixels through getScreenCTM().
import { compareTable, make, svg } from "./dom.js";
import { legend, overlayFigure, resultLayout, showImage } from "./picker.js";


const pairs = (flat) => [0, 2, 4, 6].filter((i) => i + 1 < flat.length).map((i) => [flat[i], flat[i + 1]]);
const clamp = (value, high) => Math.min(Math.max(Math.round(value), 0), high);
const score = (value) => (typeof value === "number" ? value.toFixed(3) : "–");

// A polygon through the points (a line for two) and, if radius is given, a circle on each.
function shape(points, className, radius) {
  const nodes = [svg("polygon", { points: points.map((p) => p.join(",")).join(" "), class: className })];
  if (radius) for (const [cx, cy] of points) nodes.push(svg("circle", { cx, cy, r: radius, class: "corner" }));
  return nodes;
}

// Numbers separated by commas or spaces; null unless there are exactly 8.
function parse(text) {
  const values = text.split(/[\s,;]+/).filter(Boolean).map(Number);
  return values.length === 8 && values.every(Number.isFinite) ? values : null;
}

export function mount(form, view, hooks) {
  const image = form.querySelector("#image");
  const layer = form.querySelector("#evidence");
  const input = form.querySelector("#answer-text");
  const typed = form.querySelector("#coordinates");
  const status = form.querySelector("#corners");
  form.querySelector("#question").textContent = view.question;

  let size = null; // { width, height } in image pixels, once the image has loaded
  let corners = []; // [[x, y], ...] in image pixels
  let closed = false;
  const radius = () => Math.max(4, size.width / 120);

  function refresh({ keepTyped = false } = {}) {
    if (size) layer.replaceChildren(...shape(corners, "", radius()));
    status.textContent =
      corners.length === 4
        ? gettext("4 of 4 corners (Redraw to start again)")
        : interpolate(gettext("%(count)s of 4 corners"), { count: corners.length }, true);
    if (!keepTyped) {
      typed.value = corners.flat().join(", ");
      typed.removeAttribute("aria-invalid");
    }
  }

  showImage(image, layer, view.image, null, (natural) => {
    size = natural;
    refresh({ keepTyped: true });
  });

  layer.addEventListener("click", (event) => {
    if (closed || !size || corners.length >= 4) return;
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(layer.getScreenCTM().inverse());
    corners.push([clamp(point.x, size.width), clamp(point.y, size.height)]);
    refresh();
    hooks.touched();
  });
  form.querySelector("#redraw").addEventListener("click", () => {
    corners = [];
    refresh();
    hooks.touched();
  });
  // The typed coordinates become the corners when there are 8 of them (none when the field is
  // empty); anything else is marked invalid and the corners stay as they were.
  function readTyped() {
    const values = parse(typed.value);
    const empty = !typed.value.trim();
    if (values || empty) corners = values ? pairs(values) : [];
    if (values || empty) typed.removeAttribute("aria-invalid");
    else typed.setAttribute("aria-invalid", "true");
    refresh({ keepTyped: true });
  }

  typed.addEventListener("input", () => {
    readTyped();
    hooks.touched();
  });
  input.addEventListener("input", () => hooks.touched());

  // What the controls hold, complete or not: the answer, the corners so far and the typed
  // coordinates as typed (they differ from the corners only while they are not 8 numbers).
  function draft() {
    return { answer: input.value, corners: corners.map((point) => [...point]), typed: typed.value };
  }

  const isPoint = (point) => Array.isArray(point) && point.length === 2 && point.every(Number.isFinite);

  // Junk (a wrong type, a point that is not two numbers) is left out.
  function restore(saved) {
    if (!saved || typeof saved !== "object") return;
    if (typeof saved.answer === "string") input.value = saved.answer;
    corners = Array.isArray(saved.corners) ? saved.corners.filter(isPoint).slice(0, 4).map(([x, y]) => [x, y]) : [];
    refresh();
    if (typeof saved.typed === "string" && saved.typed !== typed.value) {
      typed.value = saved.typed;
      readTyped();
      if (typed.hasAttribute("aria-invalid")) form.querySelector("#typed").open = true;
    }
  }

  return {
    draft,
    restore,
    answer() {
      const text = input.value.trim();
      if (!text) throw new Error(gettext("Type your answer as it is written in the picture."));
      if (typed.hasAttribute("aria-invalid")) throw new Error(gettext("Type coordinates: give 8 numbers separated by commas."));
      if (corners.length < 4)
        throw new Error(interpolate(gettext("Click the 4 corners of the evidence (%(count)s so far)."), { count: corners.length }, true));
      return { answer: text, evidence: corners.flat() };
    },
    showResult(result, target) {
      closed = true;
      const yours = result.answer;
      const truth = result.truth;
      const picture = overlayFigure(view.image, size, { naturalSize: true });
      if (picture.layer) {
        if (yours) picture.layer.append(...shape(pairs(yours.evidence), "yours"));
        picture.layer.append(...shape(pairs(truth.evidence), "truth"));
      }
      const scores = result.result || {};
      const table = compareTable([[gettext("Answer"), yours ? yours.answer : gettext("(no answer)"), truth.answer]]);
      const figures = make("p", {
        id: "scores",
        text: interpolate(
          gettext("TC (answer) %(tc)s · LC (evidence IoU) %(lc)s · CLC %(clc)s"),
          { tc: score(scores.TC), lc: score(scores.LC), clc: score(scores.CLC) },
          true,
        ),
      });
      target.replaceChildren(resultLayout(picture.node, [table, figures, legend(gettext("right evidence"), "yours-key")]));
    },
  };
}
