// The validator's page: an item of a generated dataset (image, boxes, facts, program steps) and
// the verdict form, keyboard first. The server side is the annotation queue's contract: save a
// draft with the version it is based on (409: stale or lease lost), heartbeat, submit (the answer
// carries the next item), skip. The draft also lives in localStorage until the server has it.
import { isTyping, make } from "../annotation/quad_editor.js";
import { post } from "../js/http.js";

const SAVE_DELAY_MS = 800;
const RETRY_MS = 5000;
const SVG = "http://www.w3.org/2000/svg";

// The words the page shows, in the reader's language: Django's JavaScript catalogue, loaded by
// the base template before this module, defines gettext and interpolate.
const labels = {
  yes: gettext("yes"),
  no: gettext("no"),
  noStep: gettext("No step is wrong"),
  stepWrong: gettext("wrong"),
  saved: gettext("Saved"),
  saving: gettext("Saving…"),
  notSaved: gettext("Not saved: kept in this browser, retrying"),
  secondOpinion: gettext("(another validator checks it too, blind)"),
  skipReason: gettext("Why do you skip this item?"),
  done: gettext("Submitted. Nothing is left for you in this plan."),
  submitted: gettext("Submitted. Here is the next item."),
  nothing: gettext("nothing"),
};
const itemLabel = (item) => interpolate(gettext("item %(item)s"), { item }, true);
const outputsLabel = (objects) => interpolate(gettext("outputs: %(objects)s"), { objects }, true);
const $ = (id) => document.getElementById(id);
let session = null;

// ---- state ----

function start(task) {
  if (session) clearInterval(session.heartbeat);
  const local = readLocal(task);
  const answers = local && local.base === task.version ? { ...local.answers } : { ...task.draft };
  session = {
    task,
    version: task.version,
    answers,
    focus: 0,
    step: task.view.steps.length ? 0 : -1,
    timer: null,
    saving: false,
    dirty: Boolean(local && local.base === task.version),
  };
  session.heartbeat = setInterval(beat, task.heartbeat_s * 1000);
  render();
  if (session.dirty) scheduleSave();
}

const storageKey = (task) => `yardstick-validation-${task.assignment}`;

function readLocal(task) {
  try {
    return JSON.parse(localStorage.getItem(storageKey(task)) || "null");
  } catch {
    return null;
  }
}

function writeLocal() {
  try {
    localStorage.setItem(storageKey(session.task), JSON.stringify({ base: session.version, answers: session.answers }));
  } catch {
    // storage full or disabled: the server's copy is still saved
  }
}

function dropLocal(task) {
  try {
    localStorage.removeItem(storageKey(task));
  } catch {
    // nothing to drop
  }
}

// ---- drawing ----

function render() {
  const { task } = session;
  const view = task.view;
  $("item-label").textContent =
    itemLabel(task.item) + (task.round > 1 ? ` ${labels.secondOpinion}` : "");
  const image = $("scene-image");
  image.src = view.image;
  image.width = view.width;
  image.height = view.height;
  $("marked-label").textContent = view.marked_label || "";
  $("facts").replaceChildren(
    ...view.facts.flatMap((fact) => [
      make("dt", { text: fact.label }),
      make("dd", { text: fact.text, class: fact.main ? "main" : null }),
    ]),
  );
  $("program-block").hidden = !view.steps.length;
  renderSteps();
  renderQuestions();
  drawBoxes();
}

function objectName(id) {
  const found = session.task.view.objects.find((obj) => obj.id === id);
  return found ? `${found.name} #${id}` : `#${id}`;
}

function renderSteps() {
  const { view } = session.task;
  const wrong = wrongStepName();
  $("steps").replaceChildren(
    ...view.steps.map((step, index) => {
      const isWrong = wrong && session.answers[wrong] === index;
      const row = make(
        "li",
        {
          class: ["step", index === session.step ? "selected" : "", isWrong ? "wrong" : ""].join(" ").trim(),
          "data-index": String(index),
          "aria-current": index === session.step ? "step" : null,
        },
        [
          make("code", { text: step.label }),
          make("span", {
            class: "outputs",
            text: outputsLabel(step.output.map(objectName).join(", ") || labels.nothing),
          }),
          isWrong ? make("strong", { class: "wrong-flag", text: labels.stepWrong }) : "",
        ],
      );
      row.addEventListener("click", () => selectStep(index));
      return row;
    }),
  );
}

function drawBoxes() {
  const { view } = session.task;
  const svg = $("scene-boxes");
  svg.setAttribute("viewBox", `0 0 ${view.width} ${view.height}`);
  const marked = new Set(view.marked);
  const output = new Set(session.step >= 0 ? view.steps[session.step].output : []);
  const shapes = [];
  for (const obj of view.objects) {
    const [x, y, w, h] = obj.box;
    const kind = output.has(obj.id) ? "output" : marked.has(obj.id) ? "marked" : "other";
    const rect = document.createElementNS(SVG, "rect");
    for (const [key, value] of Object.entries({ x, y, width: w, height: h, class: `box ${kind}` })) rect.setAttribute(key, value);
    const title = document.createElementNS(SVG, "title");
    title.textContent = objectName(obj.id);
    rect.append(title);
    // Marked and output boxes are drawn last, on top of the others.
    shapes.push([kind === "other" ? 0 : kind === "marked" ? 1 : 2, rect]);
    if (kind === "output" && marked.has(obj.id)) rect.classList.add("marked");
  }
  shapes.sort((a, b) => a[0] - b[0]);
  svg.replaceChildren(...shapes.map(([, rect]) => rect));
}

function wrongStepName() {
  const question = session.task.questions.find((q) => q.kind === "step");
  return question ? question.name : null;
}

// ---- the form ----

function renderQuestions() {
  const { questions } = session.task;
  $("questions").replaceChildren(
    ...questions.map((question, index) => {
      const box = make("fieldset", {
        class: ["question", index === session.focus ? "focused" : ""].join(" ").trim(),
        "data-name": question.name,
        id: `question-${question.name}`,
      });
      box.append(make("legend", { text: question.label }));
      if (question.help) box.append(make("p", { class: "help", text: question.help }));
      const value = session.answers[question.name];
      if (question.kind === "yesno") {
        for (const [choice, text, key] of [[true, labels.yes, "y"], [false, labels.no, "n"]]) {
          box.append(choiceButton(question, choice, `${text} (${key})`, value === choice));
        }
      } else if (question.kind === "scale") {
        for (let score = 1; score <= question.scale; score += 1) {
          box.append(choiceButton(question, score, String(score), value === score));
        }
      } else if (question.kind === "step") {
        box.append(
          make("p", {
            class: "chosen-step",
            text: value === null || value === undefined ? labels.noStep : `${value + 1}. ${session.task.view.steps[value].label}`,
          }),
        );
        const none = make("button", { type: "button", class: "secondary", text: labels.noStep });
        none.addEventListener("click", () => setAnswer(question.name, null));
        box.append(none);
      } else {
        const area = make("textarea", { rows: "2", id: "comment", maxlength: "2000" });
        area.value = value || "";
        area.addEventListener("input", () => setAnswer(question.name, area.value, { rerender: false }));
        box.append(area);
      }
      box.addEventListener("click", () => focusQuestion(index, { rerender: false }));
      return box;
    }),
  );
}

function choiceButton(question, choice, text, pressed) {
  const button = make("button", {
    type: "button",
    class: pressed ? "choice pressed" : "choice",
    "aria-pressed": pressed ? "true" : "false",
    "data-value": String(choice),
    text,
  });
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    setAnswer(question.name, choice, { advance: true });
  });
  return button;
}

function focusQuestion(index, { rerender = true } = {}) {
  session.focus = Math.max(0, Math.min(session.task.questions.length - 1, index));
  for (const node of document.querySelectorAll("#questions .question")) {
    node.classList.toggle("focused", node.id === `question-${session.task.questions[session.focus].name}`);
  }
  if (rerender) document.querySelector("#questions .question.focused")?.scrollIntoView({ block: "nearest" });
}

function setAnswer(name, value, { advance = false, rerender = true } = {}) {
  session.answers[name] = value;
  session.dirty = true;
  if ($("form-errors").childElementCount) showErrors([]);
  writeLocal();
  scheduleSave();
  if (rerender) {
    renderQuestions();
    renderSteps();
  }
  if (advance) {
    const index = session.task.questions.findIndex((q) => q.name === name);
    focusQuestion(index + 1);
  }
}

function selectStep(index) {
  const count = session.task.view.steps.length;
  if (!count) return;
  session.step = Math.max(0, Math.min(count - 1, index));
  renderSteps();
  drawBoxes();
}

function toggleWrongStep() {
  const name = wrongStepName();
  if (!name || session.step < 0) return;
  setAnswer(name, session.answers[name] === session.step ? null : session.step);
}

// ---- talking to the server ----

function status(text, state = "") {
  const node = $("save-status");
  node.textContent = text;
  node.dataset.state = state;
}

function scheduleSave(delay = SAVE_DELAY_MS) {
  clearTimeout(session.timer);
  session.timer = setTimeout(saveNow, delay);
}

async function saveNow() {
  if (!session.dirty || session.saving) return;
  const current = session;
  current.saving = true;
  status(labels.saving, "saving");
  const sent = JSON.stringify(current.answers);
  const reply = await post(current.task.urls.save, { version: current.version, answers: current.answers });
  current.saving = false;
  if (current !== session) return;
  if (reply.ok) {
    current.version = reply.payload.version;
    if (JSON.stringify(current.answers) === sent) {
      current.dirty = false;
      dropLocal(current.task);
      status(labels.saved, "saved");
    } else {
      writeLocal();
      scheduleSave();
    }
  } else if (!handleRefusal(reply)) {
    status(labels.notSaved, "error");
    scheduleSave(RETRY_MS);
  }
}

// A 409 (stale version or lost lease), or a 403 for a person no longer on the plan: say so and
// stop; true when handled.
function handleRefusal(reply) {
  if (reply.status !== 409 && reply.payload.error !== "not_member") return false;
  if (reply.payload.error === "stale") {
    const conflict = $("conflict");
    conflict.querySelector(".message").textContent = reply.payload.message;
    conflict.hidden = false;
    session.server = reply.payload.server;
  } else {
    const lost = $("lease-lost");
    lost.querySelector(".message").textContent = reply.payload.message;
    lost.hidden = false;
    clearInterval(session.heartbeat);
  }
  status("", "");
  return true;
}

async function beat() {
  const reply = await post(session.task.urls.heartbeat, {});
  if (!reply.ok) handleRefusal(reply);
}

function showErrors(errors) {
  $("form-errors").replaceChildren(
    ...(errors || []).map((error) => make("li", { text: `${error.field}: ${error.message}` })),
  );
  const first = errors && errors[0];
  if (first) {
    const index = session.task.questions.findIndex((q) => q.name === first.field);
    if (index >= 0) focusQuestion(index);
  }
}

async function submit() {
  clearTimeout(session.timer);
  const current = session;
  // A save on its way bumps the version: wait for it, so the submit names the version it made.
  while (current.saving) await new Promise((resolve) => setTimeout(resolve, 50));
  if (current !== session) return;
  const reply = await post(current.task.urls.submit, { version: current.version, answers: current.answers });
  if (reply.ok) {
    current.dirty = false;
    dropLocal(current.task);
    flash(reply.payload.next ? labels.submitted : labels.done);
    if (reply.payload.next) {
      showErrors([]);
      start(reply.payload.next);
    } else {
      clearInterval(current.heartbeat);
      window.location.assign(current.task.urls.queue);
    }
  } else if (reply.status === 400) {
    showErrors(reply.payload.errors);
  } else if (!handleRefusal(reply)) {
    status(labels.notSaved, "error");
  }
}

async function skip() {
  const reason = window.prompt(labels.skipReason);
  if (!reason || !reason.trim()) return;
  const current = session;
  while (current.saving) await new Promise((resolve) => setTimeout(resolve, 50));
  const reply = await post(current.task.urls.skip, { version: current.version, reason });
  if (reply.ok) {
    current.dirty = false;
    dropLocal(current.task);
    if (reply.payload.next) start(reply.payload.next);
    else window.location.assign(current.task.urls.queue);
  } else if (reply.status === 400) {
    showErrors(reply.payload.errors);
  } else {
    handleRefusal(reply);
  }
}

function flash(text) {
  const node = $("flash");
  node.textContent = text;
  node.hidden = false;
  setTimeout(() => {
    node.hidden = true;
  }, 4000);
}

// ---- keys ----

function onKey(event) {
  if (!session) return;
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    submit();
    return;
  }
  if (isTyping(event)) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const question = session.task.questions[session.focus];
  const key = event.key;
  let handled = true;
  if (key === "ArrowDown" || key === "j") focusQuestion(session.focus + 1);
  else if (key === "ArrowUp" || key === "k") focusQuestion(session.focus - 1);
  else if (key === "ArrowRight") selectStep(session.step + 1);
  else if (key === "ArrowLeft") selectStep(session.step - 1);
  else if (key === "w") toggleWrongStep();
  else if (key === "c") $("comment")?.focus();
  else if (key === "s") skip();
  else if ((key === "y" || key === "n") && question.kind === "yesno") setAnswer(question.name, key === "y", { advance: true });
  else if (/^[1-9]$/.test(key) && question.kind === "scale" && Number(key) <= question.scale)
    setAnswer(question.name, Number(key), { advance: true });
  else handled = false;
  if (handled) event.preventDefault();
}

// ---- wiring ----

const data = $("task-data");
if (data) {
  start(JSON.parse(data.textContent));
  document.addEventListener("keydown", onKey);
  $("verdict").addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  $("skip").addEventListener("click", skip);
  $("keep-mine").addEventListener("click", () => {
    session.version = session.server.version;
    session.dirty = true;
    $("conflict").hidden = true;
    saveNow();
  });
  $("take-server").addEventListener("click", () => {
    session.version = session.server.version;
    session.answers = { ...((session.server.draft || {}).answers || {}) };
    session.dirty = false;
    dropLocal(session.task);
    $("conflict").hidden = true;
    render();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden" && session.dirty) saveNow();
  });
  window.yardstickValidation = { state: () => session };
}
