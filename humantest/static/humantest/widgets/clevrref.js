// CLEVR-Ref+ trial: click the box of every object the expression refers to (click again to
// unchoose). The boxes are SVG rects in image pixels over the image, reachable with Tab and
// toggled with Enter or Space. Objects are numbered from 1 in scene order (the answer sends the
// 0-based scene indices); the result uses the same numbers.
import { drawOrder, make, rect, svg, tag } from "./dom.js";


const names = (ids) => (ids.length ? ids.map((id) => id + 1).join(", ") : "none");
const plural = (count) => `${count} object${count === 1 ? "" : "s"}`;

export function mount(form, view, hooks) {
  const tagSize = Math.max(11, Math.round(view.width / 40));
  const layer = form.querySelector("#boxes");
  const image = form.querySelector("#image");
  const counter = form.querySelector("#count");
  form.querySelector("#refexp").textContent = view.refexp;
  image.src = view.image;
  image.width = view.width;
  image.height = view.height;
  layer.setAttribute("viewBox", `0 0 ${view.width} ${view.height}`);

  const chosen = new Set();
  const rects = new Map();
  let closed = false;

  function refresh() {
    for (const [id, node] of rects) {
      node.classList.toggle("chosen", chosen.has(id));
      node.setAttribute("aria-pressed", String(chosen.has(id)));
    }
    counter.textContent = `${plural(chosen.size)} chosen`;
  }

  function toggle(id) {
    if (closed) return;
    if (chosen.has(id)) chosen.delete(id);
    else chosen.add(id);
    refresh();
    hooks.touched();
  }

  for (const candidate of drawOrder(view.candidates)) {
    const node = rect(candidate.box, {
      class: "candidate",
      tabindex: "0",
      role: "button",
      "aria-pressed": "false",
      "aria-label": `object ${candidate.id + 1}`,
      "data-object": candidate.id,
    });
    node.addEventListener("click", () => toggle(candidate.id));
    node.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      toggle(candidate.id);
    });
    rects.set(candidate.id, node);
    layer.append(node);
  }
  for (const candidate of view.candidates) layer.append(tag(candidate.box, candidate.id + 1, tagSize));
  form.querySelector("#clear").addEventListener("click", () => {
    chosen.clear();
    refresh();
    hooks.touched();
  });

  // The chosen objects, as a reload must give them back.
  function draft() {
    return { objects: [...chosen] };
  }

  // Ids that are not candidates of this image (or not numbers) are left out.
  function restore(saved) {
    if (!saved || !Array.isArray(saved.objects)) return;
    chosen.clear();
    for (const id of saved.objects) if (rects.has(id)) chosen.add(id);
    refresh();
  }

  return {
    draft,
    restore,
    answer() {
      if (!chosen.size) throw new Error("Click at least one object the expression refers to.");
      return { objects: [...chosen].sort((a, b) => a - b) };
    },
    showResult(result, target) {
      closed = true;
      for (const node of rects.values()) node.removeAttribute("tabindex");
      const yours = result.answer ? result.answer.objects : [];
      const right = result.truth.objects;
      const picture = make("div", { class: "picker" }, [
        make("img", { src: view.image, width: view.width, height: view.height, alt: "" }),
      ]);
      const overlay = svg("svg", { viewBox: `0 0 ${view.width} ${view.height}`, "aria-hidden": "true" });
      for (const candidate of drawOrder(view.candidates)) {
        if (yours.includes(candidate.id)) overlay.append(rect(candidate.box, { class: "candidate chosen" }));
      }
      for (const box of result.truth.boxes) if (box.box) overlay.append(rect(box.box, { class: "truth" }));
      for (const candidate of view.candidates) overlay.append(tag(candidate.box, candidate.id + 1, tagSize));
      picture.append(overlay);
      const iou = result.result ? result.result.mask_iou : null;
      const facts = make("dl", { class: "facts", id: "compare" }, [
        make("dt", { text: "Right objects" }),
        make("dd", { text: names(right) }),
        make("dt", { text: "Yours" }),
        make("dd", { text: result.answer ? names(yours) : "(no answer)" }),
        make("dt", { text: "Mask IoU" }),
        make("dd", { text: typeof iou === "number" ? iou.toFixed(3) : "–" }),
      ]);
      const legend = make("p", { class: "muted legend" }, [
        make("span", { class: "key truth-key" }),
        " right objects  ",
        make("span", { class: "key chosen-key" }),
        " yours",
      ]);
      target.replaceChildren(make("div", { class: "result-layout" }, [picture, make("div", {}, [facts, legend])]));
    },
  };
}
