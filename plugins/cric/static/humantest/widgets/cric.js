// CRIC trial: type the answer (or press yes / no) and choose the object it is about, one at a
// time, by clicking its box (again to unchoose), or "No object", the right grounding of a "no".
// The boxes are SVG rects in image pixels over the image, reachable with Tab, chosen with Enter
// or Space. Objects are numbered in scene order; the result uses the same numbers.
import { compareTable, rect } from "./dom.js";
import { boxPicker, legend, numberTags, overlayFigure, resultLayout, showImage } from "./picker.js";

const VERIFY_TYPES = ["VerifyKG", "VerifyAtt"];


export function mount(form, view, hooks) {
  const numbers = new Map(view.candidates.map((candidate, index) => [candidate.id, index + 1]));
  const number = (id) => numbers.get(id);
  const label = (id) =>
    id === null ? gettext("no object") : interpolate(gettext("object %(number)s"), { number: number(id) }, true);
  const input = form.querySelector("#answer-text");
  const status = form.querySelector("#chosen");
  const noButton = form.querySelector("#no-object");
  const layer = form.querySelector("#boxes");
  const image = form.querySelector("#image");
  form.querySelector("#question").textContent = view.question;

  let chosen = null; // an object id
  let noObject = false;

  function refresh() {
    picker.mark((id) => id === chosen);
    noButton.setAttribute("aria-pressed", String(noObject));
    status.textContent = noObject
      ? gettext("No object")
      : chosen === null
        ? gettext("Nothing chosen yet")
        : interpolate(gettext("Object %(number)s"), { number: number(chosen) }, true);
  }

  function choose(id) {
    chosen = chosen === id ? null : id;
    noObject = false;
    refresh();
    hooks.touched();
  }

  // The scene graph gives the image's size; without it, the image's own size once loaded.
  const size = { width: view.width, height: view.height };
  const keepClear = view.keep_clear || [];
  const picker = boxPicker(layer, view.candidates, { label, number, size, toggle: choose, keepClear });
  showImage(image, layer, view.image, size.width && size.height ? size : null, (natural) => {
    Object.assign(size, natural);
    picker.placeTags(size);
  });

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
      if (!text) throw new Error(gettext("Type your answer (or press yes or no)."));
      if (chosen === null && !noObject) throw new Error(gettext("Click the object your answer is about, or choose “No object”."));
      return { answer: text, object: noObject ? null : chosen };
    },
    showResult(result, target) {
      picker.close();
      const truth = result.truth;
      const yours = result.answer;
      const picture = overlayFigure(view.image, size);
      if (yours && yours.object !== null) {
        const mine = view.candidates.find((candidate) => candidate.id === yours.object);
        if (mine) picture.layer.append(rect(mine.box, { class: "candidate chosen" }));
      }
      for (const box of truth.boxes) picture.layer.append(rect(box.box, { class: "truth" }));
      picture.layer.append(...numberTags(view.candidates, number, size, keepClear));
      const noGrounding = truth.target.length === 0 || (VERIFY_TYPES.includes(view.question_type) && truth.answer === "no");
      const either = (first, second) => interpolate(gettext("%(first)s or %(second)s"), { first, second }, true);
      const rightObject = noGrounding ? gettext("no object") : truth.target.map(label).reduce(either);
      const rows = [
        [gettext("Answer"), yours ? yours.answer : gettext("(no answer)"), truth.answer],
        [gettext("Object"), yours ? label(yours.object) : gettext("(no answer)"), rightObject],
      ];
      target.replaceChildren(resultLayout(picture.node, [compareTable(rows), legend(gettext("right object"))]));
    },
  };
}
