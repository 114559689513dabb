// TRANCE answer builder: 1 to 4 steps of (object, attribute, value), reorderable by dragging the
// handle (SortableJS) or from the keyboard (↑/↓ buttons, Alt+↑/↓ on a row). The value list
// follows the attribute; it leaves out the value the object already has at that point of the
// answer, since such a step would change nothing. Position values are a direction and 1 or 2 steps.
import Sortable from "../../vendor/sortablejs/sortable.core.esm.js";
import { make as element } from "./dom.js";

const ATTRIBUTE_LABELS = {
  position: gettext("position"),
  color: gettext("colour"),
  material: gettext("material"),
  shape: gettext("shape"),
  size: gettext("size"),
};
// A position step's direction as the page shows it (its value, the answer's word, stays English),
// with its arrow as it points in the top view: "behind" is toward the centre camera, down (the
// note under the scenes says so in words; the menu has room for the word and its arrow only).
const DIRECTION_LABELS = {
  front: `↑ ${gettext("front")}`,
  behind: `↓ ${gettext("behind")}`,
  left: `← ${gettext("left")}`,
  right: `→ ${gettext("right")}`,
  "front-left": `↖ ${gettext("front-left")}`,
  "front-right": `↗ ${gettext("front-right")}`,
  "behind-left": `↙ ${gettext("behind-left")}`,
  "behind-right": `↘ ${gettext("behind-right")}`,
};
// The final camera as the server names it (trials/trance.py CAMERA_NAMES), in the page's language.
const CAMERA_LABELS = { left: gettext("left"), centre: gettext("centre"), right: gettext("right") };

function option(value, label, selected = false) {
  const node = element("option", { value, text: label });
  if (selected) node.selected = true;
  return node;
}

function describeObject(objects, index) {
  const obj = objects[index];
  return `${index} · ${obj.size} ${obj.color} ${obj.material} ${obj.shape}`;
}

export function describeStep(objects, step) {
  const value = step.attr === "position" ? `${DIRECTION_LABELS[step.val[0]] || step.val[0]} ×${step.val[1]}` : step.val;
  return `${describeObject(objects, step.obj_idx)}: ${ATTRIBUTE_LABELS[step.attr] || step.attr} → ${value}`;
}

export function mount(form, view, hooks) {
  const objects = view.objects;
  form.querySelector("#initial-image").src = view.initial_image;
  form.querySelector("#final-image").src = view.final_image;
  const camera = CAMERA_LABELS[view.camera_name] || view.camera_name;
  form.querySelector("#final-caption").textContent = interpolate(gettext("Final · %(camera)s camera"), { camera }, true);
  form.querySelector("#diagram").insertAdjacentHTML("afterbegin", view.diagram);
  const body = form.querySelector("#objects tbody");
  objects.forEach((obj, index) => {
    body.append(
      element("tr", {}, [
        element("td", { text: String(index) }),
        element("td", {}, [element("span", { class: `swatch swatch-${obj.color}` }), obj.color]),
        element("td", { text: obj.material }),
        element("td", { text: obj.shape }),
        element("td", { text: obj.size }),
        element("td", { text: `${obj.position[0]}, ${obj.position[1]}` }),
      ]),
    );
  });

  const list = form.querySelector("#steps");
  const addButton = form.querySelector("#add-step");
  const maxSteps = view.max_steps;

  function rows() {
    return [...list.querySelectorAll("li.step")];
  }

  function readRow(row) {
    const obj = row.querySelector(".obj").value;
    const attr = row.querySelector(".attr").value;
    if (obj === "" || attr === "") return null;
    if (attr === "position") {
      const direction = row.querySelector(".direction").value;
      const steps = row.querySelector(".distance").value;
      if (!direction || !steps) return null;
      return { obj_idx: Number(obj), attr, val: [direction, Number(steps)] };
    }
    const value = row.querySelector(".value").value;
    return value ? { obj_idx: Number(obj), attr, val: value } : null;
  }

  // Each row's value list leaves out what the object has after the rows above it.
  function refresh() {
    const state = objects.map((obj) => ({ ...obj }));
    rows().forEach((row, index) => {
      row.querySelector(".number").textContent = String(index + 1);
      row.querySelector(".up").disabled = index === 0;
      row.querySelector(".down").disabled = index === rows().length - 1;
      const objIndex = row.querySelector(".obj").value;
      const attr = row.querySelector(".attr").value;
      const valueSelect = row.querySelector(".value");
      const isPosition = attr === "position";
      row.querySelector(".position-value").hidden = !isPosition;
      valueSelect.hidden = isPosition;
      if (!isPosition) {
        const current = valueSelect.value;
        valueSelect.replaceChildren(option("", attr ? gettext("value…") : gettext("choose an attribute first")));
        if (attr) {
          const have = objIndex === "" ? null : state[Number(objIndex)][attr];
          for (const value of view.attributes[attr]) {
            if (value !== have) valueSelect.append(option(value, value, value === current));
          }
        }
        valueSelect.disabled = !attr;
      }
      const step = readRow(row);
      if (step && !isPosition) state[step.obj_idx][step.attr] = step.val;
    });
    addButton.disabled = rows().length >= maxSteps;
    for (const button of list.querySelectorAll(".remove")) button.disabled = rows().length === 1;
  }

  function move(row, offset) {
    const siblings = rows();
    const index = siblings.indexOf(row);
    const target = index + offset;
    if (target < 0 || target >= siblings.length) return;
    if (offset < 0) list.insertBefore(row, siblings[target]);
    else list.insertBefore(row, siblings[target].nextSibling);
    refresh();
    hooks.touched();
    row.querySelector(offset < 0 ? ".up" : ".down").focus();
  }

  function addRow() {
    if (rows().length >= maxSteps) return;
    const objSelect = element("select", { class: "obj", "aria-label": gettext("Object") }, [option("", gettext("object…"))]);
    objects.forEach((_, index) => objSelect.append(option(String(index), describeObject(objects, index))));
    const attrSelect = element("select", { class: "attr", "aria-label": gettext("Attribute") }, [option("", gettext("attribute…"))]);
    for (const attr of ["position", ...Object.keys(view.attributes)]) attrSelect.append(option(attr, ATTRIBUTE_LABELS[attr] || attr));
    const valueSelect = element("select", { class: "value", "aria-label": gettext("New value") });
    const direction = element("select", { class: "direction", "aria-label": gettext("Direction") }, [option("", gettext("direction…"))]);
    view.directions.forEach((name) => direction.append(option(name, DIRECTION_LABELS[name] || name)));
    const distance = element("select", { class: "distance", "aria-label": gettext("Steps") }, [option("", gettext("steps…"))]);
    const stepsText = (count) => interpolate(ngettext("%(count)s step", "%(count)s steps", count), { count }, true);
    view.move_steps.forEach((count) => distance.append(option(String(count), stepsText(count))));
    // Laid out the same in every row (trial.css): the object on the first line, at full width so
    // that its whole name shows; the attribute, its new value and the row's buttons below it.
    const row = element("li", { class: "step", tabindex: "0" }, [
      element("span", { class: "handle", title: gettext("Drag to reorder"), "aria-hidden": "true", text: "⠿" }),
      element("span", { class: "number" }),
      objSelect,
      attrSelect,
      element("span", { class: "new-value" }, [
        valueSelect,
        element("span", { class: "position-value", hidden: "" }, [direction, distance]),
      ]),
      element("span", { class: "moves" }, [
        element("button", { type: "button", class: "up icon", "aria-label": gettext("Move this step up"), text: "↑" }),
        element("button", { type: "button", class: "down icon", "aria-label": gettext("Move this step down"), text: "↓" }),
        element("button", { type: "button", class: "remove icon", "aria-label": gettext("Remove this step"), text: "✕" }),
      ]),
    ]);
    row.addEventListener("change", () => {
      refresh();
      hooks.touched();
    });
    row.querySelector(".up").addEventListener("click", () => move(row, -1));
    row.querySelector(".down").addEventListener("click", () => move(row, 1));
    row.querySelector(".remove").addEventListener("click", () => {
      if (rows().length > 1) row.remove();
      refresh();
      hooks.touched();
    });
    row.addEventListener("keydown", (event) => {
      if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
        event.preventDefault();
        move(row, event.key === "ArrowUp" ? -1 : 1);
      }
    });
    list.append(row);
    refresh();
  }

  Sortable.create(list, {
    handle: ".handle",
    animation: 120,
    onEnd() {
      refresh();
      hooks.touched();
    },
  });
  addButton.addEventListener("click", () => {
    addRow();
    hooks.touched();
  });
  addRow();

  // Every control of every row, complete or not: what a reload must give back.
  function draft() {
    return rows().map((row) =>
      Object.fromEntries(["obj", "attr", "value", "direction", "distance"].map((name) => [name, row.querySelector(`.${name}`).value])),
    );
  }

  function restore(saved) {
    if (!Array.isArray(saved) || !saved.length) return;
    list.replaceChildren();
    for (const values of saved.slice(0, maxSteps)) {
      addRow();
      const row = rows().at(-1);
      for (const name of ["obj", "attr", "direction", "distance"]) row.querySelector(`.${name}`).value = values[name] ?? "";
      refresh(); // the value list follows the attribute and the rows above
      row.querySelector(".value").value = values.value ?? "";
    }
    refresh();
  }

  return {
    draft,
    restore,
    answer() {
      const steps = rows().map((row, index) => {
        const step = readRow(row);
        if (!step)
          throw new Error(
            interpolate(
              gettext("Step %(number)s is not complete: choose the object, the attribute and the value."),
              { number: index + 1 },
              true,
            ),
          );
        return step;
      });
      return { steps };
    },
    showResult(result, target) {
      const yours = result.answer ? result.answer.map((step) => describeStep(objects, step)) : [gettext("(no answer)")];
      const truth = result.truth.steps.map((step) => describeStep(objects, step));
      const table = element("table", { class: "grid compare", id: "compare" }, [
        element("thead", {}, [element("tr", {}, [element("th", { text: "#" }), element("th", { text: gettext("Your answer") }), element("th", { text: gettext("Right answer") })])]),
      ]);
      const tbody = element("tbody");
      for (let index = 0; index < Math.max(yours.length, truth.length); index += 1) {
        tbody.append(
          element("tr", {}, [
            element("td", { text: String(index + 1) }),
            element("td", { text: yours[index] || "" }),
            element("td", { text: truth[index] || "" }),
          ]),
        );
      }
      table.append(tbody);
      target.replaceChildren(table);
    },
  };
}
