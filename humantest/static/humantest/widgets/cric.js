// CRIC trial: type the answer (or press yes / no) and choose the object it is about, one at a
// time, by clicking its box (again to unchoose), or "No object", the right grounding of a "no".
// The boxes are SVG rects in image pixels over the image, reachable with Tab, chosen with Enter
// or Space. Objects are numbered in scene order; the result uses the same numbers.
import { compareTable, drawOrder, make, rect, svg, tag } from "./dom.js";

const VERIFY_TYPES = ["VerifyKG", "VerifyAtt"];


// An image with an SVG layer in its pixel coordinates (the result panel's copy of the picker).
function figure(src, size) {
  const image = make("img", { src, width: size.width, height: size.height, alt: "" });
  const layer = svg("svg", { viewBox: `0 0 ${size.width} ${size.height}`, "aria-hidden": "true" });
  return { node: make("div", { class: "picker" }, [image, layer]), layer };
}

export function mount(form, view, hooks) {
  const numbers = new Map(view.candidates.map((candidate, index) => [candidate.id, index + 1]));
  const label = (id) => (id === null ? "no object" : `object ${numbers.get(id)}`);
  const input = form.querySelector("#answer-text");
  const status = form.querySelector("#chosen");
  const noButton = form.querySelector("#no-object");
  const layer = form.querySelector("#boxes");
  const image = form.querySelector("#image");
  form.querySelector("#question").textContent = view.question;
  // The scene graph gives the image's size; without it, the image's own size once loaded.
  const size = { width: view.width, height: view.height };
  const tagSize = () => Math.max(11, Math.round((size.width || 0) / 40));
  const setSize = () => {
    layer.setAttribute("viewBox", `0 0 ${size.width} ${size.height}`);
    for (const node of layer.querySelectorAll("text.tag")) node.setAttribute("font-size", tagSize());
  };
  if (size.width && size.height) {
    image.width = size.width;
    image.height = size.height;
  } else {
    image.addEventListener("load", () => {
      Object.assign(size, { width: image.naturalWidth, height: image.naturalHeight });
      setSize();
    });
  }
  image.src = view.image;

  let chosen = null; // an object id
  let noObject = false;
  let closed = false;
  const rects = new Map();

  function refresh() {
    for (const [id, node] of rects) {
      node.classList.toggle("chosen", id === chosen);
      node.setAttribute("aria-pressed", String(id === chosen));
    }
    noButton.setAttribute("aria-pressed", String(noObject));
    status.textContent = noObject ? "No object" : chosen === null ? "Nothing chosen yet" : `Object ${numbers.get(chosen)}`;
  }

  function choose(id) {
    if (closed) return;
    chosen = chosen === id ? null : id;
    noObject = false;
    refresh();
    hooks.touched();
  }

  // Larger boxes first, so a small object inside a large one stays clickable.
  for (const candidate of drawOrder(view.candidates)) {
    const node = rect(candidate.box, {
      class: "candidate",
      tabindex: "0",
      role: "button",
      "aria-pressed": "false",
      "aria-label": label(candidate.id),
      "data-object": candidate.id,
    });
    node.addEventListener("click", () => choose(candidate.id));
    node.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      choose(candidate.id);
    });
    rects.set(candidate.id, node);
    layer.append(node);
  }
  for (const candidate of view.candidates) layer.append(tag(candidate.box, numbers.get(candidate.id), tagSize()));
  if (size.width && size.height) setSize();

  noButton.addEventListener("click", () => {
    noObject = !noObject;
    if (noObject) chosen = null;
    refresh();
    hooks.touched();
  });
  input.addEventListener("input", () => hooks.touched());
  for (const button of form.querySelectorAll("[data-fill]")) {
    button.addEventListener("click", () => {
      input.value = button.dataset.fill;
      hooks.touched();
    });
  }

  // What the controls hold, complete or not: what a reload must give back.
  function draft() {
    return { answer: input.value, object: chosen, noObject };
  }

  // Junk (a wrong type, an id that is not a candidate of this image) is left out.
  function restore(saved) {
    if (!saved || typeof saved !== "object") return;
    if (typeof saved.answer === "string") input.value = saved.answer;
    noObject = saved.noObject === true;
    chosen = !noObject && numbers.has(saved.object) ? saved.object : null;
    refresh();
  }

  return {
    draft,
    restore,
    answer() {
      const text = input.value.trim();
      if (!text) throw new Error("Type your answer (or press yes or no).");
      if (chosen === null && !noObject) throw new Error("Click the object your answer is about, or choose “No object”.");
      return { answer: text, object: noObject ? null : chosen };
    },
    showResult(result, target) {
      closed = true;
      for (const node of rects.values()) node.removeAttribute("tabindex");
      const truth = result.truth;
      const yours = result.answer;
      const picture = figure(view.image, size);
      if (yours && yours.object !== null) {
        const mine = view.candidates.find((candidate) => candidate.id === yours.object);
        if (mine) picture.layer.append(rect(mine.box, { class: "candidate chosen" }));
      }
      for (const box of truth.boxes) picture.layer.append(rect(box.box, { class: "truth" }));
      for (const candidate of view.candidates) picture.layer.append(tag(candidate.box, numbers.get(candidate.id), tagSize()));
      const noGrounding = truth.target.length === 0 || (VERIFY_TYPES.includes(view.question_type) && truth.answer === "no");
      const rightObject = noGrounding ? "no object" : truth.target.map(label).join(" or ");
      const rows = [
        ["Answer", yours ? yours.answer : "(no answer)", truth.answer],
        ["Object", yours ? label(yours.object) : "(no answer)", rightObject],
      ];
      const legend = make("p", { class: "muted legend" }, [
        make("span", { class: "key truth-key" }),
        " right object  ",
        make("span", { class: "key chosen-key" }),
        " yours",
      ]);
      target.replaceChildren(make("div", { class: "result-layout" }, [picture.node, make("div", {}, [compareTable(rows), legend])]));
    },
  };
}
