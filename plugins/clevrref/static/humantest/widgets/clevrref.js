// CLEVR-Ref+ trial: click the box of every object the expression refers to (click again to
// unchoose). The boxes are SVG rects in image pixels over the image, reachable with Tab and
// toggled with Enter or Space. Objects are numbered from 1 in scene order (the answer sends the
// 0-based scene indices); the result uses the same numbers.
import { drawOrder, make, rect } from "./dom.js";
import { boxPicker, legend, numberTags, overlayFigure, resultLayout, showImage } from "./picker.js";


const number = (id) => id + 1;
const label = (id) => interpolate(gettext("object %(number)s"), { number: number(id) }, true);
const names = (ids) => (ids.length ? ids.map(number).join(", ") : gettext("none"));
const chosenText = (count) =>
  interpolate(ngettext("%(count)s object chosen", "%(count)s objects chosen", count), { count }, true);

export function mount(form, view, hooks) {
  const size = { width: view.width, height: view.height };
  const layer = form.querySelector("#boxes");
  const counter = form.querySelector("#count");
  form.querySelector("#refexp").textContent = view.refexp;
  showImage(form.querySelector("#image"), layer, view.image, size);

  const chosen = new Set();
  // "Nothing fits": only on a test whose expressions may refer to no object (false premises).
  const nothingButton = form.querySelector("#nothing");
  nothingButton.hidden = !view.nothing_allowed;
  form.querySelector("#nothing-hint").hidden = !view.nothing_allowed;
  let nothing = false;

  function refresh() {
    picker.mark((id) => chosen.has(id));
    nothingButton.setAttribute("aria-pressed", String(nothing));
    counter.textContent = nothing ? gettext("Nothing fits") : chosenText(chosen.size);
  }

  function toggle(id) {
    if (chosen.has(id)) chosen.delete(id);
    else chosen.add(id);
    nothing = false;
    refresh();
    hooks.touched();
  }

  nothingButton.addEventListener("click", () => {
    nothing = !nothing;
    if (nothing) chosen.clear();
    refresh();
    hooks.touched();
  });

  const picker = boxPicker(layer, view.candidates, { label, number, size, toggle });
  form.querySelector("#clear").addEventListener("click", () => {
    chosen.clear();
    nothing = false;
    refresh();
    hooks.touched();
  });

  // The chosen objects, as a reload must give them back.
  function draft() {
    return nothing ? { objects: [], nothing: true } : { objects: [...chosen] };
  }

  // Ids that are not candidates of this image (or not numbers) are left out.
  function restore(saved) {
    if (!saved || !Array.isArray(saved.objects)) return;
    chosen.clear();
    for (const id of saved.objects) if (picker.rects.has(id)) chosen.add(id);
    nothing = Boolean(view.nothing_allowed && saved.nothing === true && !chosen.size);
    refresh();
  }

  return {
    draft,
    restore,
    answer() {
      if (nothing) return { objects: [], nothing: true };
      if (!chosen.size)
        throw new Error(
          view.nothing_allowed
            ? gettext("Click at least one object the expression refers to, or choose “Nothing fits”.")
            : gettext("Click at least one object the expression refers to."),
        );
      return { objects: [...chosen].sort((a, b) => a - b) };
    },
    showResult(result, target) {
      picker.close();
      const yours = result.answer ? result.answer.objects : [];
      const right = result.truth.objects;
      const picture = overlayFigure(view.image, size);
      for (const candidate of drawOrder(view.candidates)) {
        if (yours.includes(candidate.id)) picture.layer.append(rect(candidate.box, { class: "candidate chosen" }));
      }
      for (const box of result.truth.boxes) if (box.box) picture.layer.append(rect(box.box, { class: "truth" }));
      picture.layer.append(...numberTags(view.candidates, number, size));
      const iou = result.result ? result.result.mask_iou : null;
      const facts = make("dl", { class: "facts", id: "compare" }, [
        make("dt", { text: gettext("Right objects") }),
        make("dd", { text: names(right) }),
        make("dt", { text: gettext("Yours") }),
        make("dd", { text: result.answer ? names(yours) : gettext("(no answer)") }),
        make("dt", { text: "Mask IoU" }),
        make("dd", { text: typeof iou === "number" ? iou.toFixed(3) : "–" }),
      ]);
      target.replaceChildren(resultLayout(picture.node, [facts, legend(gettext("right objects"))]));
    },
  };
}
